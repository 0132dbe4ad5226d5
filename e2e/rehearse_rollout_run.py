"""`python e2e/rehearse_rollout_run.py [--keep]`: the stack's own rollout objects, run by the
real Argo Rollouts controller against stand-in replicas in two zones.

Inside a network namespace of its own (e2e/netns.py), with the real local control plane and
KWOK nodes shaped like the blueprint's pools and zones (e2e/nodes.py), the real Prometheus
operator and Prometheus (e2e/promstack.py) and the real Argo Rollouts controller
(`rehearse_rollout.start_controller`), for the model ``chat`` of e2e/rollout-blueprint.yaml
(two zones, two replicas each, ``rollout: {steps: [50, 100], step_s: 120}``, TTFT bound
500 ms):

1. the objects of e2e/rollout_objects.py, every one from the stack's own functions (per zone
   the Deployment ``chat-<zone>``, its Rollout, its guard AnalysisTemplate and, for the
   second zone, its gate; the Service and the ServiceMonitor with ``podTargetLabels``), at
   version ``v1``; the analyses ask this Prometheus;
2. each Running pod gets a stand-in vLLM process at its IP (e2e/standin_vllm.py) at the
   speed its template's annotation names; a sender offers the blueprint's ``peak_rps`` round
   robin over every ready stand-in (pod IPs only, inside the namespace) from start to end;
3. both zones Healthy on v1;
4. run A, ``v2`` as fast as v1, applied as `pulumi up` applies it (the gate first, then each
   zone's Deployment): the first zone's canary, promotion, then the second zone's gate
   passes and it is promoted too. Expected: both Healthy on v2, no abort;
5. run B, ``v3`` three times slower (``--slower 3``): the first zone's guard fails (the
   canary's TTFT p95 over the bound while the stable pods' is not), the Rollout aborts and
   its stable ReplicaSet is back at full size on v2; the second zone never gets a canary
   pod and its gate only fails; watched for `WATCH_B_S` after the abort (its gate's count
   runs out far later: `rollout.zone_wait_s`).

Prints one JSON report: per run the events (seconds after the change, per zone: phase, step,
abort, hashes, ready pods on each; AnalysisRun phases), the milestones, the guard's
measurements, the p95 of canary and stable pods as Prometheus saw them, and the requests by
version. Exit 0 when every expectation held, 1 otherwise, 2 when it cannot run here.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

import addons  # noqa: E402
import cluster  # noqa: E402
import nodes  # noqa: E402
import promstack  # noqa: E402
import rehearse_rollout  # noqa: E402
import rollout_objects as ro  # noqa: E402
from kube import Kube  # noqa: E402
from rehearse_smoke import run, start_monitoring, stepper, wait  # noqa: E402
from rollout_serving import Serving  # noqa: E402
from tools import REHEARSAL_TOOLS, TOOLS  # noqa: E402

BLUEPRINT = HERE / "rollout-blueprint.yaml"
ENVIRONMENT = "local"
MODEL = "chat"
RUN_A_S = 540.0
ABORT_S = 300.0
WATCH_B_S = 90.0


def not_built() -> list[str]:
    needed = [TOOLS[n] for n in ("kubernetes", "etcd", "kwok")]
    needed += [REHEARSAL_TOOLS[n] for n in ("prometheus", "prometheus-operator", "argo-rollouts")]
    return [tool.name for tool in (make() for make in needed) if not tool.built()]


class Watch:
    """Polls each zone's Rollout, pods and AnalysisRuns; records an event on every change,
    in seconds after `origin`."""

    def __init__(self, client: Kube, objs: dict[str, Any], origin: float) -> None:
        self.client, self.objs, self.origin = client, objs, origin
        self.ns = objs["namespace"]
        self.events: list[dict[str, Any]] = []
        self.last: dict[str, Any] = {}
        self.runs: dict[str, dict[str, Any]] = {}
        # AnalysisRuns stay after their rollout: those of an earlier version are not this run's.
        self.earlier = {
            r["metadata"]["name"] for r in client.items(f"{ro.API}/{self.ns}/analysisruns")
        }

    def poll(self) -> dict[str, dict[str, Any]]:
        t = round(time.monotonic() - self.origin, 1)
        now = {}
        pods = self.client.items(f"/api/v1/namespaces/{self.ns}/pods")
        for zone, rollout in self.objs["rollouts"].items():
            name = rollout["metadata"]["name"]
            got = self.client.get(f"{ro.API}/{self.ns}/rollouts/{name}")
            mine = [p for p in pods if p["metadata"]["name"].startswith(f"{name}-")]
            state = ro.zone_state(got, mine)
            now[zone] = state
            if self.last.get(zone) != state:
                self.events.append({"t": t, "zone": zone, **state})
                self.last[zone] = state
        for run_obj in self.client.items(f"{ro.API}/{self.ns}/analysisruns"):
            name = run_obj["metadata"]["name"]
            if name in self.earlier:
                continue
            zone = next(
                (
                    z
                    for z, r in self.objs["rollouts"].items()
                    if name.startswith(r["metadata"]["name"] + "-")
                ),
                None,
            )
            got = ro.analysis_state(run_obj)
            before = self.runs.get(name)
            if before is None or before["phase"] != got["phase"]:
                self.events.append(
                    {
                        "t": t,
                        "zone": zone,
                        "analysis": got["kind"],
                        "analysis_phase": got["phase"],
                        "name": name,
                    }
                )
            self.runs[name] = {**got, "zone": zone}
        return now


def apply_version(client: Kube, objs: dict[str, Any]) -> None:
    """As `pulumi up` applies a new version: each gate first, then the Deployments in the
    zones' order (components/serving/zone_deployments.py: a zone's Deployment waits for its
    gate)."""
    ns = objs["namespace"]
    for gate in objs["gates"].values():
        client.merge_patch(
            f"{ro.API}/{ns}/analysistemplates/{gate['metadata']['name']}", {"spec": gate["spec"]}
        )
    for zone in objs["zones"]:
        dep = objs["deployments"][zone]
        client.merge_patch(
            f"/apis/apps/v1/namespaces/{ns}/deployments/{dep['metadata']['name']}",
            ro.template_patch(dep),
        )


def healthy_on(states: dict[str, dict[str, Any]], replicas: int, old: set[str]) -> bool:
    """Every zone Healthy on a template not in `old`, at `replicas` pods, no other pod left."""
    return all(
        s["phase"] == "Healthy"
        and s["stable"] == s["current"]
        and s["stable"] not in old
        and s["stable_pods"] == replicas
        and s["other_pods"] == 0
        for s in states.values()
    )


def p95s(port: int, objs: dict[str, Any], zone: str, hashes: dict[str, str]) -> dict[str, Any]:
    """The TTFT p95 (ms) of each pod template of `zone`: the guard's own expression."""
    metrics = objs["guards"][zone]["spec"]["metrics"]
    (query,) = [m["provider"]["prometheus"]["query"] for m in metrics if m["name"] == "ttft-p95-ms"]
    out: dict[str, Any] = {}
    for role, h in hashes.items():
        try:
            got = promstack.query(port, ro.guard_side(query, h))
        except (OSError, promstack.ConfigError):
            got = []
        value = float(got[0]["value"][1]) if got else float("nan")
        out[role] = None if value != value else round(value, 1)
    return out


def rehearse(state: Path, report: dict[str, Any]) -> None:
    from inferplane.blueprint.resolution.resolve import load_blueprint, resolve
    from inferplane.components import argo_rollouts

    step = stepper(report)
    env = resolve(load_blueprint(BLUEPRINT)[0], ENVIRONMENT)
    traffic = env.models[MODEL].traffic
    assert traffic is not None and traffic.peak_rps
    cp = step("control plane up", lambda: cluster.up(state, nodes.nodes_for(env)))
    client = cp.client()
    sync, port = start_monitoring(state, cp, step)
    serving = None
    try:
        crds = [argo_rollouts.crd_path(f) for f in argo_rollouts.crd_files()]
        step("Argo Rollouts CRDs", lambda: addons.apply_crds(client, crds))
        addons.namespace(client, rehearse_rollout.CONTROLLER_NAMESPACE)
        report["controller"] = step(
            "controller started and leading",
            lambda: rehearse_rollout.start_controller(state, client, cp.kubeconfig),
        )
        url = f"http://127.0.0.1:{port}"
        versions = {
            v: ro.model_objects(url, BLUEPRINT, ENVIRONMENT, MODEL, v, slower)
            for v, slower in (("v1", 1.0), ("v2", 1.0), ("v3", 3.0))
        }
        report["revisions"] = {v: o["revision"] for v, o in versions.items()}
        objs = versions["v1"]
        ns = objs["namespace"]
        addons.namespace(client, ns)
        client.create(f"/api/v1/namespaces/{ns}/services", objs["service"])
        client.create(
            f"/apis/monitoring.coreos.com/v1/namespaces/{ns}/servicemonitors", objs["monitor"]
        )
        for zone in objs["zones"]:
            client.create(f"/apis/apps/v1/namespaces/{ns}/deployments", objs["deployments"][zone])
            if zone in objs["gates"]:
                client.create(f"{ro.API}/{ns}/analysistemplates", objs["gates"][zone])
            client.create(f"{ro.API}/{ns}/analysistemplates", objs["guards"][zone])
            client.create(f"{ro.API}/{ns}/rollouts", objs["rollouts"][zone])
        replicas = objs["rollouts"][objs["zones"][0]]["spec"]["replicas"]
        serving = Serving(
            state, client, objs, traffic.peak_rps, (str(BLUEPRINT), ENVIRONMENT, MODEL)
        )
        serving.start(traffic.input_tokens or 512, traffic.output_tokens or 16)
        watch0 = Watch(client, objs, time.monotonic())

        def on_v1() -> Any:
            states = watch0.poll()
            if not healthy_on(states, replicas, set()):
                return None
            return states if serving.counts()["ready"] == replicas * len(states) else None

        first = step(
            "both zones Healthy on v1, every stand-in serving",
            lambda: wait("v1 Healthy", on_v1, 240),
        )
        up = f'up{{namespace="{ns}", inferplane_dev_revision="{objs["revision"]}"}} == 1'
        step(
            "Prometheus scrapes every pod with its revision and template hash",
            lambda: wait("labelled up series", lambda: len(promstack.query(port, up)) == 4, 120),
        )
        old = {z: s["stable"] for z, s in first.items()}
        report["run_a"] = step(
            "run A: v2, as fast: zone by zone, promoted",
            lambda: run_a(client, versions["v2"], replicas, old),
        )
        old_b = {z: s["stable"] for z, s in report["run_a"]["final"].items()}
        report["run_b"] = step(
            "run B: v3, three times slower: zone A aborts, zone B untouched",
            lambda: run_b(client, port, versions["v3"], replicas, old_b, serving),
        )
        report["requests"] = serving.counts()
        report["expectations"] = expectations(report)
        failed = [k for k, ok in report["expectations"].items() if not ok]
        if failed:
            raise AssertionError(f"expectations that did not hold: {failed}")
    finally:
        if serving is not None:
            serving.close()
        sync.stop()


def run_a(client: Kube, objs: dict[str, Any], replicas: int, old: dict[str, str]) -> dict[str, Any]:
    start = time.monotonic()
    watch = Watch(client, objs, start)
    apply_version(client, objs)
    final: dict[str, Any] = {}

    def done() -> bool:
        final.update(watch.poll())
        return healthy_on(final, replicas, set(old.values()))

    try:
        wait("both zones Healthy on v2", done, RUN_A_S)
    finally:
        result = {
            "seconds": round(time.monotonic() - start, 1),
            "events": watch.events,
            "final": final,
            "milestones": {z: ro.milestones(watch.events, z, old[z]) for z in objs["zones"]},
        }
    return result


def run_b(
    client: Kube,
    port: int,
    objs: dict[str, Any],
    replicas: int,
    old: dict[str, str],
    serving: Serving,
) -> dict[str, Any]:
    first, second = objs["zones"][0], objs["zones"][1]
    start = time.monotonic()
    sent_before = dict(serving.counts()["sent"])
    watch = Watch(client, objs, start)
    apply_version(client, objs)
    states: dict[str, Any] = {}
    seen: list[dict[str, Any]] = []

    def sample() -> None:
        states.update(watch.poll())
        a = states[first]
        if a["current"] and a["current"] != a["stable"]:
            got = p95s(port, objs, first, {"canary": a["current"], "stable": a["stable"]})
            if not seen or {k: seen[-1][k] for k in got} != got:
                seen.append({"t": round(time.monotonic() - start, 1), **got})

    def aborted() -> bool:
        sample()
        a = states[first]
        return bool(a["abort"] and a["stable_pods"] == replicas and not a["canary_pods"])

    try:
        wait("zone A aborted, its stable pods back", aborted, ABORT_S)
        abort_t = round(time.monotonic() - start, 1)
        b_canary_max = 0
        until = time.monotonic() + WATCH_B_S
        while time.monotonic() < until:
            sample()
            b_canary_max = max(b_canary_max, states[second]["canary_pods"])
            time.sleep(2)
    finally:
        sent_after = serving.counts()["sent"]
        sent = {v: sent_after.get(v, 0) - sent_before.get(v, 0) for v in sent_after}
        total = sum(sent.values())
        result: dict[str, Any] = {
            "seconds": round(time.monotonic() - start, 1),
            "events": watch.events,
            "final": states,
            "milestones": {z: ro.milestones(watch.events, z, old[z]) for z in objs["zones"]},
            "old_hashes": old,
            "p95_ms_seen": seen,
            "requests": {
                "by_version": sent,
                "slow_share": round(sent.get("v3", 0) / total, 3) if total else None,
            },
            "analysis_runs": watch.runs,
        }
    result["replicas"] = replicas
    result["aborted_at"] = abort_t
    result["zone_b_canary_pods_max"] = b_canary_max
    result["watched_zone_b_after_abort_s"] = WATCH_B_S
    return result


def expectations(report: dict[str, Any]) -> dict[str, bool]:
    a, b = report["run_a"], report["run_b"]
    ma, mb = a["milestones"], b["milestones"]
    za, zb = list(ma)
    gate_b = [r for r in b["analysis_runs"].values() if r["kind"] == "gate" and r["zone"] == zb]
    gate_measures = [m for r in gate_b for ms in r["measurements"].values() for m in ms]
    guard_a = [r for r in b["analysis_runs"].values() if r["kind"] == "guard" and r["zone"] == za]
    return {
        "A: both zones Healthy on the new version": all(
            "healthy_on_new" in ma[z] for z in (za, zb)
        ),
        "A: no abort": not any("aborted" in ma[z] for z in (za, zb)),
        "A: the second zone's gate passed after the first zone was Healthy": bool(
            "gate_passed" in ma[zb] and ma[zb]["gate_passed"] >= ma[za]["healthy_on_new"]
        ),
        "A: the second zone's canary started after its gate passed": bool(
            ma[zb].get("canary_start", -1) >= ma[zb].get("gate_passed", 1e9)
        ),
        "B: the first zone's guard failed": any(r["phase"] == "Failed" for r in guard_a),
        "B: the first zone aborted with its stable pods back": "aborted" in mb[za],
        "B: the second zone never had a canary pod": b["zone_b_canary_pods_max"] == 0
        and "canary_start" not in mb[zb],
        "B: the second zone's gate only failed": bool(gate_measures)
        and all(phase == "Failed" for phase, _ in gate_measures),
        "B: the second zone still runs the old version": b["final"][zb]["stable"]
        == b["old_hashes"][zb]
        and b["final"][zb]["stable_pods"] == b["replicas"],
    }


def main(argv: list[str]) -> int:
    return run(argv, not_built(), rehearse, "inferplane-rehearsal-rollout-run-")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
