"""Advisory about a model's latency class (printed by ``inferplane validate`` as a warning,
exit 0): a model marked ``batch`` that users wait on.

``latency_class: batch`` lets a model scale to zero and exempts it from warm replicas in
every zone (`defaults.default_replicas`, the `warm-replicas` rule). A model that also has an
SLO a person waits for (a p95 or time to first token under `REALTIME_SLO_MS`) and takes
HTTP traffic is a user-facing model marked batch, usually to save GPUs at night: its first
request after a quiet spell waits for a cold start, which takes minutes (image pull,
weights, engine load: vllm-project/vllm#6319, NVIDIA/nim-deploy#24), far beyond its SLO.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from inferplane.blueprint import defaults
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.errors import YamlPath

Advisory = tuple[YamlPath, str, str]

REALTIME_SLO_MS: Final = 60_000
"""An SLO under a minute is one a person waits for: no GPU model comes back from zero
within it."""


def findings(env: EnvView) -> Iterator[Advisory]:
    for name, model in (env.data.get("models") or {}).items():
        if model.get("latency_class", defaults.MODEL_LATENCY_CLASS) != "batch":
            continue
        slo = model.get("slo") or {}
        keys = [key for key in ("p95_ms", "ttft_p95_ms") if key in slo]
        if not keys or min(slo[key] for key in keys) >= REALTIME_SLO_MS:
            continue
        waits = [f"{key} {slo[key]:g}" for key in keys]
        protocol = (model.get("expose") or {}).get(
            "protocol", defaults.EXPOSE_BY_SERVER[model["server"]]
        )
        if protocol not in ("http", "both"):
            continue
        yield (
            ("models", name, "latency_class"),
            f"model {name} is marked batch but has a realtime SLO ({', '.join(waits)}) and "
            "takes HTTP traffic: batch lets it scale to zero without a warm replica per zone, "
            "and a request that finds it cold waits minutes for a GPU replica to start",
            "if users wait on it, make it realtime (the default: warm replicas in every "
            "zone); keep batch for work nobody waits on, and drop its realtime SLO",
        )


__all__ = ["REALTIME_SLO_MS", "findings"]
