"""The environment facts: what a stack publishes about its environment for the rules.

CrossGuard never sees the blueprint, so every stack deploys the `naming.ENVIRONMENT_CONFIGMAP`
ConfigMap with the facts the rules need (zones, GPU pools, the environment's waivers, each
model's scale-out inputs). This module is the one contract for that ConfigMap:

- `environment_facts(env)` builds the facts from a resolved `Environment`;
- `to_config_map(facts)` writes them as the ConfigMap's `data`;
- `from_config_map(data)` reads them back, strictly: a missing or unknown key, a value of
  the wrong type or another `FACTS_VERSION` raises `FactsError` naming the key.

The stack writes with the first two; the rules read with the third, online (the CrossGuard
pack) and offline (`inferplane check`) alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from inferplane.blueprint.derived.scale_out import RUNTIMES, ScaleOutInputs, inputs_of
from inferplane.blueprint.model import Environment, GpuPool, Waiver

FACTS_VERSION = "5"
"""Bump when a key changes meaning; a reader refuses any other version."""

T = TypeVar("T")


class FactsError(ValueError):
    """The environment ConfigMap does not hold facts this version can read."""


@dataclass(frozen=True)
class PoolFacts:
    """One GPU pool as the rules see it."""

    name: str
    gpu: str
    """Catalog id of the GPU (`nvidia-l4`, ...)."""
    gpus_per_node: int
    gpu_resource: str
    """The extended resource pods request on this pool (`nvidia.com/gpu`, `nvidia.com/mig-…`)."""
    slices_per_gpu: int
    units_per_node: int
    """`gpu_resource` units one node offers the scheduler (`GpuPool.gpu_units_per_node`)."""
    sharing: str
    zones: tuple[str, ...]
    nodes_min: int
    """Nodes per zone, at least."""
    nodes_max: int
    """Nodes per zone, at most."""


@dataclass(frozen=True)
class EnvFacts:
    """One environment of a blueprint as its stack describes it."""

    blueprint: str
    environment: str
    cloud: str
    region: str
    zones: tuple[str, ...]
    pools: Mapping[str, PoolFacts]
    waivers: tuple[Waiver, ...]
    """The blueprint's waivers that apply to this environment."""
    models: Mapping[str, ScaleOutInputs]
    """Per model, what its scale-out budget rests on (`inferplane.blueprint.derived.scale_out`)."""


def pool_facts(pool: GpuPool) -> PoolFacts:
    return PoolFacts(
        name=pool.name,
        gpu=pool.gpu.id,
        gpus_per_node=pool.gpus_per_node,
        gpu_resource=pool.gpu_resource,
        slices_per_gpu=pool.slices_per_gpu,
        units_per_node=pool.gpu_units_per_node,
        sharing=pool.sharing,
        zones=tuple(pool.zones),
        nodes_min=pool.nodes.min,
        nodes_max=pool.nodes.max,
    )


def environment_facts(env: Environment) -> EnvFacts:
    """The facts of `env`: the only place they are derived from a resolved environment."""
    return EnvFacts(
        blueprint=env.blueprint,
        environment=env.name,
        cloud=env.cloud,
        region=env.region,
        zones=tuple(env.zones),
        pools={name: pool_facts(pool) for name, pool in env.pools.items()},
        waivers=tuple(w for w in env.waivers if w.applies_to(env.name)),
        models={name: inputs_of(env, env.models[name]) for name in sorted(env.models)},
    )


# --- writing ---------------------------------------------------------------------------

_POOL_KEYS = (
    "gpu",
    "gpus_per_node",
    "gpu_resource",
    "slices_per_gpu",
    "units_per_node",
    "sharing",
    "zones",
    "nodes_min",
    "nodes_max",
)
_WAIVER_KEYS = ("rule", "target", "environments", "reason", "expires", "path")
_MODEL_KEYS = (
    "latency_class",
    "runtime",
    "pool",
    "units_per_replica",
    "spare_units",
    "idle_units",
    "weights_gb",
    "weights_basis",
    "weights_precision_bytes",
    "store",
    "warmup_batches",
    "from_zero",
    "compile_cache",
    "ort_trt_build",
    "cloud",
    "budget_s",
    "levers",
    "options",
)
_KEYS = (
    "version",
    "blueprint",
    "environment",
    "cloud",
    "region",
    "zones",
    "pools",
    "waivers",
    "models",
)


def _pool_json(pool: PoolFacts) -> dict[str, Any]:
    out = {key: getattr(pool, key) for key in _POOL_KEYS}
    out["zones"] = list(pool.zones)
    return out


def _waiver_json(waiver: Waiver) -> dict[str, Any]:
    return {
        "rule": waiver.rule,
        "target": waiver.target,
        "environments": None if waiver.environments is None else list(waiver.environments),
        "reason": waiver.reason,
        "expires": waiver.expires,
        # Where the waiver sits in the blueprint, so an online result can name it.
        "path": list(waiver.path),
    }


def _model_json(model: ScaleOutInputs) -> dict[str, Any]:
    out = {key: getattr(model, key) for key in _MODEL_KEYS}
    out["levers"] = list(model.levers)
    out["options"] = dict(model.options)
    return out


def to_config_map(facts: EnvFacts) -> dict[str, str]:
    """The ConfigMap `data` (string values; structured ones as canonical JSON)."""
    return {
        "version": FACTS_VERSION,
        "blueprint": facts.blueprint,
        "environment": facts.environment,
        "cloud": facts.cloud,
        "region": facts.region,
        "zones": json.dumps(list(facts.zones)),
        "pools": json.dumps(
            {name: _pool_json(p) for name, p in facts.pools.items()}, sort_keys=True
        ),
        "waivers": json.dumps([_waiver_json(w) for w in facts.waivers], sort_keys=True),
        "models": json.dumps(
            {name: _model_json(m) for name, m in facts.models.items()},
            sort_keys=True,
        ),
    }


# --- reading ---------------------------------------------------------------------------


def _keys(where: str, data: Mapping[str, Any], expected: tuple[str, ...]) -> None:
    missing = [k for k in expected if k not in data]
    unknown = sorted(str(k) for k in data if k not in expected)
    if missing or unknown:
        parts = []
        if missing:
            parts.append("missing " + ", ".join(missing))
        if unknown:
            parts.append("unknown " + ", ".join(unknown))
        raise FactsError(f"{where}: {'; '.join(parts)} (facts version {FACTS_VERSION})")


def _typed(where: str, value: Any, kind: type[T]) -> T:
    # bool is an int to Python, never to this contract.
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise FactsError(f"{where}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _strings(where: str, value: Any) -> tuple[str, ...]:
    items = _typed(where, value, list)
    return tuple(_typed(f"{where}[{i}]", v, str) for i, v in enumerate(items))


def _json(where: str, text: str, kind: type[T]) -> T:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise FactsError(f"{where}: not JSON ({exc})") from None
    return _typed(where, value, kind)


def _pool(name: str, raw: Any) -> PoolFacts:
    where = f"pools.{name}"
    data = _typed(where, raw, dict)
    _keys(where, data, _POOL_KEYS)

    def num(key: str) -> int:
        return _typed(f"{where}.{key}", data[key], int)

    def text(key: str) -> str:
        return _typed(f"{where}.{key}", data[key], str)

    return PoolFacts(
        name=name,
        gpu=text("gpu"),
        gpus_per_node=num("gpus_per_node"),
        gpu_resource=text("gpu_resource"),
        slices_per_gpu=num("slices_per_gpu"),
        units_per_node=num("units_per_node"),
        sharing=text("sharing"),
        zones=_strings(f"{where}.zones", data["zones"]),
        nodes_min=num("nodes_min"),
        nodes_max=num("nodes_max"),
    )


def _waiver(index: int, raw: Any) -> Waiver:
    where = f"waivers[{index}]"
    data = _typed(where, raw, dict)
    _keys(where, data, _WAIVER_KEYS)
    envs = data["environments"]
    path = _typed(f"{where}.path", data["path"], list)
    for i, part in enumerate(path):
        if not isinstance(part, str | int) or isinstance(part, bool):
            raise FactsError(f"{where}.path[{i}]: expected str or int")
    return Waiver(
        rule=_typed(f"{where}.rule", data["rule"], str),
        target=_typed(f"{where}.target", data["target"], str),
        environments=None if envs is None else _strings(f"{where}.environments", envs),
        reason=_typed(f"{where}.reason", data["reason"], str),
        expires=_typed(f"{where}.expires", data["expires"], str),
        path=tuple(path),
    )


def _number(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise FactsError(f"{where}: expected number, got {type(value).__name__}")
    return float(value)


def _model(name: str, raw: Any) -> ScaleOutInputs:
    where = f"models.{name}"
    data = _typed(where, raw, dict)
    _keys(where, data, _MODEL_KEYS)

    def num(key: str) -> int:
        return _typed(f"{where}.{key}", data[key], int)

    def text(key: str) -> str:
        return _typed(f"{where}.{key}", data[key], str)

    runtime = text("runtime")
    if runtime not in RUNTIMES:
        raise FactsError(f"{where}.runtime: {runtime!r} is not one of {', '.join(RUNTIMES)}")
    weights = data["weights_gb"]
    return ScaleOutInputs(
        latency_class=text("latency_class"),
        runtime=runtime,
        pool=text("pool"),
        units_per_replica=num("units_per_replica"),
        spare_units=num("spare_units"),
        idle_units=num("idle_units"),
        weights_gb=None if weights is None else _number(f"{where}.weights_gb", weights),
        weights_basis=text("weights_basis"),
        weights_precision_bytes=_number(
            f"{where}.weights_precision_bytes", data["weights_precision_bytes"]
        ),
        store=text("store"),
        warmup_batches=num("warmup_batches"),
        from_zero=_typed(f"{where}.from_zero", data["from_zero"], bool),
        compile_cache=_typed(f"{where}.compile_cache", data["compile_cache"], bool),
        ort_trt_build=_typed(f"{where}.ort_trt_build", data["ort_trt_build"], bool),
        cloud=text("cloud"),
        budget_s=None if data["budget_s"] is None else num("budget_s"),
        levers=_strings(f"{where}.levers", data["levers"]),
        options=_options(f"{where}.options", data["options"]),
    )


def _options(where: str, raw: Any) -> dict[str, float | None]:
    data = _typed(where, raw, dict)
    return {str(k): None if v is None else _number(f"{where}.{k}", v) for k, v in data.items()}


def from_config_map(data: Mapping[str, Any]) -> EnvFacts:
    """The facts in a ConfigMap's `data`; FactsError names the first key that is wrong."""
    _keys("environment facts", data, _KEYS)
    text: Callable[[str], str] = lambda key: _typed(key, data[key], str)  # noqa: E731
    if text("version") != FACTS_VERSION:
        raise FactsError(
            f"version: {data['version']!r} is not the version this inferplane reads "
            f"({FACTS_VERSION!r}); check with the inferplane that deployed the stack"
        )
    pools = _json("pools", text("pools"), dict)
    waivers = _json("waivers", text("waivers"), list)
    models = _json("models", text("models"), dict)
    return EnvFacts(
        blueprint=text("blueprint"),
        environment=text("environment"),
        cloud=text("cloud"),
        region=text("region"),
        zones=_strings("zones", _json("zones", text("zones"), list)),
        pools={name: _pool(name, raw) for name, raw in pools.items()},
        waivers=tuple(_waiver(i, raw) for i, raw in enumerate(waivers)),
        models={name: _model(name, raw) for name, raw in models.items()},
    )
