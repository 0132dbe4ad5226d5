"""router-high-availability: each llm-d router keeps routing through a lost pod or a drain."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.blueprint.errors import YamlPath
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.resources import PDB, _dict, as_number
from inferplane.policies.routers import RouterRelease, router_releases
from inferplane.policies.stack import Stack


def _pdb_guards(stack: Stack, router: RouterRelease) -> bool:
    """A PodDisruptionBudget keeps at least one of the router's picker pods."""
    picker = {"llm-d-router-gateway": router.picker_name}
    for pdb in stack.of_type(PDB):
        labels = _dict(_dict(pdb.spec.get("selector")).get("matchLabels"))
        keeps = as_number(pdb.spec.get("minAvailable"))
        if dict(labels) == picker and keeps is not None and keeps >= 1:
            return True
    return False


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
        if not _pdb_guards(stack, router):
            yield Finding(
                target,
                field,
                f"no PodDisruptionBudget keeps a picker of the router {router.name} "
                f"({router.picker_name}): a node drain may evict both at once",
                ref,
            )


RULE = Rule(
    id="router-high-availability",
    title="Each llm-d router survives a lost picker and a node drain",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "An llm-aware model's requests pass through its zone's llm-d router: the proxy asks "
        "the endpoint picker which replica to use. With one picker, a crash, an eviction or "
        "a rollout leaves the zone unscored (fail-open) or unserved (fail-closed) until a "
        "new pod starts. Two pickers under leader election keep one ready to take over "
        "(llm-d-router v0.10.0 config/charts/routerlib/templates/_deployment.yaml adds "
        "--ha-enable-leader-election above one replica), a disruption budget keeps a node "
        "drain from taking both, and failing open keeps requests flowing while no picker "
        "answers."
    ),
    remediation=(
        "Keep models.<m>.routing.pickers at 2 (the default) or more, and inferplane's "
        "router values (proxy.failOpen: true, "
        "inferencePool.failureMode: FailOpen) and its PodDisruptionBudget <release>-epp "
        "(minAvailable: 1). Hand-written programs: router.epp.replicas >= 2 in the "
        "llm-d-router-standalone values and a PodDisruptionBudget selecting "
        "llm-d-router-gateway: <release>-epp."
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
        "(router.epp.replicas, router.proxy.failOpen, router.inferencePool.failureMode) and "
        "the PodDisruptionBudgets; offline the replicas come from models.<m>.routing.pickers."
    ),
    passing_example="""\
models:
  chat: {server: vllm, routing: {mode: llm_aware}}   # two pickers per zone, with a PDB
""",
    failing_example="""\
models:
  chat: {server: vllm, routing: {mode: llm_aware, pickers: 1}}
""",
)
