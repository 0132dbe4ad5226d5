"""Names, labels and well-known addresses: the contract between components and policies.

Resource names derive from the blueprint, environment, pool and model names only, so
they are stable across runs (Pulumi replaces what it renames). Kubernetes objects of one
blueprint live in one namespace named after the blueprint.
"""

from __future__ import annotations

import hashlib
import re

# --- cluster add-ons: namespaces and Helm release names ---------------------------------
GPU_OPERATOR_NAMESPACE = "gpu-operator"
GPU_OPERATOR_RELEASE = "gpu-operator"
KEDA_NAMESPACE = "keda"
KEDA_RELEASE = "keda"
MONITORING_NAMESPACE = "monitoring"
PROMETHEUS_RELEASE = "kube-prometheus-stack"
"""kube-prometheus-stack selects ServiceMonitors/PodMonitors/PrometheusRules by the label
``release: <this>``."""
PROMETHEUS_URL = (
    f"http://{PROMETHEUS_RELEASE}-prometheus.{MONITORING_NAMESPACE}.svc.cluster.local:9090"
)
"""In-cluster address of the Prometheus that kube-prometheus-stack runs (KEDA queries it)."""
KUBE_SYSTEM_NAMESPACE = "kube-system"
ARGO_ROLLOUTS_NAMESPACE = "argo-rollouts"
ARGO_ROLLOUTS_RELEASE = "argo-rollouts"
"""The Argo Rollouts controller's namespace and release (an installed add-on): the namespace
its installation guide creates (argoproj/argo-rollouts v1.10.1 ``docs/installation.md``:
``kubectl create namespace argo-rollouts``)."""
KEDA_HTTP_RELEASE = "keda-add-ons-http"
"""The KEDA HTTP add-on's release, in `KEDA_NAMESPACE`. Its chart names its objects
``{{ .Chart.Name }}-<component>`` (kedacore/charts ``http-add-on/templates``), the chart's
name being ``keda-add-ons-http`` too."""
KEDA_HTTP_INTERCEPTOR_PORT = 8080
"""Its port: chart value ``interceptor.proxy.port`` (values.yaml: 8080); container port name
``proxy``."""


def keda_http_external_scaler(namespace: str) -> str:
    """The HTTP add-on's scaler in `namespace` (gRPC ``scaler.grpcPort`` 9090, Service
    ``{{ .Chart.Name }}-external-scaler``, whatever the release is called), the address of
    a ScaledObject's ``external-push`` trigger."""
    return f"{KEDA_HTTP_RELEASE}-external-scaler.{namespace}.svc.cluster.local:9090"


# --- GPU nodes ----------------------------------------------------------------------------
GPU_TAINT_KEY = "nvidia.com/gpu"
GPU_TAINT_VALUE = "present"
GPU_TAINT_EFFECT = "NoSchedule"
POOL_LABEL = "inferplane.dev/pool"
BLUEPRINT_LABEL = "inferplane.dev/blueprint"
"""On every GPU node beside `POOL_LABEL`: pool names are unique within one blueprint only,
so two blueprints on one cluster may both have a pool ``l4``; pods select both labels and
never land on (or make an autoscaler grow) the other blueprint's nodes."""
NGC_RELEASE_ANNOTATION = "inferplane.dev/ngc-release"
"""On a Triton pod template: the NGC release its image is built from (the tag of an NGC
image, or a custom image's declared ``base_release``), which its TensorRT engines must match."""
GPU_LABEL = "inferplane.dev/gpu"
ZONE_LABEL = "inferplane.dev/zone"
"""Set on every node group (one zone each); policies read the zone from it."""
TOPOLOGY_ZONE_LABEL = "topology.kubernetes.io/zone"
"""Set by the cloud on every node; pods pin and spread on it."""
MIG_CONFIG_LABEL = "nvidia.com/mig.config"
DRIVER_INSTALLER_LABEL = "inferplane.dev/driver-installer"
"""GKE GPU nodes whose blueprint runs Google's driver installer for them itself (the
cluster's GPU Operator is not one inferplane installs): the value is the blueprint, whose
installer selects it; the installer beside an installed GPU Operator skips these nodes, so
no node runs two installers."""
DEVICE_PLUGIN_CONFIG_LABEL = "nvidia.com/device-plugin.config"

# --- serving objects ----------------------------------------------------------------------
MODEL_LABEL = "inferplane.dev/model"
ENVIRONMENT_LABEL = "inferplane.dev/environment"
LATENCY_CLASS_LABEL = "inferplane.dev/latency-class"
"""``realtime`` or ``batch``: on each model's Deployment, ScaledObject and Services."""
AFTER_ANNOTATION = "inferplane.dev/after"
"""On a zone gate (an AnalysisTemplate of a rollout): the Deployment of the zone it waits
for, which `inferplane diff` names (`inferplane.components.serving.scaling.rollout`)."""
PRECISION_ANNOTATION = "inferplane.dev/precision"
"""The model's ``precision`` (``fp32``, ``fp16``, ...), on its Deployments' own metadata (not
the pod template, so it restarts nothing): what CrossGuard, which has no blueprint, reads
where no flag of the pods says it (an ONNX Runtime model runs in its graph's types)."""
ENVIRONMENT_CONFIGMAP = "inferplane-environment"
"""A ConfigMap in the blueprint's namespace with the environment's facts (blueprint,
environment, cloud, region, zones as a comma list, pools as JSON) so that policies — online
in CrossGuard as well as offline — can check placement without the blueprint."""
PREFLIGHT_CONFIGMAP = "inferplane-preflight"
"""The capacity preflight's judged answers (`inferplane.blueprint.capacity.preflight`), for
the rules to read; only stacks that ran the preflight have it."""
ROLE_LABEL = "inferplane.dev/role"
"""On the pool-level pods that serve no model: `SPARE_GPU_ROLE` placeholders and
`IMAGE_PREPULL_ROLE` pre-pull daemons. Policies tell placeholders from model servers by it."""
SPARE_GPU_ROLE = "spare-gpu"
IMAGE_PREPULL_ROLE = "image-prepull"
MODEL_READER_SA = "model-reader"
"""ServiceAccount of serving pods: read-only access to the environment's model store."""
ENGINE_BUILDER_SA = "engine-builder"
"""ServiceAccount of TensorRT engine builds: reads the store, writes only the engine prefix."""
STORE_AREAS = ".inferplane"
"""The folder of a model store that inferplane writes into, and nothing else: engines
(`ENGINE_PREFIX`), staged Hub weights and pip wheels (`HUB_PREFIX`), compile caches
(`VLLM_COMPILE_PREFIX`), each with its attempt folders and completion markers. A blueprint
never names a source, an adapter or a store inside it (`reserved_store_path`): its grants
would read the areas of every blueprint that shares the store."""
ENGINE_PREFIX = f"{STORE_AREAS}/engines"
"""Engines are written under ``<model_store>/<ENGINE_PREFIX>/<blueprint>/<model>/<key>/``
(`store_area`)."""
WEIGHTS_STAGER_SA = "weights-stager"
"""ServiceAccount of the Jobs that stage ``hf://`` sources: reads and writes only the hub
prefix (`HUB_PREFIX`) of the model store."""
HUB_PREFIX = f"{STORE_AREAS}/hub"
"""Staged ``hf://org/name@revision`` sources live under
``<model_store>/<HUB_PREFIX>/<blueprint>/<org>/<name>/<revision>/`` (`store_area`)."""
VLLM_COMPILER_SA = "vllm-compiler"
"""ServiceAccount of the Jobs that stage a vLLM model's ``torch.compile`` cache: reads the
store, writes only the compile-cache prefix (`VLLM_COMPILE_PREFIX`)."""
VLLM_COMPILE_PREFIX = f"{STORE_AREAS}/vllm-compile"
"""Staged compile caches live under
``<model_store>/<VLLM_COMPILE_PREFIX>/<blueprint>/<model>/<key>/`` (`store_area`)."""


STAGED_REVISION_PREFIX = "rev-"
"""A staged revision holding ``/`` is the folder ``rev-<hash>`` (`staged_revision_dir`); a
blueprint revision may not itself start with it, so no two revisions share a folder."""


def staged_revision_dir(revision: str) -> str:
    """The folder (one path segment) of a staged ``hf://`` revision under its repository:
    the revision itself, or ``rev-<hash>`` when it holds ``/`` (``..`` segments included)."""
    if "/" in revision:
        return f"{STAGED_REVISION_PREFIX}{short_hash(revision)}"
    return revision


def store_area(prefix: str, blueprint: str) -> str:
    """The part of an inferplane prefix of the model store (`ENGINE_PREFIX`, `HUB_PREFIX`,
    `VLLM_COMPILE_PREFIX`) that one blueprint writes and reads, without a trailing ``/``.

    Each blueprint's Jobs may write only their own area (IAM and GCS conditions grant
    ``<area>/`` alone) and its serving pods read only keys inside it, so a blueprint that
    shares a model store with another can neither overwrite nor feed it engines, compile
    caches or staged weights. Blueprint names are DNS labels: no ``/``, so with the trailing
    ``/`` one blueprint's area is never a prefix of another's."""
    return f"{prefix}/{blueprint}"


def reserved_store_path(path: str) -> bool:
    """Whether a store key or path (a source's key, a store's prefix) has `STORE_AREAS` as
    one of its ``/``-separated segments: it reaches inferplane's own areas, of this store or
    of a store nested in it."""
    return STORE_AREAS in path.split("/")


def source_folder(key: str, file: bool) -> str:
    """The folder of the store that readers of a source copy, ending in ``/`` (``""``: the
    bucket's root): a file's directory (a Triton model's, fetched whole so that its
    external data files come with it), else the source itself as a folder. Grants name this
    folder, never the bare key: ``llama`` as a prefix would also match ``llama-finance/``
    and ``.inferplane`` would match ``.inferplane/``."""
    if file:
        head, slash, _ = key.rpartition("/")
        return f"{head}/" if slash else ""
    return key if key.endswith("/") else f"{key}/"


def namespace(blueprint: str) -> str:
    """The Kubernetes namespace of one blueprint's serving objects."""
    return blueprint


def cluster_scoped_name(blueprint: str, name: str) -> str:
    """The name of a cluster-scoped object one blueprint owns (a PriorityClass, a
    ClusterRole, ...): ``<blueprint>-<name>`` (63 characters at most, with a stable hash when
    longer), so two blueprints on one cluster never claim the same object. Objects of a
    shared add-on, installed once per cluster by the blueprint that sets it to ``install``
    (`inferplane.blueprint.addons`), keep the add-on's fixed names instead."""
    return label_value(f"{blueprint}-{name}")


def stack_name(blueprint: str, env: str) -> str:
    """Logical name of the top component, and prefix of cloud resource names."""
    return f"{blueprint}-{env}"


def zone_suffix(zone: str) -> str:
    """``us-east-1a`` -> ``a``; ``us-central1-b`` -> ``b`` (the part that differs by zone)."""
    if len(zone) > 1 and zone[-1].isalpha() and zone[-2].isdigit():  # AWS: us-east-1a
        return zone[-1]
    return zone.rsplit("-", 1)[-1]  # GCP: us-central1-b


def node_group_name(blueprint: str, env: str, pool: str, zone: str, max_length: int = 63) -> str:
    """One node group per pool and zone: ``<blueprint>-<env>-<pool>-<zone suffix>``.

    Cloud limits differ (EKS node groups 63 characters, GKE node pools 40): a longer name
    keeps its readable start and the zone, with a stable hash of the full name in between,
    so names stay unique and never change between runs.
    """
    full = f"{blueprint}-{env}-{pool}-{zone_suffix(zone)}"
    if len(full) <= max_length:
        return full
    tail = f"-{short_hash(full, length=8)}-{zone_suffix(zone)}"
    return full[: max_length - len(tail)].rstrip("-") + tail


def source_suffix(kind: str, reservation: str | None) -> str:
    """The suffix of the node group of a pool's later capacity source in a zone: its market,
    or for a reservation or Capacity Block the end of its id (a Capacity Block to be bought
    has none yet: ``cb-buy``), so reordering the list renames only the groups whose place
    changes between first and not first."""
    if kind in ("reservation", "capacity_block"):
        tail = re.sub(r"[^a-z0-9]+", "-", (reservation or "").lower()).strip("-")[-8:]
        prefix = "r" if kind == "reservation" else "cb"
        return f"{prefix}-{tail.strip('-') or 'buy'}"
    return {"on_demand": "od", "spot": "spot", "flex_start": "flex"}[kind]


def source_group_name(first: str, kind: str, reservation: str | None, max_length: int) -> str:
    """The node group of a zone's later capacity source: the first source's group name
    `first` (`node_group_name`), cut to fit `max_length`, and `source_suffix`."""
    suffix = "-" + source_suffix(kind, reservation)
    return first[: max_length - len(suffix)].rstrip("-") + suffix


def model_labels(blueprint: str, env: str, model: str) -> dict[str, str]:
    """Labels on every object of one model (the selector is `model_selector`)."""
    return {
        "app.kubernetes.io/name": model,
        "app.kubernetes.io/instance": label_value(f"{blueprint}-{model}"),
        "app.kubernetes.io/part-of": blueprint,
        "app.kubernetes.io/managed-by": "inferplane",
        MODEL_LABEL: model,
        ENVIRONMENT_LABEL: env,
    }


LABEL_VALUE_MAX = 63
"""Kubernetes label values: at most 63 characters, alphanumeric at both ends
(https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set)."""


def label_value(text: str) -> str:
    """`text` as a label value: unchanged when it fits, else its start and a stable hash."""
    if len(text) <= LABEL_VALUE_MAX:
        return text
    tail = f"-{short_hash(text, length=8)}"
    return text[: LABEL_VALUE_MAX - len(tail)].rstrip("-._") + tail


def model_selector(blueprint: str, model: str) -> dict[str, str]:
    """The pod selector of one model's Deployment and Services (immutable: keep it small)."""
    return {"app.kubernetes.io/part-of": blueprint, MODEL_LABEL: model}


def zone_deployment(model: str, zone: str) -> str:
    """One zone's Deployment of an llm-aware model, also its router's Helm release and
    InferencePool: ``<model>-<zone>``."""
    return f"{model}-{zone}"


def router_epp(model: str, zone: str) -> str:
    """The endpoint picker Deployment and Service the llm-d router chart names after the
    release: its first 40 characters and ``-epp`` (llm-d-router v0.10.0
    ``config/charts/routerlib/templates/_helpers.tpl``, ``llm-d-router.name``)."""
    return f"{zone_deployment(model, zone)[:40]}-epp"


def wake_lb_name(blueprint: str, env: str, model: str) -> str:
    """The load balancer Service of a model that wakes on its own HTTP traffic: it lives in
    `KEDA_NAMESPACE` beside the interceptor, so the name carries blueprint, environment and
    model (63 characters at most, with a stable hash when longer)."""
    full = f"{blueprint}-{env}-{model}-lb"
    if len(full) <= 63:
        return full
    tail = f"-{short_hash(full, length=8)}-lb"
    return full[: 63 - len(tail)].rstrip("-") + tail


def wake_lb_hosts(blueprint: str, env: str, model: str, namespace: str) -> list[str]:
    """The DNS names of `wake_lb_name` in the HTTP add-on's `namespace`, for clients inside
    the cluster: the interceptor routes each to the model."""
    service = f"{wake_lb_name(blueprint, env, model)}.{namespace}"
    return [service, f"{service}.svc", f"{service}.svc.cluster.local"]


def short_hash(*parts: str, length: int = 12) -> str:
    """A stable hex digest of `parts`, for content-addressed names (engine keys)."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
    return digest[:length]


def spare_gpu_priority_class(blueprint: str, env: str, pool: str) -> str:
    """The cluster-wide PriorityClass of one pool's spare-GPU placeholders; blueprint and
    environment in the name, because PriorityClasses are not namespaced."""
    return cluster_scoped_name(blueprint, f"{env}-{pool}-spare-gpus")


# --- objects in the blueprint's namespace that no model owns --------------------------------
# Their names live here, beside the check that refuses a model name claiming one of them
# (`inferplane.blueprint.checks.semantic_names`), so the components and validate cannot drift.
SPARE_GPUS_INFIX = "-spare-gpus-"
IMAGE_PREPULL_SUFFIX = "-image-prepull"
WEIGHTS_PREFIX = "weights-"
WEIGHTS_KEY_LENGTH = 10
"""Staging objects carry this many hex digits of the source's content key."""
RESPONSE_CACHE_SUFFIX = "-cache"
RESPONSE_CACHE_SECRET_SUFFIX = "-response-cache"


def spare_gpus_deployment(pool: str, zone: str) -> str:
    """The Deployment of one pool's spare-GPU placeholders in one zone."""
    return f"{pool}{SPARE_GPUS_INFIX}{zone}"


def image_prepull_daemon_set(pool: str) -> str:
    """The DaemonSet pre-pulling one pool's serving images."""
    return f"{pool}{IMAGE_PREPULL_SUFFIX}"


def weights_job(key: str) -> str:
    """The Job (and the NetworkPolicy of its pod) staging one hub source, by content key."""
    return f"{WEIGHTS_PREFIX}{key[:WEIGHTS_KEY_LENGTH]}"


def weights_token_secret(key: str) -> str:
    """The Secret holding the hub token of one staging Job."""
    return f"{weights_job(key)}-hub-token"


def response_cache_service(model: str) -> str:
    """The Service (and ingress NetworkPolicy) of a model's Redis response cache."""
    return f"{model}{RESPONSE_CACHE_SUFFIX}"


def response_cache_secret(model: str) -> str:
    """The Secret holding the password of a model's Redis response cache."""
    return f"{model}{RESPONSE_CACHE_SECRET_SUFFIX}"


def response_cache_deployment(model: str, zone: str) -> str:
    """The Deployment of a model's Redis response cache in one zone."""
    return f"{response_cache_service(model)}-{zone_suffix(zone)}"
