"""Every default of the blueprint, stated once.

The JSON Schema's descriptions, the generated reference and `resolve()` all read these
values, so a default changes in exactly one place.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from inferplane.blueprint import releases

# --- versions: tested pins, overridable per blueprint under `versions:` -----------------
VERSIONS: Final[dict[str, str]] = releases.pinned_versions()
"""Read from the release table (`releases.json`), where each pin has its source."""

# Helm repositories of the cluster add-ons.
CHART_REPOSITORIES: Final[dict[str, str]] = {
    "gpu-operator": "https://helm.ngc.nvidia.com/nvidia",
    "keda": "https://kedacore.github.io/charts",
    "keda-add-ons-http": "https://kedacore.github.io/charts",
    "kube-prometheus-stack": "https://prometheus-community.github.io/helm-charts",
    "aws-load-balancer-controller": "https://aws.github.io/eks-charts",
    "cluster-autoscaler": "https://kubernetes.github.io/autoscaler",
    "argo-rollouts": "https://argoproj.github.io/argo-helm",
}

# --- images (tags pinned; the NGC release is shared by Triton and its TensorRT image) ----
TRITON_IMAGE: Final = "nvcr.io/nvidia/tritonserver:{release}-py3"
TENSORRT_IMAGE: Final = "nvcr.io/nvidia/tensorrt:{release}-py3"
# Triton with the TensorRT-LLM backend, and TensorRT-LLM itself for engine builds.
TRITON_TRTLLM_IMAGE: Final = "nvcr.io/nvidia/tritonserver:{release}-trtllm-python-py3"
VLLM_IMAGE: Final = "vllm/vllm-openai:{version}"
VALKEY_IMAGE: Final = releases.image("valkey")
"""The response cache server (`response_cache.backend: redis`): Valkey, the BSD-licensed
fork of Redis, from the Valkey project's own Docker Hub repository; 9.0.8 released
2026-11-18 (https://valkey.io/download/releases/v9-0-8/, tags ``9.0.8``/``9.0.8-alpine``)."""
AWS_CLI_IMAGE: Final = releases.image("aws_cli")
GCLOUD_IMAGE: Final = releases.image("gcloud")
# The pause image of placeholder and pre-pull pods: kubeadm's sandbox image since Kubernetes
# 1.31 (kubernetes/kubernetes PR #125112, "start using registry.k8s.io/pause:3.10"); the
# registry is in trusted-registries' defaults.
PAUSE_IMAGE: Final = releases.image("pause")

# --- environment ---------------------------------------------------------------------------
KUBERNETES_VERSION: Final = "1.33"
VPC_CIDR: Final = "10.64.0.0/16"

# --- gpu_pools.<pool> ---------------------------------------------------------------------
POOL_GPUS_PER_NODE: Final = 1
POOL_NODES_MIN: Final = 1
POOL_NODES_MAX: Final = 4
POOL_CAPACITY: Final = "on_demand"
POOL_SHARING: Final = "exclusive"
POOL_DISK_GIB: Final = 200
POOL_TIME_SLICES: Final = 2
# No GPUs held free for a surge unless the pool asks for them (they cost a GPU each).
POOL_SPARE_GPUS: Final = 0

# --- models.<model> -----------------------------------------------------------------------
MODEL_GPUS: Final = 1
MODEL_LATENCY_CLASS: Final = "realtime"
MODEL_PRECISION: Final = "fp16"
MODEL_AUTOSCALING_METRIC: Final = "queue_depth"
MODEL_AUTOSCALING_TARGET: Final = 4
SCALE_DOWN_STABILIZATION_S: Final = 600
STARTUP_TIMEOUT_S: Final = 1200
MAX_REQUEST_S: Final = 60
EXPOSE_BY_SERVER: Final[dict[str, str]] = {"vllm": "http", "triton": "both"}
# Round-robin until the end-to-end run has proven LLM-aware routing on real traffic; once
# opted in, prefix scoring from the router's own view (no extra endpoint on vLLM), and no
# router queue (the flowControl gate is off by default upstream, llm-d-router v0.10.0
# pkg/epp/flowcontrol/README.md).
ROUTING_MODE: Final = "round_robin"
ROUTING_PREFIX_CACHE: Final = "approximate"
ROUTING_FLOW_CONTROL: Final = False
# Two endpoint pickers per zone under leader election: one routes, one takes over.
ROUTING_PICKERS: Final = 2
# A model's `rollout` without its own steps: a tenth of the zone's replicas first, then half,
# then all; five minutes a step gives a 5-minute p95 window of the new pods alone. An error
# ratio of 1% is the guard's own default: the SLO states no error bound.
ROLLOUT_STEPS: Final = (10, 50, 100)
ROLLOUT_STEP_S: Final = 300
ROLLOUT_ERROR_RATIO: Final = 0.01
TENSORRT_BUILDER_OPTIMIZATION_LEVEL: Final = 3
RESPONSE_CACHE_SIZE_MB: Final = 256
RESPONSE_CACHE_BACKEND: Final = "local"
BATCHING_MAX_QUEUE_DELAY_US: Final = 1000
VLLM_SPECULATIVE_TOKENS: Final = 3
VLLM_MAX_LORAS: Final = 4
"""Default `lora.max_loras`: the number of adapters, up to this many resident at once."""

# tensorrt_llm: the tensorrtllm backend's own defaults (docs/model_config.md of
# triton-inference-server/tensorrtllm_backend, the same at r25.08 and r26.02: TensorRT-LLM
# 0.21.0 and 1.1.0).
TRTLLM_KV_CACHE_FREE_GPU_MEM_FRACTION: Final = 0.9
TRTLLM_ENABLE_KV_CACHE_REUSE: Final = False
TRTLLM_BATCH_SCHEDULER_POLICY: Final = "guaranteed_no_evict"
TRTLLM_ENABLE_CHUNKED_CONTEXT: Final = False
TRTLLM_MAX_QUEUE_SIZE: Final = 0
TRTLLM_STREAMING: Final = False


def default_replicas(realtime: bool, zones: int) -> tuple[int, int]:
    """Realtime: one warm replica per zone of the model's pool, up to twice that (at least 2).
    Batch: may scale to zero, up to 2."""
    low = zones if realtime else 0
    return low, max(2, 2 * low)


def model_replicas(model: Mapping[str, Any], zones: int) -> tuple[int, int]:
    """`replicas.min` and `replicas.max` of a model as the blueprint writes it (one
    `models.<model>` mapping), else their defaults (`default_replicas`) for a pool of `zones`
    zones; a default max is never below the given min. `resolve()` and the semantic checks
    both ask this, so the checks judge the replicas that are deployed."""
    realtime = model.get("latency_class", MODEL_LATENCY_CLASS) == "realtime"
    low, high = default_replicas(realtime, zones)
    replicas = model.get("replicas") or {}
    minimum = replicas.get("min", low)
    return minimum, replicas.get("max", max(high, minimum))


# --- load_balancer, observability ----------------------------------------------------------
LB_SCHEME: Final = "internal"
SERVICE_TYPE: Final = "cluster_ip"
"""A kubernetes environment's model Services: ClusterIP. A LoadBalancer Service on a cluster
with no implementation never gets an address, and `pulumi up` waits for one until it times out
(pulumi-kubernetes `provider/pkg/await/service.go` awaits `.status.loadBalancer.ingress`)."""
PROMETHEUS_RETENTION: Final = "15d"
PROMETHEUS_STORAGE_GIB: Final = 50
GRAFANA_ENABLED: Final = True
ALERTS_ENABLED: Final = True
