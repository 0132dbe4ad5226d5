"""`python e2e/rehearse_smoke.py [--keep]`: the rehearsal's metrics path, end to end.

Inside a network namespace of its own (e2e/netns.py), with the real local control plane
(e2e/cluster.py: etcd, kube-apiserver, controller manager, scheduler, KWOK, one KWOK node),
the real Prometheus operator and the real Prometheus (e2e/promstack.py):

1. the operator reconciles a `Prometheus` shaped like kube-prometheus-stack's, and Prometheus
   starts on the configuration the operator generates;
2. a Deployment of one STAND-IN pod (e2e/standin.py: a counter over HTTP, not a real server)
   is scheduled onto the KWOK node, which gives it a pod IP of the pod CIDR; the stand-in
   listens at that IP, which is local inside the namespace;
3. a Service and a ServiceMonitor labelled `release: kube-prometheus-stack` select it; the
   operator adds its scrape config, the config sync reloads Prometheus, and Prometheus
   discovers the endpoint through the API server and scrapes it, until
   `up{namespace=...,service=...} == 1` and the stand-in's counter is in the TSDB.

Prints one JSON report. Exit 0 when every step passed, 1 otherwise, 2 when it cannot run
here (a tool not built, or no network namespace; the report's `not_run` says why). Every
wait is bounded; every process is stopped by PID. `--keep` leaves the state folder.
"""

from __future__ import annotations

import ipaddress
import json
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import addons  # noqa: E402
import cluster  # noqa: E402
import netns  # noqa: E402
import nodes  # noqa: E402
import promstack  # noqa: E402
import standin  # noqa: E402
from tools import REHEARSAL_TOOLS, TOOLS, pins  # noqa: E402

NAMESPACE = "rehearsal-smoke"
APP = "standin"
PORT = 8000
LABELS = {"app.kubernetes.io/name": APP, "inferplane.dev/stand-in": "true"}
WAIT = 120.0
SELECTOR = f'{{namespace="{NAMESPACE}",service="{APP}"}}'
# A recording rule of a PrometheusRule: proves the operator's rule ConfigMaps reach Prometheus.
RECORD = "inferplane_standin:up"


def not_built() -> list[str]:
    needed = [TOOLS[n] for n in ("kubernetes", "etcd", "kwok")]
    needed += [REHEARSAL_TOOLS[n] for n in ("prometheus", "prometheus-operator")]
    return [tool.name for tool in (make() for make in needed) if not tool.built()]


def stand_in_objects() -> list[tuple[str, dict[str, Any]]]:
    """(collection path, object): the stand-in's Deployment, Service and ServiceMonitor."""
    meta = {"namespace": NAMESPACE, "labels": dict(LABELS)}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": APP, **meta},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app.kubernetes.io/name": APP}},
            "template": {
                "metadata": {"labels": dict(LABELS)},
                "spec": {
                    "containers": [
                        {
                            "name": APP,
                            # Never pulled: KWOK runs no containers; the process is standin.py.
                            "image": "stand-in.invalid/standin:0",
                            "ports": [{"name": "metrics", "containerPort": PORT}],
                        }
                    ]
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": APP, **meta},
        "spec": {
            "selector": {"app.kubernetes.io/name": APP},
            "ports": [{"name": "metrics", "port": PORT, "targetPort": "metrics"}],
        },
    }
    monitor = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {
            "name": APP,
            "namespace": NAMESPACE,
            "labels": {**LABELS, **promstack.SELECTOR["matchLabels"]},
        },
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": APP}},
            "endpoints": [{"port": "metrics", "interval": "5s"}],
        },
    }
    rule = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": monitor["metadata"],
        "spec": {
            "groups": [
                {
                    "name": f"{NAMESPACE}.{APP}",
                    "interval": "5s",
                    "rules": [{"record": RECORD, "expr": f"up{SELECTOR}"}],
                }
            ]
        },
    }
    base = f"/api/v1/namespaces/{NAMESPACE}"
    monitoring = f"/apis/monitoring.coreos.com/v1/namespaces/{NAMESPACE}"
    return [
        (f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments", deployment),
        (f"{base}/services", service),
        (f"{monitoring}/servicemonitors", monitor),
        (f"{monitoring}/prometheusrules", rule),
    ]


def pod_ip(client: Any) -> str | None:
    for pod in client.items(
        f"/api/v1/namespaces/{NAMESPACE}/pods", labelSelector=f"app.kubernetes.io/name={APP}"
    ):
        status = pod.get("status") or {}
        if status.get("phase") == "Running" and status.get("podIP"):
            return str(status["podIP"])
    return None


def wait(what: str, check: Callable[[], Any], timeout: float = WAIT) -> Any:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except (OSError, promstack.ConfigError) as err:
            last = err
        time.sleep(0.5)
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}: {last or ''}")


def stepper(report: dict[str, Any]) -> Callable[[str, Callable[[], Any]], Any]:
    """`step(name, fn)`: runs fn, and records its name and seconds in the report."""

    def step(name: str, fn: Callable[[], Any]) -> Any:
        start = time.monotonic()
        print(f"== {name}", file=sys.stderr, flush=True)
        result = fn()
        entry: dict[str, Any] = {"step": name, "seconds": round(time.monotonic() - start, 1)}
        if isinstance(result, (str, int, list)):
            entry["detail"] = result
        report["steps"].append(entry)
        return result

    return step


def start_monitoring(
    state: Path,
    cp: cluster.ControlPlane,
    step: Callable[[str, Callable[[], Any]], Any],
    port: int | None = None,
) -> tuple[promstack.ConfigSync, int]:
    """The Prometheus operator and Prometheus on its configuration, kept in sync; returns
    the running sync (stop it) and Prometheus's port on loopback (`port`, else a free one)."""
    client = cp.client()
    step("operator CRDs", lambda: addons.apply_crds(client, promstack.crds()))
    addons.namespace(client, promstack.NAMESPACE)
    step("operator started", lambda: promstack.start_operator(state, cp.kubeconfig))
    version = "v" + pins()["prometheus"]["release"]
    client.create(
        f"/apis/monitoring.coreos.com/v1/namespaces/{promstack.NAMESPACE}/prometheuses",
        promstack.prometheus_object(version),
    )
    sync = promstack.ConfigSync(client, state, cp.kubeconfig, state / "pki" / "ca.crt")
    step("operator generated the configuration", lambda: sync.wait_first(WAIT))
    port = port or cluster.free_port()
    promstack.start_prometheus(state, sync.config, port)
    ready = f"http://127.0.0.1:{port}/-/ready"
    step("Prometheus ready", lambda: wait(ready, lambda: promstack.http(ready)[0] == 200))
    sync.port = port
    sync.start()
    return sync, port


def rehearse(state: Path, report: dict[str, Any]) -> None:
    step = stepper(report)
    node = nodes._node("rehearsal-0", {}, [], {})
    cp = step("control plane up", lambda: cluster.up(state, [node]))
    client = cp.client()
    sync, port = start_monitoring(state, cp, step)
    try:
        addons.namespace(client, NAMESPACE)
        for path, obj in stand_in_objects():
            client.create(path, obj)
        ip = step("stand-in pod Running", lambda: wait("a pod IP", lambda: pod_ip(client)))
        if ipaddress.ip_address(ip) not in ipaddress.ip_network(cluster.POD_CIDR):
            raise RuntimeError(f"pod IP {ip} is not of the pod CIDR {cluster.POD_CIDR}")
        cluster.spawn(state, "stand-in", [sys.executable, str(HERE / "standin.py"), ip, str(PORT)])
        up = step(
            "Prometheus scraped the stand-in",
            lambda: wait(
                f"up{SELECTOR} == 1",
                lambda: [r for r in promstack.query(port, f"up{SELECTOR}") if r["value"][1] == "1"],
            ),
        )
        counter = step(
            "the stand-in's counter is stored",
            lambda: wait(
                "the counter", lambda: promstack.query(port, f"{standin.METRIC}{SELECTOR}")
            ),
        )
        step(
            "the PrometheusRule's recording rule is evaluated",
            lambda: wait(RECORD, lambda: promstack.query(port, f"{RECORD} == 1")),
        )
        report["target"] = up[0]["metric"]
        report["counter"] = counter[0]["value"][1]
        report["config_reloads"] = sync.reloads
        if sync.last_error:
            raise RuntimeError(f"config sync: {sync.last_error}")
    finally:
        sync.stop()


class Stopped(Exception):
    """The rehearsal was asked to stop (SIGTERM)."""


def _stopped(signum: int, frame: object) -> None:
    raise Stopped(f"stopped by signal {signum}")


def run(
    argv: list[str],
    missing: list[str],
    rehearse_fn: Callable[[Path, dict[str, Any]], None],
    prefix: str = "inferplane-rehearsal-",
) -> int:
    """A rehearsal's frame: refuse to run without its tools (`missing`) or a network
    namespace (exit 2), run `rehearse_fn(state, report)` in a new state folder, stop every
    process by PID, print the JSON report; exit 0 when it passed, 1 when not."""
    report: dict[str, Any] = {"steps": [], "passed": False}
    if missing:
        report["not_run"] = (
            f"not built: {', '.join(missing)}; run `python e2e/tools.py build` and "
            "`python e2e/tools.py build --group rehearsal`"
        )
        print(json.dumps(report, indent=1))
        return 2
    try:
        netns.enter([cluster.POD_CIDR, cluster.SERVICE_CIDR])
    except netns.NetnsUnavailable as err:
        report["not_run"] = f"cannot make the network namespace: {err}"
        print(json.dumps(report, indent=1))
        return 2
    state = Path(tempfile.mkdtemp(prefix=prefix))
    report["state"] = str(state)
    # Asked to stop (SIGTERM, as `inferplane rehearse` does on its timeout or Ctrl-C): end
    # the rehearsal where it is and still stop every process it started. Its processes run
    # in sessions of their own, so nothing else would.
    signal.signal(signal.SIGTERM, _stopped)
    try:
        rehearse_fn(state, report)
        report["passed"] = True
    except Exception:
        report["error"] = traceback.format_exc()
        for log in sorted((state / "logs").glob("*.log")):
            report.setdefault("log_tails", {})[log.stem] = log.read_text(errors="replace")[-1500:]
    finally:
        # The teardown itself is not interrupted: a second signal waits for it.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        cluster.down(state)
        if "--keep" not in argv:
            shutil.rmtree(state, ignore_errors=True)
    print(json.dumps(report, indent=1))
    return 0 if report["passed"] else 1


def main(argv: list[str]) -> int:
    return run(argv, not_built(), rehearse)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
