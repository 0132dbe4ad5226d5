"""Semantic checks of `cloud: kubernetes` environments, and of the fields only they take.

A kubernetes environment names an existing cluster by kubeconfig context. inferplane calls
no cloud API there: it creates no nodes and scales none, so a pool describes the nodes that
exist (`nodes.min == nodes.max`), and whatever this environment says about cloud instances
(an overridden `instance_type`, `capacity: spot`) is refused. The
model store is S3-compatible, read and written with credentials from Secrets that already
exist in the cluster, one per role; a role the stack uses needs its Secret.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inferplane.blueprint import defaults, store_endpoint
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.resolve_triton import builds_onnx_engine

KUBERNETES = "kubernetes"


def _env_path(env: EnvView, *rest: str) -> YamlPath:
    return ("environments", env.name, *rest)


def check_kubernetes(env: EnvView) -> None:
    """The cluster, pools, load balancer and store of a kubernetes environment; and that
    aws and gcp environments use none of the kubernetes-only cluster fields."""
    cluster = env.spec.get("cluster") or {}
    if env.spec["cloud"] != KUBERNETES:
        for key, fix in (
            ("context", "name the cluster with `existing: <cluster name>`, or `create: true`"),
            ("load_balancer", "remove it: the cloud's load balancer controller serves them"),
            ("dataplane", "remove it: inferplane knows the dataplane of EKS and GKE clusters"),
        ):
            if key in cluster:
                env.error(
                    _env_path(env, "cluster", key),
                    f"`cluster.{key}` applies only to kubernetes environments",
                    fix,
                )
        if "model_store_pod_labels" in env.spec:
            env.error(
                _env_path(env, "model_store_pod_labels"),
                "`model_store_pod_labels` applies only to kubernetes environments",
                "remove it: this environment reads its bucket through the cloud's own endpoint",
            )
        if "existing" in cluster:
            require_allowed_cidrs(
                env,
                _env_path(env, "cluster", "existing"),
                "an attached cluster (`cluster.existing`) needs `load_balancer.allowed_cidrs`: "
                "inferplane does not know its VPC's range, and the models' NetworkPolicies "
                "admit only the ranges listed",
            )
        return
    if "context" not in cluster:
        env.error(
            _env_path(env, "cluster"),
            "a kubernetes environment names its cluster by kubeconfig context",
            "write `cluster: {context: <kubeconfig context>}` (and remove `create`/`existing`)",
        )
    _check_pools(env)
    _check_load_balancer(env)
    _check_store_endpoint(env)
    _check_writers(env)
    for path in _secret_manager_refs(env.data, ()):
        env.error(
            path,
            f"kubernetes environment {env.name!r} has no cloud secret manager to read from "
            "(nothing deploys it with cloud credentials)",
            "use `from_env` or `from_pulumi_config` in a blueprint with a kubernetes environment",
        )


def _check_store_endpoint(env: EnvView) -> None:
    """`model_store_endpoint` names something a NetworkPolicy can admit
    (`inferplane.blueprint.store_endpoint`), on a TCP port."""
    url = env.spec.get("model_store_endpoint")
    if not isinstance(url, str):
        return  # the schema requires it; reported there
    endpoint, why = store_endpoint.parse(url)
    if endpoint is None:
        env.error(
            _env_path(env, "model_store_endpoint"),
            why,
            "write http(s)://<service>.<namespace>.svc:<port> for a store in the cluster, or "
            "the IP address of one outside it, with a port from 1 to 65535",
        )
    elif endpoint.address is not None and "model_store_pod_labels" in env.spec:
        env.error(
            _env_path(env, "model_store_pod_labels"),
            f"the store at {endpoint.address} is outside the cluster, so it has no pods",
            "remove `model_store_pod_labels`, or name the store's in-cluster Service in "
            "`model_store_endpoint`",
        )


def _secret_manager_refs(node: Any, path: YamlPath) -> list[YamlPath]:
    """Paths of every ``from_secret_manager`` in the models and alert receivers."""
    found: list[YamlPath] = []
    if isinstance(node, Mapping):
        for key, value in node.items():
            if not path and key not in ("models", "observability"):
                continue
            if key == "from_secret_manager":
                found.append((*path, key))
            else:
                found += _secret_manager_refs(value, (*path, key))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            found += _secret_manager_refs(item, (*path, i))
    return found


def _check_pools(env: EnvView) -> None:
    for name, pool in (env.data.get("gpu_pools") or {}).items():
        path: YamlPath = ("gpu_pools", name)
        nodes = pool.get("nodes") or {}
        low = nodes.get("min", defaults.POOL_NODES_MIN)
        high = nodes.get("max", defaults.POOL_NODES_MAX)
        if low != high:
            where = (*path, "nodes", "max") if "max" in nodes else (*path, "nodes")
            env.error(
                where,
                f"in kubernetes environment {env.name!r} nothing scales nodes, so nodes.max "
                f"({high}) must equal nodes.min ({low}): the nodes per zone that exist",
                f"set `nodes: {{min: {low}, max: {low}}}` for this environment (under "
                f"environments.{env.name}.overrides.gpu_pools.{name})",
            )
        # A base `instance_type` is for the cloud environments and is not applied here; one
        # this environment's overrides set would be silently ignored, so it is refused.
        if "instance_type" in pool and _overridden(env, (*path, "instance_type")):
            env.error(
                (*path, "instance_type"),
                f"kubernetes environment {env.name!r} creates no nodes, so it has no instance type",
                "remove it; the pool's nodes exist already and carry the labels the plan lists",
            )
        if pool.get("capacity") == "spot":
            env.error(
                (*path, "capacity"),
                f"kubernetes environment {env.name!r} creates no nodes, so none of them is spot",
                "remove `capacity` (or set it to on_demand) for this environment",
            )


def _overridden(env: EnvView, path: YamlPath) -> bool:
    """Whether this environment's `overrides` wrote the value at `path`."""
    return env.doc.source.written(path, env.origins)[1][:1] == ("environments",)


def require_allowed_cidrs(env: EnvView, at: YamlPath, what: str) -> None:
    """Refuse, at `at`, an environment whose client ranges inferplane cannot know when
    `load_balancer.allowed_cidrs` does not list them (a kubernetes environment, an
    attached cluster): no range is picked silently."""
    if "allowed_cidrs" not in (env.data.get("load_balancer") or {}):
        env.error(
            at,
            what,
            f"add `load_balancer: {{allowed_cidrs: [<client range>]}}` (under "
            f"environments.{env.name}.overrides for this environment only)",
        )


def _check_load_balancer(env: EnvView) -> None:
    lb = env.data.get("load_balancer") or {}
    require_allowed_cidrs(
        env,
        _env_path(env, "cloud"),
        "a kubernetes environment needs `load_balancer.allowed_cidrs`: inferplane cannot "
        "know the cluster's client addresses, and the models' NetworkPolicies admit only "
        "the ranges listed",
    )
    if lb.get("scheme") == "external":
        env.error(
            ("load_balancer", "scheme"),
            f"kubernetes environment {env.name!r} sets no load-balancer scheme: whether a "
            "LoadBalancer Service is reachable from outside is up to the cluster's own "
            "implementation",
            "remove `scheme: external` for this environment, and choose Services with "
            "`cluster.load_balancer`",
        )


def _hub_sourced(model: Mapping[str, Any]) -> bool:
    """Whether `model` names an ``hf://`` source the stack stages (weights, draft, adapters)."""
    if str(model.get("source", "")).startswith("hf://"):
        return True
    vllm = model.get("vllm") or {}
    if (vllm.get("speculative") or {}).get("draft_model"):
        return True
    adapters = (vllm.get("lora") or {}).get("adapters") or {}
    for source in adapters.values():
        uri = source.get("source") if isinstance(source, Mapping) else source
        if str(uri or "").startswith("hf://"):
            return True
    return False


def _stages_requirements(model: Mapping[str, Any]) -> bool:
    """A pipeline's Python step with requirements (`components.serving.store.requirements_job`)."""
    steps = (model.get("pipeline") or {}).get("steps") or {}
    return any(isinstance(s, Mapping) and s.get("requirements") for s in steps.values())


def _builds_engine(model: Mapping[str, Any]) -> bool:
    return model.get("server") == "triton" and (
        "tensorrt_llm" in model or builds_onnx_engine(model)
    )


def _compiles_graph(model: Mapping[str, Any]) -> bool:
    """The rule of `scale_out.compiles_vllm_graph`, on the unresolved model."""
    return model.get("server") == "vllm" and not (model.get("vllm") or {}).get("enforce_eager")


_WRITERS = (
    ("engine_builder", _builds_engine, "builds a TensorRT engine"),
    ("weights_stager", _hub_sourced, "stages an hf:// source into the store"),
    ("weights_stager", _stages_requirements, "stages its Python steps' requirements"),
    ("vllm_compiler", _compiles_graph, "stages its vLLM compile cache in the store"),
)


def _check_writers(env: EnvView) -> None:
    secrets = env.spec.get("model_store_secrets")
    if not isinstance(secrets, Mapping):
        return  # the schema requires it; reported there
    _check_one_secret_per_role(env, secrets)
    models = env.data.get("models") or {}
    for role, uses, what in _WRITERS:
        if role in secrets:
            continue
        user = next((name for name, m in models.items() if uses(m)), None)
        if user is not None:
            env.error(
                _env_path(env, "model_store_secrets"),
                f"model {user!r} {what}, and no Secret is named for `{role}`",
                f"add `{role}: <Secret name>`: an existing Secret in the blueprint's namespace "
                "with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY",
            )


def _check_one_secret_per_role(env: EnvView, secrets: Mapping[str, Any]) -> None:
    """Each role's keys are its own: a Secret named for the reader and a writer would give
    every serving pod write keys to the store, and one named for two writers lets each
    writer's Jobs write where only the other's may. The later role is blamed."""
    owner: dict[str, str] = {}
    for role in sorted(secrets, key=lambda r: r != "reader"):  # the reader first
        secret = secrets[role]
        first = owner.setdefault(str(secret), str(role))
        if first == role:
            continue
        why = (
            "serving pods would hold a writer's keys"
            if first == "reader"
            else "the Jobs of each would hold the other's write keys"
        )
        env.error(
            _env_path(env, "model_store_secrets", role),
            f"Secret {secret!r} is already `{first}`'s: {why}",
            f"give `{role}` a Secret of its own, with keys the store's bucket policy scopes "
            f"to that role",
        )


__all__ = ["KUBERNETES", "check_kubernetes"]
