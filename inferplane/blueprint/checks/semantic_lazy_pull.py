"""The ``lazy_image_pull`` lever is refused where the pool's nodes cannot pull lazily: a GKE
pool whose models' serving images GKE image streaming does not serve (NGC's ``nvcr.io``,
any registry but Artifact Registry and Docker Hub), an EKS cluster whose Karpenter pins an
AL2023 release without nodeadm's ``FastImagePull``, and a ``kubernetes`` environment, whose
nodes inferplane does not configure (`inferplane.blueprint.derived.lazy_pull`).

The lever is chosen per model (``models.<m>.scale_out.levers``) and acts on the model's
pool: every model on that pool must be servable lazily, so the error points at the lever
of each model that chose it, naming the model whose image stops it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from inferplane.blueprint import defaults
from inferplane.blueprint.addons import is_existing
from inferplane.blueprint.derived import lazy_pull

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView


def raw_serving_image(model: Mapping[str, Any], versions: Mapping[str, Any]) -> str:
    """The server image of a model as the blueprint writes it (`lazy_pull.serving_image` of
    the unresolved model): its own ``image``, else the pinned image of its runtime."""
    if model.get("image"):
        return str(model["image"])
    if model.get("server") == "vllm":
        return defaults.VLLM_IMAGE.format(version=versions["vllm"])
    if model.get("tensorrt_llm") is not None:
        return defaults.TRITON_TRTLLM_IMAGE.format(release=versions["triton"])
    return defaults.TRITON_IMAGE.format(release=versions["triton"])


def chosen_at(model: Mapping[str, Any]) -> int | None:
    """The index of ``lazy_image_pull`` in the model's ``scale_out.levers`` list; None when
    the model does not name it (``levers: auto`` chooses only what is supported)."""
    scale_out = model.get("scale_out")
    levers = scale_out.get("levers") if isinstance(scale_out, Mapping) else None
    if isinstance(levers, list) and lazy_pull.LEVER in levers:
        return levers.index(lazy_pull.LEVER)
    return None


def check_lazy_image_pull(env: EnvView) -> None:
    """Each model that names ``lazy_image_pull`` is on a pool whose nodes can pull lazily."""
    models: Mapping[str, Any] = env.data.get("models") or {}
    chosen = {name: at for name, m in models.items() if (at := chosen_at(m)) is not None}
    if not chosen:
        return
    versions = {**defaults.VERSIONS, **(env.data.get("versions") or {})}
    karpenter = ((env.spec.get("cluster") or {}).get("addons") or {}).get("karpenter")
    alias = (
        str(karpenter.get("ami_alias", ""))
        if env.spec["cloud"] == "aws" and karpenter is not None and is_existing(karpenter)
        else None
    )
    for name, at in sorted(chosen.items()):
        pool = models[name].get("pool")
        images = {
            str(other): raw_serving_image(m, versions)
            for other, m in models.items()
            if m.get("pool") == pool
        }
        reason = lazy_pull.support_reason(env.spec["cloud"], images, alias)
        if reason is None:
            continue
        env.error(
            ("models", name, "scale_out", "levers", at),
            f"lazy_image_pull cannot act on pool {pool} in environment {env.name}: {reason}",
            "remove lazy_image_pull from levers (or use levers: auto, which chooses only "
            "what the pool supports), or make the pool's nodes and images fit as said",
        )


__all__ = ["check_lazy_image_pull", "chosen_at", "raw_serving_image"]
