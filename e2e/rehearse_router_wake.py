"""`python e2e/rehearse_router_wake.py [--keep]`: an llm-aware zone at zero and the request that
wakes it, shown by the real KEDA with the router's timers as they were and as the stack sets
them now.

At zero replicas the llm-d router's flow control is "a scale-from-zero waiting room"
(llm-d-router v0.10.0 ``pkg/epp/flowcontrol/controller/internal/processor.go``): the request
waits in the queue, the queue gauge counts it, KEDA wakes the zone on that gauge. The queue
sheds a request after ``defaultRequestTTL`` (60 s when unset, ``controller/config.go``), with
503 while the pool has no endpoints (``pkg/epp/requestcontrol/admission.go``,
`translateFlowControlOutcome`); and KEDA scales the zone back to zero ``cooldownPeriod``
after its trigger was last active (kedacore/keda ``pkg/scaling/executor/
scale_scaledobjects.go`` at the pinned release, e2e/tools.toml). A first replica takes
minutes (the scale-out budget), so with the default TTL the waking request is shed, and a
cooldown as short as the model's scale-down stabilisation (what the stack set before
`router_wake.cooldown_s`) then removes the replica that was still starting.

Inside a network namespace of its own, with the real control plane, Prometheus operator and
Prometheus, KEDA operator and metrics API server (as e2e/rehearse_hpa.py), for model ``chat``
of tests/e2e/fixtures/router-wake.yaml (blueprints/llm-routing.yaml's model at zero, its
replicas going after 60 s of low load), one zone each:

- ``zone-a`` (**before**): the TTL flow control takes when none is set (60 s), and the zone's
  ScaledObject with the ``cooldownPeriod`` the stack set before: the stabilisation;
- ``zone-b`` (**after**): the TTL of the picker configuration the stack generates
  (`router.plugins_config`) and the zone's ScaledObject as the stack generates it.

What runs for real: Prometheus scraping each picker's queue gauge, KEDA waking the zone from
zero on the stack's trigger and scaling it back after its cooldown, the Deployment
controller and KWOK's pods. What is MODELLED, not run: the router. Its queue lives in this
script (one request per zone, held until a replica of the zone is ready, shed at the TTL
with the status the source gives), and the gauge it sets is exported by a STAND-IN process at
the picker pod's IP (e2e/standin.py) with the family's label names
(``pkg/epp/metrics/llm_d_router_metrics.go``, ``llmdFlowControlQueueSize``). A replica is
ready `start_s` after its pod runs: the pod's own parts of the plan's scale-out budget
(weights, engine load, readiness), not shortened. Dispatch happens at that readiness, with
none of the picker's discovery delay that the TTL allows for.

Prints one JSON report. Exit 0 when every step passed, 1 otherwise, 2 when it cannot run
here. Every wait is bounded; every process is stopped by PID.
"""

from __future__ import annotations

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
import promstack  # noqa: E402
from kube import Kube  # noqa: E402
from rehearse_hpa import not_built, start_keda  # noqa: E402
from rehearse_router_idle import (  # noqa: E402
    METRICS_PORT,
    keda_state,
    picker_ips,
    pickers_scraped,
    router_epp,
    zone_objects,
)
from rehearse_smoke import run, start_monitoring, stepper  # noqa: E402

BLUEPRINT = REPO / "tests" / "e2e" / "fixtures" / "router-wake.yaml"
MODEL = "chat"
BEFORE, AFTER = "zone-a", "zone-b"
POD_PARTS = ("weights", "engine_load", "readiness")
"""The parts of the scale-out budget a woken pod itself takes (`scale_out.Budget`); the
others (KEDA's poll, the scrape) are the real loops' own time here."""
QUEUE = "llm_d_epp_flow_control_queue_size"
SAMPLE_S = 2.0
WATCH_S = 480.0
"""The longest the zones are watched: the fixed TTL (218 s) and a 138 s start fit, and the
before zone's 60 s TTL, 60 s cooldown and KEDA's polls."""


def timers(blueprint: Path = BLUEPRINT) -> dict[str, Any]:
    """What decides each zone's outcome: the TTL and cooldown before and after, and the
    seconds a woken pod takes to be ready (`POD_PARTS` of the plan's budget)."""
    from inferplane.blueprint.derived import router_wake, scale_out
    from inferplane.blueprint.resolution.resolve import load_blueprint, resolve
    from inferplane.components.serving.routing import router

    doc, _ = load_blueprint(blueprint)
    env = resolve(doc, "local")
    model = env.models[MODEL]
    budget = scale_out.budgets(env)[MODEL]
    start = sum(p.seconds for p in budget.parts if p.name in POD_PARTS)
    zone = zone_objects("http://127.0.0.1:1", AFTER, False, blueprint, 0)
    config = router.plugins_config(zone["model"]) or {}
    ttl = config["flowControl"]["defaultRequestTTL"]
    return {
        "start_s": start,
        "before": {
            "ttl_s": router_wake.QUEUE_TTL_DEFAULT_S,
            "cooldown_s": model.autoscaling.scale_down_stabilization_s,
        },
        "after": {"ttl_s": int(ttl.rstrip("s")), "cooldown_s": zone["spec"]["cooldownPeriod"]},
    }


class ModelledQueue:
    """MODELLED: one zone's flow-control queue holding one request (module docstring). It
    sets the gauge the STAND-IN picker exports: 1 while the request waits, 0 after."""

    def __init__(self, picker_ip: str, labels: str, ttl_s: float) -> None:
        self.url = f"http://{picker_ip}:{METRICS_PORT}/stand-in/gauge"
        self.series = f"{QUEUE}{{{labels}}}"
        self.ttl_s = ttl_s
        self.state = "idle"
        self.status: int | None = None
        self.enqueued = 0.0
        self.ended: float | None = None

    def _gauge(self, value: int) -> None:
        req = urllib.request.Request(self.url, f"{self.series} {value}".encode())
        with urllib.request.urlopen(req, timeout=10) as resp:
            if resp.status != 200:
                raise RuntimeError(f"the picker stand-in refused the gauge: HTTP {resp.status}")

    def enqueue(self, now: float) -> None:
        self.state, self.enqueued = "queued", now
        self._gauge(1)

    def tick(self, now: float, ready: bool, endpoints: int) -> None:
        """Dispatch to a ready replica, or shed at the TTL: 503 with no endpoints in the
        pool, else 429 (`translateFlowControlOutcome`). The pool's endpoints are the ready
        replicas."""
        if self.state != "queued":
            return
        if ready:
            self.state, self.status, self.ended = "dispatched", 200, now
            self._gauge(0)
        elif now - self.enqueued >= self.ttl_s:
            self.state, self.ended = "shed", now
            self.status = 503 if endpoints == 0 else 429
            self._gauge(0)


def rehearse(state: Path, report: dict[str, Any]) -> None:
    step = stepper(report)
    node = nodes._node("rehearsal-0", {}, [], {})
    cp = step("control plane up", lambda: cluster.up(state, [node]))
    client = cp.client()
    sync, port = start_monitoring(state, cp, step)
    try:
        start_keda(state, cp, step)
        url = f"http://127.0.0.1:{port}"
        t = timers()
        report["modelled"] = (
            "the llm-d router's flow-control queue (hold, dispatch at a ready replica, shed at "
            "the TTL); a replica's readiness after its pod's parts of the scale-out budget"
        )
        report["timers"] = t
        zones = {
            BEFORE: zone_objects(url, BEFORE, False, BLUEPRINT, 0),
            AFTER: zone_objects(url, AFTER, False, BLUEPRINT, 0),
        }
        zones[BEFORE]["spec"]["cooldownPeriod"] = t["before"]["cooldown_s"]
        ns = zones[AFTER]["namespace"]
        addons.namespace(client, ns)
        for zone in zones.values():
            for path, obj in zone["objects"]:
                client.create(path, obj)
        queues: dict[str, ModelledQueue] = {}
        for name, zone in zones.items():
            ips = step(
                f"{name}: the picker's stand-in pod Running",
                picker_ips(client, ns, zone["picker_selector"]),
            )
            cmd = [sys.executable, str(HERE / "standin.py"), ips[0], str(METRICS_PORT)]
            cluster.spawn(state, f"picker-{name}", cmd)
            labels = (
                f'fairness_id="",priority="0",inference_pool="{router_epp(zone)}",'
                f'model_name="{MODEL}",target_model_name="{MODEL}"'
            )
            role = "before" if name == BEFORE else "after"
            queues[name] = ModelledQueue(ips[0], labels, t[role]["ttl_s"])

        step("Prometheus scrapes both pickers", pickers_scraped(port, ns, zones))
        t0 = time.monotonic()
        for queue in queues.values():
            queue.enqueue(0.0)
        timeline: dict[str, list[dict[str, Any]]] = {name: [] for name in zones}
        report["timeline"] = timeline
        running_since: dict[str, dict[str, float]] = {name: {} for name in zones}

        def observe() -> None:
            now = time.monotonic() - t0
            for name, zone in zones.items():
                dep = client.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{zone['deployment']}")
                pods = _running_pods(client, ns, dep)
                seen = running_since[name]
                for pod in pods:
                    seen.setdefault(pod, now)
                for gone in set(seen) - set(pods):
                    del seen[gone]
                ready = sum(1 for since in seen.values() if now - since >= t["start_s"])
                queues[name].tick(now, ready > 0, endpoints=ready)
                timeline[name].append(
                    {
                        "t": round(now, 1),
                        "queue": queues[name].state,
                        "replicas": dep["spec"].get("replicas"),
                        "running": len(pods),
                        "ready": ready > 0,
                        "prometheus": [
                            float(r["value"][1]) for r in promstack.query(port, zone["query"])
                        ],
                        "keda_active": _condition(client, ns, zone["scaled_object"], "Active"),
                        **keda_state(client, ns, zone["scaled_object"]),
                    }
                )

        def done() -> bool:
            a = timeline[BEFORE]
            back_to_zero = any(r["replicas"] for r in a) and a[-1]["replicas"] == 0
            settled = queues[AFTER].state != "queued"
            return queues[BEFORE].state == "shed" and back_to_zero and settled

        def watch() -> bool:
            deadline = time.monotonic() + WATCH_S
            while time.monotonic() < deadline:
                observe()
                if done():
                    return True
                time.sleep(SAMPLE_S)
            raise TimeoutError(f"timed out after {WATCH_S:.0f} s: {timeline}")

        step(
            f"{BEFORE} sheds the request and goes back to zero; {AFTER} serves it",
            watch,
        )
        report["outcome"] = {
            name: {
                "request": q.state,
                "status": q.status,
                "seconds": None if q.ended is None else round(q.ended, 1),
                "woke_at": _first(timeline[name], lambda r: r["replicas"]),
                "first_running_at": _first(timeline[name], lambda r: r["running"]),
                "ready_at": _first(timeline[name], lambda r: r["ready"]),
                "back_to_zero_at": _first_after_wake(timeline[name]),
            }
            for name, q in queues.items()
        }
        if sync.last_error:
            raise RuntimeError(f"config sync: {sync.last_error}")
    finally:
        sync.stop()


def _running_pods(client: Kube, namespace: str, deployment: dict[str, Any]) -> list[str]:
    match = deployment["spec"]["selector"]["matchLabels"]
    query = ",".join(f"{k}={v}" for k, v in match.items())
    pods = client.items(f"/api/v1/namespaces/{namespace}/pods", labelSelector=query)
    return sorted(
        p["metadata"]["name"]
        for p in pods
        if (p.get("status") or {}).get("phase") == "Running"
        and not p["metadata"].get("deletionTimestamp")
    )


def _condition(client: Kube, namespace: str, name: str, kind: str) -> str | None:
    obj = client.get(f"/apis/keda.sh/v1alpha1/namespaces/{namespace}/scaledobjects/{name}")
    found = [c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind]
    return found[0].get("status") if found else None


def _first(rows: list[dict[str, Any]], cond: Any) -> float | None:
    return next((r["t"] for r in rows if cond(r)), None)


def _first_after_wake(rows: list[dict[str, Any]]) -> float | None:
    woke = _first(rows, lambda r: r["replicas"])
    if woke is None:
        return None
    return _first([r for r in rows if r["t"] > woke], lambda r: r["replicas"] == 0)


def main(argv: list[str]) -> int:
    return run(argv, not_built(), rehearse, "inferplane-rehearsal-router-wake-")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
