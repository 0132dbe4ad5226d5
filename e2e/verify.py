"""What the end-to-end run asserts about a deployed environment, read from the API server."""

from __future__ import annotations

import base64
import time
from collections import defaultdict
from typing import Any

from kube import Kube, KubeError

from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment

ZONE = naming.TOPOLOGY_ZONE_LABEL


class Failed(Exception):
    pass


def _ready(obj: dict) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in obj.get("status", {}).get("conditions", [])
    )


def _gpu_requests(pod: dict) -> dict[str, int]:
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
                "ready": _ready(pod),
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
        for res, n in _gpu_requests(pod).items():
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
    if not any(_gpu_requests(pod)):
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


def stack_objects(exported: dict) -> list[dict[str, str]]:
    """The Kubernetes objects a `pulumi stack export` records (Patch resources excluded:
    they modify an object the stack does not own; so are reads, ``external`` in the state,
    which the stack only looks up)."""
    out = []
    for res in exported.get("deployment", {}).get("resources", []):
        typ = res.get("type", "")
        if not typ.startswith("kubernetes:") or typ.endswith("Patch") or res.get("external"):
            continue
        if typ.startswith("kubernetes:helm.sh"):
            continue
        outputs = res.get("outputs") or {}
        meta = outputs.get("metadata") or {}
        if outputs.get("apiVersion") and outputs.get("kind") and meta.get("name"):
            out.append(
                {
                    "apiVersion": outputs["apiVersion"],
                    "kind": outputs["kind"],
                    "namespace": meta.get("namespace") or "",
                    "name": meta["name"],
                }
            )
    return out


def _plural(client: Kube, api_version: str, kind: str, cache: dict) -> tuple[str, bool]:
    base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
    if base not in cache:
        cache[base] = client.get(base).get("resources", [])
    for r in cache[base]:
        if r.get("kind") == kind and "/" not in r["name"]:
            return f"{base}/{{ns}}{r['name']}", bool(r.get("namespaced"))
    raise Failed(f"the API server serves no {kind} in {api_version}")


def still_there(client: Kube, objects: list[dict[str, str]], timeout: float = 60) -> list[str]:
    """Objects of `objects` that still exist (404 means gone), after waiting for finalizers."""
    cache: dict = {}
    paths = []
    for o in objects:
        try:
            template, namespaced = _plural(client, o["apiVersion"], o["kind"], cache)
        except KubeError as err:
            if err.status == 404:  # its API group went with its CRD, which the stack owned
                continue
            raise
        prefix = f"namespaces/{o['namespace']}/" if namespaced and o["namespace"] else ""
        paths.append(
            (
                f"{o['kind']}/{o['namespace']}/{o['name']}",
                template.format(ns=prefix) + f"/{o['name']}",
            )
        )

    def remaining() -> list[str]:
        return [what for what, path in paths if client.exists(path)]

    try:
        client.wait("every object of the stack deleted", lambda: not remaining(), timeout)
    except TimeoutError:
        return remaining()
    return []


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


def preemption(client: Kube, env: Environment) -> dict[str, Any]:
    """Raise one model's ScaledObject minReplicaCount by the spare GPUs of its pool in one
    zone: the HPA (KEDA's) scales it out, the new replicas preempt the placeholders and
    become Ready. Restores the ScaledObject afterwards."""
    ns = naming.namespace(env.blueprint)
    candidates = [
        (m, env.pools[m.pool])
        for m in env.models.values()
        if env.pools[m.pool].spare_gpus and m.replicas.min > 0
    ]
    if not candidates:
        return {"skipped": "no pool keeps spare GPUs for a model with warm replicas"}
    model, pool = candidates[0]
    sos = client.items(f"/apis/keda.sh/v1alpha1/namespaces/{ns}/scaledobjects")
    mine = [s for s in sos if s["metadata"].get("labels", {}).get(naming.MODEL_LABEL) == model.name]
    if not mine:
        raise Failed(f"no ScaledObject for model {model.name}")
    so = mine[0]
    so_path = f"/apis/keda.sh/v1alpha1/namespaces/{ns}/scaledobjects/{so['metadata']['name']}"
    target = so["spec"]["scaleTargetRef"]["name"]
    dep_path = f"/apis/apps/v1/namespaces/{ns}/deployments/{target}"
    deployment = client.get(dep_path)
    before = deployment["spec"].get("replicas", 1)
    # Enough replicas to take every free GPU of the pool and then one more: that one has
    # room only where a placeholder runs, so the scheduler must preempt one. A Deployment
    # of one zone (an llm-aware model's) reaches only that zone's GPUs.
    zone = deployment["spec"]["template"]["metadata"].get("labels", {}).get(naming.ZONE_LABEL)
    units = model.gpus
    extra = free_units(client, pool.name, pool.gpu_resource, zone) // units + 1
    old_min = so["spec"].get("minReplicaCount", 0)
    new_min = before + extra
    placeholders_before = _placeholders(client, ns, pool.name)
    client.merge_patch(
        so_path,
        {
            "spec": {
                "minReplicaCount": new_min,
                "maxReplicaCount": max(new_min, so["spec"].get("maxReplicaCount", new_min)),
            }
        },
    )
    start = time.monotonic()
    try:
        client.wait(
            f"{target} scaled to {new_min} by its HPA",
            lambda: client.get(dep_path)["spec"].get("replicas", 0) >= new_min,
            90,
        )
        client.wait(
            f"{new_min} ready replicas of {target}",
            lambda: client.get(dep_path).get("status", {}).get("readyReplicas", 0) >= new_min,
            90,
        )
        seconds = round(time.monotonic() - start, 1)
        placeholders_after = _placeholders(client, ns, pool.name)
        preempted = client.wait(
            "a placeholder preempted by the scheduler",
            lambda: _preempted(client, ns, pool.name),
            30,
        )
        if placeholders_after["running"] >= placeholders_before["running"]:
            raise Failed(
                f"{target} grew to {new_min} replicas but no placeholder of pool {pool.name} "
                f"gave up its GPU ({placeholders_before} -> {placeholders_after})"
            )
    finally:
        client.merge_patch(
            so_path,
            {
                "spec": {
                    "minReplicaCount": old_min,
                    "maxReplicaCount": so["spec"].get("maxReplicaCount"),
                }
            },
        )
    return {
        "model": model.name,
        "replicas": f"{before} -> {new_min}",
        "seconds_to_ready": seconds,
        "placeholders": {"before": placeholders_before, "after": placeholders_after},
        "preempted": preempted,
    }


def free_units(client: Kube, pool: str, resource: str, zone: str | None = None) -> int:
    """GPU units of `pool`'s nodes (in `zone`, if given) that no running pod requests."""
    selector = f"{naming.POOL_LABEL}={pool}"
    if zone is not None:
        selector += f",{naming.TOPOLOGY_ZONE_LABEL}={zone}"
    nodes = client.items("/api/v1/nodes", labelSelector=selector)
    free = {n["metadata"]["name"]: int(n["status"]["allocatable"].get(resource, 0)) for n in nodes}
    for pod in client.items("/api/v1/pods"):
        node = pod["spec"].get("nodeName")
        if node in free and pod.get("status", {}).get("phase") not in ("Succeeded", "Failed"):
            free[node] -= _gpu_requests(pod).get(resource, 0)
    return sum(max(0, v) for v in free.values())


def _preempted(client: Kube, ns: str, pool: str) -> list[str]:
    """Placeholder pods of `pool` the scheduler evicted for a pod of higher priority: their
    ``DisruptionTarget`` condition says ``PreemptionByScheduler`` (Kubernetes "Pod
    disruption conditions"), or, once the pod is gone, the scheduler's ``Preempted`` event
    about it remains (pkg/scheduler/framework/preemption `prepareCandidate`)."""
    prefix = f"{pool}{naming.SPARE_GPUS_INFIX}"
    found = [
        e["involvedObject"]["name"]
        for e in client.items(f"/api/v1/namespaces/{ns}/events", fieldSelector="reason=Preempted")
        if e.get("involvedObject", {}).get("name", "").startswith(prefix)
    ]
    pods = client.items(
        f"/api/v1/namespaces/{ns}/pods",
        labelSelector=f"{naming.ROLE_LABEL}={naming.SPARE_GPU_ROLE}",
    )
    for p in pods:
        if p["spec"].get("nodeSelector", {}).get(naming.POOL_LABEL) != pool:
            continue
        for c in p.get("status", {}).get("conditions", []):
            if c.get("type") == "DisruptionTarget" and c.get("reason") == "PreemptionByScheduler":
                found.append(p["metadata"]["name"])
    return found


def _placeholders(client: Kube, ns: str, pool: str) -> dict[str, int]:
    pods = client.items(
        f"/api/v1/namespaces/{ns}/pods",
        labelSelector=f"{naming.ROLE_LABEL}={naming.SPARE_GPU_ROLE}",
    )
    pods = [p for p in pods if p["spec"].get("nodeSelector", {}).get(naming.POOL_LABEL) == pool]
    running = sum(1 for p in pods if p["spec"].get("nodeName") and _ready(p))
    return {"running": running, "pending": len(pods) - running}


# Namespaced kinds the stack creates (core, apps, batch, policy, networking, autoscaling and
# the add-ons' CRDs): after `destroy`, none may be left in the blueprint's namespace.
NAMESPACED = (
    "/api/v1/namespaces/{ns}/pods",
    "/api/v1/namespaces/{ns}/services",
    "/api/v1/namespaces/{ns}/configmaps",
    "/api/v1/namespaces/{ns}/secrets",
    "/api/v1/namespaces/{ns}/serviceaccounts",
    "/apis/apps/v1/namespaces/{ns}/deployments",
    "/apis/apps/v1/namespaces/{ns}/daemonsets",
    "/apis/batch/v1/namespaces/{ns}/jobs",
    "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
    "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies",
    "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers",
    "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
    "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
    "/apis/keda.sh/v1alpha1/namespaces/{ns}/scaledobjects",
    "/apis/keda.sh/v1alpha1/namespaces/{ns}/triggerauthentications",
    "/apis/http.keda.sh/v1alpha1/namespaces/{ns}/httpscaledobjects",
    "/apis/monitoring.coreos.com/v1/namespaces/{ns}/servicemonitors",
    "/apis/monitoring.coreos.com/v1/namespaces/{ns}/podmonitors",
    "/apis/monitoring.coreos.com/v1/namespaces/{ns}/prometheusrules",
)
# What exists in a namespace the stack did not put there: the platform's Secrets (given),
# the ServiceAccount and CA bundle Kubernetes adds to every namespace.
KUBERNETES_OWNED = {"serviceaccounts/default", "configmaps/kube-root-ca.crt"}


def leftovers(client: Kube, env: Environment, keep: set[str] | None = None) -> list[str]:
    """Objects of the blueprint still in the cluster after `destroy`: anything in its
    namespace but what the platform put there (`keep`, as ``<plural>/<name>``) and what
    Kubernetes adds; labels the stack set on a namespace it does not own; anything labelled
    with the blueprint in another namespace; cluster-scoped objects named after it."""
    keep = (keep or set()) | KUBERNETES_OWNED
    left = []
    ns = naming.namespace(env.blueprint)
    try:
        obj = client.get(f"/api/v1/namespaces/{ns}")
    except KubeError as err:
        if err.status != 404:
            raise
        obj = None
    if obj and not obj["metadata"].get("deletionTimestamp"):
        if not env.kubernetes:
            left.append(f"namespace/{ns}")
        stale = sorted(
            k
            for k in obj["metadata"].get("labels", {})
            if k.startswith(("pod-security.kubernetes.io/", "inferplane.dev/"))
        )
        if stale:
            left.append(f"namespace/{ns} labels {stale}")
        for path in NAMESPACED:
            try:
                items = client.items(path.format(ns=ns))
            except KubeError as err:
                if err.status == 404:
                    continue
                raise
            plural = path.rsplit("/", 1)[1]
            for o in items:
                key = f"{plural}/{o['metadata']['name']}"
                if key not in keep and not o["metadata"].get("deletionTimestamp"):
                    left.append(f"{ns}/{key}")
    sel = f"{naming.BLUEPRINT_LABEL}={env.blueprint}"
    for path in ("/api/v1/pods", "/api/v1/services", "/apis/apps/v1/deployments"):
        for o in client.items(path, labelSelector=sel):
            if not o["metadata"].get("deletionTimestamp"):
                plural = path.rsplit("/", 1)[1]
                left.append(f"{o['metadata']['namespace']}/{plural}/{o['metadata']['name']}")
    for path, kind in (
        ("/apis/scheduling.k8s.io/v1/priorityclasses", "priorityclass"),
        ("/apis/rbac.authorization.k8s.io/v1/clusterroles", "clusterrole"),
        ("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", "clusterrolebinding"),
    ):
        for o in client.items(path):
            name = o["metadata"]["name"]
            labels = o["metadata"].get("labels", {})
            mine = labels.get(naming.BLUEPRINT_LABEL) == env.blueprint or name.startswith(
                f"{env.blueprint}-"
            )
            if mine and not o["metadata"].get("deletionTimestamp"):
                left.append(f"{kind}/{name}")
    return sorted(set(left))
