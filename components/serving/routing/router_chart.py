"""Where the llm-d router's chart comes from: its name, and what a local copy of it needs."""

from __future__ import annotations

from pathlib import Path
from typing import Final

ROUTER_CHART: Final = "llm-d-router-standalone"

LIBRARY_CHART: Final = "router"
"""The chart's one dependency, ``routerlib`` (its Chart.yaml ``name: router``), which the
standalone chart's Chart.yaml takes from ``file://../routerlib``."""


def local_chart_problem(directory: str) -> str | None:
    """What keeps the local copy `directory` (stack config ``inferplane:routerChart``) from
    being rendered, or None.

    Helm renders a chart only with its dependencies in its ``charts/`` folder. Resolving
    them at deploy time (``dependencyUpdate``) writes that folder, and every zone's router
    renders the same copy at once, so two updates race (seen in the end-to-end run:
    "found in Chart.yaml, but missing in charts/ directory: router"); the copy must
    therefore carry it, as the registry's package does."""
    chart = Path(directory) / ROUTER_CHART
    if not (chart / "Chart.yaml").is_file():
        return (
            f"{directory} has no {ROUTER_CHART}/Chart.yaml; point it at the folder holding "
            f"the pinned chart source ({ROUTER_CHART} beside routerlib)"
        )
    deps = chart / "charts"
    if (deps / LIBRARY_CHART / "Chart.yaml").is_file() or any(deps.glob(f"{LIBRARY_CHART}-*.tgz")):
        return None
    return (
        f"{chart}/charts has no {LIBRARY_CHART!r} dependency; copy it in once: "
        f"cp -r {Path(directory) / 'routerlib'} {deps / LIBRARY_CHART} "
        f"(or run `helm dependency build {chart}`)"
    )
