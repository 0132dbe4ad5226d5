"""The resolved blueprint: one immutable, typed `Environment` per environment.

`inferplane.blueprint.resolution.resolve.resolve(document, env_name)` builds these from a
validated blueprint: overrides merged, defaults applied, model sources made absolute, GPUs
looked up in the catalog. Everything downstream (components, policies, plan, check) reads
only this model.

Every object knows the YAML path it came from (`path`), and `Environment.locate(path)`
turns any effective path into the `file:line:col` of the value that set it — inside
`environments.<env>.overrides` when an override set it.

This module holds `Environment` and `Model` and is the one import point of every type of
the resolved blueprint; the parts a model or an environment is made of live by area:

    model_cluster   the cluster, GPU pools, load balancer, observability, versions, waivers,
                    store credentials, secret references
    model_engines   model sources, TensorRT and TensorRT-LLM builds, Triton batching, cache
                    and warm-up, vLLM settings
    model_scaling   autoscaling signals, wake schedules, SLO, traffic, routing
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from inferplane.blueprint import catalog, naming, releases
from inferplane.blueprint.errors import Location, YamlPath
from inferplane.blueprint.llm_catalog import LlmFacts
from inferplane.blueprint.model_cluster import (
    AlertReceiver,
    Capacity,
    CapacitySource,
    Cloud,
    ClusterSpec,
    GpuPool,
    LoadBalancer,
    MinMax,
    Observability,
    Scheme,
    SecretRef,
    ServiceType,
    Sharing,
    SourceKind,
    StoreSecrets,
    Versions,
    Waiver,
    pool_gpu_resource,
    pool_mig_config,
    pool_slices_per_gpu,
    zone_replicas,
    zone_share,
    zone_split_problems,
)
from inferplane.blueprint.model_engines import (
    Batching,
    BatchSchedulerPolicy,
    Lora,
    LoraAdapter,
    ModelSource,
    ResponseCache,
    Speculative,
    TensorRt,
    TensorRtInput,
    TensorRtLlm,
    TrtLlmKvCacheQuantization,
    TrtLlmQuantization,
    VllmSettings,
    Warmup,
)
from inferplane.blueprint.model_scaling import (
    FLOW_CONTROL_METRICS,
    LEVERS,
    ROUTER_METRICS,
    Autoscaling,
    Lever,
    Metric,
    PrefixCache,
    Rollout,
    RolloutGuard,
    Routing,
    RoutingMode,
    ScaleOut,
    ScheduleWindow,
    Signal,
    Slo,
    Traffic,
    Wake,
    guarded_latencies,
)
from inferplane.blueprint.source import SourceMap
from inferplane.blueprint.triton_model import (
    Accelerator,
    Pipeline,
    ShapeProfile,
    Tensor,
    TritonBackend,
)

Server = Literal["vllm", "triton"]
LatencyClass = Literal["realtime", "batch"]
Precision = Literal["fp32", "fp16", "bf16", "fp8", "int8", "int4"]
Protocol = Literal["http", "grpc", "both"]


@dataclass(frozen=True)
class Model:
    """One served model (endpoint)."""

    name: str
    path: YamlPath
    server: Server
    source: ModelSource
    pool: str
    gpus: int
    latency_class: LatencyClass
    precision: Precision
    replicas: MinMax
    autoscaling: Autoscaling
    slo: Slo | None
    expose: Protocol
    secrets: tuple[SecretRef, ...]
    image: str | None
    """An explicit server image; None uses the pinned image of `versions`."""
    startup_timeout_s: int
    max_request_s: int
    vllm: VllmSettings | None = None
    tensorrt: TensorRt | None = None
    tensorrt_llm: TensorRtLlm | None = None
    batching: Batching | None = None
    response_cache: ResponseCache | None = None
    warmup: Warmup | None = None
    wake: Wake | None = None
    """`replicas.wake`: a schedule that brings the model back from zero replicas."""
    wake_hosts: tuple[str, ...] = ()
    """`replicas.wake.hosts`: DNS names of the model's own that its clients send requests
    to, routed by the HTTP add-on's interceptor while the model wakes on traffic."""
    schedule: tuple[ScheduleWindow, ...] = ()
    """`replicas.schedule`: windows with a higher floor than `replicas.min`."""
    base_release: str | None = None
    """The NGC release a custom Triton `image` is built from (see `triton_release`)."""
    llm: LlmFacts | None = None
    """An LLM's architecture (parameters, attention shape): from `model_info`, else the
    built-in table by its `hf://` source; None when neither names it or it is no LLM."""
    backend: TritonBackend | None = None
    """How Triton runs a model that is neither an LLM nor a pipeline (`triton_model`); None
    for vLLM, TensorRT-LLM and pipelines."""
    accelerator: Accelerator = "cuda"
    """ONNX Runtime's GPU execution provider (`backend` ``onnxruntime``)."""
    inputs: tuple[Tensor, ...] = ()
    outputs: tuple[Tensor, ...] = ()
    shapes: tuple[ShapeProfile, ...] = ()
    """``accelerator: tensorrt``: the provider's profiles (and the warm-up shapes)."""
    pipeline: Pipeline | None = None
    """A Triton ensemble of steps; None: one model."""
    traffic: Traffic | None = None
    profile: tuple[tuple[int, float], ...] = ()
    """`profile`: (batch size, p95 ms) points, inline or read from the profile file."""
    budget_usd_per_month: float | None = None
    autoscaling_derived: bool = False
    """The autoscaling targets come from the capacity estimate: the blueprint sets none."""
    routing: Routing = field(default_factory=Routing)
    """`routing`: round-robin unless the blueprint asks for LLM-aware routing."""
    scale_out: ScaleOut = field(default_factory=ScaleOut)
    """`scale_out`: the model's scale-out bound and the levers in effect."""
    rollout: Rollout | None = None
    """`rollout`: a changed pod template goes out as a canary; None: at once."""

    @property
    def realtime(self) -> bool:
        return self.latency_class == "realtime"

    def vllm_release(self, versions_vllm: str) -> str:
        """vLLM: the release the model runs: its own image's (the tag of vLLM's own image,
        else `base_release`), else the environment's `versions.vllm`."""
        if self.image is None:
            return versions_vllm
        return releases.vllm_image_tag(self.image) or self.base_release or versions_vllm

    @property
    def triton_release(self) -> str | None:
        """The NGC release of the model's own Triton image: `base_release`, else the tag of an
        NGC Triton `image`; None when the model runs the pinned `versions.triton` (or its
        custom image names no release, which validation refuses for an engine build)."""
        if self.server != "triton" or self.image is None:
            return None
        return self.base_release or catalog.ngc_triton_release(self.image)


@dataclass(frozen=True)
class Environment:
    """A blueprint resolved for one environment: everything one Pulumi stack provisions."""

    blueprint: str
    owner: str | None
    file: str
    name: str
    cloud: Cloud
    region: str
    zones: tuple[str, ...]
    project: str | None
    model_store: str
    cluster: ClusterSpec
    pools: Mapping[str, GpuPool]
    models: Mapping[str, Model]
    load_balancer: LoadBalancer
    observability: Observability
    versions: Versions
    waivers: tuple[Waiver, ...]
    source: SourceMap = field(repr=False, compare=False)
    override_origins: Mapping[YamlPath, YamlPath] = field(repr=False, compare=False)
    """Effective path -> the path under `environments.<env>.overrides` that set it."""
    model_store_endpoint: str | None = None
    """A `kubernetes` environment's S3-compatible store URL; None on aws and gcp."""
    model_store_secrets: StoreSecrets | None = None
    """A `kubernetes` environment's credential Secrets; None on aws and gcp."""
    model_store_pod_labels: Mapping[str, str] = field(default_factory=dict)
    """A `kubernetes` environment's store pods' labels (an in-cluster Service endpoint);
    empty: every pod of the Service's namespace."""

    @property
    def kubernetes(self) -> bool:
        """A `cloud: kubernetes` environment: no cloud API, no node provisioning."""
        return self.cloud == "kubernetes"

    @property
    def path(self) -> YamlPath:
        return ("environments", self.name)

    def locate(self, path: YamlPath) -> Location:
        """The file:line:col of the value that set `path` in this environment.

        Overrides win; a defaulted value points at its nearest written ancestor.
        """
        return self.source.locate(path, self.override_origins)

    def source_path(self, path: YamlPath) -> YamlPath:
        """The YAML path of the written value behind `path` (override or base)."""
        return self.source.written(path, self.override_origins)[1]

    def pool_of(self, model: Model) -> GpuPool:
        return self.pools[model.pool]

    @property
    def node_zones(self) -> tuple[str, ...]:
        """Every zone that has GPU nodes: the environment's zones, then any zone a pool names
        outside them (which the `same-zone-placement` policy reports; the network still
        reaches it, so the plan shows the pool where the blueprint puts it)."""
        extra = [z for p in self.pools.values() for z in p.zones if z not in self.zones]
        return self.zones + tuple(dict.fromkeys(extra))

    @property
    def store_bucket(self) -> str:
        """The model store's bucket (``s3://bucket/prefix/`` -> ``bucket``)."""
        return self.model_store.split("://", 1)[1].split("/", 1)[0]

    @property
    def store_prefix(self) -> str:
        """The model store's key prefix, ``""`` or ending in ``/``."""
        rest = self.model_store.split("://", 1)[1]
        return rest.split("/", 1)[1] if "/" in rest else ""

    @property
    def read_locations(self) -> tuple[tuple[str, str], ...]:
        """(bucket, folder) pairs serving pods must read, and nothing else, each folder
        ending in ``/``: the folder each model and LoRA adapter is copied from (relative
        sources resolved in the store; a Triton model's file brings its folder,
        `naming.source_folder`), and the blueprint's own areas of the store
        (`naming.store_area`: its engines, staged Hub weights and compile caches). The
        read-only identity is scoped to exactly these, so a blueprint that shares a store
        reads neither another's weights nor its ``.inferplane`` areas, and no grant is a
        bare prefix that also matches a sibling (``llama`` matching ``llama-finance/``)."""
        found = [
            (self.store_bucket, f"{self.store_prefix}{naming.store_area(area, self.blueprint)}/")
            for area in (naming.ENGINE_PREFIX, naming.HUB_PREFIX, naming.VLLM_COMPILE_PREFIX)
        ]
        sources: list[tuple[ModelSource, bool]] = []
        for model in self.models.values():
            sources.append((model.source, model.backend is not None))
            lora = model.vllm.lora if model.vllm else None
            sources.extend((a.source, False) for a in (lora.adapters if lora else ()))
        for src, file in sources:
            if src.bucket is None or src.key is None:
                continue  # hf://: read from its staged copy, in the hub area
            folder = naming.source_folder(src.key, file)
            inside = any(src.bucket == b and folder.startswith(p) for b, p in found)
            if not inside:
                found.append((src.bucket, folder))
        return tuple(found)


__all__ = [
    "FLOW_CONTROL_METRICS",
    "LEVERS",
    "ROUTER_METRICS",
    "AlertReceiver",
    "Autoscaling",
    "BatchSchedulerPolicy",
    "Batching",
    "Capacity",
    "CapacitySource",
    "Cloud",
    "ClusterSpec",
    "Environment",
    "GpuPool",
    "LatencyClass",
    "Lever",
    "LoadBalancer",
    "Lora",
    "LoraAdapter",
    "Metric",
    "MinMax",
    "Model",
    "ModelSource",
    "Observability",
    "Precision",
    "PrefixCache",
    "Protocol",
    "ResponseCache",
    "Rollout",
    "RolloutGuard",
    "Routing",
    "RoutingMode",
    "ScaleOut",
    "ScheduleWindow",
    "Scheme",
    "SecretRef",
    "Server",
    "ServiceType",
    "Sharing",
    "Signal",
    "Slo",
    "SourceKind",
    "Speculative",
    "StoreSecrets",
    "TensorRt",
    "TensorRtInput",
    "TensorRtLlm",
    "Traffic",
    "TrtLlmKvCacheQuantization",
    "TrtLlmQuantization",
    "Versions",
    "VllmSettings",
    "Waiver",
    "Wake",
    "Warmup",
    "guarded_latencies",
    "pool_gpu_resource",
    "pool_mig_config",
    "pool_slices_per_gpu",
    "zone_replicas",
    "zone_share",
    "zone_split_problems",
]
