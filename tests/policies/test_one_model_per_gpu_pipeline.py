"""one-model-per-gpu and pipelines: a pipeline's Triton loads its ensemble and exactly the
steps whose configs its ConfigMap carries; anything else is still refused."""

from __future__ import annotations

from inferplane.policies.resources import Resource
from inferplane.policies.rules import one_model_per_gpu
from inferplane.policies.stack import ModelView


def _view(data: dict[str, str]) -> ModelView:
    config = Resource(
        "kubernetes:core/v1:ConfigMap", "embed-triton-config", "urn:cm", {"data": data}
    )
    return ModelView("embed", (), (), (), (), (), (config,), "realtime", "l4")


def test_a_pipeline_loads_its_ensemble_and_its_steps() -> None:
    view = _view({"config.pbtxt": "", "step-tokenize.pbtxt": "", "step-encoder.pbtxt": ""})
    assert one_model_per_gpu.pipeline_models(view) == {"embed-tokenize", "embed-encoder"}
    loads = ["embed-tokenize", "embed-encoder", "embed"]
    assert one_model_per_gpu._loads_one(view, loads)
    assert not one_model_per_gpu._loads_one(view, [*loads, "other"])
    assert not one_model_per_gpu._loads_one(view, ["embed"])
    assert not one_model_per_gpu._loads_one(view, ["*"])


def test_one_model_loads_one() -> None:
    view = _view({"config.pbtxt": ""})
    assert one_model_per_gpu.pipeline_models(view) == set()
    assert one_model_per_gpu._loads_one(view, ["ensemble"])  # TensorRT-LLM's own name
    assert not one_model_per_gpu._loads_one(view, ["*"])
    assert not one_model_per_gpu._loads_one(view, ["a", "b"])
