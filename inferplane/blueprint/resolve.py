"""From a blueprint file to one resolved `Environment` per environment.

    load_blueprint(path)      strict load + JSON Schema + semantic checks (all environments)
    resolve(doc, env)         overrides merged, defaults applied, sources absolute, catalog
    resolve_file(path, env)   both, for one environment

Validation always covers the whole blueprint before anything is resolved, so an error in
one environment stops every environment: nothing is provisioned from a half-valid file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from inferplane.blueprint import catalog, defaults, resolve_triton, semantic_vllm, wake
from inferplane.blueprint.addons import resolve_addons
from inferplane.blueprint.errors import BlueprintError, Diagnostic
from inferplane.blueprint.model import (
    AlertReceiver,
    Autoscaling,
    Batching,
    ClusterSpec,
    Environment,
    GpuPool,
    LoadBalancer,
    Lora,
    LoraAdapter,
    MinMax,
    Model,
    ModelSource,
    Observability,
    ResponseCache,
    Routing,
    ScheduleWindow,
    SecretRef,
    Signal,
    Slo,
    Speculative,
    StoreSecrets,
    TensorRt,
    TensorRtInput,
    TensorRtLlm,
    Traffic,
    Versions,
    VllmSettings,
    Waiver,
    Wake,
    Warmup,
)
from inferplane.blueprint.overrides import merged
from inferplane.blueprint.secret_refs import RECEIVER_SECRETS
from inferplane.blueprint.source import Document


# --- loading and validation ---------------------------------------------------------------
def load_blueprint(path: str | Path) -> tuple[Document, tuple[str, ...]]:
    """Load and fully validate a blueprint; returns it with its environment names.

    Raises BlueprintError with every problem found (schema first: semantic checks only run
    on a document whose shape is right, so they never trip over a wrong type).
    """
    from inferplane.blueprint import loader, schema, semantic

    doc = loader.load(path)
    problems = schema.validate_document(doc)
    if problems:
        raise BlueprintError(problems)
    problems = semantic.check(doc)
    if problems:
        raise BlueprintError(problems)
    problems = [d for d in capacity_diagnostics(doc) if d.severity == "error"]
    if problems:
        raise BlueprintError(problems)
    return doc, tuple(doc.data["environments"])


def capacity_diagnostics(doc: Document) -> list[Diagnostic]:
    """The capacity plan's errors and advisories (`semantic_capacity`) of a blueprint that
    passed the semantic checks: each environment with traffic resolved and planned."""
    from inferplane.blueprint import semantic_capacity

    envs = [
        resolve(doc, name)
        for name in doc.data["environments"]
        if semantic_capacity.has_traffic(doc, name)
    ]
    return semantic_capacity.diagnostics(envs)


def resolve_file(path: str | Path, env_name: str) -> Environment:
    """Validate the blueprint at `path` and resolve environment `env_name`."""
    doc, envs = load_blueprint(path)
    if env_name not in envs:
        raise BlueprintError(
            [
                Diagnostic(
                    doc.source.key(("environments",)),
                    ("environments",),
                    f"no environment named {env_name!r}",
                    f"use one of: {', '.join(envs)}",
                )
            ]
        )
    return resolve(doc, env_name)


# --- resolution ---------------------------------------------------------------------------
def resolve(doc: Document, env_name: str) -> Environment:
    """Resolve one environment of a validated blueprint (see `load_blueprint`)."""
    data, origins = merged(doc, env_name)
    env = data["environments"][env_name]
    cloud = env["cloud"]
    region = env["region"]
    zones = tuple(env["zones"])
    model_store = _with_slash(env["model_store"])

    pools = {
        name: _pool(name, spec, cloud, zones)
        for name, spec in (data.get("gpu_pools") or {}).items()
    }
    here = Path(doc.source.file).parent
    models = {
        name: _model(name, spec, pools, model_store, here)
        for name, spec in (data.get("models") or {}).items()
    }
    cluster = env.get("cluster") or {}
    lb = data.get("load_balancer") or {}
    obs = data.get("observability") or {}
    prom = obs.get("prometheus") or {}
    versions = {**defaults.VERSIONS, **(data.get("versions") or {})}
    waivers = tuple(
        Waiver(
            rule=w["rule"],
            target=w["target"],
            environments=tuple(w["environments"]) if w.get("environments") else None,
            reason=w["reason"],
            expires=str(w["expires"]),
            path=("policies", "waivers", i),
        )
        for i, w in enumerate((data.get("policies") or {}).get("waivers") or [])
    )
    resolved = Environment(
        blueprint=data["name"],
        owner=data.get("owner"),
        file=doc.source.file,
        name=env_name,
        cloud=cloud,
        region=region,
        zones=zones,
        project=env.get("project"),
        model_store=model_store,
        cluster=ClusterSpec(
            create=bool(cluster.get("create", False)),
            existing=cluster.get("existing"),
            kubernetes_version=str(cluster.get("kubernetes_version", defaults.KUBERNETES_VERSION)),
            location=cluster.get("location", region),
            vpc_cidr=cluster.get("vpc_cidr", defaults.VPC_CIDR),
            addons=resolve_addons(cluster.get("addons")),
            context=cluster.get("context"),
            load_balancer=cluster.get("load_balancer", defaults.SERVICE_TYPE),
        ),
        pools=MappingProxyType(pools),
        models=MappingProxyType(models),
        load_balancer=LoadBalancer(
            scheme=lb.get("scheme", defaults.LB_SCHEME),
            allowed_cidrs=tuple(lb.get("allowed_cidrs") or ()),
        ),
        observability=Observability(
            prometheus_retention=prom.get("retention", defaults.PROMETHEUS_RETENTION),
            prometheus_storage_gib=prom.get("storage_gib", defaults.PROMETHEUS_STORAGE_GIB),
            grafana_enabled=(obs.get("grafana") or {}).get("enabled", defaults.GRAFANA_ENABLED),
            alerts_enabled=(obs.get("alerts") or {}).get("enabled", defaults.ALERTS_ENABLED),
            **_alert_routing(obs.get("alerts") or {}),
        ),
        versions=Versions(**{k: str(v) for k, v in versions.items()}),
        waivers=waivers,
        source=doc.source,
        override_origins=MappingProxyType(origins),
        model_store_endpoint=env.get("model_store_endpoint"),
        model_store_secrets=StoreSecrets(**env["model_store_secrets"])
        if env.get("model_store_secrets")
        else None,
    )
    return _derive_autoscaling(resolved)


def _derive_autoscaling(env: Environment) -> Environment:
    """Models with `traffic` and no `autoscaling` scale on the targets their capacity
    estimate derives (`inferplane.blueprint.capacity.planner`)."""
    if not any(m.autoscaling_derived for m in env.models.values()):
        return env
    from inferplane.blueprint.capacity import planner  # only blueprints with traffic pay for it

    plans = planner.plan_env(env).plans
    models = {
        name: planner.with_derived_autoscaling(model, plans.get(name))
        for name, model in env.models.items()
    }
    return dataclasses.replace(env, models=MappingProxyType(models))


def _with_slash(uri: str) -> str:
    return uri if uri.endswith("/") else uri + "/"


def _pool(name: str, spec: Mapping[str, Any], cloud: str, env_zones: tuple[str, ...]) -> GpuPool:
    gpu = catalog.gpu(spec["gpu"])
    gpus_per_node = spec.get("gpus_per_node", defaults.POOL_GPUS_PER_NODE)
    explicit = spec.get("instance_type")
    # A kubernetes environment's nodes exist already; inferplane does not know their type.
    instance_type = (
        "" if cloud == "kubernetes" else explicit or gpu.instance_type(cloud, gpus_per_node)
    )
    if instance_type is None:  # semantic.check refuses this first; keep resolve total
        raise ValueError(f"no {cloud} instance type for {gpus_per_node} x {gpu.id}")
    nodes = spec.get("nodes") or {}
    sharing = spec.get("sharing", defaults.POOL_SHARING)
    return GpuPool(
        name=name,
        path=("gpu_pools", name),
        gpu=gpu,
        gpus_per_node=gpus_per_node,
        instance_type=instance_type,
        nodes=MinMax(
            nodes.get("min", defaults.POOL_NODES_MIN), nodes.get("max", defaults.POOL_NODES_MAX)
        ),
        capacity=spec.get("capacity", defaults.POOL_CAPACITY),
        sharing=sharing,
        mig_profile=spec.get("mig_profile") if sharing == "mig" else None,
        time_slices=spec.get("time_slices", defaults.POOL_TIME_SLICES)
        if sharing == "time_slicing"
        else 1,
        disk_gib=spec.get("disk_gib", defaults.POOL_DISK_GIB),
        spare_gpus=spec.get("spare_gpus", defaults.POOL_SPARE_GPUS),
        zones=tuple(spec.get("zones") or env_zones),
    )


def parse_source(source: str, model_store: str) -> ModelSource:
    """An absolute `ModelSource` for a blueprint `source`; relative ones resolve under the
    model store."""
    uri = source if "://" in source else model_store + source
    scheme, rest = uri.split("://", 1)
    if scheme == "hf":
        repo, _, revision = rest.partition("@")
        return ModelSource(
            uri=uri, scheme="hf", bucket=None, key=None, hf_repo=repo, hf_revision=revision or None
        )
    bucket, _, key = rest.partition("/")
    return ModelSource(uri=uri, scheme="s3" if scheme == "s3" else "gs", bucket=bucket, key=key)


def _model(
    name: str,
    spec: Mapping[str, Any],
    pools: Mapping[str, GpuPool],
    model_store: str,
    here: Path = Path(),
) -> Model:
    server = spec["server"]
    pool = pools[spec["pool"]]
    latency_class = spec.get("latency_class", defaults.MODEL_LATENCY_CLASS)
    realtime = latency_class == "realtime"
    rep_min, rep_max = defaults.default_replicas(realtime, len(pool.zones))
    replicas = spec.get("replicas") or {}
    rmin = replicas.get("min", rep_min)
    rmax = replicas.get("max", max(rep_max, rmin))
    slo = spec.get("slo")
    return Model(
        name=name,
        path=("models", name),
        server=server,
        source=parse_source(spec["source"], model_store),
        pool=pool.name,
        gpus=spec.get("gpus", defaults.MODEL_GPUS),
        latency_class=latency_class,
        precision=spec.get("precision", defaults.MODEL_PRECISION),
        replicas=MinMax(rmin, rmax),
        autoscaling=_autoscaling(spec.get("autoscaling")),
        slo=Slo(
            p95_ms=slo.get("p95_ms"),
            ttft_p95_ms=slo.get("ttft_p95_ms"),
            itl_p95_ms=slo.get("itl_p95_ms"),
        )
        if slo
        else None,
        expose=(spec.get("expose") or {}).get("protocol", defaults.EXPOSE_BY_SERVER[server]),
        secrets=tuple(
            SecretRef(
                name=key,
                path=("models", name, "secrets", key),
                from_env=ref.get("from_env"),
                from_pulumi_config=ref.get("from_pulumi_config"),
                from_secret_manager=ref.get("from_secret_manager"),
            )
            for key, ref in (spec.get("secrets") or {}).items()
        ),
        image=spec.get("image"),
        base_release=spec.get("base_release"),
        startup_timeout_s=spec.get("startup_timeout_s", defaults.STARTUP_TIMEOUT_S),
        max_request_s=spec.get("max_request_s", defaults.MAX_REQUEST_S),
        vllm=_vllm(spec.get("vllm") or {}, model_store) if server == "vllm" else None,
        tensorrt=_tensorrt(spec.get("tensorrt"))
        if resolve_triton.backend_of(spec) == "tensorrt"
        else None,
        tensorrt_llm=TensorRtLlm(**spec["tensorrt_llm"]) if "tensorrt_llm" in spec else None,
        batching=_batching(spec["batching"]) if "batching" in spec else None,
        response_cache=ResponseCache(
            enabled=spec["response_cache"].get("enabled", True),
            size_mb=spec["response_cache"].get("size_mb", defaults.RESPONSE_CACHE_SIZE_MB),
            backend=spec["response_cache"].get("backend", defaults.RESPONSE_CACHE_BACKEND),
        )
        if "response_cache" in spec
        else None,
        warmup=Warmup(batch_sizes=tuple(spec["warmup"].get("batch_sizes") or (1,)))
        if "warmup" in spec
        else None,
        wake=_wake(replicas.get("wake")),
        wake_hosts=tuple((replicas.get("wake") or {}).get("hosts") or ()),
        schedule=_schedule(replicas.get("schedule") or (), len(pool.zones)),
        llm=semantic_vllm.facts_of(spec)[0] if server == "vllm" or "tensorrt_llm" in spec else None,
        backend=resolve_triton.backend_of(spec),
        accelerator=spec.get("accelerator", "cuda"),
        inputs=resolve_triton.tensors(spec.get("inputs")),
        outputs=resolve_triton.tensors(spec.get("outputs")),
        shapes=resolve_triton.shapes(spec.get("shapes")),
        pipeline=resolve_triton.pipeline(spec.get("pipeline")),
        traffic=_traffic(spec.get("traffic")),
        profile=_profile(spec.get("profile"), here),
        budget_usd_per_month=(spec.get("budget") or {}).get("usd_per_month"),
        autoscaling_derived="traffic" in spec and "autoscaling" not in spec,
        routing=_routing(spec.get("routing") or {}),
    )


def _routing(spec: Mapping[str, Any]) -> Routing:
    return Routing(
        mode=spec.get("mode", defaults.ROUTING_MODE),
        prefix_cache=spec.get("prefix_cache", defaults.ROUTING_PREFIX_CACHE),
        flow_control=spec.get("flow_control", defaults.ROUTING_FLOW_CONTROL),
        priorities=tuple(sorted((spec.get("priorities") or {}).items())),
        pickers=spec.get("pickers", defaults.ROUTING_PICKERS),
    )


def _traffic(spec: Mapping[str, Any] | None) -> Traffic | None:
    if spec is None:
        return None
    return Traffic(
        peak_rps=float(spec["peak_rps"]),
        input_tokens=spec.get("input_tokens"),
        output_tokens=spec.get("output_tokens"),
        shared_prefix=float(spec.get("shared_prefix", 0.0)),
    )


def _profile(spec: Mapping[str, Any] | None, here: Path) -> tuple[tuple[int, float], ...]:
    """The profile's points, inline or from its CSV file (validation has read the file
    already, so an unreadable one here is empty)."""
    if not spec:
        return ()
    if "points" in spec:
        return tuple((p["batch_size"], float(p["p95_ms"])) for p in spec["points"])
    from inferplane.blueprint.capacity import profile

    try:
        return tuple(profile.read_csv(profile.read_file(here, spec["file"])))
    except (OSError, ValueError):
        return ()


def _autoscaling(spec: Mapping[str, Any] | list[Mapping[str, Any]] | None) -> Autoscaling:
    """One signal (a mapping, defaults filled in) or a list of signals."""
    if isinstance(spec, list):
        return Autoscaling(
            tuple(Signal(s["metric"], float(s["target"])) for s in spec),
            defaults.SCALE_DOWN_STABILIZATION_S,
        )
    auto = spec or {}
    return Autoscaling.single(
        auto.get("metric", defaults.MODEL_AUTOSCALING_METRIC),
        float(auto.get("target", defaults.MODEL_AUTOSCALING_TARGET)),
        auto.get("scale_down_stabilization_s", defaults.SCALE_DOWN_STABILIZATION_S),
    )


def _wake(spec: Mapping[str, Any] | None) -> Wake | None:
    """The schedule of `replicas.wake`; None without one (it may name only `hosts`)."""
    if spec is None or "schedule" not in spec:
        return None
    return Wake(
        schedule=" ".join(spec["schedule"].split()),
        duration_s=wake.parse_duration(spec["duration"]),
        timezone=spec.get("timezone", wake.DEFAULT_TIMEZONE),
    )


def _schedule(windows: Sequence[Mapping[str, Any]], zones: int) -> tuple[ScheduleWindow, ...]:
    return tuple(
        ScheduleWindow(
            schedule=" ".join(w["schedule"].split()),
            duration_s=wake.parse_duration(w["duration"]),
            timezone=w.get("timezone", wake.DEFAULT_TIMEZONE),
            min_per_zone=w["min"],
            replicas=w["min"] * max(zones, 1),
        )
        for w in windows
    )


def _vllm(spec: Mapping[str, Any], model_store: str) -> VllmSettings:
    plain = {k: v for k, v in spec.items() if k in _VLLM_PLAIN}
    spec_dec = spec.get("speculative")
    speculative = None
    if spec_dec:
        draft = spec_dec.get("draft_model")
        source = parse_source(draft, model_store) if draft else None
        speculative = Speculative(
            method=spec_dec["method"],
            num_speculative_tokens=spec_dec.get(
                "num_speculative_tokens", defaults.VLLM_SPECULATIVE_TOKENS
            ),
            draft_repo=source.hf_repo if source else None,
            draft_revision=source.hf_revision if source else None,
            prompt_lookup_max=spec_dec.get("prompt_lookup_max"),
            prompt_lookup_min=spec_dec.get("prompt_lookup_min"),
        )
    lora_spec = spec.get("lora")
    lora = None
    if lora_spec:
        adapters = tuple(
            LoraAdapter(name, parse_source(src, model_store))
            for name, src in lora_spec["adapters"].items()
        )
        lora = Lora(
            adapters=adapters,
            max_loras=lora_spec.get("max_loras", min(len(adapters), defaults.VLLM_MAX_LORAS)),
            max_lora_rank=lora_spec.get("max_lora_rank"),
        )
    return VllmSettings(
        **plain,
        speculative=speculative,
        lora=lora,
        served_model_aliases=tuple(spec.get("served_model_aliases") or ()),
        extra_args=tuple(spec.get("extra_args") or ()),
        env=tuple((spec.get("env") or {}).items()),
    )


_VLLM_PLAIN = frozenset(
    {
        "max_model_len",
        "max_num_seqs",
        "max_num_batched_tokens",
        "gpu_memory_utilization",
        "enable_prefix_caching",
        "enable_chunked_prefill",
        "kv_cache_dtype",
        "quantization",
        "enforce_eager",
        "chat_template",
        "tool_call_parser",
    }
)


def _tensorrt(spec: Mapping[str, Any] | None) -> TensorRt:
    spec = spec or {}
    return TensorRt(
        inputs=tuple(
            TensorRtInput(
                name, tuple(s["min"]), tuple(s["opt"]), tuple(s["max"]), s.get("data_type")
            )
            for name, s in (spec.get("inputs") or {}).items()
        ),
        workspace_mib=spec.get("workspace_mib"),
        builder_optimization_level=spec.get(
            "builder_optimization_level", defaults.TENSORRT_BUILDER_OPTIMIZATION_LEVEL
        ),
    )


def _batching(spec: Mapping[str, Any]) -> Batching:
    return Batching(
        max_batch_size=spec["max_batch_size"],
        max_queue_delay_us=spec.get("max_queue_delay_us", defaults.BATCHING_MAX_QUEUE_DELAY_US),
        preferred_batch_sizes=tuple(spec.get("preferred_batch_sizes") or ()),
    )


def _receiver_secret(
    spec: Mapping[str, Any], i: int, name: str, integration: str, field: str, suffix: str
) -> SecretRef | None:
    ref = (spec.get(integration) or {}).get(field)
    if ref is None:
        return None
    return SecretRef(
        name=f"{name}-{suffix}",
        path=("observability", "alerts", "receivers", i, integration, field),
        from_env=ref.get("from_env"),
        from_pulumi_config=ref.get("from_pulumi_config"),
        from_secret_manager=ref.get("from_secret_manager"),
    )


def _alert_routing(alerts: Mapping[str, Any]) -> dict[str, Any]:
    """`Observability`'s receivers and route receiver (default: the first receiver)."""
    receivers = []
    for i, spec in enumerate(alerts.get("receivers") or []):
        name = spec["name"]
        refs = {
            suffix: _receiver_secret(spec, i, name, integration, field, suffix)
            for integration, field, suffix in RECEIVER_SECRETS
        }
        receivers.append(
            AlertReceiver(
                name=name,
                path=("observability", "alerts", "receivers", i),
                slack_channel=(spec.get("slack") or {}).get("channel"),
                slack_api_url=refs["slack-api-url"],
                pagerduty_routing_key=refs["pagerduty-routing-key"],
                webhook_url=refs["webhook-url"],
            )
        )
    route = (alerts.get("route") or {}).get("receiver")
    if route is None and receivers:
        route = receivers[0].name
    return {"alert_receivers": tuple(receivers), "alert_route_receiver": route}
