"""Advisory about ONNX Runtime's TensorRT execution provider (printed by ``inferplane
validate`` as a warning, exit 0): every new replica builds the provider's engines.

``accelerator: tensorrt`` runs an ONNX model (or a pipeline step) on ONNX Runtime with the
TensorRT execution provider (onnxruntime_backend r25.08 ``README.md``, "ONNX Runtime with
TensorRT optimization": ``gpu_execution_accelerator : [ { name : "tensorrt" } ]``). The
provider builds a TensorRT engine for each subgraph it takes as the model loads or first
runs, and reuses an engine only from its cache (``trt_engine_cache_enable``,
``trt_engine_cache_path``: "Engine will be cached when it's built for the first time so
next time when new inference session is created the engine can be loaded directly from
cache", onnxruntime ``docs/execution-providers/TensorRT-ExecutionProvider.md``). That
cache is the serving pod's own emptyDir (`components.serving.triton.triton_tensors.TRT_CACHE_DIR`),
empty in every new replica, so each scale-out waits for a build: the ``engine_build`` part
of the scale-out budget (`scale_out.Constants.ort_trt_engine_build_s`). ``backend:
tensorrt`` builds the engine once, in a Job on the pool's GPU type, keyed by GPU and
release, and every replica copies it.
"""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.derived.scale_out import Constants
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.resolve_triton import backend_of, step_device

Advisory = tuple[YamlPath, str, str]


def findings(env: EnvView) -> Iterator[Advisory]:
    build_s = int(Constants().ort_trt_engine_build_s)
    for name, model in (env.data.get("models") or {}).items():
        if model.get("server") != "triton":
            continue
        path: YamlPath = ("models", name)
        if model.get("accelerator") == "tensorrt" and backend_of(model) == "onnxruntime":
            yield (
                (*path, "accelerator"),
                _message(f"model {name}", build_s),
                "build the engine once, in a Job on the pool's GPU type, with backend: "
                "tensorrt (tensorrt.inputs are its profiles), or use accelerator: cuda, "
                "which builds nothing",
            )
        steps = (model.get("pipeline") or {}).get("steps") or {}
        for step_name, step in steps.items():
            if (
                step.get("accelerator") == "tensorrt"
                and step.get("backend") == "onnxruntime"
                and step_device(step) == "gpu"
            ):
                yield (
                    (*path, "pipeline", "steps", step_name, "accelerator"),
                    _message(f"step {step_name} of model {name}", build_s),
                    "build the engine once, in a Job on the pool's GPU type, with backend: "
                    "tensorrt (the step's shapes are its profiles), or use accelerator: "
                    "cuda, which builds nothing",
                )


def _message(what: str, build_s: int) -> str:
    return (
        f"{what} runs on ONNX Runtime's TensorRT execution provider, which builds its "
        "TensorRT engines in every new replica as the model loads (its engine cache is the "
        f"pod's own emptyDir, empty in a new pod): each scale-out waits about {build_s} s "
        "more (the scale-out budget's engine_build)"
    )


__all__ = ["findings"]
