"""Semantic checks: what the JSON Schema cannot express.

They run per environment on the merged view (base + overrides), so a problem that an
override introduces points into `environments.<env>.overrides`. A problem in the base
blueprint is reported once, however many environments see it.

This module runs them, in a fixed order (the order of the report); each area's checks live
in a module of their own: `semantic_environment` (region, zones, cluster, model store),
`semantic_store` (where it reads in storage), `semantic_pools`, `semantic_models`,
`semantic_secrets`, `semantic_waivers`, and the
`semantic_*` modules listed in `CHECKS`.
"""

from __future__ import annotations

from collections.abc import Callable

from inferplane.blueprint.checks import (
    semantic_addons,
    semantic_cache,
    semantic_capacity_sources,
    semantic_environment,
    semantic_gke,
    semantic_karpenter,
    semantic_karpenter_ami,
    semantic_kubernetes,
    semantic_models,
    semantic_names,
    semantic_network,
    semantic_pipeline,
    semantic_pools,
    semantic_releases,
    semantic_rollout,
    semantic_routing,
    semantic_scale_out,
    semantic_secrets,
    semantic_serving,
    semantic_spare,
    semantic_store,
    semantic_triton,
    semantic_units,
    semantic_vllm,
    semantic_waivers,
    semantic_wake_path,
    semantic_zones,
)
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.errors import Diagnostic, Location
from inferplane.blueprint.source import Document

Check = Callable[[EnvView], None]
CHECKS: list[Check] = [
    semantic_environment.check_region_and_zones,
    semantic_environment.check_cluster,
    semantic_environment.check_model_store,
    semantic_store.check_store_paths,
    semantic_pools.check_pools_fit_catalog,
    semantic_models.check_models,
    semantic_units.check_units,
    semantic_secrets.check_secret_refs,
    # LLM models: GPU memory fit, tensor parallelism, vLLM settings and pass-through.
    semantic_vllm.check_env,
    # Checks that see defaults, derived names and the cloud's limits.
    semantic_serving.check_defaulted_ranges,
    semantic_spare.check_spare_gpus,
    semantic_capacity_sources.check_capacity_sources,
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
    semantic_zones.check_gcp_zones,
    semantic_zones.check_aws_zones,
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
    semantic_karpenter_ami.check_karpenter_ami,
    semantic_wake_path.check_wake_path,
    semantic_routing.check_routing,
    semantic_scale_out.check_levers,
    semantic_rollout.check_rollouts,
    semantic_kubernetes.check_kubernetes,
]


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
    out.extend(semantic_waivers.check_waivers(doc))
    out.extend(semantic_network.check_waiver_dates(doc))
    return out


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


__all__ = ["check"]
