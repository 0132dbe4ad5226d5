"""Which scale-out levers a model can use, and what each adds to the monthly bill.

A lever shortens a part of the scale-out budget (`inferplane.blueprint.derived.scale_out`);
`inferplane.blueprint.derived.levers` chooses among them. This module answers two questions
without computing a budget:

- `unavailable(...)`: why a lever cannot serve a model here (None: it can), from plain
  values, so validation asks it of the raw blueprint and resolution of the resolved one;
- `options(env, model)`: every lever the model could use, with the US dollars per month it
  adds (0 for the free ones; None where a node's or a volume's price is missing).

The levers (`LEVERS`, cheapest first):

- ``compile_cache``: vLLM's ``torch.compile`` artifacts staged in the model store. Free;
  always on for a vLLM model that compiles.
- ``stream_weights``: vLLM reads the weights from the model store straight into GPU memory
  with the Run:ai model streamer (``--load-format runai_streamer``) instead of copying them
  to the node first (`inferplane.components.serving.vllm.weight_streaming`). Free. Refused
  where the vLLM release, its image or a custom image cannot stream from the model's store
  (`inferplane.blueprint.upstream.vllm_streaming.streaming_refusal`). Triton copies its
  model repository: no streamer there.
- ``lazy_image_pull``: a new node starts the serving container before the image is whole.
  Free on GKE (the pulls are billed as before); on EKS its faster gp3 root volume is billed
  per node (`lazy_pull_usd_month`), at the region's gp3 row of the price table; a region
  without one leaves it unpriced (`lazy_pull_unpriced`), and `levers: auto` then takes it
  only where no priced set meets the bound. Where it can serve is
  `inferplane.blueprint.derived.lazy_pull.lever_problem`'s: GKE image streaming serves
  images from Artifact Registry and public Docker Hub images (an NGC image, ``nvcr.io``,
  only mirrored through an Artifact Registry remote repository that the model names); a
  ``kubernetes`` environment's nodes are their owner's; on EKS the budget counts SOCI
  parallel pull's whole image at its rate.
- ``standby``: the pool keeps spare GPUs per zone (placeholder pods a new replica
  preempts). Billed: the whole nodes the spare GPUs add at the floor.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

from inferplane.blueprint.derived import lazy_pull
from inferplane.blueprint.model import LEVERS, Environment, Lever, Model, zone_share
from inferplane.blueprint.upstream.vllm_streaming import streaming_refusal

HOURS_PER_MONTH: Final = 730


def unavailable(
    lever: Lever,
    *,
    cloud: str,
    server: str,
    compiles: bool,
    image: str,
    vllm_release: str | None = None,
    weights_store: str | None = None,
    karpenter_ami_alias: str | None = None,
) -> str | None:
    """Why `lever` cannot serve a model (None: it can). `image` is the serving image the
    model runs (its own, or the pinned one); `vllm_release` the environment's vLLM and
    `weights_store` the scheme (``s3``, ``gs``) of the store replicas read the weights
    from (`weights_store_of`), which ``stream_weights`` needs; `karpenter_ami_alias` the
    AMI alias of the cluster's Karpenter that launches the GPU nodes (AWS), if one does."""
    if lever == "compile_cache":
        if compiles:
            return None
        return (
            "only a vLLM model that compiles (without vllm.enforce_eager) has a torch.compile "
            "cache to stage"
        )
    if lever == "stream_weights":
        if server == "vllm":
            if vllm_release is None or weights_store is None:
                return "the model's vLLM release and model store are not known here"
            return streaming_refusal(
                vllm_release,
                weights_store,
                custom_image=not is_vllm_image(image, vllm_release),
                compiles=compiles,
            )
        return (
            "only vLLM streams weights from the model store (--load-format runai_streamer); "
            "Triton loads its model repository from the node's disk"
        )
    if lever == "lazy_image_pull":
        return lazy_pull.lever_problem(cloud, image, karpenter_ami_alias)
    return None  # standby: placeholders run on every cluster


def is_vllm_image(image: str, release: str) -> bool:
    """`image` is the ``vllm/vllm-openai`` image of `release`, from Docker Hub or a mirror
    that keeps its name and tag (an Artifact Registry remote repository, for GKE image
    streaming): what the streaming facts of `release` describe."""
    return image.rsplit("/", 1)[-1] == f"vllm-openai:{release}" and (
        "/" not in image or image.rsplit("/", 2)[-2] == "vllm"
    )


def weights_store_of(env: Environment, model: Model) -> str:
    """The scheme of the store a replica reads `model`'s weights from: an s3:// or gs://
    source's own, else the environment's model store (relative sources, staged hf://)."""
    if model.source.scheme in ("s3", "gs"):
        return model.source.scheme
    return env.model_store.split("://", 1)[0]


def streams_weights(model: Model) -> bool:
    """The model's levers in effect stream its weights from the model store
    (`inferplane.components.serving.vllm.weight_streaming`)."""
    return "stream_weights" in model.scale_out.levers


def compiles_vllm_graph(model: Model) -> bool:
    """A vLLM model that runs ``torch.compile`` (all but ``vllm.enforce_eager``): the stack
    stages its compile cache in the model store
    (`inferplane.components.serving.vllm.vllm_compile`)."""
    return model.server == "vllm" and not (model.vllm is not None and model.vllm.enforce_eager)


def serving_image(env: Environment, model: Model) -> str:
    """The image a replica of `model` runs."""
    return lazy_pull.serving_image(env, model)


def unavailable_for(env: Environment, model: Model, lever: Lever) -> str | None:
    return unavailable(
        lever,
        cloud=env.cloud,
        server=model.server,
        compiles=compiles_vllm_graph(model),
        image=serving_image(env, model),
        vllm_release=env.versions.vllm,
        weights_store=weights_store_of(env, model),
        karpenter_ami_alias=lazy_pull.karpenter_alias(env),
    )


def standby_spare(env: Environment, model: Model) -> int:
    """The pool's spare GPU units per zone with `model`'s standby: at least one replica of the
    pool's largest model (a preempted placeholder must free room for any replica, which
    `semantic_spare` asks of a stated ``spare_gpus`` too), and what the pool keeps already."""
    pool = env.pool_of(model)
    largest = max(m.gpus for m in env.models.values() if m.pool == pool.name)
    return max(pool.spare_gpus, largest * math.ceil(model.gpus / largest))


def floor_nodes_per_zone(env: Environment, model: Model, spare: int) -> int:
    """The GPU nodes `model`'s pool keeps per zone at the floor with `spare` spare units: its
    ``nodes.min``, or what the models' ``replicas.min`` and the spare units fill, if more."""
    pool = env.pool_of(model)
    zones = max(1, len(pool.zones))
    warm = sum(
        zone_share(m.replicas.min, zones) * m.gpus
        for m in env.models.values()
        if m.pool == pool.name
    )
    return max(pool.nodes.min, math.ceil((warm + spare) / pool.gpu_units_per_node))


def standby_usd_month(env: Environment, model: Model) -> float | None:
    """What `model`'s standby adds per month: the whole nodes its spare units add per zone at
    the floor, at the pool's on-demand price (None: the price table has no row)."""
    from inferplane.blueprint.capacity import prices

    pool = env.pool_of(model)
    extra = floor_nodes_per_zone(env, model, standby_spare(env, model)) - floor_nodes_per_zone(
        env, model, pool.spare_gpus
    )
    if extra <= 0:
        return 0.0
    row = prices.price(pool.instance_type, env.region)
    if row is None:
        return None
    return round(extra * len(pool.zones) * row.usd_per_hour * HOURS_PER_MONTH, 2)


def lazy_pull_usd_month(env: Environment, model: Model) -> float | None:
    """What `model`'s ``lazy_image_pull`` adds per month on EKS: every GPU node of its pool
    gets a gp3 root volume of `lazy_pull.FAST_PULL_THROUGHPUT_MIBPS` and
    `lazy_pull.FAST_PULL_IOPS` (`inferplane.components.image_pull`), billed for the
    throughput above gp3's free 125 MiB/s and the IOPS above its free 3,000, at the region's
    gp3 row (`prices.GP3_VOLUMES`; None: the table has no row, `lazy_pull_unpriced` says
    why). The volume keeps the pool's disk size, so its storage adds nothing.

    Counted on the nodes the pool keeps at the floor (`floor_nodes_per_zone` with the pool's
    spare units, times its zones), as ``standby`` is: both are what the pool pays while it
    serves its floor. Nodes a scale-out adds carry the volume too, for the hours they run;
    this figure, like standby's, does not count them. The volumes are AWS's monthly
    charges, taken as they are (no hours-per-month conversion).

    The volume is the pool's: once another model on the pool has the lever in effect, every
    node of the pool has it already, and this model's lever adds nothing (0)."""
    from inferplane.blueprint.capacity import prices

    pool = env.pool_of(model)
    if any(
        lazy_pull.LEVER in m.scale_out.levers
        for m in env.models.values()
        if m.pool == pool.name and m.name != model.name
    ):
        return 0.0
    row = prices.gp3_volume(env.region)
    if row is None:
        return None
    nodes = floor_nodes_per_zone(env, model, pool.spare_gpus) * max(1, len(pool.zones))
    throughput = lazy_pull.FAST_PULL_THROUGHPUT_MIBPS - prices.GP3_FREE_THROUGHPUT_MIBPS
    iops = lazy_pull.FAST_PULL_IOPS - prices.GP3_FREE_IOPS
    resized_gb = 0  # the lever keeps the pool's disk size (`disk_gib` either way)
    per_node = (
        throughput * row.usd_per_mibps_month
        + iops * row.usd_per_iops_month
        + resized_gb * row.usd_per_gb_month
    )
    return round(per_node * nodes, 2)


def lazy_pull_unpriced(env: Environment) -> str | None:
    """Why the ``lazy_image_pull`` lever has no price in `env` (None: it has one, or is
    free there)."""
    from inferplane.blueprint.capacity import prices

    if env.cloud != "aws" or prices.gp3_volume(env.region) is not None:
        return None
    return prices.gp3_missing(env.region)


def options(env: Environment, model: Model) -> Mapping[str, float | None]:
    """Every lever `model` could use here, in `LEVERS` order, with its extra US dollars per
    month (None: a price is missing)."""
    out: dict[str, float | None] = {}
    for lever in LEVERS:
        if unavailable_for(env, model, lever) is not None:
            continue
        if lever == "standby":
            out[lever] = standby_usd_month(env, model)
        elif lever == "lazy_image_pull" and env.cloud == "aws":
            # SOCI parallel pull comes with a faster gp3 root volume on every GPU node
            # (`inferplane.components.image_pull`), billed per provisioned IOPS and MiB/s.
            out[lever] = lazy_pull_usd_month(env, model)
        else:
            out[lever] = 0.0
    return out
