"""Where one model's series live: the `Scope` that selects them, and `selector`.

The queries of `inferplane.components.serving.observability.promql` take a `Scope`, built from the
model's `ServedModel`. Where series come from, and which labels select one model's series:

- Triton (port ``metrics``): per-model series carry ``model="<model>"``; the model is
  loaded under its blueprint name. Latency counters are cumulative microseconds.
- vLLM (``/metrics`` on port ``http``): ``model_name="<served name>"``; the served name is
  the blueprint model name. Counters end in ``_total``; latencies are histograms in seconds.
- The DCGM exporter: its ServiceMonitor keeps the workload's ``namespace``/``pod`` labels
  (``honorLabels: true``), so GPU series are selected by the model's pod names.
- kube-state-metrics: ``deployment``/``horizontalpodautoscaler``/``pod`` labels name the
  object; ``namespace`` is the object's namespace.
- Every scraped series also gets the target labels ``namespace``, ``pod`` and ``service``.
"""

from __future__ import annotations

from dataclasses import dataclass

from inferplane.blueprint import naming
from inferplane.blueprint.model import Server
from inferplane.blueprint.triton_model import step_model_name
from inferplane.components.serving.spec import ServedModel, ServingEnvironment


def streams_tokens(model: ServedModel) -> bool:
    """A decoupled (streaming) TensorRT-LLM model: Triton exports its first-response
    histogram, which exists only for decoupled models."""
    return model.tensorrt_llm is not None and model.tensorrt_llm.streaming


TEMPLATE_HASH_POD_LABEL = "rollouts-pod-template-hash"
"""The label Argo Rollouts puts on every pod of a Rollout's ReplicaSets
(``DefaultRolloutUniqueLabelKey``, pkg/apis/rollouts/v1alpha1/types.go, v1.10.1)."""
TEMPLATE_HASH_LABEL = "rollouts_pod_template_hash"
"""Argo Rollouts' ``rollouts-pod-template-hash`` pod label as a series label: the Prometheus
Operator turns a ``podTargetLabels`` entry into a target label through ``sanitizeLabelName``
(prometheus-operator ``pkg/prometheus/promcfg.go``), which replaces each ``-`` with ``_``."""

REVISION_POD_LABEL = "inferplane.dev/revision"
"""On the pod template of every Deployment of a model with a rollout: the template's digest
with the zone's name taken out (`revision`), the same in every zone for one version."""
REVISION_LABEL = "inferplane_dev_revision"
"""`REVISION_POD_LABEL` as a series label: the ServiceMonitor's ``podTargetLabels`` copy it,
and the Prometheus Operator's ``sanitizeLabelName`` turns each ``.`` and ``/`` into ``_``
(prometheus-operator ``pkg/prometheus/promcfg.go``)."""


@dataclass(frozen=True)
class Scope:
    """What selects one model's series, and which series its server exposes."""

    namespace: str
    model: str
    """Blueprint model name: Triton's ``model`` label, vLLM's served ``model_name``."""
    server: Server
    deployment: str
    """The Deployment's name; its pods are ``<deployment>-<template hash>-<suffix>``."""
    response_cache: bool = False
    """Triton response cache on: no request-latency summary (see `promql`'s docstring)."""
    mig: bool = False
    """On a MIG slice DCGM has no GPU_UTIL; engine activity stands in for it."""
    trtllm: bool = False
    """Triton's TensorRT-LLM backend: it also exports the ``nv_trt_llm_*`` families."""
    streaming: bool = False
    """A decoupled TensorRT-LLM model: Triton exports its first-response histogram."""
    queued_in: str = ""
    """A pipeline: the regex of its steps' ``model`` labels, where its requests wait."""
    router_service: str | None = None
    """An llm-aware model: the Service of its endpoint pickers (``<model>-<zone>-epp``, a
    ``~``-regex over the zones for the whole model), the ``service`` label their scraped
    series carry. None: no router."""
    zone: str | None = None
    """One zone of a model that runs one Deployment per zone (`ServedModel.zoned`):
    `deployment` is that zone's, and the server's series are read from its pods only."""
    zones: tuple[str, ...] = ()
    """The whole of a model that runs one Deployment per zone: its Deployments are
    ``<deployment>-<zone>``."""
    rollout: bool = False
    """The model has a rollout: its pods are its Rollouts' ReplicaSets'
    (``<deployment>-<template hash>``) and its Deployments stay at zero."""
    template_hash: str | None = None
    """The server's series of one pod template only: their ``rollouts_pod_template_hash``
    label (the pods' ``rollouts-pod-template-hash``, copied by the ServiceMonitor's
    ``podTargetLabels`` of a model with a rollout). None: every pod's."""

    @classmethod
    def of(
        cls,
        env: ServingEnvironment,
        model: ServedModel,
        namespace: str,
        deployment: str | None = None,
        zone: str | None = None,
    ) -> Scope:
        """The model's scope; with `zone`, that zone's Deployment of a model that runs one
        per zone (`model` is then the zone's, `router.zone_model`, whose pool holds that
        zone alone: the zone passed, not `model.zoned`, says which Deployment it is)."""
        routed, zoned = model.routing.llm_aware, model.zoned
        if zone is not None:
            deployment = naming.zone_deployment(model.name, zone)
        if routed and zone is not None:
            router: str | None = naming.router_epp(model.name, zone)
        elif routed:
            epps = "|".join(naming.router_epp(model.name, z) for z in model.pool.zones)
            router = f"~{epps}" if len(model.pool.zones) > 1 else epps
        else:
            router = None
        return cls(
            namespace=namespace,
            model=model.name,
            server=model.server,
            deployment=deployment or model.name,
            response_cache=bool(model.response_cache and model.response_cache.enabled),
            mig=model.pool.mig,
            trtllm=model.tensorrt_llm is not None,
            streaming=streams_tokens(model),
            queued_in="|".join(step_model_name(model.name, s.name) for s in model.pipeline.steps)
            if model.pipeline is not None
            else "",
            router_service=router,
            zone=zone,
            zones=model.pool.zones if zoned and zone is None else (),
            rollout=model.rollout is not None,
        )

    @property
    def hpa(self) -> str:
        """The HPA KEDA creates for the model's ScaledObject; one zone's of an llm-aware
        model is named after the zone's Deployment, and the whole model's are a regex."""
        if self.zone is not None:
            return f"keda-hpa-{self.deployment}"
        if self.zones:
            return f"~keda-hpa-{self.deployment}-({'|'.join(self.zones)})"
        return f"keda-hpa-{self.model}"

    def _deployments(self) -> str:
        return f"{self.deployment}-({'|'.join(self.zones)})" if self.zones else self.deployment

    def server_selector(self, **extra: str) -> str:
        model_label = "model" if self.server == "triton" else "model_name"
        if self.template_hash is not None:
            extra = {**extra, TEMPLATE_HASH_LABEL: self.template_hash}
        if self.zone is not None and "pod" not in extra:
            # One zone's Deployment of a model that runs one per zone.
            extra = {**extra, "pod": f"~{self.deployment}-[a-z0-9]+-[a-z0-9]+"}
        return selector(namespace=self.namespace, **{model_label: self.model}, **extra)

    def router_selector(self) -> str:
        if self.router_service is None:
            raise ValueError(f"model {self.model!r} has no router (routing.mode: llm_aware)")
        return selector(namespace=self.namespace, service=self.router_service)

    def pods_selector(self) -> str:
        # Anchored by Prometheus: `chat-…` cannot match the pods of a model named `chat-large`.
        return selector(namespace=self.namespace, pod=f"~{self._deployments()}-[a-z0-9]+-[a-z0-9]+")

    def replicasets_selector(self) -> str:
        """The ReplicaSets of the model's Deployments and Rollouts (``<name>-<hash>``)."""
        return selector(namespace=self.namespace, replicaset=f"~{self._deployments()}-[a-z0-9]+")

    def deployment_selector(self) -> str:
        if self.zones:
            return selector(namespace=self.namespace, deployment=f"~{self._deployments()}")
        return selector(namespace=self.namespace, deployment=self.deployment)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def selector(**labels: str) -> str:
    """``{a="x", b=~"y"}``: a value starting with ``~`` matches a regex, ``!~`` excludes one."""
    parts = []
    for name, value in labels.items():
        if value.startswith("!~"):
            op, val = "!~", value[2:]
        elif value.startswith("~"):
            op, val = "=~", value[1:]
        else:
            op, val = "=", value
        parts.append(f'{name}{op}"{_escape(val)}"')
    return "{" + ", ".join(parts) + "}"
