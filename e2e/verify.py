"""What the end-to-end run asserts about a deployed environment, read from the API server.

Spare-GPU preemption is asserted by `preemption`, what ``destroy`` leaves by `teardown`."""

from __future__ import annotations

import base64
from collections import defaultdict
from typing import Any

from kube import Kube, KubeError

from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment

ZONE = naming.TOPOLOGY_ZONE_LABEL


class Failed(Exception):
    pass


def pod_ready(obj: dict) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in obj.get("status", {}).get("conditions", [])
    )


def gpu_requests(pod: dict) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for c in pod["spec"].get("containers", []):
        for k, v in (c.get("resources", {}).get("requests") or {}).items():
            if k.startswith("nvidia.com/"):
                out[k] += int(v)
    return out


def _node_affinity_zones(pod: dict) -> set[str] | None:
    """Zones a pod's required node affinity allows (None: no zone term)."""
    aff = pod["spec"].get("affinity", {}).get("nodeAffinity", {})
    req = aff.get("requiredDuringSchedulingIgnoredDuringExecution", {})
    zones: set[str] | None = None
    for term in req.get("nodeSelectorTerms", []):
        for expr in term.get("matchExpressions", []):
            if expr.get("key") == ZONE and expr.get("operator") == "In":
                zones = (zones or set()) | set(expr.get("values", []))
    sel = pod["spec"].get("nodeSelector", {})
    if ZONE in sel:
        zones = {sel[ZONE]}
    return zones


def pod_table(client: Kube) -> list[dict]:
    nodes = {n["metadata"]["name"]: n for n in client.items("/api/v1/nodes")}
    rows = []
    for pod in client.items("/api/v1/pods"):
        node = pod["spec"].get("nodeName", "")
        labels = nodes.get(node, {}).get("metadata", {}).get("labels", {})
        rows.append(
            {
                "pod": f"{pod['metadata']['namespace']}/{pod['metadata']['name']}",
                "node": node,
                "zone": labels.get(ZONE, ""),
                "pool": labels.get(naming.POOL_LABEL, ""),
                "phase": pod.get("status", {}).get("phase"),
                "ready": pod_ready(pod),
            }
        )
    return rows


def blueprint_pods(client: Kube, env: Environment) -> list[dict]:
    ns = naming.namespace(env.blueprint)
    return client.items(f"/api/v1/namespaces/{ns}/pods")


def _wait_deployments_ready(client: Kube, ns: str, timeout: float = 120) -> list[dict]:
    def ready() -> list[dict] | None:
        deps = client.items(f"/apis/apps/v1/namespaces/{ns}/deployments")
        if not deps:
            raise Failed(f"no Deployment in namespace {ns}")
        for d in deps:
            want = d["spec"].get("replicas", 1)
            st = d.get("status", {})
            if st.get("readyReplicas", 0) < want or st.get("updatedReplicas", 0) < want:
                return None
        return deps

    return client.wait(f"every Deployment in {ns} Ready", ready, timeout)


def deployed(client: Kube, env: Environment) -> dict[str, Any]:
    """Deployments Ready; pods on their pool's nodes in a zone they may use; GPUs not shared
    beyond a node's capacity; pods admitted under the namespace's Pod Security level."""
    ns = naming.namespace(env.blueprint)
    problems: list[str] = []
    deps = _wait_deployments_ready(client, ns)
    nodes = {n["metadata"]["name"]: n for n in client.items("/api/v1/nodes")}
    pods = [
        p for p in blueprint_pods(client, env) if p.get("status", {}).get("phase") != "Succeeded"
    ]
    used: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    models_on: dict[str, set[str]] = defaultdict(set)
    for pod in pods:
        name = pod["metadata"]["name"]
        node_name = pod["spec"].get("nodeName")
        if not node_name:
            # Placeholders may wait for a GPU a model took: that is their job.
            role = pod["metadata"].get("labels", {}).get(naming.ROLE_LABEL)
            if role != naming.SPARE_GPU_ROLE:
                problems.append(f"pod {name} is not scheduled")
            continue
        node = nodes[node_name]["metadata"]["labels"]
        sel = pod["spec"].get("nodeSelector", {})
        pool = sel.get(naming.POOL_LABEL)
        if pool:
            if node.get(naming.POOL_LABEL) != pool:
                problems.append(f"pod {name} wants pool {pool} but runs on {node_name}")
            if node.get(naming.BLUEPRINT_LABEL) != env.blueprint:
                problems.append(f"pod {name} runs on {node_name} of another blueprint")
            if pool in env.pools and node.get(ZONE) not in env.pools[pool].zones:
                problems.append(
                    f"pod {name} runs in zone {node.get(ZONE)}, not one of pool {pool}'s"
                )
        zones = _node_affinity_zones(pod)
        if zones is not None and node.get(ZONE) not in zones:
            problems.append(
                f"pod {name} runs in {node.get(ZONE)}, outside its zones {sorted(zones)}"
            )
        if zones is None and pool and node.get(ZONE) not in env.zones:
            problems.append(f"pod {name} runs in {node.get(ZONE)}, outside the environment's zones")
        problems += _model_pod(env, pod, node)
        for res, n in gpu_requests(pod).items():
            used[node_name][res] += n
            model = pod["metadata"].get("labels", {}).get(naming.MODEL_LABEL)
            if model:
                models_on[node_name].add(model)
    for node_name, res in used.items():
        alloc = nodes[node_name].get("status", {}).get("allocatable", {})
        for r, n in res.items():
            if n > int(alloc.get(r, 0)):
                problems.append(
                    f"node {node_name} has {n} {r} requested, {alloc.get(r, 0)} allocatable"
                )
    problems += _hpas(client, ns)
    problems += _pod_security(client, ns, pods)
    problems += _jobs(client, ns)
    if problems:
        raise Failed("; ".join(problems))
    return {
        "deployments": len(deps),
        "pods": len(pods),
        "gpu_nodes_used": len(used),
        "models_per_node": {k: sorted(v) for k, v in sorted(models_on.items())},
    }


def inference_pools(client: Kube, env: Environment) -> dict[str, Any]:
    """Each llm-aware model has one InferencePool per zone of its pool (rendered by the
    router's chart), and each pool's selector matches pods on that zone's nodes only."""
    routed = [m for m in env.models.values() if m.routing.llm_aware]
    if not routed:
        return {"pools": 0}
    ns = naming.namespace(env.blueprint)
    pools = client.items(f"/apis/inference.networking.k8s.io/v1/namespaces/{ns}/inferencepools")
    nodes = {
        n["metadata"]["name"]: n["metadata"].get("labels", {})
        for n in client.items("/api/v1/nodes")
    }
    pods = blueprint_pods(client, env)
    problems: list[str] = []
    found: dict[str, list[str]] = {}
    pickers: dict[str, list[str]] = {}
    for model in routed:
        for zone in env.pool_of(model).zones:
            name = naming.zone_deployment(model.name, zone)
            pool = next((p for p in pools if p["metadata"]["name"] == name), None)
            if pool is None:
                problems.append(f"no InferencePool {name}")
                continue
            labels = pool["spec"]["selector"]["matchLabels"]
            selected = [
                p
                for p in pods
                if all(p["metadata"].get("labels", {}).get(k) == v for k, v in labels.items())
            ]
            if not selected:
                problems.append(f"InferencePool {name} selects no pod")
            for p in selected:
                node_zone = nodes.get(p["spec"].get("nodeName", ""), {}).get(ZONE)
                if node_zone != zone:
                    problems.append(
                        f"InferencePool {name} selects {p['metadata']['name']} on a node of "
                        f"zone {node_zone}, not {zone}"
                    )
            found[name] = sorted(p["metadata"]["name"] for p in selected)
            pickers[name] = _pickers(client, ns, name, zone, nodes, problems)
    if problems:
        raise Failed("; ".join(problems))
    return {"pools": len(found), "pods_by_pool": found, "pickers_by_pool": pickers}


def _pickers(
    client: Kube,
    ns: str,
    release: str,
    zone: str,
    nodes: dict[str, dict[str, str]],
    problems: list[str],
) -> list[str]:
    """The zone's endpoint picker pods: as many as its Deployment asks (so the namespace's
    restricted Pod Security admitted them), each on a node of that zone."""
    epp = f"{release}-epp"
    deployment = client.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{epp}")
    wanted = deployment["spec"].get("replicas", 1)

    def placed() -> list[dict]:
        found = client.items(
            f"/api/v1/namespaces/{ns}/pods", labelSelector=f"llm-d-router-gateway={epp}"
        )
        done = len(found) >= wanted and all(p["spec"].get("nodeName") for p in found)
        return found if done else []

    try:
        pods = client.wait(f"{wanted} scheduled pods of {epp}", placed, 60)
    except TimeoutError:
        pods = client.items(
            f"/api/v1/namespaces/{ns}/pods", labelSelector=f"llm-d-router-gateway={epp}"
        )
    if len(pods) < wanted:
        events = client.items(
            f"/api/v1/namespaces/{ns}/events", fieldSelector="reason=FailedCreate"
        )
        why = "; ".join(e.get("message", "") for e in events if epp in e.get("message", ""))
        problems.append(f"{epp} has {len(pods)} of {wanted} picker pods ({why or 'no event'})")
    for p in pods:
        node_zone = nodes.get(p["spec"].get("nodeName", ""), {}).get(ZONE)
        if node_zone != zone:
            problems.append(f"picker {p['metadata']['name']} runs in zone {node_zone}, not {zone}")
    return sorted(p["metadata"]["name"] for p in pods)


def _model_pod(env: Environment, pod: dict, node: dict[str, str]) -> list[str]:
    """A serving pod of model M runs on a node of M's pool and holds exactly M's GPUs: it
    requests `gpus` units of the pool's GPU resource, with limits equal to requests, so the
    device plugin hands it whole devices (or MIG slices) no other pod gets."""
    labels = pod["metadata"].get("labels", {})
    name = labels.get(naming.MODEL_LABEL)
    if name not in env.models or labels.get(naming.ROLE_LABEL):
        return []
    model = env.models[name]
    pool = env.pools[model.pool]
    problems = []
    if node.get(naming.POOL_LABEL) != pool.name:
        problems.append(f"pod {pod['metadata']['name']} of {name} is not on pool {pool.name}")
    serving = [c for c in pod["spec"]["containers"] if c.get("resources", {}).get("requests")]
    want = {pool.gpu_resource: str(model.gpus)}
    for c in serving:
        res = c["resources"]
        got = {k: str(v) for k, v in res.get("requests", {}).items() if k.startswith("nvidia.com/")}
        lim = {k: str(v) for k, v in res.get("limits", {}).items() if k.startswith("nvidia.com/")}
        if got and (got != want or lim != want):
            problems.append(
                f"pod {pod['metadata']['name']} of {name} asks for {got} (limits {lim}), not {want}"
            )
    if not any(gpu_requests(pod)):
        problems.append(f"pod {pod['metadata']['name']} of {name} requests no GPU")
    return problems


def secret_values(client: Kube, env: Environment) -> set[str]:
    """Every value every Secret of the blueprint's namespace holds, decoded."""
    ns = naming.namespace(env.blueprint)
    out = set()
    for secret in client.items(f"/api/v1/namespaces/{ns}/secrets"):
        for value in (secret.get("data") or {}).values():
            out.add(base64.b64decode(value).decode(errors="replace"))
    return out


def generated_passwords(client: Kube, env: Environment) -> dict[str, str]:
    """The password each Redis response cache's Secret holds (``<model>-response-cache``,
    key ``password``): generated by the stack (`generated_password`), so known only here."""
    ns = naming.namespace(env.blueprint)
    out = {}
    for model in env.models.values():
        if not (model.response_cache and model.response_cache.redis):
            continue
        name = naming.response_cache_secret(model.name)
        secret = client.get(f"/api/v1/namespaces/{ns}/secrets/{name}")
        out[name] = base64.b64decode(secret["data"]["password"]).decode()
    return out


def _hpas(client: Kube, ns: str) -> list[str]:
    """KEDA turned every ScaledObject into a HorizontalPodAutoscaler on its target."""

    def converted() -> bool:
        hpas = client.items(f"/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers")
        targets = {h["spec"]["scaleTargetRef"]["name"] for h in hpas}
        missing = [
            so["metadata"]["name"]
            for so in client.items(f"/apis/keda.sh/v1alpha1/namespaces/{ns}/scaledobjects")
            if so["spec"]["scaleTargetRef"]["name"] not in targets
        ]
        return not missing

    try:
        client.wait(f"an HPA for every ScaledObject in {ns}", converted, 60)
    except TimeoutError as err:
        return [str(err)]
    return []


def _pod_security(client: Kube, ns: str, pods: list[dict]) -> list[str]:
    """Each running pod, created again as a server-side dry run, passes the namespace's
    PodSecurity admission (its `enforce` level is what the stack set)."""
    labels = client.get(f"/api/v1/namespaces/{ns}")["metadata"].get("labels", {})
    level = labels.get("pod-security.kubernetes.io/enforce")
    # The stack sets `restricted` on the blueprint's namespace (components/hardening.py).
    problems = [] if level == "restricted" else [f"namespace {ns} enforces {level!r}"]
    for pod in pods:
        meta = pod["metadata"]
        clone = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"generateName": "psa-check-", "namespace": ns, "labels": {}},
            "spec": {k: v for k, v in pod["spec"].items() if k not in ("nodeName",)},
        }
        try:
            client.request("POST", f"/api/v1/namespaces/{ns}/pods", clone, query={"dryRun": "All"})
        except KubeError as err:
            if err.status == 403:
                problems.append(f"pod {meta['name']} violates Pod Security {level}: {err}")
            else:
                raise
    return problems


def _jobs(client: Kube, ns: str) -> list[str]:
    def finished() -> list[dict] | None:
        jobs = client.items(f"/apis/batch/v1/namespaces/{ns}/jobs")
        for j in jobs:
            st = j.get("status", {})
            if not st.get("succeeded") and not st.get("failed"):
                return None
        return jobs or [{}]

    try:
        jobs = client.wait(f"every Job in {ns} finished", finished, 60)
    except TimeoutError as err:
        return [str(err)]
    return [
        f"job {j['metadata']['name']} failed"
        for j in jobs
        if j and j.get("status", {}).get("failed")
    ]
