"""Semantic checks: what the JSON Schema cannot express.

They run per environment on the merged view (base + overrides), so a problem that an
override introduces points into `environments.<env>.overrides`. A problem in the base
blueprint is reported once, however many environments see it. A pool's zones are a subset
of the environment's zones (the clients' zones): the mandatory rule `same-zone-placement`
refuses anything else in `check`, and validate refuses it first, at the zone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from inferplane.blueprint import (
    catalog,
    defaults,
    secret_refs,
    semantic_addons,
    semantic_cache,
    semantic_capacity,
    semantic_gke,
    semantic_karpenter,
    semantic_kubernetes,
    semantic_names,
    semantic_network,
    semantic_pipeline,
    semantic_releases,
    semantic_routing,
    semantic_scaling,
    semantic_serving,
    semantic_spare,
    semantic_triton,
    semantic_trtllm,
    semantic_vllm,
    semantic_wake_path,
    semantic_zones,
)
from inferplane.blueprint.errors import Diagnostic, Location, YamlPath, counted
from inferplane.blueprint.semantic_env import EnvView
from inferplane.blueprint.source import Document

_AWS_REGION = re.compile(r"^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d+$")
_GCP_REGION = re.compile(r"^[a-z]+-[a-z]+\d+$")
_TRITON_ONLY = (
    "tensorrt",
    "tensorrt_llm",
    "batching",
    "response_cache",
    "warmup",
    "backend",
    "accelerator",
    "inputs",
    "outputs",
    "pipeline",
)
_CROSS_CLOUD = {"aws": "s3", "gcp": "gs", "kubernetes": "s3"}


def zone_pattern(cloud: str, region: str) -> re.Pattern[str]:
    """Zone names of `region`: AWS ``us-east-1a``; GCP ``us-central1-a``."""
    if cloud == "aws":
        return re.compile(rf"^{re.escape(region)}[a-z]$")
    return re.compile(rf"^{re.escape(region)}-[a-z]$")


def zone_example(cloud: str, region: str) -> str:
    return f"{region}a" if cloud == "aws" else f"{region}-a"


Check = Callable[[EnvView], None]
CHECKS: list[Check] = []


def _check(fn: Check) -> Check:
    CHECKS.append(fn)
    return fn


def check(doc: Document) -> list[Diagnostic]:
    """Every semantic problem of a schema-valid blueprint, deduplicated across environments."""
    seen: set[tuple[Location, str]] = set()
    out: list[Diagnostic] = []
    for name in doc.data["environments"]:
        env = EnvView(doc, name)
        _check_overrides_name_existing(doc, env)
        for fn in CHECKS:
            fn(env)
        for d in env.out:
            if (d.location, d.message) not in seen:
                seen.add((d.location, d.message))
                out.append(d)
    out.extend(_check_waivers(doc))
    out.extend(semantic_network.check_waiver_dates(doc))
    return out


def _models(env: EnvView) -> Iterator[tuple[str, Mapping[str, Any]]]:
    yield from (env.data.get("models") or {}).items()


def _pools(env: EnvView) -> Iterator[tuple[str, Mapping[str, Any]]]:
    yield from (env.data.get("gpu_pools") or {}).items()


def _check_overrides_name_existing(doc: Document, env: EnvView) -> None:
    overrides = env.spec.get("overrides") or {}
    for section in ("models", "gpu_pools"):
        known = doc.data.get(section) or {}
        for key in overrides.get(section) or {}:
            if key not in known:
                path = ("environments", env.name, "overrides", section, key)
                env.out.append(
                    Diagnostic(
                        doc.source.key(path),
                        path,
                        f"overrides {section} {key!r}, which the blueprint does not define",
                        f"define it under `{section}:` first, or use one of: "
                        + (", ".join(known) or "(none defined)"),
                    )
                )


@_check
def _region_and_zones(env: EnvView) -> None:
    cloud, region = env.spec["cloud"], env.spec["region"]
    base: YamlPath = ("environments", env.name)
    if cloud == semantic_kubernetes.KUBERNETES:
        return  # node labels: any value the schema accepts (`semantic_kubernetes`)
    region_re = _AWS_REGION if cloud == "aws" else _GCP_REGION
    if not region_re.match(region):
        example = "us-east-1" if cloud == "aws" else "us-central1"
        env.error(
            (*base, "region"),
            f"{region!r} is not a {cloud.upper()} region name",
            f"use a region such as {example}",
        )
        return
    pattern = zone_pattern(cloud, region)
    for i, zone in enumerate(env.spec["zones"]):
        if not pattern.match(zone):
            env.error(
                (*base, "zones", i),
                f"zone {zone!r} is not a zone of region {region}",
                f"use zones named like {zone_example(cloud, region)}",
            )
    zones = list(env.spec["zones"])
    for name, pool in _pools(env):
        for i, zone in enumerate(pool.get("zones") or []):
            if not pattern.match(zone):
                env.error(
                    ("gpu_pools", name, "zones", i),
                    f"zone {zone!r} is not a zone of region {region} (environment {env.name})",
                    f"use zones named like {zone_example(cloud, region)}",
                )
            elif zone not in zones:
                env.error(
                    ("gpu_pools", name, "zones", i),
                    f"zone {zone!r} is not one of environment {env.name}'s zones "
                    f"({', '.join(zones)}), where its clients run: its replicas would serve "
                    "them across zones",
                    f"use a subset of {', '.join(zones)}, or add {zone} to "
                    f"environments.{env.name}.zones",
                )
    if cloud == "gcp" and not env.spec.get("project"):
        env.error(base, "a gcp environment needs `project`", "add `project: <gcp project id>`")
    if cloud == "aws" and env.spec.get("project"):
        env.error(
            (*base, "project"),
            "`project` is for gcp environments only",
            "remove it; an AWS account comes from the credentials",
        )


@_check
def _cluster(env: EnvView) -> None:
    path: YamlPath = ("environments", env.name, "cluster")
    cluster = env.spec.get("cluster") or {}
    create, existing = cluster.get("create", False), cluster.get("existing")
    if create and existing:
        env.error(
            path,
            "`create: true` and `existing` are both set",
            "either create a cluster, or attach to an existing one by name",
        )
    elif not create and not existing and not cluster.get("context"):
        env.error(path, "no cluster to run on", "set `create: true`, or `existing: <cluster name>`")
    if existing and "vpc_cidr" in cluster:
        env.error(
            (*path, "vpc_cidr"),
            "`vpc_cidr` only applies to a cluster inferplane creates",
            "remove it; an existing cluster keeps its network",
        )


@_check
def _model_store(env: EnvView) -> None:
    cloud = env.spec["cloud"]
    store = env.spec["model_store"]
    want = _CROSS_CLOUD[cloud]
    if not store.startswith(f"{want}://"):
        env.error(
            ("environments", env.name, "model_store"),
            f"a {cloud} environment reads models from {want}:// storage, not {store!r}",
            f"use a {want}://bucket/prefix/ in {env.spec['region']} (same region: fast "
            "cold starts)",
        )


@_check
def _pools_fit_catalog(env: EnvView) -> None:
    cloud = env.spec["cloud"]
    for name, pool in _pools(env):
        path: YamlPath = ("gpu_pools", name)
        gpu = catalog.gpu(pool["gpu"])
        per_node = pool.get("gpus_per_node", defaults.POOL_GPUS_PER_NODE)
        if "instance_type" not in pool and cloud != semantic_kubernetes.KUBERNETES:
            counts = gpu.gpu_counts(cloud)
            if not counts:
                env.error(
                    (*path, "gpu"),
                    f"{gpu.id} is not offered on {cloud}",
                    "choose a GPU available there (see `inferplane catalog`)",
                )
            elif per_node not in counts:
                env.error(
                    (*path, "gpus_per_node"),
                    f"{cloud} has no {gpu.id} node with {counted(per_node, 'GPU')}",
                    "use one of " + ", ".join(map(str, counts)) + ", or name an `instance_type`",
                )
        nodes = pool.get("nodes") or {}
        if "min" in nodes and "max" in nodes and nodes["min"] > nodes["max"]:
            env.error(
                (*path, "nodes", "min"),
                f"nodes.min ({nodes['min']}) is greater than nodes.max ({nodes['max']})",
                "make min <= max",
            )
        sharing = pool.get("sharing", defaults.POOL_SHARING)
        profile = pool.get("mig_profile")
        if sharing == "mig":
            if not gpu.supports_mig:
                env.error(
                    (*path, "sharing"),
                    f"{gpu.id} does not support MIG",
                    "use sharing: exclusive, or a MIG-capable GPU (A100, H100, H200, B200)",
                )
            elif profile is None:
                env.error(
                    (*path, "sharing"),
                    "sharing: mig needs a `mig_profile`",
                    "add mig_profile: one of " + ", ".join(gpu.mig_profiles),
                )
            elif profile not in gpu.mig_profiles:
                env.error(
                    (*path, "mig_profile"),
                    f"{profile!r} is not a MIG profile of {gpu.id}",
                    "use one of " + ", ".join(gpu.mig_profiles),
                )
        elif profile is not None:
            env.error(
                (*path, "mig_profile"),
                "mig_profile is set but sharing is not mig",
                "set sharing: mig, or remove mig_profile",
            )
        if "time_slices" in pool and sharing != "time_slicing":
            env.error(
                (*path, "time_slices"),
                "time_slices is set but sharing is not time_slicing",
                "set sharing: time_slicing, or remove time_slices",
            )


@_check
def _models_fit(env: EnvView) -> None:
    pools = dict(_pools(env))
    cloud = env.spec["cloud"]
    for name, model in _models(env):
        path: YamlPath = ("models", name)
        server = model["server"]
        pool_name = model["pool"]
        if pool_name not in pools:
            env.error(
                (*path, "pool"),
                f"pool {pool_name!r} is not defined",
                "use one of: " + (", ".join(pools) or "(no gpu_pools defined)"),
            )
        else:
            _model_fits_pool(env, path, model, pools[pool_name])
        semantic_trtllm.check_model(env.error, path, model, pools.get(pool_name))
        replicas = model.get("replicas") or {}
        if "min" in replicas and "max" in replicas and replicas["min"] > replicas["max"]:
            env.error(
                (*path, "replicas", "min"),
                f"replicas.min ({replicas['min']}) is greater than replicas.max "
                f"({replicas['max']})",
                "make min <= max",
            )
        for key in _TRITON_ONLY:
            if key in model and server != "triton":
                env.error(
                    (*path, key),
                    f"`{key}` only applies to server: triton",
                    f"remove it, or set server: triton (this model uses {server})",
                )
        if "vllm" in model and server != "vllm":
            env.error(
                (*path, "vllm"),
                "`vllm` settings only apply to server: vllm",
                f"remove them, or set server: vllm (this model uses {server})",
            )
        source = model["source"]
        if server == "triton" and source.startswith("hf://") and "tensorrt_llm" not in model:
            env.error(
                (*path, "source"),
                "Triton loads models from the model store, not hf://",
                "upload the ONNX file under model_store and give its relative path; for an LLM "
                "checkpoint, add a `tensorrt_llm:` section",
            )
        other = "s3" if cloud == "gcp" else "gs"
        if source.startswith(f"{other}://"):
            env.error(
                (*path, "source"),
                f"a {cloud} environment ({env.name}) cannot read {other}:// sources",
                f"copy the model into {env.spec['model_store']} and use a relative path",
            )
        elif (
            server == "triton"
            and "tensorrt" in model
            and not source.startswith("hf://")
            and not source.endswith(".onnx")
        ):
            env.error(
                (*path, "source"),
                "a TensorRT engine is built from an ONNX file",
                "point source at the model's .onnx file",
            )
        pool = pools.get(model["pool"]) or {}
        zones = len(pool.get("zones") or env.spec["zones"])
        semantic_scaling.check_model(env, path, model, zones)
        slo = model.get("slo") or {}
        # TensorRT-LLM models: semantic_trtllm (time to first token when streaming).
        llm = "tensorrt_llm" in model
        if server != "vllm" and not llm and "ttft_p95_ms" in slo:
            env.error(
                (*path, "slo", "ttft_p95_ms"),
                "time to first token is a vLLM signal",
                "use slo.p95_ms for Triton",
            )
        expose = (model.get("expose") or {}).get("protocol")
        if server == "vllm" and expose in ("grpc", "both"):
            env.error((*path, "expose", "protocol"), "vLLM serves HTTP only", "use protocol: http")
        semantic_serving.batching_consistent(env, path, model)
        semantic_capacity.check_model(env, path, model)


def _model_fits_pool(
    env: EnvView, path: YamlPath, model: Mapping[str, Any], pool: Mapping[str, Any]
) -> None:
    gpu = catalog.gpu(pool["gpu"])
    gpus = model.get("gpus", defaults.MODEL_GPUS)
    sharing = pool.get("sharing", defaults.POOL_SHARING)
    per_node = pool.get("gpus_per_node", defaults.POOL_GPUS_PER_NODE)
    if sharing in ("mig", "time_slicing") and gpus != 1:
        what = "MIG slice" if sharing == "mig" else "time-sliced GPU"
        env.error(
            (*path, "gpus"),
            f"a model on a {sharing} pool uses exactly one {what}",
            "set gpus: 1, or use a pool with sharing: exclusive for tensor parallelism",
        )
    elif gpus > per_node:
        env.error(
            (*path, "gpus"),
            f"{counted(gpus, 'GPU')} per replica do not fit one node of pool "
            f"{model['pool']!r} ({counted(per_node, 'GPU')} per node)",
            f"use gpus <= {per_node}, or raise gpus_per_node of the pool",
        )
    precision = model.get("precision", defaults.MODEL_PRECISION)
    if precision == "bf16" and not gpu.supports_bf16:
        env.error((*path, "precision"), f"{gpu.id} has no bf16 support", "use fp16 on this GPU")
    tensorrt_llm = "tensorrt_llm" in model  # its precision rules: semantic_trtllm
    if (
        precision == "fp8"
        and not gpu.supports_fp8
        and model["server"] == "triton"
        and not tensorrt_llm
    ):
        env.error(
            (*path, "precision"),
            f"TensorRT fp8 needs compute capability 8.9+; {gpu.id} is {gpu.compute_capability}",
            "use fp16 or int8, or an L4/L40S/H100-class GPU",
        )


@_check
def _secret_refs(env: EnvView) -> None:
    """Secret references stay within the model's own secrets (see `secret_refs`)."""
    for model_name, model in _models(env):
        owner: dict[str, str] = {}
        for name, ref in (model.get("secrets") or {}).items():
            path: YamlPath = ("models", model_name, "secrets", name)
            _secret_name(env, path, name)
            variable = secret_refs.container_variable(name)
            if variable in owner:
                env.error(
                    path,
                    f"secrets {owner[variable]!r} and {name!r} both set environment variable "
                    f"{variable} in the model's container",
                    "keep one of them",
                )
            owner.setdefault(variable, name)
            _secret_sources(env, path, ref)
    # Alertmanager receivers' credentials are read the same way, by the same runner.
    alerts = (env.data.get("observability") or {}).get("alerts") or {}
    for i, receiver in enumerate(alerts.get("receivers") or []):
        for integration, field, _ in secret_refs.RECEIVER_SECRETS:
            ref = (receiver.get(integration) or {}).get(field)
            if ref is not None:
                _secret_sources(
                    env, ("observability", "alerts", "receivers", i, integration, field), ref
                )


def _secret_sources(env: EnvView, path: YamlPath, ref: Mapping[str, Any]) -> None:
    """The runner's credentials, other config namespaces and other accounts stay out."""
    if "from_env" in ref:
        _secret_from_env(env, (*path, "from_env"), ref["from_env"])
    if "from_pulumi_config" in ref:
        _secret_from_config(env, (*path, "from_pulumi_config"), ref["from_pulumi_config"])
    if "from_secret_manager" in ref:
        _secret_owner(env, (*path, "from_secret_manager"), ref["from_secret_manager"])


def _secret_name(env: EnvView, path: YamlPath, name: str) -> None:
    variable = secret_refs.env_var_name(name)
    found = secret_refs.shadowed(variable)
    if found:
        env.error(
            path,
            f"secret {name!r} becomes the environment variable {variable} in the server's "
            f"container, which {found[1]} ({found[0]})",
            "rename the secret after the token it holds, e.g. hf_token",
        )


def _secret_from_env(env: EnvView, path: YamlPath, variable: str) -> None:
    found = secret_refs.runner_credential(variable)
    if found:
        env.error(
            path,
            f"{variable} is a credential of the runner that deploys ({found[0]}: {found[1]}); "
            "a model never receives it",
            "give the model a token of its own in a variable of its own (e.g. HF_TOKEN), or "
            "use from_pulumi_config or from_secret_manager",
        )


def _secret_from_config(env: EnvView, path: YamlPath, key: str) -> None:
    namespace = secret_refs.config_namespace(key)
    if namespace != secret_refs.PROJECT_NAMESPACE:
        env.error(
            path,
            f"{key} reads the Pulumi config namespace {namespace!r}; secrets come only from "
            f"the project's own namespace {secret_refs.PROJECT_NAMESPACE!r}",
            f"write the key without a namespace, or as {secret_refs.PROJECT_NAMESPACE}:<key>",
        )


def _secret_owner(env: EnvView, path: YamlPath, secret_id: str) -> None:
    cloud = env.spec["cloud"]
    project = secret_refs.gcp_secret_project(secret_id)
    if cloud == "aws" and project is not None:
        env.error(
            path,
            "a GCP Secret Manager secret cannot be read by an aws environment",
            "use an AWS Secrets Manager ARN in the environment's own account",
        )
    elif cloud == "gcp" and project is None:
        env.error(
            path,
            "an AWS Secrets Manager secret cannot be read by a gcp environment",
            f"use projects/{env.spec['project']}/secrets/<secret>/versions/<version>",
        )
    elif cloud == "gcp" and project != env.spec["project"]:
        env.error(
            path,
            f"the secret belongs to project {project!r}, not the environment's project "
            f"{env.spec['project']!r}",
            f"keep the secret in {env.spec['project']}: "
            f"projects/{env.spec['project']}/secrets/<secret>/versions/<version>",
        )


def _waiver_target_problem(doc: Document, target: str) -> tuple[str, str] | None:
    """Why a waiver's target (one object, by the schema's pattern) names nothing."""
    section, _, name = target.partition(".")
    if not name:  # load_balancer: every blueprint has one (its defaults when omitted)
        return None
    names = list(doc.data.get(section) or {})
    if name in names:
        return None
    kind = "model" if section == "models" else "GPU pool"
    return f"no {kind} named {name!r}", "use one of: " + ", ".join(f"{section}.{n}" for n in names)


def _says_something(reason: str) -> bool:
    """A reason (20+ characters, by the schema) of words, not punctuation or one key held."""
    letters = {c.lower() for c in reason if c.isalnum()}
    return len(letters) >= 5 and len(re.findall(r"[^\W\d_]{2,}", reason)) >= 3


# LLM models: GPU memory fit, tensor parallelism, vLLM settings and pass-through.
_check(semantic_vllm.check_env)


def _check_waivers(doc: Document) -> list[Diagnostic]:
    envs = doc.data["environments"]
    out = []
    for i, waiver in enumerate((doc.data.get("policies") or {}).get("waivers") or []):
        at: YamlPath = ("policies", "waivers", i)
        found = _waiver_target_problem(doc, waiver["target"])
        if found is not None:
            out.append(Diagnostic(doc.source.value((*at, "target")), (*at, "target"), *found))
        if not _says_something(waiver["reason"]):
            out.append(
                Diagnostic(
                    doc.source.value((*at, "reason")),
                    (*at, "reason"),
                    f"the reason {waiver['reason']!r} does not say why the exception is acceptable",
                    "write at least three words a reviewer can weigh (what is waived, why "
                    "it is safe, what ends it)",
                )
            )
        for j, name in enumerate(waiver.get("environments") or []):
            if name not in envs:
                path: YamlPath = ("policies", "waivers", i, "environments", j)
                out.append(
                    Diagnostic(
                        doc.source.value(path),
                        path,
                        f"no environment named {name!r}",
                        "use one of: " + ", ".join(envs),
                    )
                )
    return out


# Checks that see defaults, derived names and the cloud's limits (modules of their own).
CHECKS.extend(
    [
        semantic_serving.check_defaulted_ranges,
        semantic_spare.check_spare_gpus,
        semantic_serving.check_warmup_inputs,
        semantic_triton.check_backends,
        semantic_pipeline.check_pipelines,
        semantic_serving.check_response_cache_applies,
        semantic_cache.check_redis_cache_memory,
        semantic_serving.check_instance_types,
        semantic_serving.check_alert_routing,
        semantic_serving.check_precision_applies,
        semantic_serving.check_triton_release,
        semantic_releases.check_versions,
        semantic_releases.check_driver,
        semantic_serving.check_engine_sources,
        semantic_zones.check_gcp_zones,
        semantic_zones.check_zone_suffixes,
        semantic_network.check_vpc,
        semantic_network.check_allowed_cidrs,
        semantic_network.check_gke_zonal_affinity,
        semantic_gke.check_cluster_name,
        semantic_gke.check_mig,
        semantic_names.check_namespace,
        semantic_names.check_collisions,
        semantic_addons.check_addons,
        semantic_karpenter.check_karpenter,
        semantic_wake_path.check_wake_path,
        semantic_routing.check_routing,
        semantic_kubernetes.check_kubernetes,
    ]
)

__all__ = ["check", "zone_example", "zone_pattern"]
