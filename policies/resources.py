"""The resource shapes rules read, the same offline (a mocked run) and online (CrossGuard).

A `Resource` is one registered resource: its Pulumi type token, name, URN and its
properties in the provider's own (camelCase) spelling, with accessors for what rules ask of
Kubernetes objects (labels, pod template, containers, node selection). `inferplane.policies.stack`
indexes a list of them together with the environment's facts.

Everything here reads shapes only: type tokens, Kubernetes field names and the labels of
`inferplane.blueprint.naming`. Nothing depends on how the components build them, so hand-written
programs are checked the same way.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from inferplane.blueprint import naming

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
STATEFUL_SET = "kubernetes:apps/v1:StatefulSet"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
REPLICA_SET = "kubernetes:apps/v1:ReplicaSet"
POD = "kubernetes:core/v1:Pod"
JOB = "kubernetes:batch/v1:Job"
CRON_JOB = "kubernetes:batch/v1:CronJob"
SERVICE = "kubernetes:core/v1:Service"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
ROLLOUT = "kubernetes:argoproj.io/v1alpha1:Rollout"
PROMETHEUS_RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
HELM_CHART = "kubernetes:helm.sh/v4:Chart"
"""A chart rendered by Pulumi (its objects are resources of their own)."""
HELM_KINDS = (HELM_RELEASE, HELM_CHART)
INFERENCE_POOL = "kubernetes:inference.networking.k8s.io/v1:InferencePool"
PDB = "kubernetes:policy/v1:PodDisruptionBudget"
EKS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
KARPENTER_NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"

SERVING_KINDS = (DEPLOYMENT, STATEFUL_SET, REPLICA_SET, POD)
"""Long-running workloads: the ones that serve. Jobs build engines; DaemonSets are add-ons."""
WORKLOAD_KINDS = (*SERVING_KINDS, DAEMON_SET, JOB, CRON_JOB)
GPU_RESOURCE = "nvidia.com/gpu"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"


def is_gpu_resource(name: str) -> bool:
    return name == GPU_RESOURCE or name.startswith(MIG_RESOURCE_PREFIX)


def as_number(value: Any) -> float | None:
    """Numbers arrive as ints, floats (under mocks) or strings ("1"); None when not a number."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _dict(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> Sequence[Any]:
    return value if isinstance(value, list | tuple) else ()


@dataclass(frozen=True)
class ResourceRef:
    """Which resource a result is about."""

    urn: str
    name: str
    type: str


@dataclass(frozen=True)
class Container:
    name: str
    image: str
    args: tuple[str, ...]
    """`command` followed by `args`, as strings."""
    requests: Mapping[str, Any]
    limits: Mapping[str, Any]

    @property
    def gpu_requests(self) -> dict[str, tuple[Any, Any]]:
        """GPU resource -> (request, limit) for every GPU resource this container names."""
        names = [n for n in (*self.requests, *self.limits) if is_gpu_resource(n)]
        return {n: (self.requests.get(n), self.limits.get(n)) for n in dict.fromkeys(names)}

    def flag(self, name: str) -> list[str]:
        """Values of ``--name=value`` and ``--name value`` in the command line."""
        out: list[str] = []
        for i, arg in enumerate(self.args):
            if arg.startswith(name + "="):
                out.append(arg.split("=", 1)[1])
            elif arg == name and i + 1 < len(self.args):
                out.append(self.args[i + 1])
        return out


@dataclass(frozen=True)
class Resource:
    """One registered resource, as a rule sees it."""

    type: str
    name: str
    urn: str
    props: Mapping[str, Any]
    parent: str | None = None

    @property
    def ref(self) -> ResourceRef:
        return ResourceRef(self.urn, self.name, self.type)

    @property
    def metadata(self) -> Mapping[str, Any]:
        return _dict(self.props.get("metadata"))

    @property
    def labels(self) -> Mapping[str, str]:
        return _dict(self.metadata.get("labels"))

    @property
    def annotations(self) -> Mapping[str, str]:
        return _dict(self.metadata.get("annotations"))

    @property
    def spec(self) -> Mapping[str, Any]:
        return _dict(self.props.get("spec"))

    @property
    def k8s_name(self) -> str:
        return str(self.metadata.get("name") or self.name)

    @property
    def pod_template(self) -> Mapping[str, Any]:
        """The pod template (metadata + spec) of a workload; the pod itself for a Pod."""
        if self.type == POD:
            return {"metadata": self.metadata, "spec": self.spec}
        if self.type == CRON_JOB:
            return _dict(_dict(_dict(self.spec.get("jobTemplate")).get("spec")).get("template"))
        return _dict(self.spec.get("template"))

    @property
    def pod_spec(self) -> Mapping[str, Any]:
        return _dict(self.pod_template.get("spec"))

    @property
    def pod_labels(self) -> Mapping[str, str]:
        return _dict(_dict(self.pod_template.get("metadata")).get("labels"))

    @cached_property
    def containers(self) -> tuple[Container, ...]:
        """Main containers (init containers excluded: they hold no GPU while serving)."""
        return tuple(_container(c) for c in _list(self.pod_spec.get("containers")))

    @cached_property
    def init_containers(self) -> tuple[Container, ...]:
        return tuple(_container(c) for c in _list(self.pod_spec.get("initContainers")))

    @property
    def model(self) -> str | None:
        """The blueprint model this resource belongs to (`inferplane.dev/model`)."""
        return self.labels.get(naming.MODEL_LABEL) or self.pod_labels.get(naming.MODEL_LABEL)

    @property
    def requests_gpu(self) -> bool:
        return any(c.gpu_requests for c in self.containers)

    def node_selection(self, key: str) -> tuple[str, ...] | None:
        """Values a pod may take for node label `key` (nodeSelector or required node
        affinity); None when the pod is not constrained on it."""
        spec = self.pod_spec
        selector = _dict(spec.get("nodeSelector"))
        if key in selector:
            return (str(selector[key]),)
        affinity = _dict(_dict(spec.get("affinity")).get("nodeAffinity"))
        required = _dict(affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
        terms = _list(required.get("nodeSelectorTerms"))
        values: list[str] = []
        for term in terms:
            matched = False
            for expr in _list(_dict(term).get("matchExpressions")):
                expr = _dict(expr)
                if expr.get("key") == key and expr.get("operator") == "In":
                    values.extend(str(v) for v in _list(expr.get("values")))
                    matched = True
            if not matched:
                return None  # one term leaves the key free: the pod may land anywhere
        return tuple(dict.fromkeys(values)) if terms and values else None


def _tokens(arg: str) -> list[str]:
    """One argument, or the words of a shell script passed as one (``sh -c "..."``)."""
    if not any(ch.isspace() for ch in arg):
        return [arg]
    try:
        return shlex.split(arg, comments=True)
    except ValueError:
        return arg.split()


def _container(raw: Any) -> Container:
    raw = _dict(raw)
    resources = _dict(raw.get("resources"))
    args: list[str] = []
    for arg in (*_list(raw.get("command")), *_list(raw.get("args"))):
        args.extend(_tokens(str(arg)))
    return Container(
        name=str(raw.get("name") or ""),
        image=str(raw.get("image") or ""),
        args=tuple(args),
        requests=_dict(resources.get("requests")),
        limits=_dict(resources.get("limits")),
    )


@dataclass(frozen=True)
class ImageRef:
    """A container image reference split into repository, tag and digest."""

    repository: str
    tag: str | None
    digest: str | None

    @classmethod
    def parse(cls, image: str) -> ImageRef:
        rest, _, digest = image.partition("@")
        # A ':' after the last '/' is a tag; one before it belongs to a registry port.
        slash = rest.rfind("/")
        colon = rest.rfind(":")
        if colon > slash:
            return cls(rest[:colon], rest[colon + 1 :], digest or None)
        return cls(rest, None, digest or None)

    @property
    def ngc_release(self) -> str | None:
        """``25.08`` of an NGC tag such as ``25.08-py3``; None for other tags."""
        if not self.tag:
            return None
        head = self.tag.split("-", 1)[0]
        parts = head.split(".")
        if len(parts) == 2 and all(p.isdigit() for p in parts):
            return head
        return None


# Shared by several rules; rules import these, never each other.
TRT_PRECISION_FLAGS = ("--fp16", "--bf16", "--int8", "--fp8", "--int4", "--best")
"""Precision flags of TensorRT 10's `trtexec` (removed in TensorRT 11, strongly typed)."""


def is_triton(container: Container) -> bool:
    return "tritonserver" in container.image or any(
        a.endswith("tritonserver") for a in container.args[:1]
    )


def gpu_units(workload: Resource, resource_name: str | None) -> float:
    """GPU units one replica holds: the sum of its containers' GPU limits (of the pool's
    resource when known)."""
    total = 0.0
    for c in workload.containers:
        for name, (request, limit) in c.gpu_requests.items():
            if resource_name is None or name == resource_name:
                total += as_number(limit if limit is not None else request) or 0.0
    return total
