"""The resolved blueprint: one immutable, typed `Environment` per environment.

`inferplane.blueprint.resolve.resolve(document, env_name)` builds these from a validated blueprint:
overrides merged, defaults applied, model sources made absolute, GPUs looked up in the
catalog. Everything downstream (components, policies, plan, check) reads only this model.

Every object knows the YAML path it came from (`path`), and `Environment.locate(path)`
turns any effective path into the `file:line:col` of the value that set it — inside
`environments.<env>.overrides` when an override set it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from inferplane.blueprint import catalog, defaults, naming
from inferplane.blueprint.addons import Addons
from inferplane.blueprint.catalog import GpuType
from inferplane.blueprint.errors import Location, YamlPath
from inferplane.blueprint.llm_catalog import LlmFacts
from inferplane.blueprint.source import SourceMap
from inferplane.blueprint.triton_model import (
    Accelerator,
    Pipeline,
    ShapeProfile,
    Tensor,
    TritonBackend,
)

Cloud = Literal["aws", "gcp", "kubernetes"]
Server = Literal["vllm", "triton"]
LatencyClass = Literal["realtime", "batch"]
Precision = Literal["fp32", "fp16", "bf16", "fp8", "int8", "int4"]
Metric = Literal[
    "queue_depth",
    "gpu_utilization",
    "p95_latency_ms",
    "ttft_p95_ms",
    "router_queue",
    "router_running",
    "pool_saturation",
]
RoutingMode = Literal["round_robin", "llm_aware"]
PrefixCache = Literal["approximate", "precise", "off"]
ROUTER_METRICS: tuple[Metric, ...] = ("router_queue", "router_running", "pool_saturation")
"""Signals the llm-d router exports: only for `routing.mode: llm_aware`."""
FLOW_CONTROL_METRICS: tuple[Metric, ...] = ("router_queue", "pool_saturation")
"""Series the router exports only with its ``flowControl`` feature gate on
(llm-d/llm-d-router v0.10.0 ``pkg/epp/metrics/llm_d_router_metrics.go``, the
``flow_control_*`` family; ``pkg/epp/flowcontrol/README.md``: off by default)."""
Protocol = Literal["http", "grpc", "both"]
Sharing = Literal["exclusive", "mig", "time_slicing"]
Capacity = Literal["on_demand", "spot"]
Scheme = Literal["internal", "external"]
ServiceType = Literal["cluster_ip", "load_balancer"]


@dataclass(frozen=True)
class MinMax:
    """An inclusive range: replicas or nodes."""

    min: int
    max: int


@dataclass(frozen=True)
class ClusterSpec:
    """Create a cluster, attach to an existing one by name, or (a `kubernetes` environment)
    use the one a kubeconfig context names."""

    create: bool
    existing: str | None
    kubernetes_version: str
    location: str
    """GKE: the cluster's location (region or zone). AWS: the region."""
    vpc_cidr: str
    """The VPC's address range when the cluster is created."""
    addons: Addons = field(default_factory=Addons)
    """Which add-ons the stack installs and where the ones it uses run."""
    context: str | None = None
    """A `kubernetes` environment's kubeconfig context; None on aws and gcp."""
    load_balancer: ServiceType = "cluster_ip"
    """A `kubernetes` environment's Service type for the models' endpoints."""


@dataclass(frozen=True)
class GpuPool:
    """One GPU node pool; it becomes one node group per zone in `zones`."""

    name: str
    path: YamlPath
    gpu: GpuType
    gpus_per_node: int
    instance_type: str
    nodes: MinMax
    """Nodes per zone."""
    capacity: Capacity
    sharing: Sharing
    mig_profile: str | None
    time_slices: int
    """Clients per GPU on a `time_slicing` pool; 1 otherwise."""
    disk_gib: int
    spare_gpus: int
    """GPU units (`gpu_resource` units) held free per zone by placeholder pods."""
    zones: tuple[str, ...]

    @property
    def slices_per_gpu(self) -> int:
        """Schedulable GPU units per physical GPU: MIG slices, time slices, or 1."""
        if self.sharing == "mig" and self.mig_profile:
            return self.gpu.mig_profiles[self.mig_profile]
        if self.sharing == "time_slicing":
            return self.time_slices
        return 1

    @property
    def gpu_units_per_node(self) -> int:
        """What one node advertises to the scheduler in `gpu_resource` units."""
        return self.gpus_per_node * self.slices_per_gpu

    @property
    def gpu_resource(self) -> str:
        """The extended resource a pod requests on this pool (MIG uses the mixed strategy)."""
        if self.sharing == "mig" and self.mig_profile:
            return f"nvidia.com/mig-{self.mig_profile}"
        return "nvidia.com/gpu"

    @property
    def mig_config(self) -> str | None:
        """The `nvidia.com/mig.config` label value the GPU Operator's MIG manager applies."""
        return f"all-{self.mig_profile}" if self.sharing == "mig" and self.mig_profile else None


@dataclass(frozen=True)
class TensorRtInput:
    """Optimisation-profile shapes of one engine input (batch dimension included)."""

    name: str
    min: tuple[int, ...]
    opt: tuple[int, ...]
    max: tuple[int, ...]
    data_type: str | None = None
    """Declared data type (``int64``, ``fp16``, ...); None: guessed from the name."""


@dataclass(frozen=True)
class TensorRt:
    """Build a TensorRT engine from the ONNX source, on the pool's GPU type."""

    inputs: tuple[TensorRtInput, ...]
    workspace_mib: int | None
    builder_optimization_level: int


TrtLlmQuantization = Literal["fp8", "int4_awq", "int8_sq", "int8_wo", "int4_wo", "w4a8_awq"]
TrtLlmKvCacheQuantization = Literal["fp8", "int8"]
BatchSchedulerPolicy = Literal["guaranteed_no_evict", "max_utilization"]


@dataclass(frozen=True)
class TensorRtLlm:
    """Build a TensorRT-LLM engine from an LLM checkpoint and serve it with Triton's
    ``tensorrtllm`` backend (in-flight batching, paged KV cache)."""

    max_batch_size: int
    max_input_len: int
    max_seq_len: int
    """Prompt plus output, in tokens."""
    quantization: TrtLlmQuantization | None = None
    kv_cache_quantization: TrtLlmKvCacheQuantization | None = None
    kv_cache_free_gpu_mem_fraction: float = defaults.TRTLLM_KV_CACHE_FREE_GPU_MEM_FRACTION
    enable_kv_cache_reuse: bool = defaults.TRTLLM_ENABLE_KV_CACHE_REUSE
    batch_scheduler_policy: BatchSchedulerPolicy = defaults.TRTLLM_BATCH_SCHEDULER_POLICY
    enable_chunked_context: bool = defaults.TRTLLM_ENABLE_CHUNKED_CONTEXT
    max_queue_size: int = defaults.TRTLLM_MAX_QUEUE_SIZE
    """Requests queued before Triton rejects new ones; 0 is unbounded."""
    streaming: bool = defaults.TRTLLM_STREAMING
    """A decoupled model that streams tokens; Triton then exports time to first token."""


@dataclass(frozen=True)
class Batching:
    """Triton dynamic batching; the queue delay is the batching window."""

    max_batch_size: int
    max_queue_delay_us: int
    preferred_batch_sizes: tuple[int, ...]


@dataclass(frozen=True)
class ResponseCache:
    enabled: bool
    size_mb: int
    backend: str = "local"
    """``local`` (Triton's in-process cache) or ``redis`` (a zone-local Valkey per zone)."""

    @property
    def redis(self) -> bool:
        return self.enabled and self.backend == "redis"


@dataclass(frozen=True)
class Warmup:
    batch_sizes: tuple[int, ...]


@dataclass(frozen=True)
class Speculative:
    """Speculative decoding (``--speculative-config``)."""

    method: Literal["ngram", "eagle", "eagle3"]
    num_speculative_tokens: int
    draft_repo: str | None = None
    """``org/name`` of the eagle/eagle3 draft model; None for ngram."""
    draft_revision: str | None = None
    prompt_lookup_max: int | None = None
    prompt_lookup_min: int | None = None


@dataclass(frozen=True)
class LoraAdapter:
    """One LoRA adapter: the name clients send as `model`, and where its files are."""

    name: str
    source: ModelSource


@dataclass(frozen=True)
class Lora:
    adapters: tuple[LoraAdapter, ...]
    max_loras: int
    max_lora_rank: int | None
    """None keeps vLLM's default."""


@dataclass(frozen=True)
class VllmSettings:
    """vLLM engine settings; None means vLLM's own default."""

    max_model_len: int | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    gpu_memory_utilization: float | None = None
    enable_prefix_caching: bool | None = None
    enable_chunked_prefill: bool | None = None
    kv_cache_dtype: str | None = None
    quantization: str | None = None
    enforce_eager: bool | None = None
    speculative: Speculative | None = None
    lora: Lora | None = None
    chat_template: str | None = None
    tool_call_parser: str | None = None
    served_model_aliases: tuple[str, ...] = ()
    extra_args: tuple[str, ...] = ()
    """Passed verbatim after every flag inferplane sets (validation refused owned flags)."""
    env: tuple[tuple[str, str], ...] = ()
    """(name, value) pairs added to the container's environment, verbatim."""


@dataclass(frozen=True)
class Routing:
    """How requests reach the replicas (`models.<m>.routing`)."""

    mode: RoutingMode = "round_robin"
    """``round_robin``: the zone-local load balancer alone. ``llm_aware``: per zone, the
    llm-d router picks each request's replica; the model runs one Deployment per zone."""
    prefix_cache: PrefixCache = "approximate"
    """``llm_aware``: how cached prefixes are scored; ``precise`` needs vLLM's KV events."""
    flow_control: bool = False
    """``llm_aware``: the router queues requests while the pool is saturated."""
    priorities: tuple[tuple[str, int], ...] = ()
    """(objective name, priority) pairs, one ``InferenceObjective`` each."""
    pickers: int = 2
    """``llm_aware``: endpoint pickers per zone's router (leader election above one)."""

    @property
    def llm_aware(self) -> bool:
        return self.mode == "llm_aware"


@dataclass(frozen=True)
class Signal:
    """One autoscaling signal: a metric and its per-replica target."""

    metric: Metric
    target: float
    """Per replica: waiting requests, percent GPU busy, or milliseconds."""


@dataclass(frozen=True)
class Autoscaling:
    """The signals replicas follow. Each becomes one trigger of the model's ScaledObject and
    the HPA follows the largest demand among them."""

    signals: tuple[Signal, ...]
    """At least one; each metric at most once."""
    scale_down_stabilization_s: int

    @classmethod
    def single(cls, metric: Metric, target: float, scale_down_stabilization_s: int) -> Autoscaling:
        """The common case: one signal."""
        return cls((Signal(metric, target),), scale_down_stabilization_s)

    @property
    def metrics(self) -> tuple[Metric, ...]:
        return tuple(s.metric for s in self.signals)

    def target_of(self, metric: Metric) -> float | None:
        """The target of `metric` when it is one of the signals, else None."""
        return next((s.target for s in self.signals if s.metric == metric), None)


@dataclass(frozen=True)
class Wake:
    """A schedule that brings a model at zero replicas back: a KEDA cron trigger holds one
    replica from each `schedule` start for `duration_s` seconds (its load signals add more)."""

    schedule: str
    """Five-field cron expression (minute hour day-of-month month day-of-week)."""
    duration_s: int
    timezone: str
    """IANA time zone name the schedule is read in."""


@dataclass(frozen=True)
class ScheduleWindow:
    """One window of `replicas.schedule`: from each `schedule` start for `duration_s`
    seconds the model keeps at least `min_per_zone` replicas in each zone of its pool,
    `replicas` in all (a KEDA cron trigger's ``desiredReplicas``)."""

    schedule: str
    """Five-field cron expression (minute hour day-of-month month day-of-week)."""
    duration_s: int
    timezone: str
    """IANA time zone name the schedule is read in."""
    min_per_zone: int
    replicas: int
    """`min_per_zone` x the zones of the model's pool."""


@dataclass(frozen=True)
class Slo:
    p95_ms: int | None
    ttft_p95_ms: int | None
    itl_p95_ms: int | None = None


@dataclass(frozen=True)
class Traffic:
    """`traffic`: the load the capacity estimate plans for (`inferplane.blueprint.capacity`)."""

    peak_rps: float
    input_tokens: int | None = None
    output_tokens: int | None = None
    shared_prefix: float = 0.0


@dataclass(frozen=True)
class SecretRef:
    """A secret the model server needs, by reference; never a literal value."""

    name: str
    path: YamlPath
    from_env: str | None = None
    from_pulumi_config: str | None = None
    from_secret_manager: str | None = None


@dataclass(frozen=True)
class ModelSource:
    """Where the weights are. `uri` is absolute: s3://, gs:// or hf://."""

    uri: str
    scheme: Literal["s3", "gs", "hf"]
    bucket: str | None
    """s3/gs bucket; None for hf."""
    key: str | None
    """Object key or prefix inside the bucket; None for hf."""
    hf_repo: str | None = None
    hf_revision: str | None = None


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

    @property
    def realtime(self) -> bool:
        return self.latency_class == "realtime"

    @property
    def triton_release(self) -> str | None:
        """The NGC release of the model's own Triton image: `base_release`, else the tag of an
        NGC Triton `image`; None when the model runs the pinned `versions.triton` (or its
        custom image names no release, which validation refuses for an engine build)."""
        if self.server != "triton" or self.image is None:
            return None
        return self.base_release or catalog.ngc_triton_release(self.image)


@dataclass(frozen=True)
class LoadBalancer:
    scheme: Scheme
    allowed_cidrs: tuple[str, ...]


@dataclass(frozen=True)
class AlertReceiver:
    """Where Alertmanager sends alerts (``observability.alerts.receivers[i]``): at least one
    of Slack, PagerDuty or a webhook, each credential a secret reference."""

    name: str
    path: YamlPath
    slack_channel: str | None = None
    slack_api_url: SecretRef | None = None
    pagerduty_routing_key: SecretRef | None = None
    webhook_url: SecretRef | None = None

    @property
    def secrets(self) -> tuple[SecretRef, ...]:
        """Its secret references; each `SecretRef.name` is its key in the receivers' Secret."""
        refs = (self.slack_api_url, self.pagerduty_routing_key, self.webhook_url)
        return tuple(r for r in refs if r is not None)


@dataclass(frozen=True)
class Observability:
    prometheus_retention: str
    prometheus_storage_gib: int
    grafana_enabled: bool
    alerts_enabled: bool
    alert_receivers: tuple[AlertReceiver, ...] = ()
    alert_route_receiver: str | None = None
    """The receiver of every alert; None (no receivers): Alertmanager's own ``null``."""


@dataclass(frozen=True)
class Versions:
    """Pinned versions of everything the stack installs or runs."""

    triton: str
    vllm: str
    gpu_operator: str
    keda: str
    keda_http_add_on: str
    kube_prometheus_stack: str
    aws_load_balancer_controller: str
    cluster_autoscaler: str


@dataclass(frozen=True)
class Waiver:
    rule: str
    target: str
    environments: tuple[str, ...] | None
    reason: str
    expires: str
    """ISO date, YYYY-MM-DD."""
    path: YamlPath

    def applies_to(self, environment: str) -> bool:
        """Whether the waiver covers `environment` (no `environments` list: every one)."""
        return self.environments is None or environment in self.environments


@dataclass(frozen=True)
class StoreSecrets:
    """A `kubernetes` environment's model-store credentials: the names of existing
    Kubernetes Secrets (keys `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`), one per role;
    None where the blueprint names none for a writer role."""

    reader: str
    engine_builder: str | None = None
    weights_stager: str | None = None
    vllm_compiler: str | None = None


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
        """(bucket, key prefix) pairs serving pods must read, and nothing else: each model's
        and LoRA adapter's source (relative ones resolved in the store), and the blueprint's
        own areas of the store (`naming.store_area`: its engines, staged Hub weights and
        compile caches). The read-only identity is scoped to exactly these, so a blueprint
        that shares a store does not read another's weights or its ``.inferplane`` areas."""
        found = [
            (self.store_bucket, f"{self.store_prefix}{naming.store_area(area, self.blueprint)}/")
            for area in (naming.ENGINE_PREFIX, naming.HUB_PREFIX, naming.VLLM_COMPILE_PREFIX)
        ]
        sources = []
        for model in self.models.values():
            sources.append(model.source)
            lora = model.vllm.lora if model.vllm else None
            sources.extend(a.source for a in (lora.adapters if lora else ()))
        for src in sources:
            if src.bucket is None or src.key is None:
                continue  # hf://: read from its staged copy, in the hub area
            inside = any(src.bucket == b and src.key.startswith(p) for b, p in found)
            if not inside:
                found.append((src.bucket, src.key))
        return tuple(found)
