"""`python e2e/rehearse_rollout.py [--keep]`: the real Argo Rollouts controller takes a
Deployment's change through a canary step, is promoted, and scales through ``/scale``.

Inside a network namespace of its own (e2e/netns.py), with the real local control plane
(e2e/cluster.py) and the Argo Rollouts controller built from its Go module at the pin
(e2e/tools.toml ``[argo_rollouts]``), run out of cluster on the admin kubeconfig:

1. the five CRDs of the pinned release, the copies the add-on applies
   (components/crds/argo-rollouts/, `argo_rollouts.crd_files`);
2. the controller with the arguments the add-on's chart gives it (`CHART_ARGS`: argo-helm
   argo-rollouts 2.41.0 ``templates/controller/deployment.yaml`` with the values of
   `addon_values.argo_rollouts_values`, two replicas, so ``--leader-elect``), its ports
   free loopback ones, plus ``--kubeconfig`` (``addKubectlFlagsToCmd`` of
   ``cmd/rollouts-controller/main.go``, where every other flag is declared). It listens on
   ``0.0.0.0:<port>`` (``controller/controller.go`` ``listenAddr``), which in this namespace
   is its loopback device alone. ``POD_NAMESPACE`` names the namespace of its leader
   election lease and notification settings (``utils/defaults/defaults.go`` `Namespace`);
   it must hold the lease, answer ``/healthz`` (the chart's liveness probe) and ``/metrics``
   (its readiness probe) before anything else is created;
3. a Deployment ``chat`` (4 KWOK pods) and a Rollout ``chat`` that takes its pod template
   by ``workloadRef`` (``scaleDown: onsuccess``: the Deployment is scaled to zero once the
   Rollout is healthy, docs/migrating.md) with a canary of two steps, ``setWeight: 50`` and
   an indefinite ``pause: {}``;
4. the Rollout becomes Healthy on its first ReplicaSet and the Deployment goes to zero;
5. the Deployment's pod template changes: the Rollout must stop at step 1 (the pause) with a
   canary ReplicaSet of the new ``rollouts-pod-template-hash`` holding half the replicas,
   the stable one still serving;
6. promotion, as ``kubectl argo rollouts promote`` does it for a Rollout held by a canary
   pause: a merge patch ``{"status":{"pauseConditions":null}}`` on the status subresource
   (``pkg/kubectl-argo-rollouts/cmd/promote/promote.go`` `getPatches`, default case); the
   Rollout must then run to the end of its steps and make the new hash stable;
7. a merge patch of ``spec.replicas`` on ``rollouts/chat/scale``, as the HPA that KEDA
   makes does: the Rollout CRD declares the scale subresource with ``specReplicasPath:
   .spec.replicas``, ``statusReplicasPath: .status.HPAReplicas``, ``labelSelectorPath:
   .status.selector`` (rollout-crd.yaml), and the controller must bring the stable
   ReplicaSet to the new count;
8. the real KEDA operator (out of cluster, e2e/addons.py `start_keda_operator`) scales the
   Rollout through the same subresource: a ScaledObject whose ``scaleTargetRef`` names the
   Rollout (``apiVersion: argoproj.io/v1alpha1``, ``kind: Rollout``), ``minReplicaCount: 0``
   and one ``kubernetes-workload`` trigger (metadata ``podSelector``, ``value``; active while
   more pods match than ``activationValue``, default 0: kedacore/keda v2.21.0
   ``pkg/scalers/kubernetes_workload_scaler.go``). No pod matches: the operator scales the
   Rollout to zero (``pkg/scaling/executor/scale_scaledobjects.go`` `scaleToZeroOrIdle`; no
   cooldown, since the trigger was never active and ``initialCooldownPeriod`` defaults to 0);
   a matching pod appears: it scales the Rollout from zero (`scaleFromZeroOrIdle`), and the
   Argo Rollouts controller follows both ways. Between one replica and the maximum the HPA
   KEDA makes decides, on values read through KEDA's metrics API server (the HPA rehearsal,
   e2e/rehearse_hpa.py); that part is not repeated here.

Prints one JSON report (each step's seconds, the Rollout's status at the pause and after the
promotion, the scale subresource). Exit 0 when every step passed, 1 otherwise, 2 when it
cannot run here (a tool not built, or no network namespace). Every wait is bounded; every
process is stopped by PID. `--keep` leaves the state folder.
"""

from __future__ import annotations

import os
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import addons  # noqa: E402
import cluster  # noqa: E402
import nodes  # noqa: E402
from kube import Kube  # noqa: E402
from rehearse_smoke import run, stepper  # noqa: E402
from tools import REHEARSAL_TOOLS, TOOLS  # noqa: E402

from inferplane.components import argo_rollouts  # noqa: E402

NAMESPACE = "rollout-rehearsal"
KEDA_NAMESPACE = "keda"
WAKE_LABEL = "inferplane.dev/wake"
LEASE = "argo-rollouts-controller-lock"
CONTROLLER_NAMESPACE = "argo-rollouts"
NAME = "chat"
REPLICAS = 4
SCALED = 6
WAIT = 120.0
POD_HASH = "rollouts-pod-template-hash"
"""The label the controller puts on each ReplicaSet and its pods
(``pkg/apis/rollouts/v1alpha1/types.go`` `DefaultRolloutUniqueLabelKey`)."""
ROLLOUTS = f"/apis/argoproj.io/v1alpha1/namespaces/{NAMESPACE}/rollouts"
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments"
REPLICASETS = f"/apis/apps/v1/namespaces/{NAMESPACE}/replicasets"


def not_built() -> list[str]:
    needed = [TOOLS[n] for n in ("kubernetes", "etcd", "kwok", "keda")]
    needed.append(REHEARSAL_TOOLS["argo-rollouts"])
    return [tool.name for tool in (make() for make in needed) if not tool.built()]


def deployment(version: str) -> dict[str, Any]:
    """The workload the Rollout refers to; `version` is the pod template's only change."""
    labels = {"app": NAME}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels, "annotations": {"inferplane.dev/version": version}},
                "spec": {
                    "containers": [
                        {"name": "server", "image": f"registry.invalid/stand-in:{version}"}
                    ]
                },
            },
        },
    }


def rollout() -> dict[str, Any]:
    """A canary Rollout on the Deployment's template (``spec.workloadRef``: ``apiVersion``,
    ``kind``, ``name``, ``scaleDown``, `ObjectRef` in ``pkg/apis/rollouts/v1alpha1/
    types.go``; ``scaleDown`` one of ``never``, ``onsuccess``, ``progressively``)."""
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": {"app": NAME}},
            "workloadRef": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": NAME,
                "scaleDown": "onsuccess",
            },
            "strategy": {"canary": {"steps": [{"setWeight": 50}, {"pause": {}}]}},
        },
    }


def rollout_status(client: Kube) -> dict[str, Any]:
    status: dict[str, Any] = client.get(f"{ROLLOUTS}/{NAME}").get("status") or {}
    return status


def replica_sets(client: Kube) -> dict[str, dict[str, Any]]:
    """Pod-template hash -> the ReplicaSet's replicas, desired and ready."""
    out = {}
    for rs in client.items(REPLICASETS):
        labels = rs["metadata"].get("labels") or {}
        if POD_HASH in labels:
            out[labels[POD_HASH]] = {
                "replicas": rs["spec"].get("replicas", 0),
                "ready": (rs.get("status") or {}).get("readyReplicas", 0),
            }
    return out


def summary(status: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "phase",
        "currentStepIndex",
        "currentPodHash",
        "stableRS",
        "replicas",
        "HPAReplicas",
        "availableReplicas",
        "selector",
        "controllerPause",
    )
    got = {k: status.get(k) for k in keys}
    got["pauseConditions"] = [c.get("reason") for c in status.get("pauseConditions") or []]
    return got


def healthy(client: Kube, pod_hash: str | None = None, replicas: int = REPLICAS) -> Any:
    """The Rollout Healthy, its stable ReplicaSet (`pod_hash`, when given) at `replicas`
    ready pods and every other ReplicaSet at zero."""
    status = rollout_status(client)
    stable = status.get("stableRS")
    if status.get("phase") != "Healthy" or not stable or stable != status.get("currentPodHash"):
        return None
    if pod_hash is not None and stable != pod_hash:
        return None
    sets = replica_sets(client)
    if sets.get(stable) != {"replicas": replicas, "ready": replicas}:
        return None
    if any(rs["replicas"] for h, rs in sets.items() if h != stable):
        return None
    return status


def chart_args(healthz: int, metrics: int) -> list[str]:
    """The controller's arguments as the chart renders them with the add-on's values
    (``--healthzPort``, ``--metricsPort``, ``--loglevel``/``--logformat``/``--kloglevel``
    of ``controller.logging`` at its defaults ``info``, ``text``, ``"0"``, and
    ``--leader-elect`` since ``controller.replicas`` is 2), the ports free loopback ones
    instead of the chart's 8080 and 8090."""
    return [
        f"--healthzPort={healthz}",
        f"--metricsPort={metrics}",
        "--loglevel=info",
        "--logformat=text",
        "--kloglevel=0",
        "--leader-elect",
    ]


def start_controller(state: Path, client: Kube, kubeconfig: Path) -> dict[str, Any]:
    """The controller out of cluster; returns its ports once it leads (its Lease,
    ``argo-rollouts-controller-lock`` in `CONTROLLER_NAMESPACE`: ``controller/controller.go``
    ``defaultLeaderElectionLeaseLockName``) and /healthz and /metrics answer 200."""
    bindir = REHEARSAL_TOOLS["argo-rollouts"]().bindir()
    healthz, metrics = cluster.free_port(), cluster.free_port()
    cluster.spawn(
        state,
        "rollouts-controller",
        [
            str(bindir / "rollouts-controller"),
            "--kubeconfig",
            str(kubeconfig),
            *chart_args(healthz, metrics),
        ],
        env={**os.environ, "POD_NAMESPACE": CONTROLLER_NAMESPACE},
    )

    def answers(port: int, path: str) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return bool(r.status == 200)
        except OSError:
            return False

    lease = f"/apis/coordination.k8s.io/v1/namespaces/{CONTROLLER_NAMESPACE}/leases/{LEASE}"
    holder = client.wait(
        "the controller's Lease",
        lambda: (client.get(lease).get("spec") or {}).get("holderIdentity"),
        WAIT,
    )
    cluster_wait("the controller's /healthz", lambda: answers(healthz, "/healthz"))
    cluster_wait("the controller's /metrics", lambda: answers(metrics, "/metrics"))
    return {"healthz": healthz, "metrics": metrics, "lease_holder": holder}


def cluster_wait(what: str, check: Any, timeout: float = WAIT) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.5)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def rehearse(state: Path, report: dict[str, Any]) -> None:
    step = stepper(report)
    node = nodes._node("rehearsal-0", {}, [], {})
    cp = step("control plane up", lambda: cluster.up(state, [node]))
    client = cp.client()
    crds = [argo_rollouts.crd_path(f) for f in argo_rollouts.crd_files()]
    step("Argo Rollouts CRDs", lambda: addons.apply_crds(client, crds))
    addons.namespace(client, CONTROLLER_NAMESPACE)
    addons.namespace(client, NAMESPACE)
    report["controller"] = step(
        "controller started and leading", lambda: start_controller(state, client, cp.kubeconfig)
    )
    client.create(DEPLOYMENTS, deployment("v1"))
    client.create(ROLLOUTS, rollout())
    first = step(
        "the Rollout is Healthy on the Deployment's template",
        lambda: client.wait("the first ReplicaSet Healthy", lambda: healthy(client), WAIT),
    )
    stable = first["stableRS"]
    report["first"] = summary(first)

    def deployment_at_zero() -> bool:
        dep = client.get(f"{DEPLOYMENTS}/{NAME}")
        return bool(dep["spec"].get("replicas") == 0)

    step(
        "scaleDown onsuccess scales the Deployment to zero",
        lambda: client.wait("the Deployment at 0", deployment_at_zero, WAIT),
    )
    client.merge_patch(
        f"{DEPLOYMENTS}/{NAME}",
        {"spec": {"template": {"metadata": {"annotations": {"inferplane.dev/version": "v2"}}}}},
    )

    def paused() -> Any:
        status = rollout_status(client)
        canary = status.get("currentPodHash")
        if status.get("currentStepIndex") != 1 or not canary or canary == stable:
            return None
        if "CanaryPauseStep" not in [c.get("reason") for c in status.get("pauseConditions") or []]:
            return None
        sets = replica_sets(client)
        if (sets.get(canary) or {}).get("ready") != REPLICAS // 2:
            return None
        pods = client.items(f"/api/v1/namespaces/{NAMESPACE}/pods", labelSelector=f"app={NAME}")
        labels = sorted(
            sorted((k, v) for k, v in p["metadata"]["labels"].items() if k != POD_HASH)
            for p in pods
            if p["metadata"].get("labels", {}).get(POD_HASH) == canary
        )
        return {"status": summary(status), "replica_sets": sets, "canary_pod_labels": labels}

    at_pause = step(
        "the change stops at the canary pause with half the replicas on the new hash",
        lambda: client.wait("step 1, paused", paused, WAIT),
    )
    report["paused"] = at_pause
    canary = at_pause["status"]["currentPodHash"]
    report["pod_hashes"] = {"stable": stable, "canary": canary}
    client.request(
        "PATCH",
        f"{ROLLOUTS}/{NAME}/status",
        {"status": {"pauseConditions": None}},
        "application/merge-patch+json",
    )
    promoted = step(
        "promoted: the new hash becomes stable",
        lambda: client.wait("the canary promoted", lambda: healthy(client, canary), WAIT),
    )
    report["promoted"] = summary(promoted)
    scale_path = f"{ROLLOUTS}/{NAME}/scale"
    report["scale_before"] = client.get(scale_path)
    client.merge_patch(scale_path, {"spec": {"replicas": SCALED}})
    scaled = step(
        f"/scale sets {SCALED} replicas and the controller follows",
        lambda: client.wait(f"{SCALED} replicas", lambda: healthy(client, canary, SCALED), WAIT),
    )
    report["scaled"] = summary(scaled)
    report["scale_after"] = client.get(scale_path)
    keda_scales_the_rollout(state, cp, step, report, canary)


def scaled_object() -> dict[str, Any]:
    return {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "Rollout",
                "name": NAME,
            },
            "minReplicaCount": 0,
            "maxReplicaCount": SCALED,
            "pollingInterval": 1,
            "triggers": [
                {
                    "type": "kubernetes-workload",
                    "metadata": {"podSelector": f"{WAKE_LABEL}={NAME}", "value": "1"},
                }
            ],
        },
    }


def waking_pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "wake", "namespace": NAMESPACE, "labels": {WAKE_LABEL: NAME}},
        "spec": {"containers": [{"name": "wake", "image": "registry.invalid/stand-in:wake"}]},
    }


def keda_scales_the_rollout(
    state: Path, cp: cluster.ControlPlane, step: Any, report: dict[str, Any], pod_hash: str
) -> None:
    client = cp.client()
    step("KEDA CRDs", lambda: addons.apply_crds(client, addons.keda_crds()))
    addons.namespace(client, KEDA_NAMESPACE)
    step(
        "KEDA operator started",
        lambda: addons.start_keda_operator(
            state, TOOLS["keda"]().bindir(), cp.kubeconfig, KEDA_NAMESPACE
        )[0],
    )
    client.create(f"/apis/keda.sh/v1alpha1/namespaces/{NAMESPACE}/scaledobjects", scaled_object())

    def at(replicas: int) -> Any:
        status = rollout_status(client)
        sets = replica_sets(client)
        spec = client.get(f"{ROLLOUTS}/{NAME}")["spec"].get("replicas")
        if spec != replicas or status.get("availableReplicas", 0) != replicas:
            return None
        if (sets.get(pod_hash) or {}).get("ready") != replicas:
            return None
        return summary(status)

    report["keda_to_zero"] = step(
        "KEDA scales the Rollout to zero while no pod matches its trigger",
        lambda: client.wait("the Rollout at 0", lambda: at(0), WAIT),
    )
    client.create(f"/api/v1/namespaces/{NAMESPACE}/pods", waking_pod())
    report["keda_from_zero"] = step(
        "a matching pod: KEDA scales the Rollout from zero",
        lambda: client.wait("the Rollout at 1", lambda: at(1), WAIT),
    )
    scaled = client.get(f"/apis/keda.sh/v1alpha1/namespaces/{NAMESPACE}/scaledobjects/{NAME}")
    so_status = scaled.get("status") or {}
    report["scaled_object"] = {
        "scaleTargetKind": so_status.get("scaleTargetKind"),
        "scaleTargetGVKR": so_status.get("scaleTargetGVKR"),
        "conditions": {c["type"]: c["status"] for c in so_status.get("conditions") or []},
    }
    hpa = client.get(
        f"/apis/autoscaling/v2/namespaces/{NAMESPACE}/horizontalpodautoscalers/keda-hpa-{NAME}"
    )
    report["hpa_target"] = hpa["spec"]["scaleTargetRef"]


def main(argv: list[str]) -> int:
    return run(argv, not_built(), rehearse, "inferplane-rehearsal-rollout-")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
