"""Semantic checks of `models.<m>.scale_out`: a listed lever must be one that can serve the
model here (`inferplane.blueprint.derived.lever_options.unavailable`); ``levers: auto`` only
chooses among those, so it needs no check.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inferplane.blueprint import defaults
from inferplane.blueprint.addons import is_existing
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.derived import lever_options


def _image(env: EnvView, model: Mapping[str, Any]) -> str:
    if model.get("image"):
        return str(model["image"])
    versions = {**defaults.VERSIONS, **(env.data.get("versions") or {})}
    if model["server"] == "vllm":
        return defaults.VLLM_IMAGE.format(version=versions["vllm"])
    template = defaults.TRITON_TRTLLM_IMAGE if "tensorrt_llm" in model else defaults.TRITON_IMAGE
    return template.format(release=versions["triton"])


def _weights_store(env: EnvView, model: Mapping[str, Any]) -> str | None:
    """The scheme of the store replicas read the weights from (`lever_options.
    weights_store_of` on the raw blueprint); None where nothing says."""
    source = str(model.get("source") or "")
    if source.startswith(("s3://", "gs://")):
        return source.split("://", 1)[0]
    store = env.spec.get("model_store")
    return str(store).split("://", 1)[0] if store else None


def _karpenter_alias(env: EnvView) -> str | None:
    """The AMI alias of the cluster's Karpenter that launches the GPU nodes (AWS)."""
    karpenter = ((env.spec.get("cluster") or {}).get("addons") or {}).get("karpenter")
    if env.spec["cloud"] != "aws" or karpenter is None or not is_existing(karpenter):
        return None
    return str(karpenter.get("ami_alias", ""))


def check_levers(env: EnvView) -> None:
    """Each listed lever against the model's server, image and cloud, and the nodes that
    the cluster's Karpenter launches."""
    cloud = env.spec["cloud"]
    alias = _karpenter_alias(env)
    for name, model in (env.data.get("models") or {}).items():
        listed = (model.get("scale_out") or {}).get("levers")
        if not isinstance(listed, list):
            continue
        server = model["server"]
        compiles = server == "vllm" and not (model.get("vllm") or {}).get("enforce_eager")
        versions = {**defaults.VERSIONS, **(env.data.get("versions") or {})}
        for i, lever in enumerate(listed):
            why = lever_options.unavailable(
                lever,
                cloud=cloud,
                server=server,
                compiles=compiles,
                image=_image(env, model),
                vllm_release=versions["vllm"],
                weights_store=_weights_store(env, model),
                karpenter_ami_alias=alias,
            )
            if why is None:
                continue
            others = [x for x in listed if x != lever]
            env.error(
                ("models", name, "scale_out", "levers", i),
                f"lever {lever} cannot serve model {name!r} in environment {env.name!r} "
                f"({cloud}): {why}",
                f"remove it (levers: [{', '.join(others)}]), or write levers: auto, which "
                "chooses among the levers that can",
            )
