"""From a blueprint file to one resolved `Environment` per environment.

    load_blueprint(path)      strict load + JSON Schema + semantic checks (all environments)
    resolve(doc, env)         overrides merged, defaults applied, sources absolute, catalog
    resolve_file(path, env)   both, for one environment

Validation always covers the whole blueprint before anything is resolved, so an error in
one environment stops every environment: nothing is provisioned from a half-valid file.

This module resolves what is environment-wide (cluster, pools, load balancer,
observability, versions, waivers); `resolve_model` resolves each model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from inferplane.blueprint import catalog, defaults
from inferplane.blueprint.addons import resolve_addons
from inferplane.blueprint.errors import BlueprintError, Diagnostic, YamlPath
from inferplane.blueprint.loading.overrides import merged
from inferplane.blueprint.model import (
    AlertReceiver,
    Capacity,
    CapacitySource,
    ClusterSpec,
    Environment,
    GpuPool,
    LoadBalancer,
    MinMax,
    Observability,
    SecretRef,
    StoreSecrets,
    Versions,
    Waiver,
)
from inferplane.blueprint.resolution.resolve_model import resolve_model
from inferplane.blueprint.secret_refs import RECEIVER_SECRETS
from inferplane.blueprint.source import Document

if TYPE_CHECKING:
    from inferplane.blueprint.capacity.plans import EnvPlan
    from inferplane.blueprint.derived import scale_out


# --- loading and validation ---------------------------------------------------------------
def load_blueprint(path: str | Path) -> tuple[Document, tuple[str, ...]]:
    """Load and fully validate a blueprint; returns it with its environment names.

    Raises BlueprintError with every problem found (schema first: semantic checks only run
    on a document whose shape is right, so they never trip over a wrong type; the capacity
    plan's errors last), and for a path through a symbolic link that leaves its folder
    (`links`).
    """
    doc, names, _ = load_blueprint_warned(path)
    return doc, names


def _load_checked(path: str | Path) -> tuple[Document, tuple[str, ...]]:
    """`load_blueprint` without the capacity plan: the link, the schema and the semantic
    checks."""
    from inferplane.blueprint.checks import semantic
    from inferplane.blueprint.loading import loader, schema
    from inferplane.blueprint.loading.links import refuse_escaping_link

    refuse_escaping_link(path, str(path))
    doc = loader.load(path)
    problems = schema.validate_document(doc)
    if problems:
        raise BlueprintError(problems)
    problems = semantic.check(doc)
    if problems:
        raise BlueprintError(problems)
    return doc, tuple(doc.data["environments"])


def load_blueprint_warned(
    path: str | Path,
) -> tuple[Document, tuple[str, ...], list[Diagnostic]]:
    """`load_blueprint`, with the capacity plan's advisories (warnings) of the valid
    blueprint, which `inferplane validate` prints: each environment is planned once for
    both its errors and its warnings."""
    doc, names = _load_checked(path)
    found = capacity_diagnostics(doc)
    problems = [d for d in found if d.severity == "error"]
    if problems:
        raise BlueprintError(problems)
    return doc, names, [d for d in found if d.severity == "warning"]


def capacity_diagnostics(doc: Document) -> list[Diagnostic]:
    """The capacity plan's errors and advisories (`semantic_capacity`) of a blueprint that
    passed the semantic checks: each environment with traffic resolved and planned, once
    (the plan that derives its autoscaling targets is the plan judged)."""
    from inferplane.blueprint.checks import semantic_capacity

    planned = [
        resolve_planned(doc, name)
        for name in doc.data["environments"]
        if semantic_capacity.has_traffic(doc, name)
    ]
    return semantic_capacity.diagnostics(planned)


def resolve_file(
    path: str | Path, env_name: str, platform: scale_out.Platform | None = None
) -> Environment:
    """Validate the blueprint at `path` and resolve environment `env_name` (`resolve`)."""
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
    return resolve(doc, env_name, platform)


# --- resolution ---------------------------------------------------------------------------
def resolve(
    doc: Document, env_name: str, platform: scale_out.Platform | None = None
) -> Environment:
    """Resolve one environment of a validated blueprint (see `load_blueprint`). `platform`
    is what the platform's policy config sets for scale-outs (``levers: auto`` chooses
    against it); None: the ``scale-out-budget`` rule's defaults."""
    return resolve_planned(doc, env_name, plan=False, platform=platform)[0]


def resolve_planned(
    doc: Document,
    env_name: str,
    *,
    plan: bool = True,
    platform: scale_out.Platform | None = None,
) -> tuple[Environment, EnvPlan | None]:
    """`resolve`, with the environment's capacity plan (`capacity.planner.plan_env`, the
    built-in prices): one plan derives the autoscaling targets and is judged. The plan is
    None when `plan` is false and no model's targets are derived, or when no model states
    `traffic`.
    """
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
        name: resolve_model(name, spec, pools, model_store, here)
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
            addons=resolve_addons(cluster.get("addons"), cluster.get("existing")),
            context=cluster.get("context"),
            load_balancer=cluster.get("load_balancer", defaults.SERVICE_TYPE),
            dataplane=cluster.get("dataplane", "other"),
        ),
        pools=MappingProxyType(pools),
        models=MappingProxyType(models),
        load_balancer=LoadBalancer(
            scheme=lb.get("scheme", defaults.LB_SCHEME),
            allowed_cidrs=tuple(lb.get("allowed_cidrs") or ()),
            client_namespaces=tuple(lb.get("client_namespaces") or ()),
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
        model_store_pod_labels=MappingProxyType(dict(env.get("model_store_pod_labels") or {})),
        model_store_secrets=StoreSecrets(**env["model_store_secrets"])
        if env.get("model_store_secrets")
        else None,
    )
    from inferplane.blueprint.derived import levers

    resolved = levers.apply(resolved, platform)
    derived = any(m.autoscaling_derived for m in resolved.models.values())
    if not (derived or (plan and any(m.traffic for m in resolved.models.values()))):
        return resolved, None
    from inferplane.blueprint.capacity import planner  # only blueprints with traffic pay for it

    # The planner reads no model's derived targets (`verdicts` judges only targets the
    # blueprint writes), so the plan made before they are set is the plan after.
    capacity = planner.plan_env(resolved)
    return _derive_autoscaling(resolved, capacity), capacity


def _derive_autoscaling(env: Environment, capacity: EnvPlan) -> Environment:
    """Models with `traffic` and no `autoscaling` scale on the targets their capacity
    estimate derives (`inferplane.blueprint.capacity.planner`)."""
    if not any(m.autoscaling_derived for m in env.models.values()):
        return env
    from inferplane.blueprint.capacity import planner

    models = {
        name: planner.with_derived_autoscaling(model, capacity.plans.get(name))
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
    zones = tuple(spec.get("zones") or env_zones)
    sources = _capacity_sources(name, spec.get("capacity", defaults.POOL_CAPACITY), zones)
    return GpuPool(
        name=name,
        path=("gpu_pools", name),
        gpu=gpu,
        gpus_per_node=gpus_per_node,
        instance_type=instance_type,
        nodes=MinMax(
            nodes.get("min", defaults.POOL_NODES_MIN), nodes.get("max", defaults.POOL_NODES_MAX)
        ),
        capacity=_market(spec.get("capacity", defaults.POOL_CAPACITY), sources),
        sharing=sharing,
        mig_profile=spec.get("mig_profile") if sharing == "mig" else None,
        time_slices=spec.get("time_slices", defaults.POOL_TIME_SLICES)
        if sharing == "time_slicing"
        else 1,
        disk_gib=spec.get("disk_gib", defaults.POOL_DISK_GIB),
        spare_gpus=spec.get("spare_gpus", defaults.POOL_SPARE_GPUS),
        zones=zones,
        capacity_sources=sources,
    )


def _market(raw: Any, sources: tuple[CapacitySource, ...]) -> Capacity:
    """The scalar `capacity`, or the market of a list's first source."""
    if isinstance(raw, str):
        return "spot" if raw == "spot" else "on_demand"
    return "spot" if sources and sources[0].kind == "spot" else "on_demand"


def _capacity_sources(name: str, raw: Any, zones: tuple[str, ...]) -> tuple[CapacitySource, ...]:
    """`gpu_pools.<pool>.capacity` as sources: none for a scalar (`GpuPool.sources_in`
    reads `capacity` then); a list keeps its order. A reservation or block without `zone`
    serves the pool's one zone (`semantic_capacity_sources` refuses it on a pool of
    several)."""
    path: YamlPath = ("gpu_pools", name, "capacity")
    if isinstance(raw, str):
        return ()
    out: list[CapacitySource] = []
    for i, item in enumerate(raw):
        at: YamlPath = (*path, i)
        if isinstance(item, str):
            out.append(CapacitySource(item, at))  # type: ignore[arg-type]
            continue
        zone = item.get("zone") or (zones[0] if len(zones) == 1 else None)
        if "reservation" in item:
            out.append(
                CapacitySource("reservation", at, reservation=item["reservation"], zone=zone)
            )
            continue
        block = item.get("capacity_block") or {}
        out.append(
            CapacitySource(
                "capacity_block",
                at,
                reservation=block.get("id"),
                zone=zone,
                ends=block.get("ends"),
                offering_hours=block.get("hours"),
                buy=bool(block.get("buy", False)),
            )
        )
    return tuple(out)


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
