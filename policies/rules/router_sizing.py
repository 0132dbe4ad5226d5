"""router-sizing: each llm-d router's picker and Envoy fit a system node at the model's peak."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.blueprint import system_nodes
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.model import Environment, Model
from inferplane.blueprint.system_nodes import RoutingSizes, SystemPod
from inferplane.policies.framework import Finding, Rule, RuleConfig
from inferplane.policies.stack import Stack


def _cores(millis: int) -> str:
    return f"{millis / 1000:g} CPU"


def _gib(mib: int) -> str:
    return f"{mib / 1024:.1f} GiB"


def _short(need: SystemPod, got: SystemPod) -> str | None:
    """What of `need` the request `got` leaves out, or None when it is all there."""
    parts = []
    if got.cpu_millis < need.cpu_millis:
        parts.append(_cores(need.cpu_millis))
    if got.memory_mib < need.memory_mib:
        parts.append(_gib(need.memory_mib))
    return " and ".join(parts) or None


def _load(sizes: RoutingSizes) -> str:
    """The zone's load the guide sized from."""
    scraped = f"{sizes.pods} serving pods to scrape"
    if sizes.rps is None or sizes.prompt_tokens_s is None:
        return scraped
    tokens = round(sizes.prompt_tokens_s / sizes.rps)
    return (
        f"{sizes.rps:g} requests/s x {tokens:,} prompt tokens = "
        f"{sizes.prompt_tokens_s:,.0f} prompt tokens/s"
        + (f", {sizes.output_tokens_s:,.0f} output tokens/s" if sizes.output_tokens_s else "")
        + f", {scraped}"
    )


def _field(env: Environment, model: Model, sizes: RoutingSizes) -> YamlPath:
    """The traffic, unless the serving pods alone take the picker past a node (or no
    traffic is stated): then ``replicas.max``."""
    cpu, _ = system_nodes.node_room(env.cloud)
    scraping = system_nodes.PICKER_IDLE_MILLIS_PER_POD * sizes.pods
    if model.traffic is None or scraping > cpu:
        return ("models", model.name, "replicas", "max")
    return ("models", model.name, "traffic")


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    env = stack.env
    if env is None or not env.cluster.create or env.cloud not in system_nodes.ALLOCATABLE_MIB:
        return  # online, or an attached cluster: its nodes are not inferplane's to size
    node = system_nodes.SYSTEM_DESCRIPTION[env.cloud]
    for name, model in env.models.items():
        if not model.routing.llm_aware:
            continue
        sizes = system_nodes.routing_sizes(env, model)
        if not sizes.capped:
            continue
        short = [
            f"its {pods} need {need} each (requested at {_cores(got.cpu_millis)} and "
            f"{_gib(got.memory_mib)})"
            for pods, got, need in (
                ("endpoint pickers", sizes.picker, _short(sizes.picker_need, sizes.picker)),
                ("Envoy proxies", sizes.proxy, _short(sizes.proxy_need, sizes.proxy)),
            )
            if need is not None
        ]
        cpu, memory = system_nodes.node_room(env.cloud)
        view = stack.models.get(name)
        ref = view.workloads[0].ref if view and view.workloads else None
        yield Finding(
            f"models.{name}",
            _field(env, model, sizes),
            f"by the llm-d router's sizing guide, {name}'s router in each zone is too large: "
            f"{' and '.join(short)} for the zone's {_load(sizes)}; more than the {_cores(cpu)} and "
            f"{_gib(memory)} one {node} holds beside its DaemonSets, so it falls behind at "
            "peak; spread the model over more zones (each zone's router takes its share), "
            "send fewer or shorter prompts, or lower replicas.max per zone. More pickers add "
            "no capacity: only the leader serves, and active-active pickers are not "
            "supported (they split the prefix state)",
            ref,
        )


RULE = Rule(
    id="router-sizing",
    title="Each llm-d router's picker and Envoy fit one system node at the model's peak",
    level="advisory",
    scope="stack",
    check=check,
    rationale=(
        "An llm-aware model's endpoint pickers and Envoys run on the system nodes of its "
        "zones, and inferplane sizes them from the llm-d router's sizing guide "
        "(docs/operations.md of llm-d-router v0.10.0, measured on the 0.9.0 picker image): "
        "the picker's CPU grows with the serving pods whose metrics it scrapes (7.5 cores "
        "at 100 pods) and with the prompt tokens per second it hashes for prefix scoring "
        "(46.50 cores at 98.8 requests/s of 100,000-token prompts), its memory with the "
        "requests in flight, and Envoy's CPU with the throughput. Only the leading picker "
        "serves (active-passive), so more pickers add no capacity. A request larger than "
        "one system node (4 vCPUs, 16 GiB) would never schedule on a cluster inferplane "
        "creates, so it is cut to what a node holds beside its DaemonSets, and the router "
        "falls behind at peak: requests wait for a routing decision, or, with flow "
        "control, queue."
    ),
    remediation=(
        "Lower each zone's share: spread the model's pool over more zones (the peak splits "
        "evenly), shorten the prompts, or lower replicas.max per zone; or deploy into an "
        "attached cluster whose non-GPU nodes are larger. models.<m>.traffic states the "
        "peak the sizes come from."
    ),
    links=("https://github.com/llm-d/llm-d-router/blob/v0.10.0/docs/operations.md",),
    offline_only=True,
    sources=(
        "The blueprint (routing.mode, traffic, replicas.max, the pool's zones, the cluster's "
        "cloud) through inferplane/blueprint/system_nodes.py routing_sizes. Offline only: "
        "online, CrossGuard has no blueprint traffic, and a hand-written program sizes its "
        "own routers."
    ),
    passing_example="""\
models:
  chat:
    routing: {mode: llm_aware}
    traffic: {peak_rps: 20, input_tokens: 2000, output_tokens: 200}
""",
    failing_example="""\
gpu_pools:
  l4: {nodes: {min: 3, max: 60}}
models:
  chat:
    routing: {mode: llm_aware}
    replicas: {min: 2, max: 100}   # 50 serving pods per zone: 3.75 CPU of scraping alone
""",
)
