"""The system nodes of a cluster inferplane creates, and what the blueprint places on them.

System nodes run the add-ons (operators, Prometheus, Grafana), the Valkey servers of Redis
response caches and the llm-aware models' routers (pickers and Envoys, sized from the llm-d
router's sizing guide by `routing_sizes`), never model servers. Their machine types live
here, not in the cluster components, because validation checks what fits on them: the
components import them (`inferplane.components.cluster_eks`,
`inferplane.components.cluster_gke`), and the Valkey memory formula (`valkey_memory_mib`) is
the one the response-cache component sets as the container's request and limit
(`inferplane.components.serving.triton.response_cache`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from inferplane.blueprint.model_cluster import zone_share

if TYPE_CHECKING:
    from inferplane.blueprint.model import Environment, Model

EKS_INSTANCE_TYPE: Final = "m6i.xlarge"
"""4 vCPU, 16 GiB (https://aws.amazon.com/ec2/instance-types/m6i/)."""
GKE_MACHINE_TYPE: Final = "e2-standard-4"
"""4 vCPU, 16 GB (https://cloud.google.com/compute/docs/general-purpose-machines#e2_machine_types)."""

NODE_MEMORY_MIB: Final = 16 * 1024
"""Both system machine types have 16 GiB."""
EVICTION_HARD_MIB: Final = 100
"""``evictionHard: memory.available<100Mi`` on both clouds (amazon-eks-ami ``nodeadm``
``internal/kubelet/config.go``; GKE "an eviction threshold of 100 MiB",
https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes#memory_and_cpu_reservations)."""
EKS_MAX_PODS: Final = 58
"""m6i.xlarge with the VPC CNI: 4 ENIs x (15 - 1) addresses + 2 (amazon-eks-ami
``templates/shared/runtime/eni-max-pods.txt``)."""
EKS_KUBE_RESERVED_MIB: Final = 11 * EKS_MAX_PODS + 255
"""The EKS AL2023 AMI reserves ``11 * maxPods + 255`` MiB for the kubelet (amazon-eks-ami
``nodeadm/internal/kubelet/config.go`` `getMemoryMebibytesToReserve`): 893 MiB."""
GKE_RESERVED_MIB: Final = int(0.25 * 4096 + 0.20 * 4096 + 0.10 * 8192)
"""GKE reserves 25% of the first 4 GiB, 20% of the next 4 GiB and 10% of the next 8 GiB
(the memory reservation table of "Memory and CPU reservations",
https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes#memory_and_cpu_reservations):
2662 MiB of 16 GiB."""

ALLOCATABLE_MIB: Final = {
    "aws": NODE_MEMORY_MIB - EKS_KUBE_RESERVED_MIB - EVICTION_HARD_MIB,
    "gcp": NODE_MEMORY_MIB - GKE_RESERVED_MIB - EVICTION_HARD_MIB,
}
"""At most what pods may request on one system node, by cloud (15391 MiB on EKS, 13622
MiB on GKE). An upper bound: the node's kernel keeps some of the nominal memory, and the
DaemonSets (CNI, kube-proxy, CSI) request some of the rest."""
SYSTEM_DESCRIPTION: Final = {
    "aws": f"{EKS_INSTANCE_TYPE} EKS system node",
    "gcp": f"{GKE_MACHINE_TYPE} GKE system node",
}

CACHE_SHARE_OF_NODE: Final = 0.5
"""The Redis caches of one zone may request at most half of one system node: the add-ons
(Prometheus, Grafana, KEDA, the GPU Operator, CoreDNS) and the DaemonSets need the rest, and
a zone may have a single system node (both clouds run one per zone at least: GKE's system
pool per zone, EKS's system group `cluster_eks.system_nodes_count`)."""

VALKEY_OVERHEAD_FACTOR: Final = 1.5
VALKEY_BASE_MIB: Final = 64
"""The server itself, client buffers and the allocator's metadata (the reasoning is in
`inferplane.components.serving.triton.response_cache`)."""


def valkey_memory_mib(size_mb: int) -> int:
    """The memory request and limit of the Valkey container of a cache of `size_mb`."""
    return int(size_mb * VALKEY_OVERHEAD_FACTOR) + VALKEY_BASE_MIB


NODE_CPU_MILLIS: Final = 4000
"""Both system machine types have 4 vCPUs."""
KUBE_RESERVED_CPU_MILLIS: Final = 60 + 10 + 5 + 5
"""Both clouds reserve 6% of the first core, 1% of the second and 0.5% of the third and
fourth (0.25% of each above): the AL2023 system nodes' nodeadm (amazon-eks-ami
``nodeadm/internal/kubelet/config.go`` `getCPUMillicoresToReserve`, ranges 0/1000/2000/4000m
at 600/100/50/25 per mille, taken from GKE) and GKE's CPU reservation table
(https://cloud.google.com/kubernetes-engine/docs/concepts/plan-node-sizes#memory_and_cpu_reservations):
80m of 4 vCPUs, so 3920m allocatable."""
ALLOCATABLE_CPU_MILLIS: Final = NODE_CPU_MILLIS - KUBE_RESERVED_CPU_MILLIS
DAEMONSET_RESERVE_CPU_MILLIS: Final = 400
DAEMONSET_RESERVE_MIB: Final = 1024
"""Room kept on each system node for the node DaemonSets (CNI, kube-proxy, CSI node
plugin, node exporter) before the routing pods are packed: a sizing choice, not a
measurement."""


@dataclass(frozen=True)
class SystemPod:
    """A pod on the system nodes, by its requests."""

    name: str
    cpu_millis: int
    memory_mib: int

    def requests(self) -> dict[str, str]:
        """Its container's requests as Kubernetes quantities (``1``, ``500m``, ``2Gi``)."""
        cpu = f"{self.cpu_millis // 1000}" if self.cpu_millis % 1000 == 0 else f"{self.cpu_millis}m"
        return {"cpu": cpu, "memory": memory_quantity(self.memory_mib)}


def memory_quantity(mib: int) -> str:
    """`mib` as a Kubernetes quantity: ``2Gi``, ``1536Mi``."""
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


PICKER: Final = SystemPod("endpoint picker", 1000, 2048)
"""The least one endpoint picker of an llm-aware model's zone requests, and all it requests
where the model states no ``traffic`` with ``input_tokens``: the guide sizes the picker by
request rate and prompt size, which are then unknown, and the chart's own 8 CPUs and 8 GiB
(``routerlib/values.yaml``) do not fit a 4-vCPU system node (`routing_sizes`)."""
PROXY: Final = SystemPod("router proxy", 500, 512)
"""The least one Envoy in front of a zone's pickers requests, and all it requests without
``traffic`` with ``input_tokens`` (`routing_sizes`)."""
PROXY_REPLICAS: Final = 2
"""Envoys per zone of an llm-aware model (the chart's own ``router.proxy.replicas``)."""

# The llm-d router's sizing guide, "llm-d Router Container Sizing Guide" (llm-d-router
# ``docs/operations.md``, shipped with the pinned release v0.10.0; its figures were measured
# on the 0.9.0 EPP image, 100 simulated Qwen3-8B pods).
PICKER_IDLE_MILLIS_PER_POD: Final = 75
"""Picker CPU per serving pod of its zone, busy or not: "in a cluster with 100 model-serving
pods, the idle CPU usage of the EPP container grows to approximately 7.5 cores" (metric
scraping), 7.5 cores / 100 pods. The guide's own 5 req/s rows peak at 1.19 and 3.82 cores
with those 100 pods, below it: an upper figure, kept."""
PICKER_MILLIS_PER_MTOK: Final = 4710
"""Picker CPU per million prompt tokens/s of its zone. The guide's busy CPU "scales linearly
with the request rate, and increases with both the input prompt size" and the prefix limit:
the prefix producer hashes each prompt's tokens (v0.10.0 ``approximateprefix/plugin.go``,
after a token producer tokenized it), so the cost is taken as linear in prompt tokens/s
(req/s x input tokens). The release's default prefix limit is 131,072 tokens (v0.10.0
``approximateprefix/types.go``, ``defaultMaxPrefixTokens``), at least the guide's "Large
Prefix Match" (100,000), whose busy row reads 46.50 cores at 98.8 req/s of 100k-token
prompts: 46.50 / 9.88 million tokens/s = 4.706 cores per million, rounded up. Through the
origin it covers the row's 5 req/s peak too (2.35 cores beside the idle term) and the
smaller limit's rows (35.17 cores at 98.7 req/s, 1.19 at 5)."""
PICKER_MIB_PER_KTOK: Final = 154
"""Picker memory per thousand output tokens/s of its zone: memory grows with the requests
in flight, so with req/s x output tokens. Of the guide's figures per thousand output
tokens/s the largest: its output-length row of 100k-token prompts, 500 output tokens and a
32,768-token prefix limit peaks at 3.76 GiB at 50 req/s, 3,850 MiB / 25 thousand output
tokens/s = 154 MiB (the text's "4 GiB and 6 GiB" at 50 to 100 req/s with 1k output tokens
gives at most 123). The guide's 5k- and 10k-output rows (12.54 GiB at 250 and 500 thousand
output tokens/s) lie far below the line. Output length adds picker CPU too, which the
picker's CPU here does not count: the guide's 5k- and 10k-output rows at 50 req/s (30.95
and 32.53 cores) exceed the prompt term (23.55) below about 120 serving pods per zone."""
PROXY_MILLIS_PER_MTOK: Final = 985
"""Envoy CPU per million prompt tokens/s: "Envoy's CPU usage scales linearly with the total
throughput (requests/second)" and with the payload; of the guide's busy rows, 7.27 cores at
100 req/s x 100k tokens (0.727 per million tokens/s) and 8.78 cores at 892 req/s x 10k
tokens (0.984), the larger, rounded up."""
PROXY_MILLIS_PER_RPS: Final = 10
"""Envoy CPU per request/s, whatever the prompt: 8.78 cores at 892 req/s = 9.8 millicores,
rounded up. An Envoy is sized by the larger of the two: short prompts at a high rate cost
per request (892 req/s of 500-token prompts still need the row's 8.78 cores, where the token
term alone gives 0.44), long ones per token. The guide's 10 req/s row (1.20 cores at 1
million tokens/s) sits above both: a fixed cost at low load that neither the floor
(`PROXY`) nor the lines hold; Envoy has no CPU limit and takes it from the node's slack."""
PROXY_SIZED_MIB: Final = 2048
"""Envoy memory once traffic is stated: "Allocate at least 2 GiB of memory (peak memory
usage is stable between 1.3 and 1.4 GiB across all tested throughputs and context
lengths)"."""


@dataclass(frozen=True)
class RoutingSizes:
    """What each picker and each Envoy of one llm-aware model requests in each zone, and the
    guide's figures it comes from (`routing_sizes`)."""

    picker: SystemPod
    proxy: SystemPod
    picker_need: SystemPod
    """The picker as the guide sizes it (never below `PICKER`), before a system node's cap."""
    proxy_need: SystemPod
    pods: int
    """Serving pods of one zone (the replicas' maximum split over the pool's zones)."""
    rps: float | None = None
    """Requests/s per zone (``traffic.peak_rps`` split evenly); None without traffic."""
    prompt_tokens_s: float | None = None
    """Prompt tokens/s per zone (rps x ``traffic.input_tokens``); None without them."""
    output_tokens_s: float | None = None

    @property
    def capped(self) -> bool:
        """A container is requested below the guide's size: no system node holds that."""
        return self.picker != self.picker_need or self.proxy != self.proxy_need


def _ceil_to(value: float, step: int) -> int:
    return int(-(-value // step) * step)


def routing_sizes(env: Environment, model: Model) -> RoutingSizes:
    """Each picker's and Envoy's requests for `model` (llm-aware) in each zone of its pool.

    The zone's whole load reaches every container: only the leading picker serves
    (active-passive; "scaling the replica count does not increase the overall EPP
    throughput capacity", the guide's "Scaling Modes"), any picker may lead, and one Envoy
    carries the zone while the other is replaced. The load of a zone is the model's peak
    split evenly over its pool's zones (each zone's Deployment holds an equal share of the
    replicas and takes its own callers). Picker CPU: `PICKER_IDLE_MILLIS_PER_POD` per
    serving pod plus `PICKER_MILLIS_PER_MTOK` per million prompt tokens/s; picker memory:
    `PICKER_MIB_PER_KTOK` per thousand output tokens/s; Envoy CPU `PROXY_MILLIS_PER_MTOK`,
    memory `PROXY_SIZED_MIB`; never below `PICKER` and `PROXY`. Without ``input_tokens``
    (or ``output_tokens``) the load is unknown and the floor stands. A cluster inferplane
    creates holds each request within one system node beside its DaemonSets: a larger one
    would stay Pending, so it is cut to that (`capped`; the ``router-sizing`` rule reports
    it)."""
    zones = max(1, len(env.pool_of(model).zones))
    pods = zone_share(model.replicas.max, zones)
    traffic = model.traffic
    rps = prompt = output = None
    if traffic is not None:
        rps = traffic.peak_rps / zones
        prompt = rps * traffic.input_tokens if traffic.input_tokens else None
        output = rps * traffic.output_tokens if traffic.output_tokens else None
    picker_cpu = PICKER_IDLE_MILLIS_PER_POD * pods + PICKER_MILLIS_PER_MTOK * (prompt or 0) / 1e6
    picker_mib = PICKER_MIB_PER_KTOK * (output or 0) / 1e3
    proxy_cpu = max(PROXY_MILLIS_PER_MTOK * (prompt or 0) / 1e6, PROXY_MILLIS_PER_RPS * (rps or 0))
    picker_need = SystemPod(
        PICKER.name,
        max(PICKER.cpu_millis, _ceil_to(picker_cpu, 100)),
        max(PICKER.memory_mib, _ceil_to(picker_mib, 256)),
    )
    proxy_need = SystemPod(
        PROXY.name,
        max(PROXY.cpu_millis, _ceil_to(proxy_cpu, 100)),
        PROXY_SIZED_MIB if prompt is not None else PROXY.memory_mib,
    )
    picker, proxy = picker_need, proxy_need
    if env.cluster.create and env.cloud in ALLOCATABLE_MIB:
        cpu, memory = node_room(env.cloud)
        picker = SystemPod(picker.name, min(picker.cpu_millis, cpu), min(picker.memory_mib, memory))
        proxy = SystemPod(proxy.name, min(proxy.cpu_millis, cpu), min(proxy.memory_mib, memory))
    return RoutingSizes(picker, proxy, picker_need, proxy_need, pods, rps, prompt, output)


def node_room(cloud: str) -> tuple[int, int]:
    """Millicores and MiB one system node of `cloud` holds beside its DaemonSets."""
    return (
        ALLOCATABLE_CPU_MILLIS - DAEMONSET_RESERVE_CPU_MILLIS,
        ALLOCATABLE_MIB[cloud] - DAEMONSET_RESERVE_MIB,
    )


def routing_pods(env: Environment) -> dict[str, list[SystemPod]]:
    """Per zone, the pickers and proxies the llm-aware models of `env` run there, as
    `routing_sizes` sizes them: each such model routes in every zone of its pool
    (`inferplane.components.serving.routing.router`)."""
    pods: dict[str, list[SystemPod]] = {}
    for model in env.models.values():
        if not model.routing.llm_aware:
            continue
        sizes = routing_sizes(env, model)
        for zone in env.pool_of(model).zones:
            pods.setdefault(zone, []).extend(
                [sizes.picker] * model.routing.pickers + [sizes.proxy] * PROXY_REPLICAS
            )
    return pods


def nodes_for(pods: list[SystemPod], cloud: str) -> int:
    """How many system nodes hold `pods` beside the DaemonSets: first fit, largest first, by
    CPU and memory together (the scheduler places each pod on one node, so the sum of the
    requests is not enough)."""
    cpu, memory = node_room(cloud)
    free: list[list[int]] = []
    for pod in sorted(pods, key=lambda p: (p.cpu_millis, p.memory_mib), reverse=True):
        for node in free:
            if node[0] >= pod.cpu_millis and node[1] >= pod.memory_mib:
                node[0] -= pod.cpu_millis
                node[1] -= pod.memory_mib
                break
        else:
            free.append([cpu - pod.cpu_millis, memory - pod.memory_mib])
    return len(free)


EKS_SYSTEM_NODES_MIN: Final = 2
"""The EKS system node group keeps at least two nodes, whatever the zones
(`inferplane.components.cluster_eks.system_nodes_count`)."""


def system_nodes(env: Environment) -> int:
    """System nodes a created cluster keeps at its minimum: `nodes_per_zone` in each zone
    (GKE's system pool per node location; EKS's system group, at least
    `EKS_SYSTEM_NODES_MIN`)."""
    total = nodes_per_zone(env) * max(1, len(env.zones))
    return max(EKS_SYSTEM_NODES_MIN, total) if env.cloud == "aws" else total


def nodes_per_zone(env: Environment) -> int:
    """System nodes each zone of a created cluster starts with: one for the add-ons and the
    Redis caches (`CACHE_SHARE_OF_NODE`), plus the nodes that hold the zone's routing pods
    (the busiest zone decides: both clouds keep the same count in every zone)."""
    if env.cloud not in ALLOCATABLE_MIB:
        return 1
    zones = routing_pods(env)
    return 1 + max((nodes_for(pods, env.cloud) for pods in zones.values()), default=0)


__all__ = [
    "ALLOCATABLE_CPU_MILLIS",
    "ALLOCATABLE_MIB",
    "CACHE_SHARE_OF_NODE",
    "EKS_INSTANCE_TYPE",
    "EKS_SYSTEM_NODES_MIN",
    "GKE_MACHINE_TYPE",
    "PICKER",
    "PICKER_IDLE_MILLIS_PER_POD",
    "PICKER_MIB_PER_KTOK",
    "PICKER_MILLIS_PER_MTOK",
    "PROXY",
    "PROXY_MILLIS_PER_MTOK",
    "PROXY_REPLICAS",
    "PROXY_SIZED_MIB",
    "SYSTEM_DESCRIPTION",
    "VALKEY_BASE_MIB",
    "VALKEY_OVERHEAD_FACTOR",
    "RoutingSizes",
    "SystemPod",
    "memory_quantity",
    "node_room",
    "nodes_for",
    "nodes_per_zone",
    "routing_pods",
    "routing_sizes",
    "system_nodes",
    "valkey_memory_mib",
]
