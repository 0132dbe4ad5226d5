"""Per-model serving: everything one served model needs, one concern per folder.

At the root, the pod builder and the vocabulary every folder shares:

- `model_server.ModelServer`: the model's Deployment, Services, PDB, NetworkPolicy,
  Secret, Triton config, and the children below; `serving_pod`: their manifests;
  `model_prerequisites`: what its pods wait for (the Jobs below, config, secret).
- `spec`: the arguments: `ServedModel` (with its `ServingPool` and `ModelSecret`s, in
  `spec_parts`) and `ServingEnvironment`, filled by hand or, from a blueprint, by
  `inferplane.components.stack_serving`; inconsistent ones raise `ServingArgsError`.
- `containers`: placement, sizing, probes, hardening; `network_policies`: the egress of
  every pod inferplane runs; `secrets`: model secrets, by reference, as Pulumi secrets end
  to end; `generated_password`: a password kept in Pulumi's state.

The folders, each one concern (its ``__init__`` says what is in it):

- `triton`: Triton's ``config.pbtxt`` and container, pipelines, the response cache;
  `trtllm`: TensorRT-LLM on Triton's ``tensorrtllm`` backend and its engine build;
  `vllm`: the ``vllm serve`` container, its route guard and compile cache;
  `tensorrt`: TensorRT engines built from ONNX (`engine_build.TensorRtEngineBuild`,
  `pipeline_engines.PipelineEngineBuild`) and their keys in the store.
- `store`: the model store: the storage-CLI containers (`store_cli`), what every Job that
  writes to the store shares (`store_job`, the programs of the ``jobs`` package), and what
  is staged into it (`weights_job.WeightsStaging`, `requirements_job.RequirementsStaging`).
- `routing`: the region-local load balancer and the llm-d router (`router.ModelRouter`).
- `scaling`: KEDA autoscaling (`autoscaling.ModelAutoscaler`), waking from zero, spare
  GPUs and image pre-pulls.
- `observability`: the queries (`promql`), recording rules and alerts, the dashboard and
  `monitoring.ModelMonitoring`.

The engines' folders do not import each other but for `trtllm`, which runs on Triton; the
folders do not import the root's pod builder (pyproject.toml, import-linter contracts).

The classes are importable from here (``from inferplane.components.serving import ModelServer``);
modules load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, typed, for checkers and editors
    from inferplane.components.serving.model_server import ModelServer, ModelServerArgs
    from inferplane.components.serving.observability.monitoring import (
        ModelMonitoring,
        ModelMonitoringArgs,
    )
    from inferplane.components.serving.scaling.autoscaling import (
        ModelAutoscaler,
        ModelAutoscalerArgs,
    )
    from inferplane.components.serving.spec import (
        ServedModel,
        ServingArgsError,
        ServingEnvironment,
    )
    from inferplane.components.serving.spec_parts import ModelSecret, ServingPool, model_source
    from inferplane.components.serving.tensorrt.engine_build import (
        TensorRtEngineBuild,
        TensorRtEngineBuildArgs,
    )
    from inferplane.components.serving.triton.triton_config import render_config_pbtxt
    from inferplane.components.serving.trtllm.trtllm_build import (
        TensorRtLlmEngineBuild,
        TensorRtLlmEngineBuildArgs,
    )
    from inferplane.components.serving.vllm.vllm_compile import (
        VllmCompileCache,
        VllmCompileCacheArgs,
    )

_EXPORTS = {
    "ModelServer": "inferplane.components.serving.model_server",
    "ModelServerArgs": "inferplane.components.serving.model_server",
    "TensorRtEngineBuild": "inferplane.components.serving.tensorrt.engine_build",
    "TensorRtEngineBuildArgs": "inferplane.components.serving.tensorrt.engine_build",
    "TensorRtLlmEngineBuild": "inferplane.components.serving.trtllm.trtllm_build",
    "TensorRtLlmEngineBuildArgs": "inferplane.components.serving.trtllm.trtllm_build",
    "VllmCompileCache": "inferplane.components.serving.vllm.vllm_compile",
    "VllmCompileCacheArgs": "inferplane.components.serving.vllm.vllm_compile",
    "ModelAutoscaler": "inferplane.components.serving.scaling.autoscaling",
    "ModelAutoscalerArgs": "inferplane.components.serving.scaling.autoscaling",
    "ModelMonitoring": "inferplane.components.serving.observability.monitoring",
    "ModelMonitoringArgs": "inferplane.components.serving.observability.monitoring",
    "render_config_pbtxt": "inferplane.components.serving.triton.triton_config",
    "ModelSecret": "inferplane.components.serving.spec_parts",
    "ServedModel": "inferplane.components.serving.spec",
    "ServingArgsError": "inferplane.components.serving.spec",
    "ServingEnvironment": "inferplane.components.serving.spec",
    "ServingPool": "inferplane.components.serving.spec_parts",
    "model_source": "inferplane.components.serving.spec_parts",
}

__all__ = [
    "ModelAutoscaler",
    "ModelAutoscalerArgs",
    "ModelMonitoring",
    "ModelMonitoringArgs",
    "ModelSecret",
    "ModelServer",
    "ModelServerArgs",
    "ServedModel",
    "ServingArgsError",
    "ServingEnvironment",
    "ServingPool",
    "TensorRtEngineBuild",
    "TensorRtEngineBuildArgs",
    "TensorRtLlmEngineBuild",
    "TensorRtLlmEngineBuildArgs",
    "VllmCompileCache",
    "VllmCompileCacheArgs",
    "model_source",
    "render_config_pbtxt",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'inferplane.components.serving' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
