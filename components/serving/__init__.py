"""Per-model serving: everything one served model needs, one concern per module.

- `model_server.ModelServer`: the model's Deployment, Services, PDB, NetworkPolicy,
  Secret, Triton config, and the children below; `serving_pod`: their manifests;
  `model_prerequisites`: what its pods wait for (the Jobs below, config, secret).
- `engine_build.TensorRtEngineBuild`: the TensorRT engine Job (Triton + ``tensorrt``);
  `pipeline_engines.PipelineEngineBuild`: one such Job per ``tensorrt`` pipeline step;
  `trtllm_build.TensorRtLlmEngineBuild`: the TensorRT-LLM engine Job (``tensorrt_llm``),
  served by `trtllm` (the ``tensorrtllm`` backend's config and container);
  `vllm_compile.VllmCompileCache`: the Job that stages a vLLM model's ``torch.compile``
  cache in the store; `weights_job.WeightsStaging`: the Job that stages an ``hf://``
  source. `engine_keys`: an engine's key and store layout. `store_job`: the ConfigMap of
  the programs these Jobs run (the ``jobs`` package) and the Job resource; `store_cli`:
  the storage-CLI containers, and publishing by attempt so that a retried Job never
  overwrites.
- `triton_config`: ``config.pbtxt`` and the ``tritonserver`` container; `vllm`: the
  ``vllm serve`` container; `containers`: placement, sizing, probes, hardening.
- `load_balancer`: the region-local LoadBalancer Service and the NetworkPolicy.
- `secrets`: model secrets, by reference, as Pulumi secrets end to end.
- `autoscaling.ModelAutoscaler` (KEDA), `monitoring.ModelMonitoring` (ServiceMonitor,
  PrometheusRule, dashboard), built on `promql` (its queries; `promql_scope`: what selects
  one model's series), `rules` and `dashboards`.
- `wake`: how a model at zero replicas comes back (a cron window, or its own HTTP
  requests through the KEDA HTTP add-on's interceptor).

- `spec`: the arguments: `ServedModel` (with its `ServingPool` and `ModelSecret`s, in
  `spec_parts`) and `ServingEnvironment`, filled by hand or, from a blueprint, by
  `inferplane.components.stack_serving`; inconsistent ones raise `ServingArgsError`.

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
