"""`python e2e/rehearse_karpenter.py [--keep]`: the real Karpenter launches a node for the
NodePool inferplane generates, and stops at the pool's limit.

Karpenter core (``sigs.k8s.io/karpenter``, the pin in e2e/tools.toml) with its KWOK cloud
provider (the module's ``kwok`` main package), run out of cluster against the local control
plane (e2e/cluster.py), in a network namespace of its own (e2e/netns.py):

1. e2e/karpenter-blueprint.yaml (one ``nvidia-l4`` pool, at most 2 nodes in
   ``us-east-1a``, on an attached EKS cluster whose Karpenter launches the GPU nodes) is
   planned offline, as `inferplane plan` plans it; the rehearsal takes its NodePool and its
   model's serving pod (the Deployment's pod template) from that plan;
2. Karpenter's CRDs (the module's ``pkg/apis/crds`` and ``kwok/apis/crds``) are installed;
   Karpenter starts with an instance-types file (`instance_types`) that describes the
   pool's own instance type to its KWOK provider, with the GPUs the NodePool counts;
3. the NodePool is created as planned but for one field: ``nodeClassRef`` names a
   ``KWOKNodeClass`` (the one node class the KWOK provider serves) of the same name instead
   of the ``EC2NodeClass`` only the AWS provider reads (`kwok_node_pool`);
4. one serving pod (the plan's nodeSelector, tolerations, zone affinity and GPU, CPU and
   memory requests; a stand-in image, as KWOK runs no containers) is created; the scheduler
   marks it unschedulable, Karpenter must launch a NodeClaim whose Node carries the pool's
   labels, taint, zone, instance type, capacity type and GPUs, and the pod must be bound to
   it within `LAUNCH_WAIT` seconds. The report has the seconds from the pod's creation to
   each mark (unschedulable, NodeClaim, Node, Node Ready, NodeClaim Initialized, pod bound);
5. pods are added until they ask for one more node than the NodePool's GPU limit allows:
   Karpenter must launch exactly the nodes the limit holds, and the last pod must still be
   pending `LIMIT_HOLD` seconds after the others are bound.

Prints one JSON report. Exit 0 when every step passed, 1 otherwise, 2 when it cannot run
here (a tool not built, or no network namespace; `not_run` says why). Every wait is bounded;
every process is stopped by PID. `--keep` leaves the state folder.
"""

from __future__ import annotations

import copy
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import addons  # noqa: E402
import cluster  # noqa: E402
from kube import Kube  # noqa: E402
from rehearse_smoke import run, stepper, wait  # noqa: E402
from tools import KARPENTER_TOOLS, TOOLS  # noqa: E402

BLUEPRINT = HERE / "karpenter-blueprint.yaml"
ENVIRONMENT = "prod"
NODE_POOL_TYPE = "kubernetes:karpenter.sh/v1:NodePool"
KWOK_GROUP = "karpenter.kwok.sh"
KWOK_NODE_CLASS = "KWOKNodeClass"
"""The node class the KWOK provider resolves a NodeClaim's ``nodeClassRef`` to
(sigs.k8s.io/karpenter v1.14.1 ``kwok/cloudprovider/cloudprovider.go``,
``resolveNodeClassFromNodeClaim`` and ``GetSupportedNodeClasses``)."""
GPU = "nvidia.com/gpu"
NAMESPACE = "karpenter-gpu"
LAUNCH_WAIT = 120.0
LIMIT_HOLD = 30.0
NODEPOOLS = "/apis/karpenter.sh/v1/nodepools"
NODECLAIMS = "/apis/karpenter.sh/v1/nodeclaims"
NODECLASSES = f"/apis/{KWOK_GROUP}/v1alpha1/kwoknodeclasses"


def not_built() -> list[str]:
    needed = [TOOLS[n] for n in ("kubernetes", "etcd", "kwok")]
    needed += [KARPENTER_TOOLS["karpenter-kwok"]]
    return [tool.name for tool in (make() for make in needed) if not tool.built()]


def planned(blueprint: Path = BLUEPRINT, environment: str = ENVIRONMENT) -> dict[str, Any]:
    """From the offline plan of `blueprint`'s `environment`: ``node_pool`` (the first
    NodePool as planned), ``pod`` (the first GPU Deployment's pod template spec) and the
    pool's ``instance_type``, ``gpus_per_node``, ``vcpus`` and ``memory_gib``."""
    from inferplane.app.offline import run_program
    from inferplane.blueprint.resolution.resolve import resolve_file
    from inferplane.components.serving.containers import NODE_SIZES

    env = resolve_file(blueprint, environment)
    rec = run_program(env)
    pools = rec.of_type(NODE_POOL_TYPE)
    if not pools:
        raise ValueError(f"{blueprint.name} ({environment}) plans no Karpenter NodePool")
    node_pool = {k: copy.deepcopy(pools[0].inputs[k]) for k in ("apiVersion", "kind", "metadata")}
    node_pool["spec"] = copy.deepcopy(pools[0].inputs["spec"])
    pod = None
    for dep in rec.of_type("kubernetes:apps/v1:Deployment"):
        spec = dep.inputs["spec"]["template"]["spec"]
        if any(GPU in (c.get("resources") or {}).get("requests", {}) for c in spec["containers"]):
            pod = copy.deepcopy(spec)
            break
    if pod is None:
        raise ValueError(
            f"{blueprint.name} ({environment}) plans no Deployment that asks for a GPU"
        )
    pool = next(iter(env.pools.values()))
    size = NODE_SIZES[pool.instance_type]
    return {
        "node_pool": node_pool,
        "pod": pod,
        "instance_type": pool.instance_type,
        "gpus_per_node": pool.gpus_per_node,
        "vcpus": size.vcpus,
        "memory_gib": size.memory_gib,
    }


def requirement_values(node_pool: dict[str, Any], key: str) -> list[str]:
    for req in node_pool["spec"]["template"]["spec"]["requirements"]:
        if req["key"] == key:
            return list(req["values"])
    return []


def instance_types(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """The KWOK provider's instance-types file (``--instance-types-file-path``, read by
    ``ConstructInstanceTypes`` in ``kwok/cloudprovider/helpers.go`` in place of its embedded
    ``instance_types.json``, whose types offer CPU, memory and pods only): the pool's own
    instance type, with the vCPUs and memory inferplane sizes pods by and the GPUs the
    NodePool's limit counts, offered in each zone and capacity type the NodePool requires."""
    pool = plan["node_pool"]
    for key in ("topology.kubernetes.io/zone", "karpenter.sh/capacity-type"):
        if not requirement_values(pool, key):
            # Without it the file would offer the type nowhere and nothing could launch.
            raise ValueError(f"the planned NodePool requires no {key}: no offering to write")
    offerings = [
        {
            "Price": 1.0,
            "Available": True,
            "Requirements": [
                {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [capacity]},
                {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]},
            ],
        }
        for zone in requirement_values(pool, "topology.kubernetes.io/zone")
        for capacity in requirement_values(pool, "karpenter.sh/capacity-type")
    ]
    return [
        {
            "name": plan["instance_type"],
            "offerings": offerings,
            "architecture": "amd64",
            "operatingSystems": ["linux"],
            "resources": {
                "cpu": str(plan["vcpus"]),
                "memory": f"{plan['memory_gib']}Gi",
                GPU: str(plan["gpus_per_node"]),
            },
        }
    ]


def kwok_node_pool(node_pool: dict[str, Any]) -> dict[str, Any]:
    """The planned NodePool with ``nodeClassRef`` pointed at a KWOKNodeClass of the same
    name; requirements, taints, labels, limits and disruption stay as planned."""
    out = copy.deepcopy(node_pool)
    ref = out["spec"]["template"]["spec"]["nodeClassRef"]
    out["spec"]["template"]["spec"]["nodeClassRef"] = {
        "group": KWOK_GROUP,
        "kind": KWOK_NODE_CLASS,
        "name": ref["name"],
    }
    return out


def serving_pod(plan: dict[str, Any], name: str) -> dict[str, Any]:
    """A pod with the serving pod's placement and requests: what Karpenter reads."""
    spec = plan["pod"]
    container = next(
        c for c in spec["containers"] if GPU in (c.get("resources") or {}).get("requests", {})
    )
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "nodeSelector": spec.get("nodeSelector") or {},
            "tolerations": spec.get("tolerations") or [],
            "affinity": spec.get("affinity") or {},
            "containers": [
                {
                    "name": container["name"],
                    # Never pulled: KWOK runs no containers.
                    "image": "stand-in.invalid/vllm:0",
                    "resources": container["resources"],
                }
            ],
        },
    }


def start_karpenter(state: Path, kubeconfig: Path, types_file: Path) -> int:
    """The KWOK-provider Karpenter, by environment variables its options read
    (sigs.k8s.io/karpenter v1.14.1 ``pkg/operator/options/options.go`` and
    ``kwok/options/options.go``): no leader election (one replica, out of cluster), its
    metrics and health ports free ones, the instance-types file, debug logs. The API server
    comes from ``KUBECONFIG`` (controller-runtime's ``GetConfigOrDie``)."""
    import os

    bindir = KARPENTER_TOOLS["karpenter-kwok"]().bindir()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", "/root"),
        "KUBECONFIG": str(kubeconfig),
        "DISABLE_LEADER_ELECTION": "true",
        "METRICS_PORT": str(cluster.free_port()),
        "HEALTH_PROBE_PORT": str(cluster.free_port()),
        "INSTANCE_TYPES_FILE_PATH": str(types_file),
        "LOG_LEVEL": "debug",
    }
    return cluster.spawn(state, "karpenter", [str(bindir / "karpenter-kwok")], env)


def conditions(obj: dict[str, Any]) -> dict[str, str]:
    return {c["type"]: c["status"] for c in (obj.get("status") or {}).get("conditions") or []}


def pod_of(client: Kube, name: str) -> dict[str, Any]:
    return client.get(f"/api/v1/namespaces/{NAMESPACE}/pods/{name}")  # type: ignore[no-any-return]


def unschedulable(pod: dict[str, Any]) -> bool:
    return any(
        c["type"] == "PodScheduled"
        and c["status"] == "False"
        and c.get("reason") == "Unschedulable"
        for c in (pod.get("status") or {}).get("conditions") or []
    )


def node_view(node: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": node["metadata"]["name"],
        "labels": node["metadata"].get("labels") or {},
        "taints": (node.get("spec") or {}).get("taints") or [],
        "allocatable": (node.get("status") or {}).get("allocatable") or {},
        "ready": conditions(node).get("Ready") == "True",
    }


def check_node(node: dict[str, Any], pool: dict[str, Any], plan: dict[str, Any]) -> list[str]:
    """What the launched node lacks of the NodePool: its template labels, every single-value
    requirement as a label, its taints, and the instance type's GPUs."""
    view = node_view(node)
    wrong = []
    template = pool["spec"]["template"]
    for key, value in (template["metadata"].get("labels") or {}).items():
        if view["labels"].get(key) != value:
            wrong.append(f"label {key}={value} (has {view['labels'].get(key)!r})")
    for req in template["spec"]["requirements"]:
        if req["operator"] == "In" and view["labels"].get(req["key"]) not in req["values"]:
            wrong.append(
                f"label {req['key']} in {req['values']} (has {view['labels'].get(req['key'])!r})"
            )
    have = [(t["key"], t.get("value"), t["effect"]) for t in view["taints"]]
    for t in template["spec"]["taints"]:
        if (t["key"], t.get("value"), t["effect"]) not in have:
            wrong.append(f"taint {t['key']}={t.get('value')}:{t['effect']} (has {have})")
    if view["allocatable"].get(GPU) != str(plan["gpus_per_node"]):
        wrong.append(
            f"allocatable {GPU}={plan['gpus_per_node']} (has {view['allocatable'].get(GPU)!r})"
        )
    return wrong


def rehearse(state: Path, report: dict[str, Any]) -> None:
    step = stepper(report)
    plan = step("the blueprint planned offline", planned)
    pool = kwok_node_pool(plan["node_pool"])
    pool_name = pool["metadata"]["name"]
    limit = int(pool["spec"]["limits"][GPU])
    max_nodes = limit // plan["gpus_per_node"]
    report["node_pool"] = {
        "name": pool_name,
        "instance_type": plan["instance_type"],
        "gpus_per_node": plan["gpus_per_node"],
        "limits": pool["spec"]["limits"],
        "nodes_the_limit_holds": max_nodes,
        "node_class_ref": {
            "planned": plan["node_pool"]["spec"]["template"]["spec"]["nodeClassRef"],
            "applied": pool["spec"]["template"]["spec"]["nodeClassRef"],
        },
    }
    cp = step("control plane up", lambda: cluster.up(state, []))
    client = cp.client()
    crds = sorted((KARPENTER_TOOLS["karpenter-kwok"]().share() / "crds").glob("*.yaml"))
    step("Karpenter CRDs", lambda: addons.apply_crds(client, crds))
    types_file = state / "instance-types.json"
    types_file.write_text(json.dumps(instance_types(plan), indent=1))
    report["instance_types"] = instance_types(plan)
    step("Karpenter started", lambda: start_karpenter(state, cp.kubeconfig, types_file))
    ref = pool["spec"]["template"]["spec"]["nodeClassRef"]
    client.create(
        NODECLASSES,
        {
            "apiVersion": f"{KWOK_GROUP}/v1alpha1",
            "kind": KWOK_NODE_CLASS,
            "metadata": {"name": ref["name"]},
            "spec": {},
        },
    )
    client.create(NODEPOOLS, pool)

    def pool_ready() -> bool:
        return conditions(client.get(f"{NODEPOOLS}/{pool_name}")).get("Ready") == "True"

    step("the NodePool Ready", lambda: wait(f"NodePool {pool_name} Ready", pool_ready, LAUNCH_WAIT))
    addons.namespace(client, NAMESPACE)

    # --- one serving pod: pending -> NodeClaim -> Node -> Ready -> bound -----------------
    start = time.monotonic()
    client.create(f"/api/v1/namespaces/{NAMESPACE}/pods", serving_pod(plan, "serving-0"))
    marks: dict[str, float] = {}

    def mark(name: str) -> None:
        marks.setdefault(name, round(time.monotonic() - start, 1))

    def launched() -> bool:
        pod = pod_of(client, "serving-0")
        if unschedulable(pod):
            mark("pod_unschedulable")
        claims = client.items(NODECLAIMS)
        if claims:
            mark("nodeclaim_created")
            conds = conditions(claims[0])
            if conds.get("Launched") == "True":
                mark("nodeclaim_launched")
            if conds.get("Registered") == "True":
                mark("nodeclaim_registered")
            if conds.get("Initialized") == "True":
                mark("nodeclaim_initialized")
        nodes = client.items("/api/v1/nodes")
        if nodes:
            mark("node_created")
            if node_view(nodes[0])["ready"]:
                mark("node_ready")
        if (pod.get("spec") or {}).get("nodeName"):
            mark("pod_bound")
        if (pod.get("status") or {}).get("phase") == "Running":
            mark("pod_running")
            return True
        return False

    step(
        "Karpenter launched a node for the serving pod, which runs there",
        lambda: wait("the serving pod Running on a launched node", launched, LAUNCH_WAIT),
    )
    report["seconds_from_pod_created"] = marks
    pod = pod_of(client, "serving-0")
    node = client.get(f"/api/v1/nodes/{pod['spec']['nodeName']}")
    claim = client.items(NODECLAIMS)[0]
    report["node"] = node_view(node)
    report["nodeclaim"] = {
        "name": claim["metadata"]["name"],
        "nodepool": (claim["metadata"].get("labels") or {}).get("karpenter.sh/nodepool"),
        "requirements": claim["spec"].get("requirements"),
        "taints": claim["spec"].get("taints"),
        "capacity": (claim.get("status") or {}).get("capacity"),
    }
    wrong = check_node(node, pool, plan)
    if wrong:
        raise AssertionError(f"the launched node lacks the NodePool's {'; '.join(wrong)}")
    step("the node has the NodePool's labels, requirements, taint and GPUs", lambda: True)
    if report["nodeclaim"]["nodepool"] != pool_name:
        raise AssertionError(f"the NodeClaim names NodePool {report['nodeclaim']['nodepool']!r}")

    # --- the limit: one pod more than the limit's nodes hold stays pending -------------
    names = [f"serving-{i}" for i in range(max_nodes + 1)]
    limit_start = time.monotonic()
    for name in names[1:]:
        client.create(f"/api/v1/namespaces/{NAMESPACE}/pods", serving_pod(plan, name))

    def bound() -> list[str]:
        return [n for n in names if (pod_of(client, n).get("spec") or {}).get("nodeName")]

    step(
        f"Karpenter launched the nodes up to the limit ({max_nodes})",
        lambda: wait(
            f"{max_nodes} serving pods bound", lambda: len(bound()) >= max_nodes, LAUNCH_WAIT
        ),
    )
    report["seconds_to_fill_the_limit"] = round(time.monotonic() - limit_start, 1)
    time.sleep(LIMIT_HOLD)
    held = [n for n in names if n not in bound()]
    claims = client.items(NODECLAIMS)
    usage = ((client.get(f"{NODEPOOLS}/{pool_name}").get("status") or {}).get("resources")) or {}
    events = client.items(f"/api/v1/namespaces/{NAMESPACE}/events")
    said = [
        e.get("message") or ""
        for e in events
        if e.get("involvedObject", {}).get("name") in held
        and (e.get("source", {}).get("component") or e.get("reportingComponent")) == "karpenter"
        and "exceed limits" in (e.get("message") or "")
    ]
    report["limit"] = {
        "karpenter_said": said[0] if said else None,
        "nodeclaims": len(claims),
        "nodes": len(client.items("/api/v1/nodes")),
        "pending_after_hold": held,
        "hold_seconds": LIMIT_HOLD,
        "nodepool_status_resources": usage,
        "events_for_pending": sorted(
            {
                f"{e.get('source', {}).get('component') or e.get('reportingComponent')}: "
                f"{e.get('reason')}: {e.get('message')}"
                for e in events
                if e.get("involvedObject", {}).get("name") in held
            }
        )[:6],
    }
    if len(claims) != max_nodes:
        raise AssertionError(f"{len(claims)} NodeClaims, the limit holds {max_nodes}")
    if len(held) != 1:
        raise AssertionError(f"pending after {LIMIT_HOLD:.0f} s: {held}; want exactly one")
    step(f"the limit held: {max_nodes} nodes, one pod left pending", lambda: True)


def main(argv: list[str]) -> int:
    missing = not_built()
    if missing:
        print(
            json.dumps(
                {
                    "steps": [],
                    "passed": False,
                    "not_run": f"not built: {', '.join(missing)}; run `python e2e/tools.py "
                    "build` and `python e2e/tools.py build --group karpenter`",
                },
                indent=1,
            )
        )
        return 2
    return run(argv, [], rehearse, "inferplane-rehearsal-karpenter-")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
