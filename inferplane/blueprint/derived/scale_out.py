"""The scale-out budget: seconds from a traffic spike to one more ready replica of a model.

A new replica waits for everything below in series, and the budget is their sum, in this
order:

- ``metrics_poll`` (models that may be at zero only): KEDA's own polling loop activates a
  ScaledObject from zero (`timing.POLLING_INTERVAL_S`). From one replica on, the HPA asks
  KEDA's metrics server itself, which queries Prometheus on every request (no
  ``useCachedMetrics``), so the polling interval is not on that path (keda-docs
  ``content/docs/2.20/concepts/scaling-deployments.md``, "Caching Metrics").
- ``prometheus_scrape``: the newest sample of the signal may be one scrape interval old
  (`timing.SCRAPE_INTERVAL_S`).
- ``hpa_reaction`` (models with a replica): the HPA controller's sync period.
- ``node``: only when the pool holds fewer free GPU units per zone than one replica
  requests, and only where a node autoscaler adds nodes. Free are the spare GPU units
  (`GpuPool.spare_gpus`, kept free by placeholder pods that serving pods preempt) and the
  idle ones of the pool's minimum nodes: ``nodes.min × GPU units per node`` less what the
  warm replicas of the pool's models and the placeholders take there (`idle_units`). A
  ``kubernetes`` environment has none: no node part is counted there, because a replica
  that finds no free GPU on the nodes that exist never becomes ready at all
  (`capacity-headroom` checks that the models' maximum replicas fit those nodes,
  `scale-out-budget` that a spare GPU waits for the next one).
- ``image_pull``: only on a new node. A node that already runs has the serving images of
  its pool's models (the pool's pre-pull DaemonSet pulls them when the node joins); a new
  node pulls them while the replica waits for the same bytes; a pool whose models choose
  the ``lazy_image_pull`` lever pulls lazily (`inferplane.blueprint.derived.lazy_pull`).
- ``weights``: the copy from the environment's model store (s3/gs in the region; an
  ``hf://`` source is staged there once and replicas read the staged copy) onto the node,
  at the checkpoint's bytes (`inferplane.blueprint.derived.checkpoint`: a checkpoint that vLLM
  quantizes on load is copied at 16 bits). A model whose size nothing states has an
  unknown ``weights`` part: the budget is then "at least" its known parts, never a guess.
- ``engine_build``: ONNX Runtime's TensorRT provider (``accelerator: tensorrt``,
  `builds_ort_trt_engines`) builds its engines in the new replica: its engine cache is the
  pod's own emptyDir. An engine a Job builds once (``backend: tensorrt``) is only copied.
- ``engine_load``: the weights into GPU memory plus the server's own start-up; a vLLM
  model whose ``torch.compile`` artifacts are staged in the model store (every vLLM model
  that compiles, `compiles_vllm_graph`) skips Inductor's compile on a new replica.
- ``warmup``: Triton's ``model_warmup`` samples, one per warm-up batch size.
- ``readiness``: the startup probe's period, then the readiness probe's period × its
  success threshold (`timing`).

Levers (`models.<m>.scale_out.levers`, chosen by `inferplane.blueprint.derived.levers`)
shorten parts, and each part says which lever shortened it (`Part.lever`):

- ``standby``: the pool keeps a spare GPU per zone (placeholders a new replica preempts),
  so no ``node`` or ``image_pull`` part is counted;
- ``lazy_image_pull``: a new node starts the serving container before its image is whole
  (`Constants.lazy_image_pull_s` replaces the pull);
- ``stream_weights``: vLLM streams the weights from the model store straight into GPU
  memory (`Constants.streamed_gb_per_s`), so ``weights`` is the stream and ``engine_load``
  no longer reads them again from the node's disk;
- ``compile_cache``: the staged ``torch.compile`` cache (above).

Periodic waits count a full period (the spike may land just after a poll), and the node and
image-pull estimates are the slow end of published measurements: the budget is a bound to
plan with, not an average or a best case.

Every number that is not set by the stack itself is a field of `Constants`, documented
with its source (or labelled an assumption), and overridable in the policy config under
the ``scale-out-budget`` rule. The inputs per model (`ScaleOutInputs`) travel in the
environment facts, so the rule computes the same budget online as `inferplane plan` does.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
import math
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from inferplane.blueprint.derived import checkpoint, lever_options, timing
from inferplane.blueprint.derived.lever_options import compiles_vllm_graph
from inferplane.blueprint.model import LEVERS, Environment, Lever, Model, zone_share

Runtime = Literal["vllm", "triton", "trtllm"]
RUNTIMES: Final[tuple[Runtime, ...]] = ("vllm", "triton", "trtllm")

DEFAULT_BOUND_S: Final = 120
"""The ``scale-out-budget`` rule's ``max_total_s`` unless the platform sets another: the bound
`levers` chooses for when a model states no ``scale_out.budget_s``."""

PART_ORDER: Final = (
    "metrics_poll",
    "prometheus_scrape",
    "hpa_reaction",
    "node",
    "image_pull",
    "weights",
    "engine_build",
    "engine_load",
    "warmup",
    "readiness",
)


@dataclass(frozen=True)
class Constants:
    """The estimates the budget rests on. Every field is a key of the ``scale-out-budget``
    rule's policy config; the defaults are what `inferplane plan` prints."""

    hpa_sync_period_s: float = 15
    """kube-controller-manager ``--horizontal-pod-autoscaler-sync-period``, default 15 s
    (https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/,
    "How does a HorizontalPodAutoscaler work?"; EKS accepts 10-15 s:
    https://docs.aws.amazon.com/eks/latest/APIReference/API_HorizontalPodAutoscalerControllerConfigRequest.html)."""

    node_provision_s: float = 540
    """A new GPU node, from the pending pod to an allocatable GPU, as a bound: 30 s for the
    autoscaler's decision (kubernetes/autoscaler ``cluster-autoscaler/FAQ.md``, "What are
    the Service Level Objectives for Cluster Autoscaler?": within 30 s on small clusters),
    90 s for the instance to boot and its kubelet to join (an EC2 instance alone boots in
    about 40 s: https://depot.dev/blog/faster-ec2-boot-time), and 7 minutes for the GPU
    stack on the new node — the GPU Operator "makes a fresh Kubernetes node GPU-ready in 3-7
    minutes" (https://yobitel.com/knowledge-base/nvidia-gpu-operator), the slow end taken.
    Below the upper bound the autoscaler itself allows: "it can take up to 15 minutes
    before it reports that GPU is allocatable" (kubernetes/autoscaler
    ``cluster-autoscaler/utils/gpu/gpu.go``)."""

    image_pull_mb_per_s: float = 40
    """Pulling and unpacking a multi-GB serving image on a fresh node, MB/s, as a bound:
    "Standard Docker image pulls of 15–20 GB can take 4–6 minutes per instance" (AWS
    Machine Learning Blog, "Reducing container cold start times using SOCI index on DLAMI
    and DLC"), whose slow end, 15 GB in 6 minutes, is 42 MB/s. Slower reports exist: 7-10
    minutes for a 10 GB image over overlayfs (https://tensorfuse.io/docs/blogs/snapshotter_graphs).
    Pull and unpack take "more than 75% of total startup time" of scaling workloads
    (https://aws.amazon.com/blogs/containers/introducing-seekable-oci-parallel-pull-mode-for-amazon-eks/);
    the ``lazy_image_pull`` lever shortens it (`lazy_pull_s`)."""

    image_gb_vllm: float = 12
    """Compressed size of the pinned vLLM image, GB: "around 12 GB" for
    ``vllm/vllm-openai`` (vllm-project/vllm#27154)."""

    image_gb_triton: float = 10
    """Compressed size of the NGC Triton image (``tritonserver:<release>-py3``), GB.
    Assumption (the NGC catalog lists about 10 GB for recent releases)."""

    image_gb_trtllm: float = 16
    """Compressed size of the NGC Triton TensorRT-LLM image
    (``tritonserver:<release>-trtllm-python-py3``), GB. Assumption: the Triton image plus
    the TensorRT-LLM runtime and its Python stack."""

    soci_parallel_pull_mb_per_s: float = 180
    """Pulling and unpacking the serving image on a new EKS node with SOCI parallel pull
    (the ``lazy_image_pull`` lever on EKS: nodeadm's ``FastImagePull``, a gp3 root volume of
    1,000 MiB/s and 16,000 IOPS, `inferplane.components.image_pull`), MB/s: AWS's Karpenter
    blueprint for the mode pulled the ~10 GB vLLM Deep Learning Container (10,778,400,361
    bytes) from ECR in 59.813 s on AL2023, against 1m52.33s without it
    (aws-samples/karpenter-blueprints ``blueprints/soci-snapshotter/README.md``, "Results",
    at commit 1e0c62be; the same root volume), 180 MB/s. Parallel pull reads other registries
    with HTTP range requests too (awslabs/soci-snapshotter ``docs/parallel-mode.md``);
    their speed is unmeasured here. The mode and its settings: https://aws.amazon.com/blogs/containers/introducing-seekable-oci-parallel-pull-mode-for-amazon-eks/."""

    store_read_mb_per_s: float = 200
    """Copying weights from the same-region store onto the node (``aws s3 sync`` /
    ``gcloud storage rsync`` into the pod's emptyDir), MB/s. Assumption: the store serves
    far more (about 85-90 MB/s per connection and the AWS CLI opens 10 by default:
    https://docs.aws.amazon.com/whitepapers/latest/s3-optimizing-performance-best-practices/horizontal-scaling-and-request-parallelization-for-high-throughput.html,
    https://docs.aws.amazon.com/cli/latest/topic/s3-config.html); the node's boot disk
    bounds it (gp3 baseline 125 MiB/s:
    https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html; pd-balanced
    140 MB/s plus 0.28 MB/s per GB: https://cloud.google.com/compute/docs/disks/performance),
    with the page cache absorbing part of the writes."""

    gpu_load_gb_per_s: float = 6.4
    """Reading weights from the node's page cache into GPU memory, GB/s: a 16 GB safetensors
    checkpoint (4 shards) reached an H200 with ``safetensors.torch.load_file`` at 6.4 GB/s
    from the page cache (``scripts/calibration/h200/results-llama-3.1-8b.json``, the
    ``ckpt_load`` row with ``cache: page_cache``: 17,179,869,184 bytes in 2.67 s), far under
    the 53 GB/s that pinned host memory reached on the same PCIe Gen5 link (the
    ``h2d_pinned`` row): deserialisation on the CPU dominates. From that machine's local
    disk after dropping the caches: 1.34 GB/s; the weights copied just before are cached."""

    engine_init_s_vllm: float = 60
    """vLLM's start beyond reading weights: process start, the profiling run, the KV-cache
    allocation, ``torch.compile`` and CUDA graph capture. The compile cache lives in the
    pod's emptyDir (``XDG_CACHE_HOME``), so every new replica compiles again. Assumption
    between two published logs: "init engine (profile, create kv cache, warmup model) took
    34.11 seconds" with a warm compile cache, and about 30 s more before the first answer
    (vllm-project/vllm#20264); 87 s for an 8B model on an L4 with compilation
    (vllm-project/vllm#11078)."""

    vllm_compile_cache_saved_s: float = 16
    """What a staged ``torch.compile`` cache takes off `engine_init_s_vllm`: Inductor's
    compile (14.77 s) and Triton's kernel compilation (about 5 s) of an 8B model's cold start
    (vllm-project/vllm#11005), less loading the cached artifacts (4.19 s for an 8B model,
    vllm-project/vllm#16848). Still paid on every start: Dynamo's bytecode transform (4.6 s
    in #11005, 7.51 s in vllm-project/vllm#20264) — v0.10.2 names the cache directory after
    the files Dynamo traced (``vllm/compilation/backends.py``, ``VllmBackend.__call__``), so
    Dynamo runs before the cache is found — and CUDA graph capture (10 s in #11005, 17 s in
    #20264), which vLLM does not cache. #20264 measures a whole warm start: "init engine
    (profile, create kv cache, warmup model) took 34.11 seconds" with the cache reused."""

    engine_init_s_triton: float = 10
    """Triton's start and the load of one ONNX or TensorRT model beyond its bytes.
    Assumption."""

    ort_trt_engine_build_s: float = 300
    """ONNX Runtime's TensorRT provider building its engines in a new replica (an empty
    engine cache), as a bound. The provider caches engines only "when it's built for the
    first time" (onnxruntime ``docs/execution-providers/TensorRT-ExecutionProvider.md``,
    ``trt_engine_cache_enable``), so a replica whose cache starts empty builds. Published
    builds: 12 s of session creation and 9 s of first run for a small model on a desktop
    GPU (microsoft/onnxruntime#18272), more than 60 s for a first inference
    (deepjavalibrary/djl#1798), about 9.5 minutes for an object-detection model on a Jetson
    Orin (roboflow/inference#2703). Assumption: 5 minutes for a server GPU, which builds
    faster than a Jetson; measure your model's build and set this key."""

    engine_init_s_trtllm: float = 30
    """Triton's start with the TensorRT-LLM backend beyond the engine's bytes: the runtime,
    the KV-cache pool, the executor. Assumption."""

    streamed_gb_per_s: float = 0.39
    """Weights streamed from the model store into GPU memory by vLLM's Run:ai model streamer
    (``--load-format runai_streamer``, the ``stream_weights`` lever), GB/s per serving
    process, as a bound: the slowest published read from a cloud object store, 372.2 MiB/s
    from S3 at the streamer's default concurrency for object storage, 8
    (run-ai/runai-model-streamer#13). inferplane sets 32, at which the streamer's own
    benchmark read a 15 GB checkpoint from a same-region S3 bucket in 4.88 s (3.1 GB/s; 28.24
    s at 4: run-ai/runai-model-streamer ``docs/src/benchmarks.md``, Figure 5), the fast end.
    Between them: 593.2 MiB/s per process from GCS with eight processes on one node
    (sgl-project/sglang#22749), 800 MiB/s from an S3-compatible server on the same node
    (run-ai/runai-model-streamer#120), 1.7 GiB/s per process over NFS on RDMA
    (run-ai/runai-model-streamer#135). The streamer overlaps reading with the copy to the
    GPU, so the stream replaces both the ``weights`` copy and the load from the node's disk.
    Measure the platform's own store with ``scripts/measure/measure_weight_loading.py`` and
    set this key."""

    lazy_image_pull_s: float = 20
    """A new node's serving container started from a lazily pulled image (the
    ``lazy_image_pull`` lever: GKE image streaming), seconds: "the container is created in
    just 20s, instead of 3m50s" for Google's deep learning image (Google Cloud blog,
    "Introducing GKE image streaming for fast application startup and autoscaling",
    2021-11-03,
    https://cloud.google.com/blog/products/containers-kubernetes/introducing-container-image-streaming-in-gke).
    Files the server reads at start arrive over the network then ("slightly higher latency
    on reads while the image streams", the same post), which this bound does not add."""

    warmup_s_per_batch: float = 1
    """One ``model_warmup`` sample run by Triton before the model reports ready.
    Assumption (one batch through a realtime-sized model)."""

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Constants:
        """The defaults with every known key of `values` (e.g. a rule's effective config)
        over them; other keys are ignored."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: float(v) for k, v in values.items() if k in names})

    def image_gb(self, runtime: Runtime) -> float:
        return float(getattr(self, f"image_gb_{runtime}"))

    def lazy_pull_s(self, cloud: str, runtime: Runtime) -> float:
        """A new node's pull of `runtime`'s serving image with the ``lazy_image_pull``
        lever: `lazy_image_pull_s` on GKE (image streaming), the image at
        `soci_parallel_pull_mb_per_s` on EKS (SOCI parallel pull: the whole image, faster)."""
        if cloud == "gcp":
            return float(self.lazy_image_pull_s)
        return self.image_gb(runtime) * 1000 / self.soci_parallel_pull_mb_per_s

    def engine_init_s(self, runtime: Runtime, compile_cache: bool = False) -> float:
        init = float(getattr(self, f"engine_init_s_{runtime}"))
        if runtime == "vllm" and compile_cache:
            return max(0.0, init - self.vllm_compile_cache_saved_s)
        return init


@dataclass(frozen=True)
class Platform:
    """What the platform's policy config sets for scale-outs: the bound
    (``scale-out-budget.max_total_s``) and the estimates (the rule's other keys).

    ``levers: auto`` chooses against these, and `inferplane plan`, `inferplane check` and
    `pulumi up` (``inferplane:policyConfig``) read them from the same file, so the levers a
    model deploys with are the ones the ``scale-out-budget`` rule judges. Without a policy
    config it is the rule's defaults."""

    bound_s: int = DEFAULT_BOUND_S
    constants: Constants = dataclasses.field(default_factory=Constants)

    def bound_for(self, budget_s: int | None) -> int:
        """A model's bound: its own ``scale_out.budget_s`` where that is tighter (it may only
        tighten the platform's), else the platform's."""
        return min(budget_s, self.bound_s) if budget_s else self.bound_s

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> Platform:
        """From the ``scale-out-budget`` rule's effective config (its defaults where unset)."""
        return cls(int(values.get("max_total_s", DEFAULT_BOUND_S)), Constants.from_values(values))


def constant_docs() -> dict[str, str]:
    """Field name -> its docstring, whitespace folded (the rule's config descriptions)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(Constants)))
    cls = tree.body[0]
    assert isinstance(cls, ast.ClassDef)
    out: dict[str, str] = {}
    for node, nxt in itertools.pairwise(cls.body):
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant):
            out[node.target.id] = " ".join(str(nxt.value.value).split())
    return out


@dataclass(frozen=True)
class ScaleOutInputs:
    """What the budget needs to know about one model, as the stack publishes it."""

    latency_class: str
    runtime: Runtime
    pool: str
    units_per_replica: int
    """`gpu_resource` units one replica requests (GPUs, MIG slices or time slices)."""
    spare_units: int
    """`gpu_resource` units the pool keeps free per zone (`GpuPool.spare_gpus`)."""
    idle_units: int
    """`gpu_resource` units per zone that the pool's minimum nodes hold beyond the warm
    replicas of its models and the spare units (`idle_units_of`): a replica starts there
    without a new node."""
    weights_gb: float | None
    """The checkpoint (or engine) a replica copies, in GB; None: unknown, never guessed."""
    weights_basis: str
    """Where `weights_gb` comes from, for the part's note."""
    weights_precision_bytes: float
    """Bytes per weight of the checkpoint (`inferplane.blueprint.derived.checkpoint`)."""
    store: str
    """Where replicas read weights from: ``s3`` or ``gs`` (the staged copy for hf://)."""
    warmup_batches: int
    from_zero: bool
    """`replicas.min` is 0: KEDA's polling activates the first replica."""
    compile_cache: bool = False
    """A vLLM model whose ``torch.compile`` cache is staged in the model store: a new
    replica loads the compiled graphs instead of compiling them (`compiles_vllm_graph`)."""
    ort_trt_build: bool = False
    """A Triton model on ONNX Runtime's TensorRT provider: a new replica builds its
    engines (`builds_ort_trt_engines`)."""
    cloud: str = "gcp"
    """The environment's cloud: a lazy pull is GKE image streaming or EKS's SOCI parallel
    pull (`Constants.lazy_pull_s`)."""
    budget_s: int | None = None
    """The model's own bound (`scale_out.budget_s`); None: the platform's."""
    levers: tuple[str, ...] = ()
    """The levers in effect (`ScaleOut.levers`)."""
    options: Mapping[str, float | None] = dataclasses.field(default_factory=dict)
    """Every lever the model could use, in effect or not, with its extra US dollars per
    month (None: a price is missing), so the rule can name the cheapest set that would
    pass (`lever_options.options`)."""

    @property
    def streams_weights(self) -> bool:
        return "stream_weights" in self.levers

    @property
    def lazy_image_pull(self) -> bool:
        return "lazy_image_pull" in self.levers

    @property
    def standby(self) -> bool:
        return "standby" in self.levers


@dataclass(frozen=True)
class Part:
    name: str
    seconds: float
    note: str
    known: bool = True
    """False: the part's size is unknown; `seconds` is 0 and the budget a lower bound."""
    lever: Lever | None = None
    """The lever that shortened (or removed) this part."""


@dataclass(frozen=True)
class Budget:
    """The scale-out budget of one model: parts in `PART_ORDER`, each rounded up to a whole
    second, and their total (a lower bound when a part is unknown)."""

    parts: tuple[Part, ...]

    @property
    def total_s(self) -> int:
        return int(sum(p.seconds for p in self.parts))

    @property
    def unknown(self) -> tuple[str, ...]:
        """The parts whose size is unknown: `total_s` leaves them out."""
        return tuple(p.name for p in self.parts if not p.known)

    @property
    def dominant(self) -> str:
        """The largest part (the earlier one on a tie)."""
        return max(self.parts, key=lambda p: p.seconds).name

    def part(self, name: str) -> Part | None:
        return next((p for p in self.parts if p.name == name), None)

    def as_json(self) -> dict[str, Any]:
        """``{total_s, parts: {name: seconds}, dominant, notes: {name: note}, unknown}`` in
        part order; an unknown part's seconds are null and `total_s` is a lower bound."""
        return {
            "total_s": self.total_s,
            "parts": {p.name: int(p.seconds) if p.known else None for p in self.parts},
            "dominant": self.dominant,
            "notes": {p.name: p.note for p in self.parts},
            "unknown": list(self.unknown),
            "levers": {p.name: p.lever for p in self.parts if p.lever},
        }

    def line(self, model: str) -> str:
        """``scale-out chat: 149 s (engine_load 64 s, weights 41 s, ...)``, largest first;
        ``at least 93 s, weights unknown (...)`` when a part's size is unknown."""
        ranked = sorted(self.parts, key=lambda p: -p.seconds)
        inner = ", ".join(f"{p.name} {int(p.seconds)} s" for p in ranked if p.seconds > 0)
        used = {p.lever for p in self.parts if p.lever}
        levers = [lever for lever in LEVERS if lever in used]
        with_levers = f"; levers {', '.join(levers)}" if levers else ""
        if self.unknown:
            missing = ", ".join(self.unknown)
            return (
                f"scale-out {model}: at least {self.total_s} s, {missing} unknown "
                f"({inner}){with_levers}"
            )
        return f"scale-out {model}: {self.total_s} s ({inner}){with_levers}"


def runtime_of(model: Model) -> Runtime:
    if model.server == "vllm":
        return "vllm"
    return "trtllm" if model.tensorrt_llm is not None else "triton"


def builds_ort_trt_engines(model: Model) -> bool:
    """A Triton model, or a GPU step of its pipeline, on ONNX Runtime with the TensorRT
    execution provider: each replica builds the provider's engines as it loads
    (`inferplane.components.serving.triton.triton_tensors.accelerator_lines`)."""
    if model.backend == "onnxruntime" and model.accelerator == "tensorrt":
        return True
    steps = model.pipeline.steps if model.pipeline else ()
    return any(
        s.backend == "onnxruntime" and s.accelerator == "tensorrt" and s.device == "gpu"
        for s in steps
    )


def inputs_of(env: Environment, model: Model) -> ScaleOutInputs:
    """The budget's inputs for `model` in `env`."""
    pool = env.pool_of(model)
    copied = checkpoint.checkpoint_of(model, runtime_of(model))
    store = env.model_store.split("://", 1)[0]
    if model.source.scheme in ("s3", "gs") and model.source.bucket != env.store_bucket:
        store = model.source.scheme
    return ScaleOutInputs(
        latency_class=model.latency_class,
        runtime=runtime_of(model),
        pool=pool.name,
        units_per_replica=model.gpus,
        spare_units=pool.spare_gpus,
        idle_units=idle_units_of(env, pool.name),
        weights_gb=copied.gb,
        weights_basis=copied.basis,
        weights_precision_bytes=copied.bytes_per_weight,
        store=store,
        warmup_batches=len(model.warmup.batch_sizes) if model.warmup else 0,
        from_zero=model.replicas.min == 0,
        compile_cache=compiles_vllm_graph(model),
        ort_trt_build=builds_ort_trt_engines(model),
        cloud=env.cloud,
        budget_s=model.scale_out.budget_s,
        levers=tuple(model.scale_out.levers),
        options=model.scale_out.options
        if model.scale_out.options is not None
        else lever_options.options(env, model),
    )


def idle_units_of(env: Environment, pool_name: str) -> int:
    """GPU units per zone of pool `pool_name` that its minimum nodes hold and nothing uses
    at the floor: ``nodes.min × units per node`` less each model's warm replicas in a zone
    (`zone_share` of ``replicas.min`` × its GPUs) and the spare units; never below 0."""
    pool = env.pools[pool_name]
    zones = max(1, len(pool.zones))
    warm = sum(
        zone_share(m.replicas.min, zones) * m.gpus
        for m in env.models.values()
        if m.pool == pool_name
    )
    return max(0, pool.nodes.min * pool.gpu_units_per_node - warm - pool.spare_gpus)


def _up(seconds: float) -> float:
    return float(math.ceil(seconds - 1e-9))


def budget(
    inputs: ScaleOutInputs, c: Constants | None = None, *, node_autoscaler: bool = True
) -> Budget:
    """The budget of one model from its inputs and the constants (defaults when None).
    Without a `node_autoscaler` (a kubernetes environment) no new node is ever counted."""
    c = c or Constants()
    parts: list[Part] = []
    if inputs.from_zero:
        parts.append(
            Part("metrics_poll", timing.POLLING_INTERVAL_S, "KEDA pollingInterval (from zero)")
        )
    parts.append(
        Part("prometheus_scrape", timing.SCRAPE_INTERVAL_S, "ServiceMonitor scrape interval")
    )
    if not inputs.from_zero:
        parts.append(Part("hpa_reaction", _up(c.hpa_sync_period_s), "HPA sync period"))
    free = inputs.spare_units + inputs.idle_units
    if node_autoscaler and free >= inputs.units_per_replica and inputs.standby:
        held = (
            f"pool {inputs.pool} keeps {inputs.spare_units} spare GPU unit(s) per zone: the "
            "replica preempts a placeholder on a running node that holds the image"
        )
        parts.append(Part("node", 0, held, lever="standby"))
        parts.append(Part("image_pull", 0, "the running node holds the image", lever="standby"))
    if node_autoscaler and free < inputs.units_per_replica:
        idle = f" and {inputs.idle_units} idle on its minimum nodes" if inputs.idle_units else ""
        why = (
            f"pool {inputs.pool} keeps {inputs.spare_units} spare GPU unit(s){idle} per zone, "
            f"a replica needs {inputs.units_per_replica}"
        )
        parts.append(Part("node", _up(c.node_provision_s), why))
        image_gb = c.image_gb(inputs.runtime)
        if inputs.lazy_image_pull:
            how = (
                f"{image_gb:g} GB {inputs.runtime} image streamed (GKE image streaming): the "
                f"container starts after {c.lazy_image_pull_s:g} s"
                if inputs.cloud == "gcp"
                else f"{image_gb:g} GB {inputs.runtime} image by SOCI parallel pull at "
                f"{c.soci_parallel_pull_mb_per_s:g} MB/s on the new node"
            )
            parts.append(
                Part(
                    "image_pull",
                    _up(c.lazy_pull_s(inputs.cloud, inputs.runtime)),
                    how,
                    lever="lazy_image_pull",
                )
            )
        else:
            parts.append(
                Part(
                    "image_pull",
                    _up(image_gb * 1000 / c.image_pull_mb_per_s),
                    f"{image_gb:g} GB {inputs.runtime} image at {c.image_pull_mb_per_s:g} "
                    "MB/s on the new node",
                )
            )
    gb = inputs.weights_gb
    streamed = inputs.streams_weights
    if gb is None:
        how = (
            f"streamed from the {inputs.store} model store at {c.streamed_gb_per_s:g} GB/s"
            if streamed
            else f"from the {inputs.store} model store at {c.store_read_mb_per_s:g} MB/s"
        )
        parts.append(
            Part(
                "weights",
                0,
                f"{how}; {inputs.weights_basis}",
                known=False,
                lever="stream_weights" if streamed else None,
            )
        )
    elif streamed:
        parts.append(
            Part(
                "weights",
                _up(gb / c.streamed_gb_per_s),
                f"{gb:g} GB streamed from the {inputs.store} model store into GPU memory at "
                f"{c.streamed_gb_per_s:g} GB/s; {inputs.weights_basis}",
                lever="stream_weights",
            )
        )
    else:
        parts.append(
            Part(
                "weights",
                _up(gb * 1000 / c.store_read_mb_per_s),
                f"{gb:g} GB from the {inputs.store} model store at "
                f"{c.store_read_mb_per_s:g} MB/s; {inputs.weights_basis}",
            )
        )
    if inputs.ort_trt_build:
        parts.append(
            Part(
                "engine_build",
                _up(c.ort_trt_engine_build_s),
                "ONNX Runtime's TensorRT provider builds its engines in the new replica "
                "(its engine cache is the pod's own emptyDir)",
            )
        )
    init = c.engine_init_s(inputs.runtime, inputs.compile_cache)
    start = f"{inputs.runtime} start"
    if inputs.runtime == "vllm" and inputs.compile_cache:
        start += " with the staged torch.compile cache"
    if streamed:
        load, load_s = "the weights already streamed", 0.0
    elif gb is not None:
        load, load_s = f"{gb:g} GB at {c.gpu_load_gb_per_s:g} GB/s", gb / c.gpu_load_gb_per_s
    else:
        load, load_s = "the weights' load (size unknown, not counted)", 0.0
    cached = inputs.runtime == "vllm" and inputs.compile_cache
    parts.append(
        Part(
            "engine_load",
            _up(load_s + init),
            f"{load} + {init:g} s {start}",
            lever="compile_cache" if cached else None,
        )
    )
    if inputs.warmup_batches:
        parts.append(
            Part(
                "warmup",
                _up(inputs.warmup_batches * c.warmup_s_per_batch),
                f"{inputs.warmup_batches} warm-up batch size(s) x {c.warmup_s_per_batch:g} s",
            )
        )
    ready = timing.STARTUP_PERIOD_S + timing.READINESS_PERIOD_S * timing.READINESS_SUCCESS_THRESHOLD
    parts.append(
        Part(
            "readiness",
            ready,
            f"startup probe period {timing.STARTUP_PERIOD_S} s + readiness probe "
            f"{timing.READINESS_PERIOD_S} s x {timing.READINESS_SUCCESS_THRESHOLD}",
        )
    )
    return Budget(tuple(parts))


def budgets(env: Environment, c: Constants | None = None) -> dict[str, Budget]:
    """The budget of every model of `env`, by model name (sorted)."""
    scaler = not env.kubernetes
    return {
        name: budget(inputs_of(env, env.models[name]), c, node_autoscaler=scaler)
        for name in sorted(env.models)
    }
