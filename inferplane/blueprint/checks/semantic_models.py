"""Each model against its environment: a pool that exists and fits it, settings of its
own server only, sources its cloud and server can read, and its SLO, exposure, scaling,
batching and capacity (those by the modules that own them).
"""

from __future__ import annotations

from inferplane.blueprint import semantic_trtllm
from inferplane.blueprint.checks import (
    semantic_capacity,
    semantic_pools,
    semantic_scaling,
    semantic_serving,
)
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.errors import YamlPath

_TRITON_ONLY = (
    "tensorrt",
    "tensorrt_llm",
    "batching",
    "response_cache",
    "warmup",
    "backend",
    "accelerator",
    "inputs",
    "outputs",
    "pipeline",
)


def check_models(env: EnvView) -> None:
    """Every model of the environment, against its pool, server and cloud."""
    pools = dict(env.data.get("gpu_pools") or {})
    cloud = env.spec["cloud"]
    for name, model in (env.data.get("models") or {}).items():
        path: YamlPath = ("models", name)
        server = model["server"]
        pool_name = model["pool"]
        if pool_name not in pools:
            env.error(
                (*path, "pool"),
                f"pool {pool_name!r} is not defined",
                "use one of: " + (", ".join(pools) or "(no gpu_pools defined)"),
            )
        else:
            semantic_pools.model_fits_pool(env, path, model, pools[pool_name])
        semantic_trtllm.check_model(env.error, path, model, pools.get(pool_name))
        replicas = model.get("replicas") or {}
        if "min" in replicas and "max" in replicas and replicas["min"] > replicas["max"]:
            env.error(
                (*path, "replicas", "min"),
                f"replicas.min ({replicas['min']}) is greater than replicas.max "
                f"({replicas['max']})",
                "make min <= max",
            )
        for key in _TRITON_ONLY:
            if key in model and server != "triton":
                env.error(
                    (*path, key),
                    f"`{key}` only applies to server: triton",
                    f"remove it, or set server: triton (this model uses {server})",
                )
        if "vllm" in model and server != "vllm":
            env.error(
                (*path, "vllm"),
                "`vllm` settings only apply to server: vllm",
                f"remove them, or set server: vllm (this model uses {server})",
            )
        source = model["source"]
        if server == "triton" and source.startswith("hf://") and "tensorrt_llm" not in model:
            env.error(
                (*path, "source"),
                "Triton loads models from the model store, not hf://",
                "upload the ONNX file under model_store and give its relative path; for an LLM "
                "checkpoint, add a `tensorrt_llm:` section",
            )
        other = "s3" if cloud == "gcp" else "gs"
        if source.startswith(f"{other}://"):
            env.error(
                (*path, "source"),
                f"a {cloud} environment ({env.name}) cannot read {other}:// sources",
                f"copy the model into {env.spec['model_store']} and use a relative path",
            )
        elif (
            server == "triton"
            and "tensorrt" in model
            and not source.startswith("hf://")
            and not source.endswith(".onnx")
        ):
            env.error(
                (*path, "source"),
                "a TensorRT engine is built from an ONNX file",
                "point source at the model's .onnx file",
            )
        pool = pools.get(model["pool"]) or {}
        zones = len(pool.get("zones") or env.spec["zones"])
        semantic_scaling.check_model(env, path, model, zones)
        slo = model.get("slo") or {}
        # TensorRT-LLM models: semantic_trtllm (time to first token when streaming).
        llm = "tensorrt_llm" in model
        if server != "vllm" and not llm and "ttft_p95_ms" in slo:
            env.error(
                (*path, "slo", "ttft_p95_ms"),
                "time to first token is a vLLM signal",
                "use slo.p95_ms for Triton",
            )
        expose = (model.get("expose") or {}).get("protocol")
        if server == "vllm" and expose in ("grpc", "both"):
            env.error((*path, "expose", "protocol"), "vLLM serves HTTP only", "use protocol: http")
        semantic_serving.batching_consistent(env, path, model)
        semantic_capacity.check_model(env, path, model)
