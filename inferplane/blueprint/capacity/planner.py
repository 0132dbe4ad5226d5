"""One model's capacity plan in one environment: replicas, nodes, batch, targets and cost.

`plan_env` estimates every model of an environment that states `traffic`, and returns the
plans with their problems: errors (`validate` refuses them) and advisories (`validate` and
`plan` print them). The rules:

- replicas: the peak is spread evenly over the pool's zones and each zone routes to its own
  replicas (same-zone placement), so each zone needs ``ceil(peak / zones / per-replica
  rps)`` replicas and the model ``zones ×`` that. When even the optimistic end of the
  estimate's band needs more than ``replicas.max``, or the pool's models need more nodes
  per zone than ``nodes.max``, the blueprint cannot carry its peak: an error with the number
  needed. When only the central estimate or the pessimistic end needs more: an advisory.
  These verdicts, and those on cost and targets below, are `verdicts.judge`'s.
- Triton: a batching window at or above ``slo.p95_ms`` leaves no time to compute: an error.
  A request of ``traffic.items_per_request`` items fills that many rows of a profiled batch
  (`profile.estimate`), so requests per second are the batch's requests over its latency.
- autoscaling: where the blueprint sets no `autoscaling`, the targets are derived (and
  rendered into the ScaledObject) so that the HPA acts before the SLO breaks (`targets`):
  an LLM's requests running plus waiting against the planned batch, Triton's queue against
  what a replica drains within the SLO's slack, vLLM's TTFT below ``slo.ttft_p95_ms``. An
  explicit target above the derived one of its metric acts after the SLO breaks, and so
  does an LLM's explicit queue target while the planned batch is below the engine's batch
  limit (nothing waits until that limit): advisories.
- cost (`cost`): whole nodes per zone at their on-demand price (the platform's `prices`
  first), at the floor, at the peak and over a month in which each `replicas.schedule`
  window runs at its own floor or the peak, whichever is larger.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from inferplane.blueprint.capacity import cost as costs
from inferplane.blueprint.capacity import load, prices, profile, roofline, targets, verdicts
from inferplane.blueprint.capacity.plans import EnvPlan, Plan, Problem, Window
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.model import Autoscaling, Environment, Model, zone_share

HOURS_PER_MONTH = costs.HOURS_PER_MONTH
NO_PRICES: Mapping[tuple[str, str], prices.Price] = {}


def _needed(peak: float, rps: float, zones: int) -> tuple[int, int]:
    """(per zone, total) replicas for `peak` at `rps` each."""
    if rps <= 0:
        return 0, 0
    per_zone = math.ceil(peak / zones / rps - 1e-9)
    return per_zone, per_zone * zones


@dataclass(frozen=True)
class _Estimate:
    source: str
    band: float
    rps: tuple[float, float, float]
    batch: int
    limited_by: str
    latency: str
    slack_s: float
    """What the SLO leaves a request beyond its own latency: the time a queue may wait."""
    window_fits_us: int | None
    requests: int = 0
    """Requests in the planned batch where a request is several batch items (0: the batch)."""
    band_fast: float | None = None
    calibration: str = ""
    model_basis: str = ""


def _band_text(llm: roofline.LlmLoad) -> str:
    if llm.fast_band == llm.band:
        return f"±{llm.band:.0%}"
    return f"-{llm.band:.0%}/+{llm.fast_band:.0%}"


def _calibration(llm: roofline.LlmLoad, gpu: str) -> str:
    """What bounds the estimate on `gpu`, for `inferplane plan`."""
    if llm.kernel is not None:
        return (
            f"never faster than the kernel floor measured on {gpu} "
            f"({llm.kernel.source}); the band's optimistic end is how much faster than the "
            "estimate those kernels ran"
        )
    if llm.timings is not None:
        return ""
    return (
        f"no kernel floor is measured on {gpu}: the band is the datasheet roofline's, "
        "calibrated on A100 and H100 vLLM points only"
    )


def _estimate(model: Model, env: Environment, out: EnvPlan) -> _Estimate | None:
    """The per-replica estimate from the roofline (LLMs) or the profile (Triton)."""
    path: YamlPath = ("models", model.name)
    pool = env.pool_of(model)
    if model.llm is not None and (model.vllm is not None or model.tensorrt_llm is not None):
        llm, why = load.llm_load(model, pool, env.versions.vllm)
        if llm is None:
            out.skipped[model.name] = why
            return None
        low, mid, high = roofline.banded(llm)
        engine = llm.engine_source
        name = "aiconfigurator" if engine is not None else "roofline"
        if engine is not None and engine.mismatch:
            out.problems.append(
                Problem(
                    "warning",
                    (*path, "traffic"),
                    f"the estimate comes from {engine.describe()}, and the model runs vLLM "
                    f"{engine.pinned}: kernels and scheduling differ between versions",
                    "measure the model on its own version (scripts/measure/measure_capacity.py)",
                )
            )
        if engine is None and llm.experts and llm.weight_bytes < 2:
            out.problems.append(
                Problem(
                    "warning",
                    (*path, "traffic"),
                    f"the roofline reads this mixture of experts' {llm.weight_bytes:g}-byte "
                    "weights at the GPU's bandwidth, and vLLM's quantized MoE kernels do not: "
                    "aiconfigurator-core 0.12.0's measured vLLM 0.24.0 operations decode "
                    "Qwen3-30B-A3B-FP8 on an H100 no faster than the 16-bit model (25.4 against "
                    "28.3 ms a step of 128 sequences), and plan it at 19.6 requests/s where the "
                    "roofline says 50: the estimate may be that optimistic",
                    "install the capacity extra (pip install 'inferplane[capacity]') to time "
                    "the checkpoint where aiconfigurator has it, or measure it "
                    "(scripts/measure/measure_capacity.py)",
                )
            )
        if high.point is None:
            first = high.first
            if high.limited_by == "KV cache":
                out.problems.append(
                    Problem(
                        "error",
                        (*path, "traffic", "input_tokens"),
                        f"one request of {llm.input_tokens + llm.output_tokens} tokens does "
                        "not fit the KV cache left on the replica's GPUs",
                        "shorten the requests, quantize the KV cache, or add GPUs",
                    )
                )
            else:
                value = {"ttft_p95_ms": first.ttft_ms, "itl_p95_ms": first.itl_ms}.get(
                    high.limited_by, first.e2e_ms
                )
                out.problems.append(
                    Problem(
                        "error",
                        (*path, "slo", high.limited_by),
                        f"even one request at a time takes {value:.0f} ms at the optimistic "
                        f"end of the {name} estimate ({_band_text(llm)}) on "
                        f"{model.gpus} x {pool.gpu.id}: the SLO cannot be met at any batch",
                        "relax the SLO, shorten the prompt (traffic.input_tokens), or serve on "
                        "more or faster GPUs",
                    )
                )
            return None
        p = mid.point or high.point
        slo = model.slo
        if slo and slo.ttft_p95_ms:
            slack = max(0.0, slo.ttft_p95_ms - p.ttft_ms) / 1000
        elif slo and slo.p95_ms:
            slack = max(0.0, slo.p95_ms - p.e2e_ms) / 1000
        else:
            slack = p.e2e_ms / 1000
        rps = (
            roofline.request_rps(llm, low.point) if low.point else 0.0,
            roofline.request_rps(llm, mid.point) if mid.point else 0.0,
            roofline.request_rps(llm, high.point),
        )
        latency = f"TTFT {p.ttft_ms:.0f} ms, ITL {p.itl_ms:.1f} ms, request {p.e2e_ms:.0f} ms"
        clips = load.clip_tokens(model)
        if clips is not None:
            latency += (
                f"; a request of {model.traffic.audio_seconds:g} s of audio is "
                f"{clips[0]} clip(s) of 30 s at most, each an engine sequence of "
                f"{clips[1]} prompt + {clips[2]} output tokens"
                if model.traffic and model.traffic.audio_seconds
                else ""
            )
        limited = (mid if mid.point else high).limited_by
        # Named as the profile's are: the blueprint field that stops the batch growing.
        if limited.endswith("_ms"):
            limited = f"slo.{limited}"
        elif limited == "engine batch limit":
            limited = load.batch_setting(model)
        return _Estimate(
            name,
            llm.band,
            rps,
            p.batch,
            limited,
            latency,
            slack,
            None,
            band_fast=llm.fast_band,
            calibration=_calibration(llm, pool.gpu.id),
            model_basis=load.model_basis(model),
        )
    if not model.profile:
        out.skipped[model.name] = "no profile (measured latency per batch size)"
        return None
    if model.slo is None or model.slo.p95_ms is None:
        out.skipped[model.name] = "no slo.p95_ms to fit the batch into"
        return None
    slo_ms, window = model.slo.p95_ms, load.window_us(model)
    if window / 1000 >= slo_ms:
        out.problems.append(
            Problem(
                "error",
                (*path, "batching", "max_queue_delay_us"),
                f"the batching window ({window / 1000:g} ms) uses up the latency budget "
                f"(slo.p95_ms {slo_ms} ms): no time is left to compute the batch",
                "shorten the window (a realtime model keeps it at 10 ms or less) or relax the SLO",
            )
        )
        return None
    if all(b > load.max_batch(model) for b, _ in model.profile):
        # Validation refuses it at the profile (`semantic_capacity`); never blame the SLO.
        out.skipped[model.name] = (
            f"no measured batch size at or below batching.max_batch_size ({load.max_batch(model)})"
        )
        return None
    band = profile.BAND
    items = model.traffic.items_per_request if model.traffic else 1
    ests = [
        profile.estimate(model.profile, slo_ms, window, load.max_batch(model), s, items)
        for s in (1 - band, 1.0, 1 + band)
    ]
    if ests[2].batch == 0:
        alone = profile.estimate(model.profile, slo_ms, 0, load.max_batch(model), 1 + band, items)
        where = "batching" if alone.batch and window else "slo"
        field_ = "max_queue_delay_us" if where == "batching" else "p95_ms"
        out.problems.append(
            Problem(
                "error",
                (*path, where, field_),
                f"no measured batch fits slo.p95_ms {slo_ms} ms with a {window / 1000:g} ms "
                "batching window, even at the optimistic end of the profile's band "
                f"(±{band:.0%})",
                f"shorten the batching window to {alone.window_fits_us} us or less"
                if where == "batching"
                else "relax the SLO or serve on a faster GPU",
            )
        )
        return None
    at = ests[1] if ests[1].batch else ests[2]
    slack = max(0.0, slo_ms - at.latency_ms - window / 1000) / 1000
    rps = (ests[0].rps, ests[1].rps, ests[2].rps)
    latency = f"p95 {at.latency_ms:g} ms + window {window / 1000:g} ms"
    if items > 1:
        latency += f"; {at.requests} requests of {items} items"
    limited = "slo.p95_ms" if at.batch < load.max_batch(model) else "batching.max_batch_size"
    return _Estimate(
        "profile", band, rps, at.batch, limited, latency, slack, at.window_fits_us, at.requests
    )


def plan_model(
    env: Environment,
    model: Model,
    out: EnvPlan,
    platform_prices: Mapping[tuple[str, str], prices.Price] = NO_PRICES,
) -> Plan | None:
    """The plan of one model with traffic (problems go to `out`); None without an estimate."""
    if model.traffic is None:
        return None
    got = _estimate(model, env, out)
    if got is None:
        return None
    rps = got.rps
    pool = env.pool_of(model)
    zones = max(1, len(pool.zones))
    peak = model.traffic.peak_rps
    per_zone, needed = _needed(peak, rps[1], zones)
    _, optimistic = _needed(peak, rps[2], zones)
    pessimistic = _needed(peak, rps[0], zones)[1] if rps[0] > 0 else None
    needed = max(needed, model.replicas.min)
    nodes = math.ceil(per_zone * model.gpus / pool.gpu_units_per_node)
    windows = tuple(
        Window(w.schedule, w.duration_s, w.replicas, w.replicas * rps[1]) for w in model.schedule
    )
    found = targets.derived(
        model, rps[1], got.requests or got.batch, got.slack_s, env.versions.vllm
    )
    cost, note = costs.model_cost(
        env,
        model,
        max(per_zone, zone_share(model.replicas.min, zones)),
        model.traffic.output_tokens if model.llm else None,
        peak,
        platform_prices,
    )
    plan = Plan(
        model=model.name,
        source=got.source,
        band=got.band,
        rps=rps,
        batch=got.batch,
        batch_setting=load.batch_setting(model),
        batch_max=load.batch_limit(model),
        limited_by=got.limited_by,
        latency=got.latency,
        peak_rps=peak,
        zones=zones,
        per_zone=per_zone,
        replicas=needed,
        replicas_optimistic=optimistic,
        replicas_pessimistic=pessimistic,
        nodes_per_zone=nodes,
        windows=windows,
        targets=tuple(t.signal for t in found),
        target_basis=tuple(t.basis for t in found),
        window_fits_us=got.window_fits_us,
        cost=cost,
        cost_note=note,
        band_fast=got.band_fast,
        calibration=got.calibration,
        model_basis=got.model_basis,
    )
    verdicts.judge(model, plan, out)
    return plan


def plan_env(
    env: Environment, platform_prices: Mapping[tuple[str, str], prices.Price] = NO_PRICES
) -> EnvPlan:
    """Every model's plan, and the pools' node limits judged over their models; costs use
    `platform_prices` (the policy config's ``prices``) before the built-in table."""
    out = EnvPlan()
    for name in sorted(env.models):
        plan = plan_model(env, env.models[name], out, platform_prices)
        if plan is not None:
            out.plans[name] = plan
    for pool in env.pools.values():
        users = [p for p in out.plans.values() if env.models[p.model].pool == pool.name]
        if not users:
            continue
        units = sum(
            _needed(p.peak_rps, p.rps[2], p.zones)[0] * env.models[p.model].gpus for p in users
        )
        nodes = math.ceil(units / pool.gpu_units_per_node)
        if nodes > pool.nodes.max:
            central = sum(p.per_zone * env.models[p.model].gpus for p in users)
            out.problems.append(
                Problem(
                    "error",
                    ("gpu_pools", pool.name, "nodes", "max"),
                    f"at their peak traffic the models of pool {pool.name} "
                    f"({', '.join(p.model for p in users)}) need "
                    f"{math.ceil(central / pool.gpu_units_per_node)} nodes per zone, at least "
                    f"{nodes} at the optimistic end of the estimate; nodes.max is "
                    f"{pool.nodes.max}",
                    f"raise nodes.max to {math.ceil(central / pool.gpu_units_per_node)} or "
                    "lower the models' traffic.peak_rps",
                )
            )
    return out


def with_derived_autoscaling(model: Model, plan: Plan | None) -> Model:
    """`model` with the plan's autoscaling targets when the blueprint sets none."""
    from dataclasses import replace

    if plan is None or not model.autoscaling_derived:
        return model
    return replace(
        model,
        autoscaling=Autoscaling(plan.targets, model.autoscaling.scale_down_stabilization_s),
    )
