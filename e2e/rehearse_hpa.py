"""`python e2e/rehearse_hpa.py [--keep]`: the real HPA scales a model on a value KEDA reads
from the real Prometheus.

Inside a network namespace of its own (e2e/netns.py), with the real local control plane
(e2e/cluster.py, its aggregation layer on), the real Prometheus operator and Prometheus
(e2e/promstack.py), the real KEDA operator and KEDA's real metrics API server behind the
API server's aggregator (e2e/kedastack.py):

1. the model ``chat`` of blueprints/chat-minimal.yaml (environment ``local``: vLLM,
   replicas 2..8, ``queue_depth`` target 4) gets the ServiceMonitor and the ScaledObject
   the stack generates for it (`monitoring.service_monitor_spec`,
   `autoscaling.scaled_object_spec`), with one change: the trigger's ``serverAddress`` is
   this Prometheus's loopback address, since no cluster DNS resolves the in-cluster one;
2. its Deployment runs STAND-IN pods (KWOK pods with the model's labels); one stand-in
   process (e2e/standin.py, not vLLM) at the first pod's IP exports the gauges the trigger's
   query reads, ``vllm:num_requests_waiting`` and ``vllm:num_requests_running`` of
   ``model_name="chat"``, at 0;
3. KEDA makes the HPA ``keda-hpa-chat``; the controller manager's HPA controller reads the
   trigger's value through the aggregator, KEDA's metrics API server and the operator,
   which queries Prometheus;
4. the stand-in's queue is set to `WAITING`; the HPA must want `WAITING` / 4 replicas (up to
   the maximum) and scale the Deployment there within `SCALE_WAIT` seconds. The report has
   the seconds from the change to Prometheus storing it, to the HPA reading it, to its
   first scale-up and to the full count.

Prints one JSON report. Exit 0 when every step passed, 1 otherwise, 2 when it cannot run
here (a tool not built, or no network namespace; `not_run` says why). Every wait is bounded;
every process is stopped by PID. `--keep` leaves the state folder.
"""

from __future__ import annotations

import math
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
import kedastack  # noqa: E402
import nodes  # noqa: E402
import promstack  # noqa: E402
from kube import Kube  # noqa: E402
from rehearse_smoke import run, start_monitoring, stepper, wait  # noqa: E402
from tools import REHEARSAL_TOOLS, TOOLS  # noqa: E402

BLUEPRINT = REPO / "blueprints" / "chat-minimal.yaml"
ENVIRONMENT = "local"
MODEL = "chat"
HTTP_PORT = 8000  # vLLM's API port, named `http`, where it serves /metrics
WAITING = 30.0
SCALE_WAIT = 120.0


def not_built() -> list[str]:
    needed = [TOOLS[n] for n in ("kubernetes", "etcd", "kwok", "keda")]
    needed += [
        REHEARSAL_TOOLS[n] for n in ("prometheus", "prometheus-operator", "keda-metrics-apiserver")
    ]
    return [tool.name for tool in (make() for make in needed) if not tool.built()]


def model_objects(
    prometheus_url: str,
    blueprint: Path = BLUEPRINT,
    environment: str = ENVIRONMENT,
    name: str = MODEL,
) -> dict[str, Any]:
    """What the rehearsal creates for model `name` of `blueprint`'s `environment`:
    ``objects`` (collection path, object), and ``namespace``, ``hpa``, ``min``, ``max``,
    ``target``, ``query`` of its first Prometheus trigger."""
    from inferplane.blueprint import naming
    from inferplane.blueprint.resolution.resolve import load_blueprint, resolve
    from inferplane.components import stack_serving
    from inferplane.components.serving.observability import monitoring
    from inferplane.components.serving.scaling import autoscaling

    doc, _ = load_blueprint(blueprint)
    env = resolve(doc, environment)
    serving_env = stack_serving.serving_environment(env)
    model = stack_serving.served_model(env, env.models[name])
    ns = naming.namespace(env.blueprint)
    labels = naming.model_labels(env.blueprint, env.name, name)
    selector = naming.model_selector(env.blueprint, name)
    scaled = autoscaling.scaled_object_spec(serving_env, model, ns, name)
    # Every Prometheus trigger asks this Prometheus (a model whose targets follow from its
    # traffic has two: concurrency and the TTFT p95); `target` and `query` are the first's.
    triggers = [t for t in scaled["triggers"] if t["type"] == "prometheus"]
    for t in triggers:
        t["metadata"]["serverAddress"] = prometheus_url
    trigger = triggers[0]
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {
            "replicas": model.replicas.min,
            "selector": {"matchLabels": selector},
            "template": {
                "metadata": {"labels": {**labels, "inferplane.dev/stand-in": "true"}},
                "spec": {
                    "containers": [
                        {
                            "name": "vllm",
                            # Never pulled: KWOK runs no containers; the stand-in runs beside.
                            "image": "stand-in.invalid/vllm:0",
                            "ports": [{"name": "http", "containerPort": HTTP_PORT}],
                        }
                    ]
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {
            "selector": selector,
            "ports": [{"name": "http", "port": HTTP_PORT, "targetPort": "http"}],
        },
    }
    meta = {"name": name, "namespace": ns, "labels": monitoring.release_labels(serving_env, model)}
    monitor = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": meta,
        "spec": monitoring.service_monitor_spec(serving_env, model, ns, name),
    }
    scaled_object = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": scaled,
    }
    return {
        "objects": [
            (f"/apis/apps/v1/namespaces/{ns}/deployments", deployment),
            (f"/api/v1/namespaces/{ns}/services", service),
            (f"/apis/monitoring.coreos.com/v1/namespaces/{ns}/servicemonitors", monitor),
            (f"/apis/keda.sh/v1alpha1/namespaces/{ns}/scaledobjects", scaled_object),
        ],
        "namespace": ns,
        "hpa": scaled["advanced"]["horizontalPodAutoscalerConfig"]["name"],
        "min": model.replicas.min,
        "max": model.replicas.max,
        "target": float(trigger["metadata"]["threshold"]),
        "query": trigger["metadata"]["query"],
    }


def expected_replicas(value: float, target: float, low: int, high: int) -> int:
    """What the HPA wants for an ``AverageValue`` external metric: ceil(value / target),
    within the replica range (k8s.io/kubernetes v1.37.2
    pkg/controller/podautoscaler/replica_calculator.go `GetExternalPerPodMetricReplicas`)."""
    return min(high, max(low, math.ceil(value / target)))


def pod_ips(client: Kube, namespace: str, selector: dict[str, str]) -> list[str]:
    """The pod IPs of the Running pods `selector` matches, by pod name."""
    query = ",".join(f"{k}={v}" for k, v in selector.items())
    pods = client.items(f"/api/v1/namespaces/{namespace}/pods", labelSelector=query)
    running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
    return [
        p["status"]["podIP"]
        for p in sorted(running, key=lambda p: p["metadata"]["name"])
        if p["status"].get("podIP")
    ]


def hpa_state(client: Kube, namespace: str, name: str) -> dict[str, Any] | None:
    """The HPA's spec'd metric and its status as `kubectl get hpa` shows it; None until
    KEDA has made it."""
    path = f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers/{name}"
    hpa = client.get(path) if client.exists(path) else None
    if hpa is None:
        return None
    status = hpa.get("status") or {}
    current = [m["external"] for m in status.get("currentMetrics") or [] if m.get("external")]
    return {
        "metric": hpa["spec"]["metrics"][0]["external"]["metric"],
        "target": hpa["spec"]["metrics"][0]["external"]["target"],
        "current": current[0]["current"] if current else None,
        "currentReplicas": status.get("currentReplicas"),
        "desiredReplicas": status.get("desiredReplicas"),
        "conditions": {c["type"]: c["status"] for c in status.get("conditions") or []},
    }


def set_gauge(ip: str, sample: str) -> None:
    req = urllib.request.Request(f"http://{ip}:{HTTP_PORT}/stand-in/gauge", sample.encode())
    with urllib.request.urlopen(req, timeout=10) as resp:
        if resp.status != 200:
            raise RuntimeError(f"the stand-in refused {sample!r}: HTTP {resp.status}")


def start_keda(state: Path, cp: cluster.ControlPlane, step: Any) -> None:
    """The KEDA operator, its metrics API server at a pod IP, and the APIService."""
    client = cp.client()
    step("KEDA CRDs", lambda: addons.apply_crds(client, addons.keda_crds()))
    addons.namespace(client, kedastack.NAMESPACE)
    bindir = TOOLS["keda"]().bindir()
    _, grpc = step(
        "KEDA operator started",
        lambda: addons.start_keda_operator(state, bindir, cp.kubeconfig, kedastack.NAMESPACE),
    )
    for path, obj in kedastack.placeholder_objects():
        client.create(path, obj)
    ips = step(
        "the metrics API server's pod has an IP",
        lambda: wait(
            "its pod IP", lambda: pod_ips(client, kedastack.NAMESPACE, kedastack.SELECTOR)
        ),
    )
    kedastack.start_adapter(state, cp.kubeconfig, ips[0], grpc)
    client.create(
        kedastack.APISERVICES, kedastack.api_service((state / "pki" / "ca.crt").read_bytes())
    )

    def served() -> bool:
        try:
            client.wait("the APIService Available", lambda: kedastack.available(client), 60)
        except TimeoutError as err:
            raise TimeoutError(f"{err}; Available: {kedastack.availability(client)}") from None
        return True

    step("the aggregator serves external.metrics.k8s.io", served)


def rehearse(state: Path, report: dict[str, Any]) -> None:
    step = stepper(report)
    node = nodes._node("rehearsal-0", {}, [], {})
    cp = step("control plane up", lambda: cluster.up(state, [node]))
    client = cp.client()
    sync, port = start_monitoring(state, cp, step)
    try:
        start_keda(state, cp, step)
        model = model_objects(f"http://127.0.0.1:{port}")
        ns, low, high = model["namespace"], model["min"], model["max"]
        report["model"] = {k: model[k] for k in ("namespace", "hpa", "min", "max", "target")}
        report["model"]["query"] = model["query"]
        addons.namespace(client, ns)
        for path, obj in model["objects"]:
            client.create(path, obj)
        selector = model["objects"][0][1]["spec"]["selector"]["matchLabels"]

        def all_running() -> list[str] | None:
            got = pod_ips(client, ns, selector)
            return got if len(got) >= low else None

        ips = step("the model's stand-in pods Running", lambda: wait(f"{low} pods", all_running))
        waiting = f'vllm:num_requests_waiting{{model_name="{MODEL}"}}'
        running = f'vllm:num_requests_running{{model_name="{MODEL}"}}'
        standin = [sys.executable, str(HERE / "standin.py"), ips[0], str(HTTP_PORT)]
        cluster.spawn(state, "stand-in", [*standin, f"{waiting} 0", f"{running} 0"])

        def answers(value: float) -> Any:
            return wait(
                f"the trigger's query = {value:g}",
                lambda: [
                    r
                    for r in promstack.query(port, model["query"])
                    if float(r["value"][1]) == value
                ],
            )

        step("Prometheus answers the trigger's query", lambda: answers(0.0))
        hpa = model["hpa"]

        def reads_zero() -> Any:
            got = hpa_state(client, ns, hpa)
            return got if got and got["current"] is not None else None

        first = step(
            "KEDA made the HPA, which reads the value through the aggregator",
            lambda: wait(f"HPA {hpa} with a current metric", reads_zero, SCALE_WAIT),
        )
        report["hpa_before"] = first
        want = expected_replicas(WAITING, model["target"], low, high)
        start = time.monotonic()
        set_gauge(ips[0], f"{waiting} {WAITING:g}")
        marks: dict[str, float] = {}

        def scaled() -> bool:
            now = round(time.monotonic() - start, 1)
            if "prometheus" not in marks and promstack.query(
                port, f"{model['query']} == {WAITING:g}"
            ):
                marks["prometheus"] = now
            got = hpa_state(client, ns, hpa) or {}
            avg = (got.get("current") or {}).get("averageValue")
            if "hpa_read" not in marks and avg not in (None, "0"):
                marks["hpa_read"] = now
            if "first_scale" not in marks and (got.get("desiredReplicas") or 0) > low:
                marks["first_scale"] = now
            dep = client.get(f"/apis/apps/v1/namespaces/{ns}/deployments/{MODEL}")
            if got.get("desiredReplicas") == want and dep["spec"]["replicas"] == want:
                marks["full"] = now
                report["hpa_after"] = got
                return True
            return False

        step(
            f"the HPA scales the Deployment from {low} to {want}",
            lambda: wait(f"{want} replicas", scaled, SCALE_WAIT),
        )
        report["seconds_after_the_change"] = marks
        if sync.last_error:
            raise RuntimeError(f"config sync: {sync.last_error}")
    finally:
        sync.stop()


def main(argv: list[str]) -> int:
    return run(argv, not_built(), rehearse, "inferplane-rehearsal-hpa-")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
