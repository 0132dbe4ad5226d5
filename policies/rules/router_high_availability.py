"""router-high-availability: each llm-d router keeps routing through a lost pod or a drain."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from inferplane.blueprint.errors import YamlPath
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.resources import INFERENCE_POOL, PDB, _dict, as_number
from inferplane.policies.routers import RouterRelease, router_releases
from inferplane.policies.stack import Stack


def _scaled(value: Any, total: int) -> int:
    """``intstr.GetScaledValueFromIntOrPercent(value, total, roundUp=true)``."""
    if isinstance(value, str) and value.endswith("%"):
        return math.ceil(int(value[:-1]) * total / 100)
    return int(as_number(value) or 0)


def picker_evictions(spec: Mapping[str, Any], replicas: int) -> tuple[bool, bool]:
    """Whether a drain may evict (the leading picker, a standby picker) of a router of
    `replicas` pickers guarded by the PodDisruptionBudget `spec`.

    Under leader election only the leader is Ready (llm-d-router v0.10.0
    ``config/charts/routerlib/templates/_deployment.yaml``: above one replica the readiness
    probe asks the ``readiness`` gRPC service, which only the leader serves), so of the
    budget's pods one is healthy. The rules are kubernetes'
    (``pkg/controller/disruption/disruption.go``, `getExpectedPodCount`,
    `countHealthyPods`, `updatePdbStatus`; ``pkg/registry/core/pod/storage/eviction.go``):

    - ``maxUnavailable`` (or a percentage ``minAvailable``): the expected count is the
      Deployment's scale and desiredHealthy = expected - maxUnavailable (at least 0);
      an integer ``minAvailable``: desiredHealthy = minAvailable, expected = the pods;
      neither: both 0;
    - disruptionsAllowed = currentHealthy - desiredHealthy, and 0 when the expected
      count is 0 or the difference is not positive;
    - a Ready pod is evicted only while disruptionsAllowed > 0; a Running pod that is
      not Ready always under ``unhealthyPodEvictionPolicy: AlwaysAllow``, and otherwise
      (``IfHealthyBudget``, the default) when currentHealthy >= desiredHealthy > 0, or
      when disruptionsAllowed > 0.
    """
    healthy = 1
    if spec.get("maxUnavailable") is not None:
        expected = replicas
        desired = max(0, expected - _scaled(spec["maxUnavailable"], expected))
    elif isinstance(spec.get("minAvailable"), str):
        expected = replicas
        desired = _scaled(spec["minAvailable"], expected)
    elif spec.get("minAvailable") is not None:
        expected, desired = replicas, int(as_number(spec["minAvailable"]) or 0)
    else:
        expected, desired = 0, 0
    allowed = healthy - desired if expected > 0 else 0
    leader = allowed > 0
    standby = (
        spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow"
        or healthy >= desired > 0
        or allowed > 0
    )
    return leader, standby


def _blocking_budgets(stack: Stack, router: RouterRelease, replicas: int) -> list[str]:
    """The PodDisruptionBudgets of the router's pickers that keep a drain from evicting
    one of them (`picker_evictions`)."""
    picker = {"llm-d-router-gateway": router.picker_name}
    found = []
    for pdb in stack.of_type(PDB):
        labels = _dict(_dict(pdb.spec.get("selector")).get("matchLabels"))
        if labels and dict(labels) == picker and not all(picker_evictions(pdb.spec, replicas)):
            found.append(pdb.k8s_name)
    return found


def _entry_point(router: RouterRelease, proxy: Mapping[str, Any]) -> str | None:
    """Why the zone's entry point is one Ready pod, or None. Only the chart's values say
    the proxy's layout; a router known from its rendered objects is not judged here."""
    if router.release.type == INFERENCE_POOL:
        return None
    # llm-d-router-standalone values.yaml: proxy.mode sidecar, proxy.replicas 2.
    mode = proxy.get("mode", "sidecar")
    replicas = int(as_number(proxy.get("replicas", 2)) or 0)
    if mode == "service" and replicas >= 2:
        return None
    why = (
        "its Envoy runs beside the pickers (proxy.mode: sidecar) and under leader election "
        "only the leading picker's pod is Ready, so the zone's load balancer has one target, "
        "and the pickers' Recreate strategy takes it away on every picker change"
        if mode != "service"
        else f"it runs {replicas} proxy"
    )
    return (
        f"the router {router.name} enters its zone through one Ready pod: {why}; set "
        "proxy.mode: service with proxy.replicas: 2 or more"
    )


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    wanted = int(as_number(config["min_picker_replicas"]) or 2)
    for router in router_releases(stack):
        model = router.model or router.name
        target = f"models.{model}"
        field: YamlPath = ("models", model, "routing", "mode")
        pickers_field: YamlPath = ("models", model, "routing", "pickers")
        ref = router.release.ref
        epp = _dict(router.values.get("epp"))
        # routerlib values.yaml: epp.replicas defaults to 1.
        replicas = int(as_number(epp.get("replicas", 1)) or 0)
        if replicas < wanted:
            yield Finding(
                target,
                pickers_field,
                f"the router {router.name} runs {replicas} endpoint picker(s), fewer than "
                f"{wanted}: when its pod goes, requests flow unscored until a new one starts",
                ref,
            )
        proxy = _dict(router.values.get("proxy"))
        entry = _entry_point(router, proxy)
        if entry is not None:
            yield Finding(target, field, entry, ref)
        pool = _dict(router.values.get("inferencePool"))
        if proxy.get("failOpen", True) is not True or pool.get("failureMode", "FailOpen") != (
            "FailOpen"
        ):
            yield Finding(
                target,
                field,
                f"the router {router.name} fails closed: while its endpoint picker is "
                "unreachable every request of the zone is refused; set proxy.failOpen: true "
                "and inferencePool.failureMode: FailOpen",
                ref,
            )
        for name in _blocking_budgets(stack, router, replicas):
            yield Finding(
                target,
                field,
                f"the PodDisruptionBudget {name} lets no drain evict a picker of the router "
                f"{router.name} ({router.picker_name}): under leader election only the "
                "leader is Ready and a budget counts Ready pods, so node drains, node group "
                "updates and autoscaler moves wait on it forever; remove it (leader "
                "election hands over to the standby)",
                ref,
            )


RULE = Rule(
    id="router-high-availability",
    title="Each llm-d router survives a lost picker and a node drain",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "An llm-aware model's requests pass through its zone's llm-d router: a proxy asks "
        "the endpoint picker which replica to use. With one picker, a crash, an eviction or "
        "a rollout leaves the zone without scoring until a new pod starts. Two pickers "
        "under leader election keep one ready to take over (llm-d-router v0.10.0 "
        "config/charts/routerlib/templates/_deployment.yaml adds --ha-enable-leader-election "
        "above one replica), but only the leader is Ready: a proxy run beside the pickers "
        "(the chart's proxy.mode: sidecar) makes the zone's load balancer a single target, "
        "so the proxies run as their own Deployment of several replicas (proxy.mode: "
        "service). Failing open (proxy.failOpen, Envoy's ext_proc failure_mode_allow) lets "
        "a request through while no picker answers, and reaches a replica only where the "
        "proxy has a route for a request without the picker's header: the chart's Envoy "
        "preset routes every request to an ORIGINAL_DST cluster keyed by that header and "
        "answers 503 without it; inferplane's proxy configuration adds a route to the "
        "model's Service. A disruption budget counts Ready pods (kubernetes "
        "pkg/controller/disruption/disruption.go), so a budget that keeps one picker "
        "(minAvailable: 1, or maxUnavailable below the replicas) allows no eviction of the "
        "leader and stalls every node drain."
    ),
    remediation=(
        "Keep models.<m>.routing.pickers at 2 (the default) or more, and inferplane's "
        "router values (proxy.mode: service with two proxies, proxy.failOpen: true, "
        "inferencePool.failureMode: FailOpen), with no PodDisruptionBudget on the pickers. "
        "Hand-written programs: router.epp.replicas >= 2 and router.proxy.mode: service "
        "with router.proxy.replicas >= 2 in the llm-d-router-standalone values, an Envoy "
        "configuration with a route for requests the picker did not answer, and no "
        "PodDisruptionBudget selecting llm-d-router-gateway: <release>-epp that refuses "
        "the leader's eviction."
    ),
    links=(
        "https://github.com/llm-d/llm-d-router/tree/v0.10.0/config/charts",
        "https://kubernetes.io/docs/tasks/run-application/configure-pdb/",
    ),
    config=(
        ConfigKey(
            "min_picker_replicas",
            2,
            {"type": "integer", "minimum": 1, "maximum": 5},
            "Endpoint pickers each router must run.",
        ),
    ),
    sources=(
        "Resources only: the llm-d-router-standalone chart's values (a Helm release or "
        "a chart Pulumi renders) "
        "(router.epp.replicas, router.proxy.mode, router.proxy.replicas, "
        "router.proxy.failOpen, router.inferencePool.failureMode) and "
        "the PodDisruptionBudgets of the pickers; offline the replicas come from "
        "models.<m>.routing.pickers."
    ),
    passing_example="""\
models:
  chat: {server: vllm, routing: {mode: llm_aware}}   # two pickers per zone
""",
    failing_example="""\
models:
  chat: {server: vllm, routing: {mode: llm_aware, pickers: 1}}
""",
)
