"""Per-model serving: everything one served model needs, one concern per module.

- `model_server.ModelServer`: the model's Deployment, Services, PDB, NetworkPolicy,
  Secret, Triton config, and the children below.
- `engine_build.TensorRtEngineBuild`: the TensorRT engine Job (Triton + ``tensorrt``).
- `triton_config`: ``config.pbtxt`` and the ``tritonserver`` container; `vllm`: the
  ``vllm serve`` container; `containers`: placement, sizing, probes, hardening.
- `load_balancer`: the region-local LoadBalancer Service and the NetworkPolicy.
- `secrets`: model secrets, by reference, as Pulumi secrets end to end.
- `autoscaling.ModelAutoscaler` (KEDA), `monitoring.ModelMonitoring` (ServiceMonitor,
  PrometheusRule, dashboard), built on `promql`, `rules` and `dashboards`.

The classes are importable from here (``from components.serving import ModelServer``);
modules load on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "ModelServer": "components.serving.model_server",
    "ModelServerArgs": "components.serving.model_server",
    "TensorRtEngineBuild": "components.serving.engine_build",
    "TensorRtEngineBuildArgs": "components.serving.engine_build",
    "ModelAutoscaler": "components.serving.autoscaling",
    "ModelAutoscalerArgs": "components.serving.autoscaling",
    "ModelMonitoring": "components.serving.monitoring",
    "ModelMonitoringArgs": "components.serving.monitoring",
    "render_config_pbtxt": "components.serving.triton_config",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'components.serving' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
