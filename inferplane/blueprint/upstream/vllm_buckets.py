"""vLLM's histogram bucket bounds, from ``inferplane/facts/vllm/<release>/histogram_buckets.txt``
(written from the release's wheel by ``scripts/facts/vllm_serve_flags.py``: the default bounds
of each bucket family, 0.33.0 vllm/v1/metrics/buckets.py ``_STATIC_FAMILY_DEFAULTS``, and the
family each histogram draws from, vllm/v1/metrics/loggers.py).

A release without the file (v0.10.2) has no bucket families and no
``--custom-histogram-buckets``: its bounds are fixed.

The bounds a vLLM model's replicas export (`custom`, `exported`) are those defaults with each
of the model's latency lines added, so the p95 its SLO alerts, triggers and rollout guard
read is exact at the line.

Prometheus's ``histogram_quantile`` interpolates linearly inside the bucket the quantile
falls in (prometheus v0.316.0 promql/quantile.go, ``BucketQuantile``). vLLM v0.33.0's
time-to-first-token bounds jump from 0.25 s to 0.5 s (vllm/v1/metrics/buckets.py): with an
SLO of 400 ms, a true p95 of 300 ms can read as 450 ms, and 450 ms as 400 ms, depending on
how the requests spread inside that bucket. With 0.4 s a bound, ``p95 > 400`` means "more
than 5% of requests took over 400 ms", exactly. Each line adds one series per histogram and
label set (ObservabilityConfig.custom_histogram_buckets, vllm/config/observability.py).

The lines are the SLO's: ``slo.ttft_p95_ms`` (time to first token), ``slo.itl_p95_ms``
(inter-token latency) and ``slo.p95_ms`` (end-to-end request latency). Autoscaling targets are
not lines: the bounds are serving arguments, so a changed bound restarts every replica (or
starts a rollout), and a target is tuned, or follows from `traffic`, far more often than an
SLO is changed.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Final

from inferplane.blueprint.model import Model

FILE: Final = "histogram_buckets.txt"


@dataclass(frozen=True)
class Buckets:
    """The bucket facts of one release."""

    families: dict[str, tuple[float, ...]]
    """Family -> its default upper bounds, increasing (seconds for the latency families)."""
    histograms: dict[str, str]
    """Histogram family name (``vllm:time_to_first_token_seconds``) -> its bucket family."""

    def bounds_of(self, histogram: str) -> tuple[float, ...]:
        """The default bounds `histogram` is exported with."""
        return self.families[self.histograms[histogram]]


@functools.cache
def buckets(release: str) -> Buckets | None:
    """The bucket facts of vLLM `release` (``v0.33.0``); None where it has no bucket families."""
    path = resources.files("inferplane").joinpath("facts", "vllm", release, FILE)
    if not path.is_file():
        return None
    families: dict[str, tuple[float, ...]] = {}
    histograms: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        kind, name, value = line.split("\t")
        if kind == "family":
            families[name] = tuple(float(b) for b in value.split(","))
        elif kind == "histogram":
            histograms[name] = value
        else:
            raise ValueError(f"{release}/{FILE}: unknown row kind {kind!r}")
    return Buckets(families, histograms)


TTFT: Final = "time_to_first_token"
ITL: Final = "inter_token_latency"
E2E: Final = "request_latency"


def lines_s(model: Model) -> dict[str, tuple[float, ...]]:
    """The model's latency lines in seconds, by bucket family (none: no line)."""
    slo = model.slo
    if slo is None:
        return {}
    ms = {TTFT: slo.ttft_p95_ms, ITL: slo.itl_p95_ms, E2E: slo.p95_ms}
    return {family: (round(v / 1000, 6),) for family, v in ms.items() if v}


def _with(defaults: Iterable[float], lines: Iterable[float]) -> tuple[float, ...]:
    return tuple(sorted({*defaults, *lines}))


def custom(model: Model, release: str) -> dict[str, tuple[float, ...]]:
    """The families whose bounds differ from vLLM `release`'s defaults for `model` (a vLLM
    model), with their bounds: what ``--custom-histogram-buckets`` is given. Empty where
    every line is a default bound already, or the release has no bucket families."""
    facts = buckets(release)
    if model.server != "vllm" or facts is None:
        return {}
    out = {}
    for family, lines in lines_s(model).items():
        defaults = facts.families[family]
        if not set(lines) <= set(defaults):
            out[family] = _with(defaults, lines)
    return out


def exported(
    release: str, custom_bounds: Mapping[str, tuple[float, ...]]
) -> dict[str, tuple[float, ...]]:
    """Histogram name -> the bounds a replica of vLLM `release` exports it with, given the
    `custom` families (empty where the release has no bucket families)."""
    facts = buckets(release)
    if facts is None:
        return {}
    return {
        name: tuple(custom_bounds.get(family, facts.families[family]))
        for name, family in facts.histograms.items()
    }
