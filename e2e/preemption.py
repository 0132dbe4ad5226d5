"""What the end-to-end run asserts about spare-GPU placeholders: a model that needs their
GPUs preempts them, read from the API server (`verify` checks the rest of the deployment)."""

from __future__ import annotations

import time
from typing import Any

from kube import Kube
from verify import Failed, gpu_requests, pod_ready

from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment


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
            free[node] -= gpu_requests(pod).get(resource, 0)
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
    running = sum(1 for p in pods if p["spec"].get("nodeName") and pod_ready(p))
    return {"running": running, "pending": len(pods) - running}
