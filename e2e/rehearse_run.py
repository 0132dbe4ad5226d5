"""`python e2e/rehearse_run.py BLUEPRINT ENV PROFILE [--slower F] [--time-scale S]
[--fault KIND@SECONDS ...] [--policy-config FILE] [--keep]`:
the harness behind `inferplane rehearse` (inferplane/app/rehearse.py).

Inside a network namespace of its own (e2e/netns.py), with the real local control plane,
the real Prometheus operator and Prometheus, the real KEDA operator and its metrics API
server (as e2e/rehearse_hpa.py starts them), for each vLLM model of the environment:

1. its Deployment of STAND-IN pods, its Service, and the stack's own ServiceMonitor,
   PrometheusRule (recording rules and alerts) and ScaledObject (`rehearse_hpa.model_objects`;
   the trigger's address is this Prometheus);
2. each pod that becomes Running gets, after the plan's scale-out parts for a new replica
   (the scale-out budget, divided by ``--time-scale``), a stand-in vLLM process at its pod
   IP (e2e/standin_vllm.py: the capacity planner's latency, ``--slower``); it counts as
   ready once it answers ``/health``; a pod that goes away has its stand-in stopped by PID;
3. the sender plays the traffic profile: each zone's requests per second, spread round
   robin over the model's ready stand-ins (a Service's load balancer), from this process,
   to pod IPs only (inside the namespace), at most `MAX_IN_FLIGHT` at once; it stops at the
   profile's end. Each request is streamed (``"stream": true``, as a chat client calls
   vLLM) and read chunk by chunk (`inferplane.app.rehearsal.stream`): the report's
   ``client`` gives, per model, the callers' TTFT, ITL and end-to-end p95s of the served
   requests and how the others failed (an error status, refused, cut before ``[DONE]``, a
   timeout, a malformed chunk);
4. every 5 s a sample: the timeline's queries on Prometheus, the HPA's desired replicas,
   the ready stand-ins, the Pending pods, Prometheus's alerts; one progress line a sample;
5. each ``--fault KIND@SECONDS`` at its time (`inferplane.app.rehearsal.faults`):
   ``kill-replica`` kills (SIGKILL, by PID) the stand-in of each model's first ready pod
   and starts it again after the model's start-up, as a restarted container; the report's
   ``faults`` say when, which pod, the requests that failed with it (cut mid-stream, or
   refused), and when it served again.

Prints one JSON report: ``samples`` per model (`inferplane.app.rehearsal.timeline.Row`
fields), ``sent`` counts, ``client`` latencies, the steps. Exit 0 when it ran to the
end, 1 when a step failed, 2 when it cannot run here (a tool not built, no network
namespace).
"""

from __future__ import annotations

import collections
import contextlib
import ipaddress
import json
import os
import signal
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
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
import rehearse_hpa  # noqa: E402
from kube import Kube  # noqa: E402
from rehearse_smoke import run, start_monitoring, stepper, wait  # noqa: E402

from inferplane.app.rehearsal import stream  # noqa: E402

PORT = rehearse_hpa.HTTP_PORT
MAX_IN_FLIGHT = 1024
REQUEST_TIMEOUT_S = 600.0
FAILURE_EXAMPLES = 3
POD_NET = ipaddress.ip_network(cluster.POD_CIDR)
SAMPLE_S = 5.0
TICK_S = 0.1


@dataclass
class StandIns:
    """The stand-in processes of one model, by pod name."""

    model: str
    startup_s: float
    first_seen: dict[str, float] = field(default_factory=dict)
    pids: dict[str, int] = field(default_factory=dict)
    ips: dict[str, str] = field(default_factory=dict)
    ready: dict[str, str] = field(default_factory=dict)

    def ready_ips(self) -> list[str]:
        return sorted(self.ready.values())


@dataclass
class Sender:
    """Plays one model's traffic plan against its ready stand-ins."""

    plan: Any
    standins: StandIns
    pool: ThreadPoolExecutor
    in_flight: int = 0
    sent: int = 0
    ok: int = 0
    failed: int = 0
    no_replica: int = 0
    dropped_full: int = 0
    failed_by_ip: dict[str, collections.Counter[str]] = field(default_factory=dict)
    client: stream.Latencies = field(default_factory=stream.Latencies)
    """What the callers saw: TTFT, ITL and end to end of the served requests, every outcome."""
    failure_examples: dict[str, list[str]] = field(default_factory=dict)
    """The first `FAILURE_EXAMPLES` failures of each outcome: where, and what was seen."""
    _owed: float = 0.0
    _next: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def tick(self, t: float, dt: float) -> None:
        self._owed += self.plan.rps_at(t) * dt
        while self._owed >= 1.0:
            self._owed -= 1.0
            ips = self.standins.ready_ips()
            if not ips:
                self.no_replica += 1
                continue
            with self._lock:
                if self.in_flight >= MAX_IN_FLIGHT:
                    self.dropped_full += 1
                    continue
                self.in_flight += 1
                self.sent += 1
            ip = ips[self._next % len(ips)]
            self._next += 1
            self.pool.submit(self._send, ip)

    def _send(self, ip: str) -> None:
        # As a chat client calls vLLM: streamed, read chunk by chunk (`stream.request`).
        try:
            got = stream.request(
                ip,
                PORT,
                "/v1/completions",
                {
                    "model": self.standins.model,
                    "prompt": "x",
                    "max_tokens": self.plan.output_tokens,
                },
                timeout=REQUEST_TIMEOUT_S,
            )
        except Exception as exc:  # an answer the reader did not foresee
            # Counted as malformed, never lost: a request that vanished here would hold its
            # place in `in_flight` for good, and later ones would be dropped as over the bound.
            got = stream.Outcome("malformed", detail=f"{type(exc).__name__}: {exc}"[:200])
        self.client.add(got)
        with self._lock:
            self.in_flight -= 1
            if got.ok:
                self.ok += 1
            else:
                self.failed += 1
                self.failed_by_ip.setdefault(ip, collections.Counter())[got.outcome] += 1
                seen = self.failure_examples.setdefault(got.outcome, [])
                if len(seen) < FAILURE_EXAMPLES:
                    seen.append(f"{ip}: {got.detail or got.status}"[:240])

    def failures_at(self, ip: str) -> collections.Counter[str]:
        """The failed requests sent to `ip` so far, by outcome (`stream.OUTCOMES`)."""
        with self._lock:
            return collections.Counter(self.failed_by_ip.get(ip, {}))

    def counts(self) -> dict[str, Any]:
        with self._lock:
            by_outcome: collections.Counter[str] = collections.Counter()
            for c in self.failed_by_ip.values():
                by_outcome.update(c)
            return {
                "sent": self.sent,
                "ok": self.ok,
                "failed": self.failed,
                "failed_by_outcome": dict(sorted(by_outcome.items())),
                "failure_examples": {k: list(v) for k, v in self.failure_examples.items()},
                "in_flight": self.in_flight,
                "no_ready_replica": self.no_replica,
                "over_the_in_flight_bound": self.dropped_full,
            }


def _healthy(ip: str) -> bool:
    try:
        with urllib.request.urlopen(f"http://{ip}:{PORT}/health", timeout=1) as resp:
            return resp.status == 200
    except OSError:
        return False


def reconcile(
    state: Path,
    client: Kube,
    ns: str,
    selector: dict[str, str],
    s: StandIns,
    args: list[str],
    now: float,
) -> None:
    """Start a stand-in for each Running pod once its start-up has passed; stop those of
    pods that are gone."""
    running = {}
    query = ",".join(f"{k}={v}" for k, v in selector.items())
    for pod in client.items(f"/api/v1/namespaces/{ns}/pods", labelSelector=query):
        status = pod.get("status") or {}
        if pod["metadata"].get("deletionTimestamp"):
            continue
        ip = status.get("podIP")
        # Only pod CIDR addresses, local inside the namespace: the sender sends nowhere else.
        if status.get("phase") == "Running" and ip and ipaddress.ip_address(ip) in POD_NET:
            running[pod["metadata"]["name"]] = ip
    for name in list(s.pids):
        if name not in running:
            with contextlib.suppress(ProcessLookupError):
                os.kill(s.pids[name], signal.SIGTERM)
            for d in (s.pids, s.ips, s.ready, s.first_seen):
                d.pop(name, None)
    for name, ip in running.items():
        s.first_seen.setdefault(name, now)
        if name not in s.pids and now - s.first_seen[name] >= s.startup_s:
            cmd = [sys.executable, str(HERE / "standin_vllm.py"), ip, str(PORT), *args]
            s.pids[name] = cluster.spawn(state, f"stand-in-{name}", cmd)
            s.ips[name] = ip
        if name in s.pids and name not in s.ready and _healthy(ip):
            s.ready[name] = ip


def kill_replica(s: StandIns, sender: Sender, t: float, now: float) -> dict[str, Any] | None:
    """The ``kill-replica`` fault on one model: its first ready stand-in is killed by PID and
    leaves the ready set; the pod stays and its stand-in starts again after the model's
    start-up (`reconcile`, from `now`). None when no stand-in is ready."""
    if not s.ready:
        return None
    pod = sorted(s.ready)[0]
    ip = s.ready.pop(pod)
    # Read before the kill: a request that fails as it dies is the fault's.
    failed_before = sender.failures_at(ip)
    with contextlib.suppress(ProcessLookupError):
        os.kill(s.pids.pop(pod), signal.SIGKILL)
    s.ips.pop(pod, None)
    s.first_seen[pod] = now
    return {
        "kind": "kill-replica",
        "at_s": round(t, 1),
        "model": s.model,
        "pod": pod,
        "ip": ip,
        "_failed_before": failed_before,
        "_failed_until_back": None,
        "ready_again_at_s": None,
    }


def fault_report(
    events: list[dict[str, Any]], models: dict[str, Any], senders: dict[str, Sender]
) -> list[dict[str, Any]]:
    """The faults as the report gives them: the requests to the killed stand-in's address that
    failed from the kill until it served again (its restarted stand-in's own failures, or
    a later fault's, are not this one's), by how: cut mid-stream (an answer had begun and
    ended before ``[DONE]``), refused (no answer at all), or otherwise."""
    out = []
    for e in events:
        sender = senders[e["model"]]
        until = e["_failed_until_back"]
        if until is None:
            until = sender.failures_at(e["ip"])
        failed = until - e["_failed_before"]
        out.append(
            {k: v for k, v in e.items() if not k.startswith("_")}
            | {
                "failed_requests": sum(failed.values()),
                "cut_mid_stream": failed["cut"],
                "refused": failed["refused"],
                "failed_otherwise": {
                    k: n for k, n in sorted(failed.items()) if k not in ("cut", "refused")
                },
            }
        )
    return out


def sample(port: int, client: Kube, m: dict[str, Any], t: float, plan: Any) -> dict[str, Any]:
    from inferplane.app.rehearsal import timeline

    row: dict[str, Any] = {"t": round(t, 1), "offered_rps": plan.rps_by_zone(t)}
    lat: dict[str, float | None] = {}
    for key, expr in m["queries"].items():
        try:
            value = timeline.value_of(promstack.query(port, expr))
        except (OSError, promstack.ConfigError):
            value = None
        if key in ("queue", "running"):
            row[key] = value
        else:
            lat[key] = value
    row["latency_ms"] = lat
    hpa = rehearse_hpa.hpa_state(client, m["namespace"], m["hpa"]) or {}
    row["desired"] = hpa.get("desiredReplicas")
    row["ready"] = len(m["standins"].ready)
    pods = client.items(f"/api/v1/namespaces/{m['namespace']}/pods")
    row["pending_pods"] = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Pending")
    try:
        _, body = promstack.http(f"http://127.0.0.1:{port}/api/v1/alerts")
        alerts = json.loads(body)["data"]["alerts"]
    except (OSError, ValueError, KeyError):
        alerts = []
    pending, firing = timeline.alerts_of(alerts, m["namespace"])
    row["alerts_pending"], row["alerts_firing"] = list(pending), list(firing)
    return row


def _num(value: float | None, unit: str = "") -> str:
    return "-" if value is None else f"{value:.0f}{unit}"


def progress(name: str, t: float, end: int, row: dict[str, Any]) -> str:
    """One bounded line: where the profile is and what the loops show."""
    lat = row["latency_ms"]
    firing = ",".join(row["alerts_firing"]) or "-"
    return (
        f"[{t:4.0f}/{end} s] {name[:40]}: offered {sum(row['offered_rps'].values()):.1f} rps, "
        f"waiting {_num(row['queue'])}, running {_num(row['running'])}, desired "
        f"{_num(row['desired'])}, ready {row['ready']}, pending {row['pending_pods']}, "
        f"p95 ttft {_num(lat.get('ttft_p95'), ' ms')} e2e {_num(lat.get('e2e_p95'), ' ms')}, "
        f"firing {firing[:80]}"
    )


def rehearse(state: Path, report: dict[str, Any], opts: dict[str, Any]) -> None:
    from inferplane.app import platform_scale_out
    from inferplane.app.rehearsal import scope, timeline, traffic
    from inferplane.blueprint import naming
    from inferplane.blueprint.derived import scale_out
    from inferplane.blueprint.resolution.resolve import load_blueprint, resolve
    from inferplane.components import stack_serving
    from inferplane.components.serving.observability import monitoring
    from inferplane.components.serving.observability.promql_scope import Scope

    blueprint, env_name = Path(opts["blueprint"]), opts["env"]
    doc, _ = load_blueprint(blueprint)
    scaling = platform_scale_out.of_file(opts.get("policy_config"))
    env = resolve(doc, env_name, scaling)
    serving_env = stack_serving.serving_environment(env)
    profile = traffic.find(opts["profile"])
    budgets = scale_out.budgets(env, scaling.constants)
    names, report["not_rehearsed"] = scope.split(env)
    if not names:
        raise RuntimeError(f"environment {env_name}: no model can be rehearsed yet")
    step = stepper(report)
    node = nodes._node("rehearsal-0", {}, [], {})
    cp = step("control plane up", lambda: cluster.up(state, [node]))
    client = cp.client()
    sync, port = start_monitoring(state, cp, step)
    pool = ThreadPoolExecutor(max_workers=MAX_IN_FLIGHT)
    try:
        rehearse_hpa.start_keda(state, cp, step)
        models: dict[str, dict[str, Any]] = {}
        for name in names:
            model = env.models[name]
            tr = model.traffic
            plan = traffic.for_model(
                profile,
                peak_rps=tr.peak_rps if tr else None,
                input_tokens=tr.input_tokens if tr else None,
                output_tokens=tr.output_tokens if tr else None,
                env_zones=list(env.pool_of(model).zones),
                model_path=("models", name),
            )
            got = rehearse_hpa.model_objects(f"http://127.0.0.1:{port}", blueprint, env_name, name)
            ns = got["namespace"]
            served = stack_serving.served_model(env, model)
            rule = {
                "apiVersion": "monitoring.coreos.com/v1",
                "kind": "PrometheusRule",
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "labels": monitoring.release_labels(serving_env, served),
                },
                "spec": monitoring.prometheus_rule_spec(serving_env, served, ns),
            }
            addons.namespace(client, ns)
            for path, obj in got["objects"]:
                client.create(path, obj)
            client.create(f"/apis/monitoring.coreos.com/v1/namespaces/{ns}/prometheusrules", rule)
            budget = budgets.get(name)
            startup = (budget.total_s if budget else 0) / opts["time_scale"]
            models[name] = {
                **got,
                "plan": plan,
                "selector": naming.model_selector(env.blueprint, name),
                "queries": timeline.queries(Scope.of(serving_env, served, ns)),
                "standins": StandIns(name, startup),
                "args": [
                    str(blueprint),
                    env_name,
                    name,
                    str(plan.input_tokens),
                    str(plan.output_tokens),
                    str(opts["slower"]),
                ],
            }
            report.setdefault("models", {})[name] = {
                "namespace": ns,
                "startup_s": startup,
                "input_tokens": plan.input_tokens,
                "output_tokens": plan.output_tokens,
                "lengths_from": plan.lengths_from,
            }

        def first_ready() -> bool:
            now = time.monotonic()
            for m in models.values():
                reconcile(
                    state, client, m["namespace"], m["selector"], m["standins"], m["args"], now
                )
            return all(len(m["standins"].ready) >= max(1, m["min"]) for m in models.values())

        step(
            "the stand-ins of every model serve",
            lambda: wait(
                "ready stand-ins",
                first_ready,
                120 + max(m["standins"].startup_s for m in models.values()),
            ),
        )
        senders = {n: Sender(m["plan"], m["standins"], pool) for n, m in models.items()}
        samples: dict[str, list[dict[str, Any]]] = {n: [] for n in models}
        start = time.monotonic()
        end = profile.seconds
        next_sample, next_reconcile = 0.0, 0.0
        last = start
        pending = sorted(opts.get("faults") or [], key=lambda f: f[1])
        events: list[dict[str, Any]] = []
        while True:
            now = time.monotonic()
            t = now - start
            if t > end:
                break
            for s in senders.values():
                s.tick(t, now - last)
            last = now
            while pending and t >= pending[0][1]:
                pending.pop(0)
                for n, m in models.items():
                    event = kill_replica(m["standins"], senders[n], t, now)
                    if event is not None:
                        events.append(event)
            for e in events:
                if (
                    e["ready_again_at_s"] is None
                    and e["pod"] in models[e["model"]]["standins"].ready
                ):
                    e["ready_again_at_s"] = round(t, 1)
                    e["_failed_until_back"] = senders[e["model"]].failures_at(e["ip"])
            if t >= next_reconcile:
                for m in models.values():
                    reconcile(
                        state, client, m["namespace"], m["selector"], m["standins"], m["args"], now
                    )
                next_reconcile = t + 1.0
            if t >= next_sample:
                for n, m in models.items():
                    row = sample(port, client, m, t, m["plan"])
                    samples[n].append(row)
                    print(progress(n, t, end, row), file=sys.stderr, flush=True)
                next_sample = t + SAMPLE_S
            time.sleep(TICK_S)
        report["samples"] = samples
        report["sent"] = {n: s.counts() for n, s in senders.items()}
        report["client"] = {n: s.client.as_json() for n, s in senders.items()}
        report["faults"] = fault_report(events, models, senders)
        report["profile"] = {"name": profile.name, "seconds": profile.seconds}
        if sync.last_error:
            report["config_sync_error"] = sync.last_error
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        sync.stop()


def main(argv: list[str]) -> int:
    args = [a for a in argv if not a.startswith("--")]
    opts: dict[str, Any] = {"slower": 1.0, "time_scale": 1.0}
    for flag, key in (("--slower", "slower"), ("--time-scale", "time_scale")):
        if flag in argv:
            opts[key] = float(argv[argv.index(flag) + 1])
            args.remove(argv[argv.index(flag) + 1])
    if "--policy-config" in argv:
        opts["policy_config"] = argv[argv.index("--policy-config") + 1]
        args.remove(opts["policy_config"])
    opts["faults"] = []
    for i, a in enumerate(argv):
        if a == "--fault" and i + 1 < len(argv):
            from inferplane.app.rehearsal import faults

            try:
                fault = faults.parse(argv[i + 1], float("inf"))
            except faults.FaultError as err:
                print(err, file=sys.stderr)
                return 2
            opts["faults"].append((fault.kind, fault.at_s))
            args.remove(argv[i + 1])
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    opts.update(blueprint=args[0], env=args[1], profile=args[2])
    return run(
        argv,
        rehearse_hpa.not_built(),
        lambda state, report: rehearse(state, report, opts),
        "inferplane-rehearse-",
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
