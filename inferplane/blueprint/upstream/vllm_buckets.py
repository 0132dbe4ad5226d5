"""vLLM's histogram bucket bounds, from ``inferplane/facts/vllm/<release>/histogram_buckets.txt``
(written from the release's wheel by ``scripts/facts/vllm_serve_flags.py``): in v0.33.0 the
default bounds of each bucket family (vllm/v1/metrics/buckets.py ``_STATIC_FAMILY_DEFAULTS``)
and the family each histogram draws from (vllm/v1/metrics/loggers.py), which
``--custom-histogram-buckets`` changes family by family; in v0.10.2, which has neither the
families nor the option, each histogram's fixed bounds.

`custom` gives the families whose bounds a model's replicas are told to use: the defaults
with the model's lines added (which lines: `inferplane.blueprint.capacity.targets.bucket_lines_ms`).
Prometheus's ``histogram_quantile`` interpolates linearly inside the bucket the quantile
falls in (prometheus v0.316.0 promql/quantile.go, ``BucketQuantile``), so a comparison of a
p95 with a value is exact only where the value is a bound: vLLM v0.33.0's time-to-first-
token bounds jump from 0.25 s to 0.5 s (vllm/v1/metrics/buckets.py), and with an SLO of 400
ms a true p95 of 300 ms can read as 450 ms, and 450 ms as 400 ms, depending on how the
requests spread inside that bucket. Each line adds one series per histogram of its family and
label set (ObservabilityConfig.custom_histogram_buckets, vllm/config/observability.py).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from typing import Final

FILE: Final = "histogram_buckets.txt"


@dataclass(frozen=True)
class Buckets:
    """The bucket facts of one release."""

    families: dict[str, tuple[float, ...]]
    """Family -> its default upper bounds, increasing (seconds for the latency families);
    empty for a release without families."""
    histograms: dict[str, str]
    """Histogram family name (``vllm:time_to_first_token_seconds``) -> its bucket family."""
    fixed: dict[str, tuple[float, ...]]
    """A release without families: histogram -> its bounds, which no option changes."""

    @property
    def custom_allowed(self) -> bool:
        """Whether the release takes ``--custom-histogram-buckets`` (it has families)."""
        return bool(self.families)


@functools.cache
def buckets(release: str) -> Buckets | None:
    """The bucket facts of vLLM `release` (``v0.33.0``); None where none are stored."""
    path = resources.files("inferplane").joinpath("facts", "vllm", release, FILE)
    if not path.is_file():
        return None
    families: dict[str, tuple[float, ...]] = {}
    histograms: dict[str, str] = {}
    fixed: dict[str, tuple[float, ...]] = {}
    for line in path.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        kind, name, value = line.split("\t")
        if kind == "family":
            families[name] = tuple(float(b) for b in value.split(","))
        elif kind == "histogram":
            histograms[name] = value
        elif kind == "fixed":
            fixed[name] = tuple(float(b) for b in value.split(","))
        else:
            raise ValueError(f"{release}/{FILE}: unknown row kind {kind!r}")
    return Buckets(families, histograms, fixed)


def custom(release: str, lines_ms: Mapping[str, Iterable[float]]) -> dict[str, tuple[float, ...]]:
    """The families whose bounds differ from vLLM `release`'s defaults once `lines_ms` (family
    -> values in ms) are bounds too, with their bounds: what ``--custom-histogram-buckets`` is
    given. Empty where every line is a default bound already, or the release has no
    families (its bounds are fixed)."""
    facts = buckets(release)
    if facts is None or not facts.custom_allowed:
        return {}
    out = {}
    for family, values in lines_ms.items():
        if family not in facts.families:
            raise ValueError(
                f"vLLM {release} has no histogram bucket family {family!r} (its families: "
                f"{', '.join(sorted(facts.families))}): rerun scripts/facts/vllm_serve_flags.py"
            )
        defaults = facts.families[family]
        lines = {round(v / 1000, 6) for v in values if v}
        if not lines <= set(defaults):
            out[family] = tuple(sorted({*defaults, *lines}))
    return out


def exported(
    release: str, custom_bounds: Mapping[str, tuple[float, ...]]
) -> dict[str, tuple[float, ...]]:
    """Histogram name -> the bounds a replica of vLLM `release` exports it with, given the
    `custom` families; empty where no facts are stored for the release."""
    facts = buckets(release)
    if facts is None:
        return {}
    if not facts.custom_allowed:
        return dict(facts.fixed)
    return {
        name: tuple(custom_bounds.get(family, facts.families[family]))
        for name, family in facts.histograms.items()
    }
