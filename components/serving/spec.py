"""What one served model is, and the facts of the environment it runs in: the arguments of
every serving component, fillable by hand (no blueprint needed).

- `ServedModel`: the model (server, weights, GPUs, replicas, autoscaling signal, SLO,
  batching, secrets); its parts that stand on their own, the `ServingPool` of GPU nodes it
  runs on, its `ModelSecret`s and `model_source`, are in `spec_parts`.
- `ServingEnvironment`: cloud, region, labels, pinned versions, model store, load balancer
  and monitoring settings shared by every model of one environment.

Value types of the blueprint layer that carry no YAML location are reused as they are
(`MinMax`, `Autoscaling`, `Slo`, `Batching`, `TensorRt`, `VllmSettings`, ...). Inconsistent
arguments raise `ServingArgsError`, a `ValueError` that names the offending field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from inferplane.blueprint import addons, defaults, naming, system_nodes, triton_model
from inferplane.blueprint import wake as wake_paths
from inferplane.blueprint.checks.semantic_routing import PRECISE_FIX, PRECISE_REFUSAL
from inferplane.blueprint.model import (
    FLOW_CONTROL_METRICS,
    ROUTER_METRICS,
    Autoscaling,
    Batching,
    Cloud,
    LatencyClass,
    MinMax,
    ModelSource,
    Precision,
    Protocol,
    ResponseCache,
    Rollout,
    Routing,
    ScheduleWindow,
    Scheme,
    Server,
    Slo,
    TensorRt,
    TensorRtLlm,
    VllmSettings,
    Wake,
    Warmup,
    zone_split_problems,
)
from inferplane.blueprint.system_nodes import SystemPod
from inferplane.components.serving.spec_parts import ModelSecret, ServingPool

FieldPath = tuple[str, ...]


class ServingArgsError(ValueError):
    """Serving arguments that cannot work together.

    `field` is the offending field's path inside the `ServedModel` (``("warmup",)``,
    ``("secrets", "hf_token", "from_env")``); `problem` says what is wrong, `fix` how to
    fix it.
    """

    def __init__(self, model: str, field: FieldPath, problem: str, fix: str) -> None:
        self.model = model
        self.field = field
        self.problem = problem
        self.fix = fix
        super().__init__(f"model {model!r}: {'.'.join(field)}: {problem}; {fix}")


@dataclass(frozen=True)
class ServedModel:
    """One model to serve. Defaults are the blueprint's (`inferplane.blueprint.defaults`)."""

    name: str
    """The model's name: its Deployment, Services and ScaledObject, Triton's model name and
    vLLM's served model name."""
    server: Server
    """``vllm`` or ``triton``."""
    source: ModelSource
    """Where the weights are (`model_source` builds one from a URI)."""
    pool: ServingPool
    """The GPU nodes it runs on."""
    replicas: MinMax
    """Replica range. The minimum stays warm: the first rollout starts at it and KEDA
    never goes below it (0 lets a model scale to zero)."""
    gpus: int = defaults.MODEL_GPUS
    """`ServingPool.gpu_resource` units per replica: one GPU (or slice) unless raised."""
    latency_class: LatencyClass = defaults.MODEL_LATENCY_CLASS
    """``realtime`` (users wait: fallback holds more replicas, alerts page) or ``batch``."""
    precision: Precision = defaults.MODEL_PRECISION
    """Weights' precision: fp16 unless set; vLLM's ``--dtype`` or quantization, and the
    TensorRT engine's precision flags."""
    autoscaling: Autoscaling = field(
        default_factory=lambda: Autoscaling.single(
            defaults.MODEL_AUTOSCALING_METRIC,
            defaults.MODEL_AUTOSCALING_TARGET,
            defaults.SCALE_DOWN_STABILIZATION_S,
        )
    )
    """KEDA's signals, one trigger each (the HPA follows the largest demand): by default
    four waiting requests per replica, scaling down only after ten quiet minutes."""
    slo: Slo | None = None
    """Latency objectives; None: no SLO alerts."""
    expose: Protocol | None = None
    """Protocols the load balancer exposes. None: what the server speaks (vLLM ``http``,
    Triton ``both``); vLLM serves HTTP only whatever this says."""
    secrets: tuple[ModelSecret, ...] = ()
    """Secrets the server gets, as files or environment variables; none by default."""
    image: str | None = None
    """The server image. None: the pinned image of `ServingEnvironment.triton_release` or
    `ServingEnvironment.vllm_version`."""
    triton_release: str | None = None
    """Triton: the NGC release `image` is built from, when it is not the environment's
    (`ServingEnvironment.triton_release`). The TensorRT engine is built with this release's
    TensorRT image, because an engine loads only in the TensorRT that built it."""
    startup_timeout_s: int = defaults.STARTUP_TIMEOUT_S
    """How long a replica may take to load before it is restarted (20 minutes unless set)."""
    max_request_s: int = defaults.MAX_REQUEST_S
    """The longest request; a stopping pod drains this long (a minute unless set)."""
    vllm: VllmSettings | None = None
    """vLLM engine settings; None: vLLM's own defaults."""
    tensorrt: TensorRt | None = None
    """Triton: build a TensorRT engine from the ONNX source first; None serves the ONNX."""
    tensorrt_llm: TensorRtLlm | None = None
    """Triton: build a TensorRT-LLM engine from the LLM checkpoint (hf:// or a store
    directory) and serve it with the ``tensorrtllm`` backend; None: not an LLM."""
    batching: Batching | None = None
    """Triton dynamic batching; None: no batching."""
    response_cache: ResponseCache | None = None
    """Triton response cache; None: off."""
    warmup: Warmup | None = None
    """Triton warm-up requests before readiness (needs `TensorRt.inputs`); None: none."""
    wake: Wake | None = None
    """A schedule that brings the model back from zero replicas (a KEDA cron trigger);
    None: only HTTP traffic can (`wakes_on_traffic`), or nothing."""
    wake_hosts: tuple[str, ...] = ()
    """DNS names of the model's own that clients send requests to: with `wakes_on_traffic`
    the interceptor routes them to the model besides the load balancer's own names.
    Default: the load balancer's names only."""
    schedule: tuple[ScheduleWindow, ...] = ()
    """Windows with a higher floor than `replicas.min`, one KEDA cron trigger each
    (`inferplane.components.serving.scaling.wake.schedule_triggers`); empty: none."""
    backend: triton_model.TritonBackend | None = None
    """Triton, one model: ``tensorrt``, ``onnxruntime`` or ``pytorch``; None: as `tensorrt`."""
    accelerator: triton_model.Accelerator = "cuda"
    """ONNX Runtime's GPU execution provider, ``cuda`` or ``tensorrt``."""
    inputs: tuple[triton_model.Tensor, ...] = ()
    outputs: tuple[triton_model.Tensor, ...] = ()
    """Declared tensors (warm-up; TorchScript's config); empty: the ONNX model's own."""
    shapes: tuple[triton_model.ShapeProfile, ...] = ()
    """ONNX Runtime's TensorRT provider profiles; warm-up sends their `opt` shapes."""
    pipeline: triton_model.Pipeline | None = None
    """Triton: an ensemble of steps (`triton_pipeline`); None: one model."""
    routing: Routing = field(default_factory=Routing)
    """How requests reach the replicas: round-robin through the load balancer unless
    ``llm_aware`` (vLLM only), which runs one Deployment, InferencePool and llm-d router
    per zone (`inferplane.components.serving.routing.router`)."""
    router_pods: tuple[SystemPod, SystemPod] = (system_nodes.PICKER, system_nodes.PROXY)
    """``llm_aware``: what each endpoint picker and each Envoy of a zone request
    (`system_nodes.routing_sizes` of the model's traffic); the floors unless set."""
    wake_s: int | None = None
    """A model at zero: seconds from the request that wakes it to a ready first replica
    (`inferplane.blueprint.derived.router_wake.wake_s` of its scale-out budget). None: not known,
    and `startup_timeout_s` stands for it."""
    stream_weights: bool = False
    """vLLM: read the weights straight from the model store with the Run:ai streamer
    (``--load-format runai_streamer``) instead of copying them onto the node first
    (`inferplane.components.serving.vllm.weight_streaming`); off unless the model's
    scale-out levers choose it."""
    histogram_buckets: tuple[tuple[str, tuple[float, ...]], ...] = ()
    """vLLM: the histogram bucket families whose bounds differ from the release's defaults
    (``--custom-histogram-buckets``): the defaults with the model's latency lines added
    (`inferplane.blueprint.capacity.targets.histogram_buckets`); none unless set."""
    rollout: Rollout | None = None
    """A changed pod template goes out as an Argo Rollouts canary: a Rollout beside each
    Deployment takes its pods (`inferplane.components.serving.scaling.rollout`), and the
    ScaledObject scales the Rollout. None: the Deployment rolls its pods itself."""

    @property
    def zoned(self) -> bool:
        """The model runs one Deployment per zone of its pool (``<model>-<zone>``), each with
        its share of the replicas: an llm-aware model (a router and an InferencePool per
        zone), and a model of several zones that rolls out (one zone at a time,
        `inferplane.components.serving.scaling.rollout`)."""
        return self.routing.llm_aware or (self.rollout is not None and len(self.pool.zones) > 1)

    @property
    def wake_bound_s(self) -> int:
        """`wake_s`, or `startup_timeout_s` where it is not known."""
        return self.startup_timeout_s if self.wake_s is None else self.wake_s

    @property
    def realtime(self) -> bool:
        return self.latency_class == "realtime"

    def release(self, env: ServingEnvironment) -> str:
        """The NGC release of the Triton the model runs: its own, else the environment's."""
        return self.triton_release or env.triton_release

    @property
    def protocols(self) -> Protocol:
        """`expose`, or the server's default."""
        if self.expose is not None:
            return self.expose
        return "http" if self.server == "vllm" else "both"

    @property
    def wakes_on_traffic(self) -> bool:
        """At zero replicas, the model's own HTTP requests wake it: the KEDA HTTP add-on's
        interceptor holds and counts them (`inferplane.components.serving.scaling.wake`)."""
        return wake_paths.wakes_on_traffic(
            self.server, self.protocols, self.replicas.min, llm_aware=self.routing.llm_aware
        )

    def __post_init__(self) -> None:
        low, high = self.replicas.min, self.replicas.max
        if not 0 <= low <= high or high < 1:
            self._fail(
                ("replicas",),
                f"min {low} and max {high} are not a range",
                "give 0 <= min <= max and max >= 1",
            )
        if self.gpus < 1:
            self._fail(("gpus",), f"{self.gpus} GPUs per replica", "give at least 1")
        if self.server == "vllm":
            for name in ("tensorrt", "tensorrt_llm", "batching", "response_cache", "warmup"):
                if getattr(self, name) is not None:
                    self._fail(
                        (name,),
                        "a Triton setting on a vLLM model",
                        "remove it, or serve with triton",
                    )
        elif self.vllm is not None:
            self._fail(
                ("vllm",), "a vLLM setting on a Triton model", "remove it, or serve with vllm"
            )
        if self.stream_weights and self.server != "vllm":
            self._fail(
                ("stream_weights",),
                "only vLLM streams weights from the model store",
                "turn it off, or serve with vllm",
            )
        if self.server == "triton" and self.source.scheme == "hf" and self.tensorrt_llm is None:
            self._fail(
                ("source",),
                "Triton serves ONNX from s3:// or gs://",
                "give a store URI, or tensorrt_llm to build an LLM checkpoint",
            )
        if self.tensorrt_llm is not None:
            self._check_tensorrt_llm()
        self._check_hub_pins()
        for host in self.wake_hosts:
            if not wake_paths.own_host(host):
                self._fail(
                    ("replicas", "wake", "hosts"),
                    f"{host!r} is not a DNS name of the model's own",
                    "give lowercase names such as chat.example.com: no wildcards, IP addresses "
                    "or in-cluster (.svc, .cluster.local) names",
                )
        if (
            low == 0
            and self.wake is None
            and not self.schedule
            and not wake_paths.serves_only_http(self.server, self.protocols)
        ):
            self._fail(
                ("replicas", "min"),
                "at 0 replicas nothing wakes this model (it does not serve HTTP only, and its "
                "own metrics vanish with its last pod)",
                "give it a wake schedule, serve HTTP only, or keep min >= 1",
            )
        self._check_routing()
        if not self.autoscaling.signals:
            self._fail(("autoscaling",), "no signal", "give at least one metric and target")
        metrics = self.autoscaling.metrics
        if len(set(metrics)) != len(metrics):
            self._fail(("autoscaling",), "a metric is listed twice", "list each metric once")
        names = [s.name for s in self.secrets]
        if len(set(names)) != len(names):
            self._fail(("secrets",), "two secrets share a name", "give each a distinct name")

    def _check_routing(self) -> None:
        routing, zones = self.routing, len(self.pool.zones)
        if routing.llm_aware and self.server != "vllm":
            self._fail(
                ("routing", "mode"),
                "LLM-aware routing scores vLLM replicas only",
                "remove it, or serve with vllm",
            )
        for metric in self.autoscaling.metrics:
            if metric in ROUTER_METRICS and not routing.llm_aware:
                self._fail(("autoscaling",), f"{metric} needs the router", "route llm_aware")
            if metric in FLOW_CONTROL_METRICS and not routing.flow_control:
                self._fail(("autoscaling",), f"{metric} needs flow control", "turn flow_control on")
        if routing.prefix_cache == "precise":
            # Why: `inferplane.blueprint.checks.semantic_routing`, which validation runs first.
            self._fail(("routing", "prefix_cache"), PRECISE_REFUSAL, PRECISE_FIX)
        if self.zoned:
            low, high = self.replicas.min, self.replicas.max
            if zone_split_problems(self.replicas, zones):
                self._fail(
                    ("replicas",),
                    f"min {low} and max {high} do not split over {zones} zones (one "
                    "Deployment per zone)",
                    f"give multiples of {zones}",
                )
            if routing.llm_aware and low == 0 and not routing.flow_control:
                self._fail(
                    ("replicas", "min"),
                    "at 0 replicas only the router's flow control holds requests",
                    "turn flow_control on, or keep min >= 1 per zone",
                )

    def _check_tensorrt_llm(self) -> None:
        llm = self.tensorrt_llm
        assert llm is not None
        if self.tensorrt is not None:
            self._fail(
                ("tensorrt_llm",),
                "an LLM engine and an ONNX engine on one model",
                "keep tensorrt_llm (LLMs) or tensorrt (ONNX models), not both",
            )
        if self.batching is not None or self.warmup is not None:
            self._fail(
                ("tensorrt_llm",),
                "TensorRT-LLM batches in flight and warms up itself",
                "remove batching and warmup",
            )
        if self.source.uri.endswith(".onnx"):
            self._fail(("source",), "an ONNX file is not an LLM checkpoint", "give a checkpoint")
        if llm.max_seq_len < llm.max_input_len:
            self._fail(
                ("tensorrt_llm", "max_seq_len"),
                f"{llm.max_seq_len} is shorter than max_input_len {llm.max_input_len}",
                "give max_seq_len >= max_input_len",
            )

    def _check_hub_pins(self) -> None:
        """Every hf:// reference is staged into the model store keyed by its revision
        (`inferplane.components.serving.store.weights`): an unpinned one has no key."""
        refs: list[tuple[FieldPath, str, str | None]] = []
        if self.source.scheme == "hf":
            refs.append((("source",), self.source.uri, self.source.hf_revision))
        spec = self.vllm.speculative if self.vllm else None
        if spec and spec.draft_repo:
            refs.append(
                (
                    ("vllm", "speculative", "draft_model"),
                    f"hf://{spec.draft_repo}",
                    spec.draft_revision,
                )
            )
        for adapter in self.vllm.lora.adapters if self.vllm and self.vllm.lora else ():
            if adapter.source.scheme == "hf":
                at: FieldPath = ("vllm", "lora", "adapters", adapter.name)
                refs.append((at, adapter.source.uri, adapter.source.hf_revision))
        for where, uri, revision in refs:
            if not revision:
                self._fail(
                    where,
                    f"{uri} has no revision; hf:// weights are staged into the model store "
                    "keyed by repository and revision",
                    "pin it: hf://org/name@<commit SHA> "
                    "(a tag or branch is staged once, never refreshed)",
                )

    def _fail(self, where: FieldPath, problem: str, fix: str) -> None:
        raise ServingArgsError(self.name, where, problem, fix)


@dataclass(frozen=True)
class ServingEnvironment:
    """The facts of one environment that every serving object needs."""

    part_of: str
    """The application the models belong to: label ``app.kubernetes.io/part-of`` (and so
    every selector), dashboard titles, alert text."""
    environment: str
    """The environment's name: label ``inferplane.dev/environment``, dashboards, alerts."""
    cloud: Cloud
    """``aws`` (EKS), ``gcp`` (GKE) or ``kubernetes`` (any cluster: an S3-compatible store,
    no cloud annotations): load balancer annotations, storage CLI, secrets."""
    region: str
    """The cloud region (the AWS CLI's region in fetch containers)."""
    project: str | None = None
    """GCP project for storage and Secret Manager; None: the gcloud CLI's own default."""
    model_store_uri: str | None = None
    """``s3://`` or ``gs://`` prefix where TensorRT engines are written. Only Triton models
    with `ServedModel.tensorrt` need it; None makes such a model an error."""
    triton_release: str = defaults.VERSIONS["triton"]
    """NGC release of the Triton and TensorRT images (the pinned one unless set)."""
    vllm_version: str = defaults.VERSIONS["vllm"]
    """vLLM image tag (the pinned one unless set)."""
    keda_version: str = defaults.VERSIONS["keda"]
    """The cluster's KEDA release (the one inferplane installs unless set): KEDA before
    2.18 rejects fallback on ``Value`` triggers, so those go without."""
    prometheus_url: str = naming.PROMETHEUS_URL
    """The Prometheus KEDA and a rollout's analysis query: the in-cluster
    kube-prometheus-stack unless set."""
    prometheus_namespace: str = naming.MONITORING_NAMESPACE
    """Where Prometheus' pods run: the models' NetworkPolicies admit scrapes from there."""
    prometheus_labels: Mapping[str, str] = field(
        default_factory=lambda: dict(addons.PROMETHEUS_SELECTOR)
    )
    """On every ServiceMonitor and PrometheusRule: what the Prometheus Operator selects
    them by (kube-prometheus-stack's ``release`` label unless set)."""
    dashboard_labels: Mapping[str, str] = field(
        default_factory=lambda: dict(addons.DASHBOARD_LABEL)
    )
    """On every dashboard ConfigMap: what Grafana's dashboard sidecar loads them by."""
    keda_http_namespace: str = naming.KEDA_NAMESPACE
    """The KEDA HTTP add-on's namespace: its interceptor and scaler, and the load balancers
    of models that wake on their own traffic."""
    keda_http_release: str = naming.KEDA_HTTP_RELEASE
    """The HTTP add-on's Helm release: its interceptor pods' ``app.kubernetes.io/instance``."""
    zones: tuple[str, ...] = ()
    """The environment's zones, in the order `ModelServerArgs.lb_subnet_ids` lists their
    subnets (a zone's own load balancer, `router`, takes its zone's alone). Default: none
    known, and then no zone's subnet is picked."""
    kubernetes_version: str | None = None
    """The cluster's ``major.minor``. From 1.34 Services prefer same-zone endpoints; None
    (unknown, e.g. an existing cluster): the older ``PreferClose``."""
    vpc_cidr: str | None = None
    """The cluster network's range, allowed to reach the model (AWS NLB health checks
    come from it). None (unknown): 10.0.0.0/8 stands for it."""
    lb_scheme: Scheme = defaults.LB_SCHEME
    """``internal`` (private addresses, the default) or ``external``."""
    lb_allowed_cidrs: tuple[str, ...] = ()
    """Client ranges allowed through the load balancer; none: the VPC range only (on
    ``kubernetes``, where no VPC is known, at least one is required)."""
    lb_client_namespaces: tuple[str, ...] = ()
    """In-cluster namespaces whose pods may call the models and their routers, admitted by
    namespace (`network_policies.client_peers`); none: callers are admitted by address only."""
    dataplane: Literal["cilium", "other"] = "other"
    """What enforces the cluster's NetworkPolicies (``kubernetes`` only): ``cilium`` gets the
    pickers' API-server egress as a CiliumNetworkPolicy (`router_pods`)."""
    lb_service_type: Literal["LoadBalancer", "ClusterIP"] = "LoadBalancer"
    """``kubernetes`` only: the type of each model's ``<model>-lb`` Service. ``ClusterIP``
    (in-cluster clients only) or ``LoadBalancer`` served by the cluster's own
    implementation, without cloud annotations. EKS and GKE always use ``LoadBalancer``."""
    store_endpoint: str | None = None
    """``kubernetes``: the S3-compatible store's URL (``AWS_ENDPOINT_URL`` of store pods)."""
    store_pod_labels: Mapping[str, str] = field(default_factory=dict)
    """``kubernetes``, a Service endpoint: the store pods' labels; empty: every pod of the
    Service's namespace."""
    store_secrets: Mapping[str, str] = field(default_factory=dict)
    """``kubernetes``: ServiceAccount name -> the existing Secret with that role's S3 keys
    (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``), given to store pods through
    ``secretKeyRef``."""
    argo_rollouts_instance_id: str | None = None
    """An existing Argo Rollouts controller's ``--instance-id``: every Rollout carries it as
    the ``argo-rollouts.argoproj.io/controller-instance-id`` label. None: no label."""
    router_chart: str | None = None
    """A local directory holding the llm-d router chart's source at the pinned release
    (``llm-d-router-standalone`` beside its ``routerlib``), for a cluster that cannot reach
    ``oci://ghcr.io/llm-d/charts``. None: the chart from that registry."""
    alerts: bool = defaults.ALERTS_ENABLED
    """Write alerting rules beside the recording rules (on unless set)."""
    grafana_dashboard: bool = defaults.GRAFANA_ENABLED
    """Write each model's Grafana dashboard ConfigMap (on unless set)."""
