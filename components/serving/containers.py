"""Pod and container specs of serving pods and engine builds, as plain manifest fragments.

Every function returns Kubernetes API objects as dicts in the API's own camelCase, which
the typed pulumi_kubernetes resources pass through unchanged; the same dicts are what the
policies, the plan and `kubernetes-validate` read.

The rules they encode (see shared/design/DOMAIN.md):

- Placement: node selector on the pool label, toleration of the GPU taint, a *required*
  node affinity to the pool's zones, and a zone spread that is hard (``DoNotSchedule``)
  only when there are enough warm replicas to put one in every zone.
- Resources: the pool's GPU resource (``nvidia.com/gpu`` or ``nvidia.com/mig-<profile>``)
  with requests == limits; CPU and memory are the replica's share of the node
  (`serving_resources`). Memory limit == request, so a replica is never OOM-killed for
  memory another pod borrowed; CPU has a request and no limit, because CFS throttling of a
  serving process shows up directly as tail latency.
- Hardening: the Pod Security Standards' ``restricted`` profile and more: non-root uid
  10001 (above the uids images and node users commonly take), read-only root filesystem, no
  privilege escalation, all capabilities dropped, RuntimeDefault seccomp, no service
  links, and no service-account token where nothing needs it (`service_account`).
  Every path a server writes is an emptyDir: ``/tmp``, ``$HOME`` (caches: HF, torch
  compile, Triton kernels, CUDA), ``/models`` and a memory-backed ``/dev/shm``.
- The model store is reached with a storage CLI (`inferplane.components.serving.store.store_cli`),
  under the ServiceAccount of the pod's role (model reader, engine builder, ...).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

from inferplane.blueprint import naming
from inferplane.blueprint.derived import timing
from inferplane.components.serving.spec import ServedModel, ServingArgsError, ServingEnvironment
from inferplane.components.serving.spec_parts import ServingPool

Manifest = dict[str, Any]

PORTS: Final = {"http": 8000, "grpc": 8001, "metrics": 8002}
"""Container and Service ports by name (vLLM serves its API and /metrics on ``http``)."""
RUN_AS_UID: Final = 10001
"""Every container's uid and gid, above 10000 so it never matches a user of the image or
the node. No image needs a passwd entry for it: Triton's files are root-owned and readable
by others ("Server artifacts copied below remain owned by root; the triton-server user
reads and executes them via standard group/other permissions", triton-inference-server
``build.py``); vLLM's image runs as root by default, and a non-root uid needs only
writable ``HOME`` and cache paths (vllm ``docs/deployment/docker.md``, "Run as a non-root
user"), which are emptyDirs here (`vllm.vllm_env`); the AWS and gcloud CLIs need a
writable ``HOME`` / ``CLOUDSDK_CONFIG`` (`store_env`)."""
HOME: Final = "/home/inferplane"
MODELS_DIR: Final = "/models"
CONFIG_DIR: Final = "/config"
WORK_DIR: Final = "/build"

PRESTOP_SLEEP_S: Final = 15
"""Time for the endpoint's removal to reach kube-proxy and the load balancer before the
server is told to stop (it keeps serving meanwhile)."""
DRAIN_MARGIN_S: Final = 15
"""Grace beyond preStop + the longest request, for the server's own shutdown."""
ROLLOUT_MARGIN_S: Final = 900
"""Rollout time beyond the startup timeout: a node scale-up, a 10-20 GB image pull and the
weight download all happen before the startup probe starts counting."""
PROBE_PERIOD_S: Final = timing.PROBE_PERIOD_S
AWAIT_MARGIN_S: Final = 300
"""Beyond the rollout: the cloud load balancer's provisioning (an NLB takes minutes) and the
Endpoints' 10 s settling (`await_timeout_s`)."""

RESERVED_VCPUS: Final = 1.5
"""vCPUs per node left to the kubelet, the system and the GPU Operator's daemon sets."""
MEMORY_ALLOCATABLE: Final = 0.80
RESERVED_MEMORY_GIB: Final = 2
"""A node's memory minus the kubelet's reservation (EKS/GKE reserve 5-11 %) and the daemon
sets' share: 80 % of it, less 2 GiB."""
NO_GPU: Final = {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}
"""For a container of a CUDA image on a GPU node that requests no GPU (image pre-pull, the
staging Job's download). CUDA images set ``NVIDIA_VISIBLE_DEVICES=all``, so where the NVIDIA
runtime is the node's default such a container would be handed every GPU of the node.
``void``: "nvidia-container-runtime will have the same behavior as runc (i.e. neither GPUs
nor capabilities are exposed)" (NVIDIA container toolkit user guide, "GPU Enumeration",
https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html)."""

FALLBACK_VCPUS_PER_GPU: Final = 4
FALLBACK_MEMORY_GIB_PER_GPU: Final = 16
"""Per GPU unit, for an `instance_type` the table below does not know."""


@dataclass(frozen=True)
class NodeSize:
    vcpus: int
    memory_gib: int


NODE_SIZES: Final[dict[str, NodeSize]] = {
    # AWS (EC2 instance types of the GPU catalog)
    "g4dn.2xlarge": NodeSize(8, 32), "g4dn.12xlarge": NodeSize(48, 192),
    "g4dn.metal": NodeSize(96, 384),
    "g5.2xlarge": NodeSize(8, 32), "g5.12xlarge": NodeSize(48, 192),
    "g5.48xlarge": NodeSize(192, 768),
    "g6.2xlarge": NodeSize(8, 32), "g6.12xlarge": NodeSize(48, 192),
    "g6.48xlarge": NodeSize(192, 768),
    "g6e.2xlarge": NodeSize(8, 64), "g6e.12xlarge": NodeSize(48, 384),
    "g6e.48xlarge": NodeSize(192, 1536),
    "p4d.24xlarge": NodeSize(96, 1152), "p4de.24xlarge": NodeSize(96, 1152),
    "p5.4xlarge": NodeSize(16, 256), "p5.48xlarge": NodeSize(192, 2048),
    "p5en.48xlarge": NodeSize(192, 2048), "p6-b200.48xlarge": NodeSize(192, 2048),
    # GCP (GCE machine types of the GPU catalog; memory in GB rounded down to GiB)
    "n1-standard-8": NodeSize(8, 28), "n1-standard-16": NodeSize(16, 56),
    "n1-standard-32": NodeSize(32, 112),
    "g2-standard-8": NodeSize(8, 29), "g2-standard-24": NodeSize(24, 89),
    "g2-standard-48": NodeSize(48, 178), "g2-standard-96": NodeSize(96, 357),
    "a2-highgpu-1g": NodeSize(12, 79), "a2-highgpu-2g": NodeSize(24, 158),
    "a2-highgpu-4g": NodeSize(48, 316), "a2-highgpu-8g": NodeSize(96, 633),
    "a2-megagpu-16g": NodeSize(96, 1266),
    "a2-ultragpu-1g": NodeSize(12, 158), "a2-ultragpu-2g": NodeSize(24, 316),
    "a2-ultragpu-4g": NodeSize(48, 633), "a2-ultragpu-8g": NodeSize(96, 1266),
    "a3-highgpu-1g": NodeSize(26, 217), "a3-highgpu-2g": NodeSize(52, 435),
    "a3-highgpu-4g": NodeSize(104, 871), "a3-highgpu-8g": NodeSize(208, 1743),
    "a3-ultragpu-8g": NodeSize(224, 2749), "a4-highgpu-8g": NodeSize(224, 3695),
}  # fmt: skip


# --- labels, placement, hardening -------------------------------------------------------
def model_object_labels(env: ServingEnvironment, model: ServedModel) -> dict[str, str]:
    """Labels of every object of one model: naming's model labels, pool and latency class."""
    return {
        **naming.model_labels(env.part_of, env.environment, model.name),
        naming.POOL_LABEL: model.pool.name,
        naming.LATENCY_CLASS_LABEL: model.latency_class,
    }


def gpu_placement(pool: ServingPool) -> Manifest:
    """nodeSelector, tolerations and affinity that pin a pod to `pool`'s nodes and zones."""
    return {
        "nodeSelector": pool.selector,
        "tolerations": [
            {
                "key": naming.GPU_TAINT_KEY,
                "operator": "Equal",
                "value": naming.GPU_TAINT_VALUE,
                "effect": naming.GPU_TAINT_EFFECT,
            }
        ],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {
                                    "key": naming.TOPOLOGY_ZONE_LABEL,
                                    "operator": "In",
                                    "values": list(pool.zones),
                                }
                            ]
                        }
                    ]
                }
            }
        },
    }


def zone_spread(env: ServingEnvironment, model: ServedModel) -> list[Manifest]:
    """One replica per zone before a second anywhere.

    Hard only when the warm replicas can cover every zone: with fewer, a hard rule would
    leave a replica Pending. ``minDomains`` makes the scheduler count a zone whose nodes
    scaled to zero as empty (so a replica goes there and the autoscaler adds a node),
    and ``pod-template-hash`` keeps a rollout's new pods from counting the old ones.
    """
    pool = model.pool
    hard = model.replicas.min >= len(pool.zones)
    constraint: Manifest = {
        "maxSkew": 1,
        "topologyKey": naming.TOPOLOGY_ZONE_LABEL,
        "whenUnsatisfiable": "DoNotSchedule" if hard else "ScheduleAnyway",
        "labelSelector": {"matchLabels": naming.model_selector(env.part_of, model.name)},
        "matchLabelKeys": ["pod-template-hash"],
    }
    if hard:
        constraint["minDomains"] = len(pool.zones)
    return [constraint]


def pod_security_context() -> Manifest:
    return {
        "runAsNonRoot": True,
        "runAsUser": RUN_AS_UID,
        "runAsGroup": RUN_AS_UID,
        "fsGroup": RUN_AS_UID,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def service_account(env: ServingEnvironment, name: str, cloud_identity: bool = True) -> Manifest:
    """The pod's ServiceAccount and whether the Kubernetes API token is mounted.

    No container inferplane runs calls the Kubernetes API, so the token is mounted only
    where the cloud identity might need it, and never in a pod that does not use the
    cloud identity (`cloud_identity` False: nothing in it reads the model store):

    - EKS (IRSA): not mounted. The pod identity webhook decides from
      ``spec.serviceAccountName`` alone and injects its own projected token volume
      ``aws-iam-token`` (audience ``sts.amazonaws.com``) and ``AWS_WEB_IDENTITY_TOKEN_FILE``
      (aws/amazon-eks-pod-identity-webhook ``pkg/handler/handler.go``,
      `buildPodPatchConfig` and the ``Projected``/``ServiceAccountToken`` volume it adds);
      the repository never reads ``automountServiceAccountToken``, which only controls the
      default ``kube-api-access-*`` volume.
    - GKE (Workload Identity): mounted, explicitly. Tokens come from the GKE metadata
      server, which should not need the pod's token, but no Google source says so, and a
      user report ties a Workload Identity failure to ``automountServiceAccountToken:
      false`` (argoproj/argo-workflows#12781). Until that is settled the token stays;
      inferplane binds no RBAC role to these ServiceAccounts.
    """
    mounted = cloud_identity and env.cloud == "gcp"
    return {"serviceAccountName": name, "automountServiceAccountToken": mounted}


def literal(text: str) -> str:
    """`text` as a container's ``command``, ``args`` or env ``value`` passes it on verbatim:
    the kubelet replaces ``$(NAME)`` with an earlier variable's value and ``$$`` with ``$``
    (https://kubernetes.io/docs/tasks/inject-data-application/define-interdependent-environment-variables/;
    kubernetes ``third_party/forked/golang/expansion/expand.go``), so a blueprint string
    such as ``$(HF_TOKEN)`` would otherwise pull a secret into a program's arguments."""
    return text.replace("$", "$$")


def literal_env(variables: list[Manifest]) -> list[Manifest]:
    """`literal` on every plain ``value`` of `variables` (``valueFrom`` entries as they are)."""
    return [{**v, "value": literal(v["value"])} if "value" in v else v for v in variables]


def container_security_context() -> Manifest:
    return {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "runAsNonRoot": True,
        "capabilities": {"drop": ["ALL"]},
    }


def empty_dir(name: str, size_limit: str | None = None, memory: bool = False) -> Manifest:
    source: Manifest = {}
    if memory:
        source["medium"] = "Memory"
    if size_limit:
        source["sizeLimit"] = size_limit
    return {"name": name, "emptyDir": source}


def mount(name: str, path: str, read_only: bool = False) -> Manifest:
    out: Manifest = {"name": name, "mountPath": path}
    if read_only:
        out["readOnly"] = True
    return out


# --- model sources ----------------------------------------------------------------------
def source_location(model: ServedModel) -> tuple[str, str]:
    """(directory URI with a trailing slash, file name) of a Triton model's ONNX source.

    The whole directory is fetched (for the engine build, or for Triton to serve the ONNX):
    an ONNX model larger than 2 GB keeps its weights in external data files whose
    ``location`` is "relative to the directory the ONNX model is stored in"
    (https://onnx.ai/onnx/repo-docs/ExternalData.html), often ``model.onnx.data`` but any
    name the exporter chose; copying the directory brings them all without parsing the model
    in the fetch container (which has only the cloud CLI).
    """
    uri = model.source.uri
    head, _, file = uri.rpartition("/")
    path = head.partition("://")[2]
    if not file or "/" not in path:
        raise ServingArgsError(
            model.name,
            ("source",),
            f"the ONNX model's directory is fetched (its external data files live beside "
            f"it), and {uri} is not a file in a directory",
            "keep each ONNX model in its own directory: <store>/<model dir>/model.onnx",
        )
    return f"{head}/", file


NGC_ENTRYPOINT = "/opt/nvidia/nvidia_entrypoint.sh"
"""The ENTRYPOINT of NVIDIA's NGC images (the CUDA base images' Dockerfile copies
``entrypoint.d/`` to ``/opt/nvidia/entrypoint.d/`` and sets this script as ENTRYPOINT;
triton-inference-server/server ``docker/entrypoint.d/`` adds Triton's own): it runs the
``entrypoint.d`` scripts, among them the one that puts the image's CUDA forward-compatibility
libraries ahead of an older data-center driver (the "Driver Requirements" of each Triton
release note list the branches that works on), and then execs its arguments. A container
``command`` replaces the ENTRYPOINT and skips all of that, so the Triton, TensorRT and
TensorRT-LLM containers set ``args`` only."""


def shell(*lines: str) -> list[str]:
    """A container command running `lines` under ``sh -eu`` (stop at the first failure)."""
    return ["/bin/sh", "-c", "set -eu\n" + "\n".join(lines)]


# --- sizing -----------------------------------------------------------------------------
def replica_share(model: ServedModel) -> tuple[int, int]:
    """(millicores, MiB) of CPU and memory for one replica: its share of the node."""
    pool = model.pool
    size = NODE_SIZES.get(pool.instance_type or "")
    if size is None:
        return (
            FALLBACK_VCPUS_PER_GPU * 1000 * model.gpus,
            FALLBACK_MEMORY_GIB_PER_GPU * 1024 * model.gpus,
        )
    share = model.gpus / pool.gpu_units_per_node
    cpu_m = math.floor((size.vcpus - RESERVED_VCPUS) * 1000 * share / 100) * 100
    mem_mib = (
        math.floor(
            (size.memory_gib * MEMORY_ALLOCATABLE - RESERVED_MEMORY_GIB) * 1024 * share / 256
        )
        * 256
    )
    return max(cpu_m, 1000), max(mem_mib, 2048)


def serving_resources(model: ServedModel) -> Manifest:
    pool = model.pool
    cpu_m, mem_mib = replica_share(model)
    gpus = str(model.gpus)
    return {
        "requests": {pool.gpu_resource: gpus, "cpu": f"{cpu_m}m", "memory": f"{mem_mib}Mi"},
        "limits": {pool.gpu_resource: gpus, "memory": f"{mem_mib}Mi"},
    }


def shm_size_mib(model: ServedModel) -> int:
    """/dev/shm for NCCL and pinned transfers: 2 GiB per GPU, at most a quarter of the
    replica's memory (a memory-backed emptyDir is charged to the pod's memory limit)."""
    _, mem_mib = replica_share(model)
    return min(2048 * model.gpus, mem_mib // 4)


# --- probes and drain -------------------------------------------------------------------
def http_probe(
    path: str, period_s: int, failures: int, timeout_s: int = 5, successes: int = 1
) -> Manifest:
    return {
        "httpGet": {"path": path, "port": "http"},
        "periodSeconds": period_s,
        "failureThreshold": failures,
        "timeoutSeconds": timeout_s,
        "successThreshold": successes,
    }


def probes(model: ServedModel, ready_path: str, live_path: str) -> Manifest:
    """Startup probe sized for the model's load time; liveness starts only after it, so a
    loading pod is never killed; readiness means loaded and warm."""
    return {
        "startupProbe": http_probe(
            ready_path,
            timing.STARTUP_PERIOD_S,
            math.ceil(model.startup_timeout_s / timing.STARTUP_PERIOD_S),
        ),
        "readinessProbe": http_probe(
            ready_path,
            timing.READINESS_PERIOD_S,
            timing.READINESS_FAILURE_THRESHOLD,
            timeout_s=3,
            successes=timing.READINESS_SUCCESS_THRESHOLD,
        ),
        "livenessProbe": http_probe(live_path, PROBE_PERIOD_S, 6),
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", str(PRESTOP_SLEEP_S)]}}},
    }


def termination_grace_s(model: ServedModel) -> int:
    return PRESTOP_SLEEP_S + model.max_request_s + DRAIN_MARGIN_S


def progress_deadline_s(model: ServedModel) -> int:
    return model.startup_timeout_s + ROLLOUT_MARGIN_S


def await_timeout_s(model: ServedModel) -> int:
    """How long ``pulumi up`` waits for the model's Deployment and its Services.

    pulumi-kubernetes waits 10 minutes by default for a Deployment to become Available and
    for a Service's Endpoints to hold no not-ready address (and, for a LoadBalancer, for its
    ingress address): provider/pkg/await/deployment.go ``DefaultDeploymentTimeoutMins``,
    service.go ``DefaultServiceTimeoutMins`` and ``checkAndLogStatus`` (pulumi-kubernetes
    94977969). A GPU model's first load takes longer: the budget is the startup probe's
    (`ServedModel.startup_timeout_s`) plus the rollout margin (node scale-up, image pull,
    weight download) plus `AWAIT_MARGIN_S` for the load balancer. ``customTimeouts`` wins
    over the ``pulumi.com/timeoutSeconds`` annotation (provider/pkg/metadata/overrides.go).
    """
    return progress_deadline_s(model) + AWAIT_MARGIN_S


def has_surge_room(model: ServedModel) -> bool:
    """True when the pool, at its maximum size, holds every model on it at its maximum
    replicas plus one more replica of `model`: a surge pod can always get a GPU."""
    spare = model.pool.spare_gpu_units_at_max
    return spare is not None and spare >= model.gpus


def rollout_strategy(env: ServingEnvironment, model: ServedModel) -> Manifest:
    """A rollout that cannot deadlock waiting for a GPU.

    With two or more warm replicas: replace one at a time in place (surge 0, unavailable 1)
    — no spare GPU needed, the others carry the traffic. With fewer, surge one replica
    first (no gap in service) when the pool has room for it at its maximum size
    (`has_surge_room`); otherwise replace in place, accepting a short gap rather than a
    rollout stuck on a GPU that never comes.
    """
    if model.replicas.min < 2 and has_surge_room(model):
        rolling = {"maxSurge": 1, "maxUnavailable": 0}
    else:
        rolling = {"maxSurge": 0, "maxUnavailable": 1}
    return {"type": "RollingUpdate", "rollingUpdate": rolling}
