"""Which scale-out levers a model can use, and what each adds to the monthly bill.

A lever shortens a part of the scale-out budget (`inferplane.blueprint.derived.scale_out`);
`inferplane.blueprint.derived.levers` chooses among them. This module answers two questions
without computing a budget:

- `unavailable(...)`: why a lever cannot serve a model here (None: it can), from plain
  values, so validation asks it of the raw blueprint and resolution of the resolved one;
- `options(env, model)`: every lever the model could use, with the US dollars per month it
  adds (0 for the free ones; None where a node price is missing).

The levers (`LEVERS`, cheapest first):

- ``compile_cache``: vLLM's ``torch.compile`` artifacts staged in the model store. Free;
  always on for a vLLM model that compiles.
- ``stream_weights``: vLLM reads the weights from the model store straight into GPU memory
  with the Run:ai model streamer (``--load-format runai_streamer``) instead of copying them
  to the node first. Free. Triton copies its model repository: no streamer there.
- ``lazy_image_pull``: a new node starts the serving container before the image is whole.
  Free (the pulls are billed as before). GKE image streaming serves images from Artifact
  Registry and public Docker Hub images (GKE docs, "Use Image streaming to pull container
  images", Requirements): an NGC image (``nvcr.io``) is not eligible unless the platform
  mirrors it through an Artifact Registry remote repository and the model names that
  image. inferplane configures no lazy pulling on EKS nodes, nor on an attached cluster's
  nodes, which are their owner's.
- ``standby``: the pool keeps spare GPUs per zone (placeholder pods a new replica
  preempts). Billed: the whole nodes the spare GPUs add at the floor.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Final

from inferplane.blueprint.model import LEVERS, Environment, Lever, Model

HOURS_PER_MONTH: Final = 730

GKE_STREAMABLE: Final = re.compile(
    r"^(?:[a-z0-9-]+-docker\.pkg\.dev/|docker\.io/|registry-1\.docker\.io/|(?![^/]*[.:])[^/]+/)"
)
"""Images GKE image streaming serves: Artifact Registry (``<location>-docker.pkg.dev``) and
Docker Hub (an image whose first path segment is no host name, such as
``vllm/vllm-openai``)."""


def unavailable(lever: Lever, *, cloud: str, server: str, compiles: bool, image: str) -> str | None:
    """Why `lever` cannot serve a model (None: it can). `image` is the serving image the
    model runs (its own, or the pinned one)."""
    if lever == "compile_cache":
        if compiles:
            return None
        return (
            "only a vLLM model that compiles (without vllm.enforce_eager) has a torch.compile "
            "cache to stage"
        )
    if lever == "stream_weights":
        if server == "vllm":
            return (
                "the serving pod copies the weights before vLLM starts: inferplane does not "
                "generate vLLM's streamer wiring (--load-format runai_streamer) yet"
            )
        return (
            "only vLLM streams weights from the model store (--load-format runai_streamer); "
            "Triton loads its model repository from the node's disk"
        )
    if lever == "lazy_image_pull":
        if cloud == "gcp":
            if GKE_STREAMABLE.match(image):
                return "inferplane does not turn on GKE image streaming on its node pools yet"
            return (
                f"GKE image streaming serves images from Artifact Registry and Docker Hub, not "
                f"{image.split('/', 1)[0]}: mirror {image} through an Artifact Registry remote "
                "repository and name that image as the model's image"
            )
        if cloud == "aws":
            return (
                "inferplane turns on lazy image pulls only on GKE (image streaming); on EKS "
                "keep a spare GPU (standby) so that no new node pulls the image"
            )
        return (
            "an attached cluster's nodes are their owner's: inferplane cannot turn on lazy "
            "image pulls there"
        )
    return None  # standby: placeholders run on every cluster


def compiles_vllm_graph(model: Model) -> bool:
    """A vLLM model that runs ``torch.compile`` (all but ``vllm.enforce_eager``): the stack
    stages its compile cache in the model store
    (`inferplane.components.serving.vllm.vllm_compile`)."""
    return model.server == "vllm" and not (model.vllm is not None and model.vllm.enforce_eager)


def serving_image(env: Environment, model: Model) -> str:
    """The image a replica of `model` runs."""
    from inferplane.blueprint import defaults

    if model.image is not None:
        return model.image
    if model.server == "vllm":
        return defaults.VLLM_IMAGE.format(version=env.versions.vllm)
    template = defaults.TRITON_TRTLLM_IMAGE if model.tensorrt_llm else defaults.TRITON_IMAGE
    return template.format(release=env.versions.triton)


def unavailable_for(env: Environment, model: Model, lever: Lever) -> str | None:
    return unavailable(
        lever,
        cloud=env.cloud,
        server=model.server,
        compiles=compiles_vllm_graph(model),
        image=serving_image(env, model),
    )


def standby_spare(env: Environment, model: Model) -> int:
    """The pool's spare GPU units per zone with `model`'s standby: at least one replica of the
    pool's largest model (a preempted placeholder must free room for any replica, which
    `semantic_spare` asks of a stated ``spare_gpus`` too), and what the pool keeps already."""
    pool = env.pool_of(model)
    largest = max(m.gpus for m in env.models.values() if m.pool == pool.name)
    return max(pool.spare_gpus, largest * math.ceil(model.gpus / largest))


def standby_usd_month(env: Environment, model: Model) -> float | None:
    """What `model`'s standby adds per month: the whole nodes its spare units add per zone at
    the floor, at the pool's on-demand price (None: the price table has no row)."""
    from inferplane.blueprint.capacity import prices

    pool = env.pool_of(model)
    zones = max(1, len(pool.zones))
    warm = sum(
        math.ceil(m.replicas.min / zones) * m.gpus
        for m in env.models.values()
        if m.pool == pool.name
    )
    per_node = pool.gpu_units_per_node

    def nodes(spare: int) -> int:
        return max(pool.nodes.min, math.ceil((warm + spare) / per_node))

    extra = nodes(standby_spare(env, model)) - nodes(pool.spare_gpus)
    if extra <= 0:
        return 0.0
    row = prices.price(pool.instance_type, env.region)
    if row is None:
        return None
    return round(extra * len(pool.zones) * row.usd_per_hour * HOURS_PER_MONTH, 2)


def options(env: Environment, model: Model) -> Mapping[str, float | None]:
    """Every lever `model` could use here, in `LEVERS` order, with its extra US dollars per
    month (None: a price is missing)."""
    out: dict[str, float | None] = {}
    for lever in LEVERS:
        if unavailable_for(env, model, lever) is not None:
            continue
        out[lever] = standby_usd_month(env, model) if lever == "standby" else 0.0
    return out
