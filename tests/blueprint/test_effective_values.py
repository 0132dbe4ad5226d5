"""Effective values derived once: the replica bounds a model gets when the blueprint leaves
them out are one function's (`defaults.model_replicas`), and whether it routes llm-aware one
predicate's (`Routing.llm_aware`), and its replicas' split over its pool's zones one
function's (`zone_share`); `resolve()`, the semantic checks, the components and the rules ask
them, so no two of them judge different replicas."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from inferplane.blueprint import defaults
from inferplane.blueprint.checks import semantic_routing
from inferplane.blueprint.model import (
    MinMax,
    Routing,
    zone_replicas,
    zone_share,
    zone_split_problems,
)

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("inferplane", "components", "policies")


@pytest.mark.parametrize(
    ("model", "zones", "bounds"),
    [
        # realtime (the default class): one warm replica per zone, up to twice that, >= 2
        ({}, 1, (1, 2)),
        ({}, 3, (3, 6)),
        ({"latency_class": "realtime"}, 2, (2, 4)),
        # batch: may scale to zero, up to 2, whatever the zones
        ({"latency_class": "batch"}, 1, (0, 2)),
        ({"latency_class": "batch"}, 3, (0, 2)),
        # a given min: a default max is never below it
        ({"replicas": {"min": 5}}, 1, (5, 5)),
        ({"replicas": {"min": 1}}, 3, (1, 6)),
        ({"latency_class": "batch", "replicas": {"min": 3}}, 2, (3, 3)),
        # a given max: the min is still the default
        ({"replicas": {"max": 8}}, 2, (2, 8)),
        ({"replicas": {"max": 1}}, 2, (2, 1)),  # refused by the checks, not corrected
        ({"latency_class": "batch", "replicas": {"max": 1}}, 2, (0, 1)),
        ({"replicas": {"min": 0, "max": 3}}, 3, (0, 3)),
        # a wake schedule or wake hosts do not change the default: a realtime model stays warm
        ({"replicas": {"wake": {"schedule": "0 2 * * *", "duration": "3h"}}}, 1, (1, 2)),
        ({"latency_class": "batch", "replicas": {"wake": {"hosts": ["a.example"]}}}, 1, (0, 2)),
        # schedule windows raise the floor inside them only
        (
            {"replicas": {"schedule": [{"schedule": "0 8 * * *", "duration": "1h", "min": 2}]}},
            2,
            (2, 4),
        ),
        # an llm-aware model: the same bounds, over all its zones (one Deployment each)
        ({"server": "vllm", "routing": {"mode": "llm_aware"}}, 3, (3, 6)),
        ({"routing": {"mode": "llm_aware"}, "latency_class": "batch"}, 2, (0, 2)),
        # `replicas: null` (an override that clears them) is the same as none
        ({"replicas": None}, 2, (2, 4)),
    ],
)
def test_model_replicas_pins_the_defaults(
    model: dict[str, Any], zones: int, bounds: tuple[int, int]
) -> None:
    assert defaults.model_replicas(model, zones) == bounds


def _calls(pattern: str) -> list[str]:
    found = []
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*.py")):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if re.search(pattern, line):
                    found.append(f"{path.relative_to(ROOT)}:{n}")
    return found


def test_only_model_replicas_applies_the_replica_defaults() -> None:
    """Nothing else turns `default_replicas` into a model's bounds (it once happened in
    five places: resolve and four checks)."""
    calls = {where.partition(":")[0] for where in _calls(r"\bdefault_replicas\(")}
    assert calls == {"inferplane/blueprint/defaults.py"}


@pytest.mark.parametrize(
    ("routing", "aware"),
    [
        (None, False),  # round-robin unless asked (defaults.ROUTING_MODE)
        ({}, False),
        ({"mode": "round_robin"}, False),
        ({"mode": "llm_aware"}, True),
        ({"mode": "llm_aware", "flow_control": True, "pickers": 1}, True),
    ],
)
def test_llm_aware_is_one_predicate_of_the_resolved_routing(
    routing: dict[str, Any] | None, aware: bool
) -> None:
    model = {"server": "vllm", "routing": routing}
    assert Routing.of(routing).llm_aware is aware
    assert semantic_routing.llm_aware(model) is aware
    assert Routing.of(None) == Routing()  # the dataclass's defaults are defaults.py's


def test_only_routing_spells_llm_aware() -> None:
    """`Routing.llm_aware` is the one test of the mode; the checks ask it through
    `semantic_routing.llm_aware` (there were four spellings, one without the default)."""
    calls = {where.partition(":")[0] for where in _calls(r"""== ["']llm_aware["']""")}
    assert calls == {"inferplane/blueprint/model_scaling.py"}


@pytest.mark.parametrize(
    ("replicas", "zones", "share", "problems"),
    [
        (MinMax(3, 6), 3, MinMax(1, 2), ()),
        (MinMax(0, 4), 2, MinMax(0, 2), ()),
        (MinMax(2, 4), 1, MinMax(2, 4), ()),
        (MinMax(3, 6), 2, None, (("min", "uneven"),)),
        (MinMax(2, 5), 2, None, (("max", "uneven"),)),
        (MinMax(1, 1), 2, None, (("min", "uneven"), ("max", "uneven"), ("max", "short"))),
        (MinMax(0, 0), 2, None, (("max", "short"),)),
    ],
)
def test_the_zone_split_is_one_function(
    replicas: MinMax, zones: int, share: MinMax | None, problems: tuple[tuple[str, str], ...]
) -> None:
    """An llm-aware model's replicas over its zones: `zone_split_problems` (validation's
    and the serving spec's refusal), `zone_replicas` (each zone's Deployment)."""
    assert zone_split_problems(replicas, zones) == problems
    if share is None:
        with pytest.raises(ValueError, match="do not split"):
            zone_replicas(replicas, zones)
    else:
        assert zone_replicas(replicas, zones) == share


@pytest.mark.parametrize(
    ("replicas", "zones", "share"),
    [(0, 3, 0), (1, 3, 1), (3, 2, 2), (4, 2, 2), (6, 3, 2), (5, 1, 5), (2, 0, 2), (2.0, 2, 1)],
)
def test_zone_share_is_the_fullest_zone(replicas: float, zones: int, share: int) -> None:
    assert zone_share(replicas, zones) == share


def test_replicas_are_split_over_zones_by_zone_share_alone() -> None:
    """No module divides a model's replica count by its zones itself (the router's zone
    model divided, the router sizing divided, and the capacity, cost and scale-out estimates
    and the warm-replicas rule rounded up, each on its own)."""
    assert _calls(r"(replicas\.(min|max)|\bcount)\s*//?\s*[\w(, ]*zones") == []
