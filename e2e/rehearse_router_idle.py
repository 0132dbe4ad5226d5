"""`python e2e/rehearse_router_idle.py [--keep]`: an idle router's empty queue gauge and a warm
llm-aware model's scale-in, shown by the real loops with the trigger's query as it was and as
the stack writes it now.

The llm-d router's flow-control queue gauge is a labelled vector with a series per queue only
once a request was queued (llm-d-router v0.10.0 ``pkg/epp/metrics/llm_d_router_metrics.go``),
so an idle router's ``sum(llm_d_epp_flow_control_queue_size{...})`` is empty. A warm model's
trigger has ``ignoreNullValues: false``, and KEDA's Prometheus scaler then returns an error
("the result is empty", kedacore/keda ``pkg/scalers/prometheus_scaler.go`` at the pinned
release, e2e/tools.toml); after ``fallback.failureThreshold`` failed polls KEDA answers the
HPA with the fallback (``pkg/fallback/fallback.go``, `GetMetricsWithFallback`), which with
``behavior: currentReplicasIfHigher`` holds the replicas the zone has: it never scales in.
The stack's query adds 0 while a picker is scraped (`promql.trigger_query`,
``_zero_while_picking``); before that change it was the sum alone.

Inside a network namespace of its own, with the real control plane, Prometheus operator and
Prometheus, KEDA operator and metrics API server (as e2e/rehearse_hpa.py), for model ``chat``
of tests/e2e/fixtures/router-idle.yaml (blueprints/llm-routing.yaml's model scaling on
``router_queue`` alone, replicas going after 30 s of low load), one zone each:

- ``zone-a`` (**before**): the zone's ScaledObject as the stack generates it, but the
  trigger's query is the sum alone, as it was;
- ``zone-b`` (**after**): the zone's ScaledObject as the stack generates it.

Each zone's Deployment starts at `START` replicas (its range is 1..4) with STAND-IN pods
(KWOK pods, no server); its picker is a STAND-IN pod with a STAND-IN process at its IP
(e2e/standin.py, not the router) answering ``/metrics`` on the picker Service's
``http-metrics`` port with no flow-control series, as an idle router does. Both zones are
watched every 5 s until zone-b has scaled in to its minimum and zone-a has held its replicas
with KEDA's ``Fallback`` condition on. Then zone-b's picker stand-in is stopped: its query
must go empty again (a lost router is still reported) and KEDA's fallback must engage.

Prints one JSON report. Exit 0 when every step passed, 1 otherwise, 2 when it cannot run
here. Every wait is bounded; every process is stopped by PID.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import addons  # noqa: E402
import cluster  # noqa: E402
import nodes  # noqa: E402
import promstack  # noqa: E402
from kube import Kube  # noqa: E402
from rehearse_hpa import hpa_state, not_built, pod_ips, start_keda  # noqa: E402
from rehearse_smoke import run, start_monitoring, stepper, wait  # noqa: E402

BLUEPRINT = REPO / "tests" / "e2e" / "fixtures" / "router-idle.yaml"
ENVIRONMENT = "local"
MODEL = "chat"
BEFORE, AFTER = "zone-a", "zone-b"
START = 2
"""Replicas each zone's Deployment starts with: above the zone's minimum of 1."""
METRICS_PORT = 9090
"""The picker Service's ``http-metrics`` port (llm-d-router v0.10.0 chart
``routerlib/templates/_service.yaml``: ``router.metricsPort | default 9090``)."""
WATCH_S = 300.0
"""The longest both zones are watched for their outcome: KEDA's 3 failed polls 15 s apart,
the 30 s stabilisation and one scale-down period of 60 s fit with room."""
SAMPLE_S = 5.0


def zone_objects(
    prometheus_url: str,
    zone: str,
    before: bool,
    blueprint: Path = BLUEPRINT,
    start: int = START,
) -> dict[str, Any]:
    """What one zone of model ``chat`` of `blueprint` gets: its picker (Deployment, Service,
    ServiceMonitor), its Deployment (`start` replicas) and its ScaledObject, as (collection
    path, object); and ``namespace``, ``deployment``, ``scaled_object``, ``hpa``, ``min``,
    ``query`` (its trigger's query), ``picker_selector``, ``spec`` (the ScaledObject's) and
    the resolved ``model`` (the zone's). `before`: the trigger's query is the sum alone, as
    it was."""
    from inferplane.blueprint import naming
    from inferplane.blueprint.resolution.resolve import load_blueprint, resolve
    from inferplane.components import stack_serving
    from inferplane.components.serving.observability import monitoring, promql
    from inferplane.components.serving.observability.promql_scope import Scope
    from inferplane.components.serving.routing import router, router_lb
    from inferplane.components.serving.scaling import autoscaling

    doc, _ = load_blueprint(blueprint)
    env = resolve(doc, ENVIRONMENT)
    serving_env = stack_serving.serving_environment(env)
    whole = stack_serving.served_model(env, env.models[MODEL])
    model = router.zone_model(whole, zone)
    ns = naming.namespace(env.blueprint)
    deployment = naming.zone_deployment(MODEL, zone)
    spec = autoscaling.scaled_object_spec(serving_env, model, ns, deployment, zone)
    (trigger,) = spec["triggers"]
    trigger["metadata"]["serverAddress"] = prometheus_url
    if before:
        trigger["metadata"]["query"] = promql.router_queue(
            Scope.of(serving_env, model, ns, deployment, zone)
        )
    epp = router.epp_name(model, zone)
    labels = naming.model_labels(env.blueprint, env.name, MODEL)
    pod_labels = {**naming.model_selector(env.blueprint, MODEL), "inferplane.dev/zone": zone}
    picker_labels = router.epp_pod_labels(model, zone)
    stand_in = {"inferplane.dev/stand-in": "true"}

    def stand_in_deployment(name: str, selector: dict[str, str], replicas: int, port: int):
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": selector},
                "template": {
                    "metadata": {"labels": {**selector, **stand_in}},
                    "spec": {
                        "containers": [
                            {
                                "name": "stand-in",
                                # Never pulled: KWOK runs no containers.
                                "image": "stand-in.invalid/stand-in:0",
                                "ports": [{"containerPort": port}],
                            }
                        ]
                    },
                },
            },
        }

    picker_service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": epp, "namespace": ns, "labels": {"app.kubernetes.io/name": epp}},
        "spec": {
            "selector": picker_labels,
            "ports": [{"name": router_lb.METRICS_PORT_NAME, "port": METRICS_PORT}],
        },
    }
    monitor = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {
            "name": epp,
            "namespace": ns,
            "labels": monitoring.release_labels(serving_env, model),
        },
        "spec": router_lb.service_monitor_spec(epp),
    }
    scaled_object = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": deployment, "namespace": ns, "labels": labels},
        "spec": spec,
    }
    return {
        "objects": [
            (
                f"/apis/apps/v1/namespaces/{ns}/deployments",
                stand_in_deployment(epp, picker_labels, 1, METRICS_PORT),
            ),
            (f"/api/v1/namespaces/{ns}/services", picker_service),
            (f"/apis/monitoring.coreos.com/v1/namespaces/{ns}/servicemonitors", monitor),
            (
                f"/apis/apps/v1/namespaces/{ns}/deployments",
                stand_in_deployment(deployment, pod_labels, start, 8000),
            ),
            (f"/apis/keda.sh/v1alpha1/namespaces/{ns}/scaledobjects", scaled_object),
        ],
        "namespace": ns,
        "deployment": deployment,
        "scaled_object": deployment,
        "hpa": spec["advanced"]["horizontalPodAutoscalerConfig"]["name"],
        "min": spec["minReplicaCount"],
        "query": trigger["metadata"]["query"],
        "ignore_null_values": trigger["metadata"].get("ignoreNullValues"),
        "fallback": spec.get("fallback"),
        "picker_selector": picker_labels,
        "spec": spec,
        "model": model,
    }


def keda_state(client: Kube, namespace: str, name: str) -> dict[str, Any]:
    """The ScaledObject's ``Fallback`` condition and its triggers' health, as KEDA writes
    them (``apis/keda/v1alpha1``: ``ConditionFallback``, ``status.health``)."""
    obj = client.get(f"/apis/keda.sh/v1alpha1/namespaces/{namespace}/scaledobjects/{name}")
    status = obj.get("status") or {}
    conditions = {c["type"]: c.get("status") for c in status.get("conditions") or []}
    return {
        "fallback": conditions.get("Fallback"),
        "health": {
            k: {"status": v.get("status"), "failures": v.get("numberOfFailures")}
            for k, v in (status.get("health") or {}).items()
        },
    }


def sample(client: Kube, port: int, zone: dict[str, Any], t0: float) -> dict[str, Any]:
    """One row of a zone's timeline."""
    ns = zone["namespace"]
    answer = promstack.query(port, zone["query"])
    hpa = hpa_state(client, ns, zone["hpa"]) or {}
    dep = client.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{zone['deployment']}")
    return {
        "t": round(time.monotonic() - t0, 1),
        "prometheus": [float(r["value"][1]) for r in answer],
        "hpa_current": (hpa.get("current") or {}).get("averageValue"),
        "hpa_desired": hpa.get("desiredReplicas"),
        "replicas": dep["spec"]["replicas"],
        **keda_state(client, ns, zone["scaled_object"]),
    }


def rehearse(state: Path, report: dict[str, Any]) -> None:
    step = stepper(report)
    node = nodes._node("rehearsal-0", {}, [], {})
    cp = step("control plane up", lambda: cluster.up(state, [node]))
    client = cp.client()
    sync, port = start_monitoring(state, cp, step)
    try:
        start_keda(state, cp, step)
        url = f"http://127.0.0.1:{port}"
        zones = {BEFORE: zone_objects(url, BEFORE, True), AFTER: zone_objects(url, AFTER, False)}
        ns = zones[AFTER]["namespace"]
        addons.namespace(client, ns)
        for zone in zones.values():
            for path, obj in zone["objects"]:
                client.create(path, obj)
        report["zones"] = {
            name: {
                "role": "before" if name == BEFORE else "after",
                **{
                    k: z[k]
                    for k in ("deployment", "hpa", "min", "query", "ignore_null_values", "fallback")
                },
            }
            for name, z in zones.items()
        }
        pickers: dict[str, int] = {}
        for name, zone in zones.items():
            ips = step(
                f"{name}: the picker's stand-in pod Running",
                picker_ips(client, ns, zone["picker_selector"]),
            )
            cmd = [sys.executable, str(HERE / "standin.py"), ips[0], str(METRICS_PORT)]
            pickers[name] = cluster.spawn(state, f"picker-{name}", cmd)

        step("Prometheus scrapes both pickers", pickers_scraped(port, ns, zones))
        t0 = time.monotonic()
        timeline: dict[str, list[dict[str, Any]]] = {name: [] for name in zones}
        report["timeline"] = timeline

        def watch(done: Any, limit: float) -> Any:
            deadline = time.monotonic() + limit
            while time.monotonic() < deadline:
                for name, zone in zones.items():
                    timeline[name].append(sample(client, port, zone, t0))
                if done():
                    return True
                time.sleep(SAMPLE_S)
            return False

        def outcome() -> bool:
            a, b = timeline[BEFORE][-1], timeline[AFTER][-1]
            return b["replicas"] == zones[AFTER]["min"] and a["fallback"] == "True"

        step(
            f"{AFTER} scales in to its minimum; {BEFORE} holds its replicas on KEDA's fallback",
            lambda: _must(watch(outcome, WATCH_S), "the outcome", timeline),
        )
        before_rows = timeline[BEFORE]
        if min(r["replicas"] for r in before_rows) < START:
            raise AssertionError(f"{BEFORE} scaled in: {before_rows}")
        report["seconds"] = {
            "after_scaled_in": _first(timeline[AFTER], lambda r: r["replicas"] == 1),
            "before_fallback": _first(before_rows, lambda r: r["fallback"] == "True"),
        }
        os.kill(pickers[AFTER], signal.SIGTERM)
        lost_at = len(timeline[AFTER])

        def lost() -> bool:
            row = timeline[AFTER][-1]
            return not row["prometheus"] and row["fallback"] == "True"

        step(
            f"{AFTER}'s picker lost: its query is empty again and KEDA's fallback engages",
            lambda: _must(watch(lost, WATCH_S), "the lost picker reported", timeline),
        )
        report["seconds"]["after_lost_fallback"] = round(
            timeline[AFTER][-1]["t"] - timeline[AFTER][lost_at]["t"], 1
        )
        if sync.last_error:
            raise RuntimeError(f"config sync: {sync.last_error}")
    finally:
        sync.stop()


def pickers_scraped(port: int, ns: str, zones: dict[str, Any]) -> Callable[[], bool]:
    """A step's body: wait until Prometheus scrapes every zone's picker stand-in."""

    def scraped() -> bool:
        return all(
            promstack.query(port, f'up{{namespace="{ns}", service="{router_epp(z)}"}} == 1')
            for z in zones.values()
        )

    return lambda: wait("up == 1", scraped, 120)


def router_epp(zone: dict[str, Any]) -> str:
    return next(
        obj["metadata"]["name"] for path, obj in zone["objects"] if path.endswith("/services")
    )


def _must(ok: bool, what: str, timeline: Any) -> bool:
    if not ok:
        raise TimeoutError(f"timed out after {WATCH_S:.0f} s waiting for {what}: {timeline}")
    return True


def picker_ips(client: Kube, ns: str, selector: dict[str, str]) -> Callable[[], list[str]]:
    """A step's body: the picker stand-in pod's IP once it runs."""
    return lambda: wait("its pod IP", lambda: pod_ips(client, ns, selector))


def _first(rows: list[dict[str, Any]], cond: Any) -> float | None:
    return next((r["t"] for r in rows if cond(r)), None)


def main(argv: list[str]) -> int:
    return run(argv, not_built(), rehearse, "inferplane-rehearsal-router-idle-")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
