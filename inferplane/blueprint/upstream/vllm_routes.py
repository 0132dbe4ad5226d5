"""The HTTP routes of vLLM's API server, classified per release: what a client, the kubelet
and Prometheus may reach (``inferplane/facts/vllm/<release>/routes.txt``, generated from each
supported release's wheel by ``scripts/facts/vllm_routes.py``; provenance in its header).

The serving pods answer 404 for every other path (`components/serving/vllm/route_guard.py`), so a
route the API key does not guard (``/invocations``, ``/tokenize``, ``/scale_elastic_ep``,
``/docs`` ...) is unreachable whatever the key.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from typing import Final

from inferplane.blueprint import defaults

SERVED_KINDS: Final = ("client", "probe", "metrics")
"""The classes of route the serving pods answer; ``refused`` is every other."""


@dataclass(frozen=True)
class Route:
    """One route of the API server: its class, what makes vLLM register it, and what it
    serves or why it is refused."""

    kind: str
    when: str
    why: str


@functools.cache
def route_table(release: str | None = None) -> dict[str, Route]:
    """Every route of vLLM `release` (default the pinned one): path -> `Route`."""
    release = defaults.VERSIONS["vllm"] if release is None else release
    text = resources.files("inferplane").joinpath("facts", "vllm", release, "routes.txt")
    out = {}
    for line in text.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        row = line.split("\t")
        if row[0] != "guard":
            out[row[0]] = Route(row[2], row[3], row[4])
    return out


def guarded_prefixes(release: str | None = None) -> tuple[str, ...]:
    """The path prefixes vLLM `release`'s API key guards."""
    release = defaults.VERSIONS["vllm"] if release is None else release
    text = resources.files("inferplane").joinpath("facts", "vllm", release, "routes.txt")
    for line in text.read_text().splitlines():
        if line.startswith("guard\t"):
            return tuple(line.split("\t")[1].split())
    raise ValueError(f"routes.txt of vLLM {release} names no guard")


def served_routes(release: str | None = None) -> tuple[str, ...]:
    """The routes the serving pods of vLLM `release` answer (client, probe and metrics),
    sorted; routes whose path is no literal (``{expr}``) are never among them."""
    return tuple(
        sorted(
            path
            for path, route in route_table(release).items()
            if route.kind in SERVED_KINDS and path.startswith("/")
        )
    )
