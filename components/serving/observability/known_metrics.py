"""Every series name the serving queries may use, and the exporter that emits it.

Sources: the pinned Triton release's families, read from core ``src/metrics.cc`` by
scripts/facts/triton_metrics.py (``inferplane/facts/triton/<release>/metrics.txt``); the
TensorRT-LLM backend's README (``nv_trt_llm_*``); the pinned vLLM wheel's metric families
(``inferplane/facts/vllm/<release>/metrics.txt``, with the suffixes prometheus_client adds);
dcgm-exporter's ``etc/default-counters.csv`` (uncommented lines only); kube-state-metrics as
kube-prometheus-stack scrapes it; the llm-d router's endpoint picker (llm-d/llm-d-router
v0.10.0, commit 71f4f0999f95b96c49a9d0c4afbd18dfdb943c26,
``pkg/epp/metrics/llm_d_router_metrics.go``: subsystem ``llm_d_epp``; client_golang adds no
``_total``, the counters carry it in their names). Tests check every query against this
registry, so a name that no exporter emits cannot reach a trigger, a rule or a dashboard.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Final

from inferplane.blueprint import defaults
from inferplane.blueprint.upstream import triton_facts, vllm_owned


def _histogram(*families: str) -> list[str]:
    return [f"{f}{suffix}" for f in families for suffix in ("_bucket", "_sum", "_count")]


def _summary(*families: str) -> list[str]:
    return [f"{f}{suffix}" for f in families for suffix in ("", "_sum", "_count")]


def _registry(exporter: str, names: Iterable[str]) -> dict[str, str]:
    return dict.fromkeys(names, exporter)


KNOWN_METRICS: Final[Mapping[str, str]] = MappingProxyType(
    {
        # Triton core src/metrics.cc of the pinned release, read by scripts/facts/triton_metrics.py
        # (inferplane/facts/triton/<release>/metrics.txt).
        **_registry("triton", sorted(triton_facts.metric_series(defaults.VERSIONS["triton"]))),
        # Triton's TensorRT-LLM backend (tensorrtllm_backend README, "Triton Metrics", and
        # NVIDIA/TensorRT-LLM triton_backend/inflight_batcher_llm/src/custom_metrics_reporter/
        # custom_metrics_reporter.cc, `InitializeReporter`, the backend of 0.20 on). Gauges, labels
        # model, version and one type label each: request_type
        # (waiting|context|scheduled|max|active), memory_type, kv_cache_block_type
        # (fraction|tokens_per|used|free|max), inflight_batcher_specific_metric
        # (micro_batch_id|generation_requests|total_context_tokens), general_type,
        # v1_specific_metric (V1 batching only); disaggregated_serving is a counter (prometheus-cpp
        # adds no suffix).
        **_registry(
            "triton-trtllm",
            [
                "nv_trt_llm_request_metrics",
                "nv_trt_llm_runtime_memory_metrics",
                "nv_trt_llm_kv_cache_block_metrics",
                "nv_trt_llm_inflight_batcher_metrics",
                "nv_trt_llm_general_metrics",
                "nv_trt_llm_disaggregated_serving_metrics",
                "nv_trt_llm_v1_metrics",
            ],
        ),
        # vLLM v1 metrics of the pinned release, read from its wheel
        # (inferplane/facts/vllm/<release>/metrics.txt); prometheus_client adds the suffixes.
        **_registry("vllm", sorted(vllm_owned.metric_series(defaults.VERSIONS["vllm"]))),
        # dcgm-exporter etc/default-counters.csv (uncommented lines only).
        **_registry(
            "dcgm",
            [
                "DCGM_FI_DEV_SM_CLOCK",
                "DCGM_FI_DEV_MEM_CLOCK",
                "DCGM_FI_DEV_MEMORY_TEMP",
                "DCGM_FI_DEV_GPU_TEMP",
                "DCGM_FI_DEV_POWER_USAGE",
                "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
                "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
                "DCGM_FI_DEV_GPU_UTIL",
                "DCGM_FI_DEV_MEM_COPY_UTIL",
                "DCGM_FI_DEV_ENC_UTIL",
                "DCGM_FI_DEV_DEC_UTIL",
                "DCGM_FI_DEV_XID_ERRORS",
                "DCGM_FI_DEV_FB_FREE",
                "DCGM_FI_DEV_FB_USED",
                "DCGM_FI_DEV_FB_RESERVED",
                "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
                "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
                "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
                "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
                "DCGM_FI_DEV_ROW_REMAP_FAILURE",
                "DCGM_FI_DRIVER_VERSION",
                "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
                "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
                "DCGM_FI_PROF_DRAM_ACTIVE",
                "DCGM_FI_PROF_PCIE_TX_BYTES",
                "DCGM_FI_PROF_PCIE_RX_BYTES",
            ],
        ),
        # The llm-d router's endpoint picker, v0.10.0 pkg/epp/metrics/llm_d_router_metrics.go.
        # The deprecated inference_objective_* / inference_pool_* names (metrics.go) are left
        # out on purpose. Labels: request_running has model_name, target_model_name,
        # fairness_id, priority; ready_endpoints and the pool averages `name` (the pool);
        # flow_control_queue_size fairness_id, priority, inference_pool and the model labels;
        # flow_control_pool_saturation inference_pool. The flow_control_* series exist only
        # with the `flowControl` feature gate on (pkg/epp/flowcontrol/README.md).
        **_registry(
            "llm-d-router",
            [
                "llm_d_epp_request_total",
                "llm_d_epp_request_error_total",
                "llm_d_epp_request_running",
                "llm_d_epp_average_kv_cache_utilization",
                "llm_d_epp_average_queue_size",
                "llm_d_epp_average_running_requests",
                "llm_d_epp_std_dev_kv_cache_utilization",
                "llm_d_epp_std_dev_queue_size",
                "llm_d_epp_std_dev_running_requests",
                "llm_d_epp_ready_endpoints",
                "llm_d_epp_scheduler_attempts_total",
                "llm_d_epp_info",
                "llm_d_epp_flow_control_queue_size",
                "llm_d_epp_flow_control_queue_bytes",
                "llm_d_epp_flow_control_pool_saturation",
                "llm_d_epp_flow_control_stale_endpoints",
                "llm_d_epp_flow_control_requests_total",
                "llm_d_epp_flow_control_revocations_issued_total",
                "llm_d_epp_flow_control_revocations_total",
                "llm_d_epp_flow_control_reclaim_target",
                "llm_d_epp_flow_control_pending_reclaim",
                "llm_d_epp_model_rewrite_decisions_total",
                "llm_d_epp_datalayer_poll_errors_total",
                "llm_d_epp_datalayer_extract_errors_total",
                *_histogram(
                    "llm_d_epp_request_duration_seconds",
                    "llm_d_epp_request_size_bytes",
                    "llm_d_epp_response_size_bytes",
                    "llm_d_epp_request_input_tokens",
                    "llm_d_epp_request_output_tokens",
                    "llm_d_epp_request_cached_tokens",
                    "llm_d_epp_request_ntpot_seconds",
                    "llm_d_epp_request_ttft_seconds",
                    "llm_d_epp_request_streaming_tpot_seconds",
                    "llm_d_epp_request_streaming_itl_seconds",
                    "llm_d_epp_scheduler_e2e_duration_seconds",
                    "llm_d_epp_plugin_duration_seconds",
                    "llm_d_epp_request_processing_duration_seconds",
                    "llm_d_epp_response_processing_duration_seconds",
                    "llm_d_epp_flow_control_request_queue_duration_seconds",
                    "llm_d_epp_flow_control_dispatch_cycle_duration_seconds",
                    "llm_d_epp_flow_control_request_enqueue_duration_seconds",
                    "llm_d_epp_flow_control_revocation_confirmation_seconds",
                ),
            ],
        ),
        # Prometheus itself: one `up` series per scrape target, 1 when the scrape succeeded
        # (prometheus docs, "Jobs and instances", automatically generated series).
        **_registry("prometheus", ["up"]),
        # kube-state-metrics, as kube-prometheus-stack scrapes it.
        **_registry(
            "kube-state-metrics",
            [
                "kube_deployment_spec_replicas",
                "kube_deployment_status_replicas",
                "kube_deployment_status_replicas_ready",
                "kube_deployment_status_replicas_available",
                "kube_deployment_status_replicas_unavailable",
                "kube_deployment_status_replicas_updated",
                "kube_horizontalpodautoscaler_spec_min_replicas",
                "kube_horizontalpodautoscaler_spec_max_replicas",
                "kube_horizontalpodautoscaler_status_current_replicas",
                "kube_horizontalpodautoscaler_status_desired_replicas",
                "kube_pod_container_status_restarts_total",
                "kube_pod_created",
                "kube_pod_start_time",
                "kube_pod_status_phase",
                "kube_pod_status_ready",
                "kube_pod_status_ready_time",
                # A model with a rollout counts its ReplicaSets' replicas
                # (kube-state-metrics docs/metrics/workload/replicaset-metrics.md).
                "kube_replicaset_spec_replicas",
                "kube_replicaset_status_ready_replicas",
            ],
        ),
    }
)
"""Every series name a query here may use, mapped to the exporter that emits it."""
