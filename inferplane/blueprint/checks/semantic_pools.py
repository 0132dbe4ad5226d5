"""GPU pools against the catalog, and a model against its pool: node shapes the cloud
offers, MIG and time-slicing settings that agree, and a replica's GPUs and precision that
its pool's nodes can give it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inferplane.blueprint import catalog, defaults
from inferplane.blueprint.checks import semantic_kubernetes
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.errors import YamlPath, counted


def check_pools_fit_catalog(env: EnvView) -> None:
    """Each pool's GPU, node size, node range and GPU sharing, against the catalog."""
    cloud = env.spec["cloud"]
    for name, pool in (env.data.get("gpu_pools") or {}).items():
        path: YamlPath = ("gpu_pools", name)
        gpu = catalog.gpu(pool["gpu"])
        per_node = pool.get("gpus_per_node", defaults.POOL_GPUS_PER_NODE)
        if "instance_type" not in pool and cloud != semantic_kubernetes.KUBERNETES:
            counts = gpu.gpu_counts(cloud)
            if not counts:
                env.error(
                    (*path, "gpu"),
                    f"{gpu.id} is not offered on {cloud}",
                    "choose a GPU available there (see `inferplane catalog`)",
                )
            elif per_node not in counts:
                env.error(
                    (*path, "gpus_per_node"),
                    f"{cloud} has no {gpu.id} node with {counted(per_node, 'GPU')}",
                    "use one of " + ", ".join(map(str, counts)) + ", or name an `instance_type`",
                )
        nodes = pool.get("nodes") or {}
        if "min" in nodes and "max" in nodes and nodes["min"] > nodes["max"]:
            env.error(
                (*path, "nodes", "min"),
                f"nodes.min ({nodes['min']}) is greater than nodes.max ({nodes['max']})",
                "make min <= max",
            )
        sharing = pool.get("sharing", defaults.POOL_SHARING)
        profile = pool.get("mig_profile")
        if sharing == "mig":
            if not gpu.supports_mig:
                env.error(
                    (*path, "sharing"),
                    f"{gpu.id} does not support MIG",
                    "use sharing: exclusive, or a MIG-capable GPU (A100, H100, H200, B200)",
                )
            elif profile is None:
                env.error(
                    (*path, "sharing"),
                    "sharing: mig needs a `mig_profile`",
                    "add mig_profile: one of " + ", ".join(gpu.mig_profiles),
                )
            elif profile not in gpu.mig_profiles:
                env.error(
                    (*path, "mig_profile"),
                    f"{profile!r} is not a MIG profile of {gpu.id}",
                    "use one of " + ", ".join(gpu.mig_profiles),
                )
        elif profile is not None:
            env.error(
                (*path, "mig_profile"),
                "mig_profile is set but sharing is not mig",
                "set sharing: mig, or remove mig_profile",
            )
        if "time_slices" in pool and sharing != "time_slicing":
            env.error(
                (*path, "time_slices"),
                "time_slices is set but sharing is not time_slicing",
                "set sharing: time_slicing, or remove time_slices",
            )


def model_fits_pool(
    env: EnvView, path: YamlPath, model: Mapping[str, Any], pool: Mapping[str, Any]
) -> None:
    """A replica's GPUs fit one node of its pool, and the pool's GPU has its precision."""
    gpu = catalog.gpu(pool["gpu"])
    gpus = model.get("gpus", defaults.MODEL_GPUS)
    sharing = pool.get("sharing", defaults.POOL_SHARING)
    per_node = pool.get("gpus_per_node", defaults.POOL_GPUS_PER_NODE)
    if sharing in ("mig", "time_slicing") and gpus != 1:
        what = "MIG slice" if sharing == "mig" else "time-sliced GPU"
        env.error(
            (*path, "gpus"),
            f"a model on a {sharing} pool uses exactly one {what}",
            "set gpus: 1, or use a pool with sharing: exclusive for tensor parallelism",
        )
    elif gpus > per_node:
        env.error(
            (*path, "gpus"),
            f"{counted(gpus, 'GPU')} per replica do not fit one node of pool "
            f"{model['pool']!r} ({counted(per_node, 'GPU')} per node)",
            f"use gpus <= {per_node}, or raise gpus_per_node of the pool",
        )
    precision = model.get("precision", defaults.MODEL_PRECISION)
    if precision == "bf16" and not gpu.supports_bf16:
        env.error((*path, "precision"), f"{gpu.id} has no bf16 support", "use fp16 on this GPU")
    tensorrt_llm = "tensorrt_llm" in model  # its precision rules: semantic_trtllm
    if (
        precision == "fp8"
        and not gpu.supports_fp8
        and model["server"] == "triton"
        and not tensorrt_llm
    ):
        env.error(
            (*path, "precision"),
            f"TensorRT fp8 needs compute capability 8.9+; {gpu.id} is {gpu.compute_capability}",
            "use fp16 or int8, or an L4/L40S/H100-class GPU",
        )
