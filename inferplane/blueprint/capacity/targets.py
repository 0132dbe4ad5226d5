"""The autoscaling targets a capacity plan derives, and the reason for each, in words.

A model that states `traffic` and no `autoscaling` scales on these (`planner.plan_model`).
Each must make the HPA act *before* the SLO breaks, which rests on three upstream facts:

- The HPA acts only when a metric leaves ``target x (1 ± 0.1)``: kube-controller-manager
  ``--horizontal-pod-autoscaler-tolerance`` defaults to 0.1, and
  ``getUsageRatioReplicaCount`` returns the current count while ``|1 - ratio| <=
  tolerance`` (kubernetes ``pkg/controller/podautoscaler/replica_calculator.go``). A target
  equal to the limit is therefore acted on only 10% past it: every target here is the
  limit divided by 1.1 (`HPA_TOLERANCE`), or lower.
- An in-flight batching server admits requests into its running batch up to its own limit
  (vLLM ``max_num_seqs``, TensorRT-LLM ``max_batch_size``), so its waiting count stays 0
  below that limit even while the batch has outgrown the one the plan sized to meet the SLO.
  LLMs therefore scale on ``concurrency``, running plus waiting (`promql.concurrency`),
  against the planned batch: at the plan's throughput Little's law makes a replica's
  concurrency its batch (the roofline's requests/s are batch / request latency).
- ``histogram_quantile`` answers inside the bucket that holds the true quantile. So an
  estimated p95 above a bucket boundary B proves the true p95 is above B, and a true p95
  above the SLO lifts the estimate above the largest boundary at or below the SLO. The TTFT
  target acts at no more than that boundary, and at no more than `TTFT_ACT_SHARE` of the
  SLO: the 12% left is the time a new replica (minutes: `inferplane.blueprint.derived.scale_out`)
  is already starting while requests still meet the SLO. The alerts keep the SLO itself.
  On vLLM v0.33.0 the replicas export the SLO, and the derived target's act point, as
  boundaries too (`bucket_lines_ms`, `histogram_buckets`): the target is 80% of the SLO and
  "the estimate passed the act point" means the true p95 did. v0.10.2 has fixed boundaries
  (its facts), where a 300 ms SLO falls in the (250, 500] ms bucket and the target acts by
  250 ms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from inferplane.blueprint.capacity import load
from inferplane.blueprint.model import Model, Signal
from inferplane.blueprint.upstream import vllm_buckets

HPA_TOLERANCE: Final = 0.1
"""kube-controller-manager ``--horizontal-pod-autoscaler-tolerance``, default 0.1."""

TTFT_TARGET_SHARE: Final = 0.8
"""The derived TTFT target as a share of ``slo.ttft_p95_ms``; the HPA acts at 1.1 x it."""

TTFT_ACT_SHARE: Final = TTFT_TARGET_SHARE * (1 + HPA_TOLERANCE)

TTFT_HISTOGRAM: Final = "vllm:time_to_first_token_seconds"


def ttft_act_ms(slo_ms: int) -> float:
    """Where the HPA acts on the derived TTFT target of an SLO that is a bucket boundary."""
    return round(_act(math.floor(slo_ms * TTFT_TARGET_SHARE)), 3)


def bucket_lines_ms(model: Model) -> dict[str, tuple[float, ...]]:
    """The values, in ms by vLLM bucket family, that a model's histograms must have as
    bounds: each SLO line (the alerts and the rollout guard's defaults compare with it),
    and where the TTFT target is derived, the point the HPA acts at. A target the blueprint
    sets is not a line: the bounds are serving arguments, so a changed bound restarts every
    replica (or starts a rollout), and a target is tuned far more often than an SLO."""
    slo = model.slo
    if model.server != "vllm" or slo is None:
        return {}
    ttft: list[float] = []
    if slo.ttft_p95_ms:
        ttft.append(float(slo.ttft_p95_ms))
        if model.autoscaling_derived:
            ttft.append(ttft_act_ms(slo.ttft_p95_ms))
    lines = {
        "time_to_first_token": tuple(ttft),
        "inter_token_latency": (float(slo.itl_p95_ms),) if slo.itl_p95_ms else (),
        "request_latency": (float(slo.p95_ms),) if slo.p95_ms else (),
    }
    return {family: values for family, values in lines.items() if values}


def histogram_buckets(model: Model, versions_vllm: str) -> dict[str, tuple[float, ...]]:
    """The bucket families (and bounds) `model`'s replicas get through
    ``--custom-histogram-buckets``: empty for a model that needs none, or whose release
    (`Model.vllm_release`) has no such option."""
    if model.server != "vllm":
        return {}
    return vllm_buckets.custom(model.vllm_release(versions_vllm), bucket_lines_ms(model))


def exported_bounds(model: Model, versions_vllm: str) -> dict[str, tuple[float, ...]]:
    """Histogram -> the bounds `model`'s replicas export (empty where no facts are stored
    for the release they run)."""
    release = model.vllm_release(versions_vllm)
    return vllm_buckets.exported(release, histogram_buckets(model, versions_vllm))


@dataclass(frozen=True)
class Target:
    signal: Signal
    basis: str
    """How the target follows from the plan, for `inferplane plan`."""


def _act(target: float) -> float:
    """Where the HPA starts adding replicas for a per-replica `target`."""
    return target * (1 + HPA_TOLERANCE)


def _under_tolerance(limit: float) -> int:
    """The largest whole target the HPA acts on at or below `limit` (at least 1)."""
    return max(1, math.floor(limit / (1 + HPA_TOLERANCE) + 1e-9))


def in_flight_batching(model: Model) -> bool:
    """vLLM and TensorRT-LLM: the batch grows with the load up to the engine's limit."""
    return model.llm is not None and (model.vllm is not None or model.tensorrt_llm is not None)


def concurrency(batch: int, setting: str, limit: int | None) -> Target:
    target = _under_tolerance(batch)
    cap = f"{setting} {limit}" if limit is not None else f"{setting} (the engine's default)"
    return Target(
        Signal("concurrency", float(target)),
        f"concurrency {target}: requests running plus waiting per replica; the plan's batch "
        f"of {batch} meets the SLO, and the HPA acts above {_act(target):.4g} (the target "
        f"plus its 10% tolerance), not past {batch}; the waiting count alone stays 0 until "
        f"the running batch reaches {cap}",
    )


def ttft(slo_ms: int, bounds_ms: tuple[float, ...]) -> Target:
    boundary = max((b for b in bounds_ms if b <= slo_ms), default=None)
    share = math.floor(slo_ms * TTFT_TARGET_SHARE)
    target = share if boundary is None else max(1, min(share, _under_tolerance(boundary)))
    why = (
        f"{TTFT_TARGET_SHARE:.0%} of slo.ttft_p95_ms {slo_ms}"
        if target == share
        else f"the HPA must act by the histogram's {boundary:g} ms bucket boundary at or "
        f"below slo.ttft_p95_ms {slo_ms}"
    )
    return Target(
        Signal("ttft_p95_ms", float(target)),
        f"ttft_p95_ms {target}: {why}; the HPA acts above {_act(target):.4g} ms, before the "
        "SLO, on the p95 of the last 30 s (the alert judges the SLO itself over 2 m)",
    )


def queue(rps: float, slack_s: float, batch: int) -> Target:
    """Triton's own batcher: its pending count is a real queue, waiting within the slack."""
    if slack_s <= 0:
        target = max(1, batch)
        why = "no slack is left beyond the batch's own latency: one batch may wait"
    else:
        target = _under_tolerance(rps * slack_s)
        why = (
            f"what a replica drains at {rps:.2f} requests/s within the SLO's slack of "
            f"{slack_s * 1000:.0f} ms (Little's law), over 1.1 (the HPA's tolerance)"
        )
    return Target(Signal("queue_depth", float(target)), f"queue_depth {target}: {why}")


def derived(
    model: Model, rps: float, batch: int, slack_s: float, release: str
) -> tuple[Target, ...]:
    """The ScaledObject targets that follow from one replica's planned batch and throughput."""
    if in_flight_batching(model):
        found = [concurrency(batch, load.batch_setting(model), load.batch_limit(model))]
    else:
        found = [queue(rps, slack_s, batch)]
    if model.server == "vllm" and model.slo is not None and model.slo.ttft_p95_ms:
        bounds = exported_bounds(model, release).get(TTFT_HISTOGRAM, ())
        found.append(ttft(model.slo.ttft_p95_ms, tuple(round(b * 1000, 3) for b in bounds)))
    return tuple(found)
