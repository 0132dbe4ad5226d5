"""KEDA's metrics API server behind the API server's aggregator, out of cluster, for the rehearsal.

What runs for real: the KEDA operator (`addons.start_keda_operator`), which turns a
ScaledObject into an HPA and computes its triggers' values, and KEDA's metrics API server
(cmd/adapter of github.com/kedacore/keda/v2, built as ``keda-metrics-apiserver``), which
serves ``external.metrics.k8s.io/v1beta1`` and asks the operator for each value over gRPC
(cmd/adapter/main.go `makeProvider` -> pkg/metricsservice/client.go `NewGrpcClient`). The
HPA controller of the real kube-controller-manager reads those values through the API
server, whose aggregator proxies ``/apis/external.metrics.k8s.io/v1beta1`` to the server
the `APIService` names.

What stands in for the adapter's pod: a Deployment ``keda-operator-metrics-apiserver`` of
one KWOK pod (no process runs in it) gives the chart's Service of that name an endpoint at
a pod IP, and the adapter process listens at that IP, local inside the rehearsal's network
namespace. The aggregator resolves the Service to that endpoint (`pki.aggregator_flags`:
``--enable-aggregator-routing``), dials it with the front proxy's client certificate,
checks the adapter's serving certificate against the APIService's ``caBundle`` under the
name ``<service>.<namespace>.svc`` (k8s.io/kube-aggregator v0.37.2
pkg/controllers/status/remote/remote_available_controller.go `BuildTransportConfig`), and
sends the user in ``X-Remote-*`` headers. The adapter trusts those headers by the
front-proxy CA that the API server publishes in ``kube-system/extension-apiserver-
authentication`` (its delegated authentication: k8s.io/apiserver
pkg/server/options/authentication.go), and asks the API server whether that user may read
the metric (delegated authorization, a SubjectAccessReview).

Names and ports are the KEDA chart's (shared/reference/keda/helm/values.yaml: the
``keda-operator-metrics-apiserver`` workload, ``service.portHttps: 443`` to
``portHttpsTarget: 6443``), the APIService the one KEDA ships
(config/metrics-server/api_service.yaml of the module: ``v1beta1.external.metrics.k8s.io``,
``groupPriorityMinimum: 100``, ``versionPriority: 100``), its ``caBundle`` the CA that
signed the adapter's certificate (the chart's cert rotation injects it in a cluster).
"""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import cluster
from kube import Kube
from pki import issue, server_ext
from tools import REHEARSAL_TOOLS

from inferplane.blueprint import naming

NAMESPACE = naming.KEDA_NAMESPACE
NAME = "keda-operator-metrics-apiserver"
PORT = 6443
SERVICE_PORT = 443
GROUP = "external.metrics.k8s.io"
VERSION = "v1beta1"
API_SERVICE = f"{VERSION}.{GROUP}"
SELECTOR = {"app": NAME}
APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"


def service_host() -> str:
    """The name the aggregator checks the adapter's certificate against."""
    return f"{NAME}.{NAMESPACE}.svc"


def serving_cert(state: Path) -> tuple[Path, Path]:
    """The adapter's serving certificate and key, signed by the cluster CA, for the name
    the aggregator dials it by (and the Service's full name)."""
    folder = state / "keda-metrics-apiserver-certs"
    folder.mkdir(parents=True, exist_ok=True)
    dns = [service_host(), f"{service_host()}.cluster.local"]
    crt = issue(folder, "serving", f"/CN={NAME}", server_ext([], dns), state / "pki" / "ca")
    return crt, folder / "serving.key"


def placeholder_objects() -> list[tuple[str, dict[str, Any]]]:
    """(collection path, object): the Deployment whose one KWOK pod holds the adapter's pod
    IP, and the chart's Service that selects it."""
    labels = {**SELECTOR, "app.kubernetes.io/name": NAME, "inferplane.dev/out-of-cluster": "true"}
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": dict(SELECTOR)},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "containers": [
                        {
                            "name": NAME,
                            # Never pulled: KWOK runs no containers; the adapter runs beside.
                            "image": "out-of-cluster.invalid/keda-metrics-apiserver:0",
                            "ports": [{"name": "https", "containerPort": PORT}],
                        }
                    ]
                },
            },
        },
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": labels},
        "spec": {
            "selector": dict(SELECTOR),
            "ports": [{"name": "https", "port": SERVICE_PORT, "targetPort": "https"}],
        },
    }
    return [
        (f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments", deployment),
        (f"/api/v1/namespaces/{NAMESPACE}/services", service),
    ]


def api_service(ca_bundle: bytes) -> dict[str, Any]:
    """KEDA's APIService, with the CA that signed the adapter's serving certificate."""
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": API_SERVICE},
        "spec": {
            "service": {"name": NAME, "namespace": NAMESPACE, "port": SERVICE_PORT},
            "group": GROUP,
            "version": VERSION,
            "caBundle": base64.b64encode(ca_bundle).decode(),
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
        },
    }


def adapter_command(
    binary: Path,
    *,
    pod_ip: str,
    kubeconfig: Path,
    serving: tuple[Path, Path],
    grpc_certs: Path,
    grpc_address: str,
    metrics_port: int,
) -> list[str]:
    """The adapter's command line. Flags: cmd/adapter/main.go (``--metrics-service-address``,
    ``--port`` of its own /metrics server), sigs.k8s.io/custom-metrics-apiserver v1.36.0
    pkg/cmd/builder.go (``--lister-kubeconfig``: without it the adapter reads the in-cluster
    configuration) and the generic API server options it adds (secure serving,
    delegated authentication and authorization). ``--cert-dir`` is where the gRPC client
    reads ``ca.crt``/``tls.crt``/``tls.key`` (main.go passes
    ``SecureServing.ServerCert.CertDirectory`` to `NewGrpcClient`;
    pkg/metricsservice/utils/tls.go `LoadGrpcTLSCredentials`)."""
    kc = str(kubeconfig)
    return [
        str(binary),
        f"--bind-address={pod_ip}",
        f"--secure-port={PORT}",
        f"--tls-cert-file={serving[0]}",
        f"--tls-private-key-file={serving[1]}",
        f"--cert-dir={grpc_certs}",
        f"--authentication-kubeconfig={kc}",
        f"--authorization-kubeconfig={kc}",
        f"--lister-kubeconfig={kc}",
        f"--metrics-service-address={grpc_address}",
        # main.go binds `:<port>`: every address of the namespace, where nothing leaves.
        f"--port={metrics_port}",
        "--zap-log-level=info",
    ]


def start_adapter(state: Path, kubeconfig: Path, pod_ip: str, grpc_address: str) -> int:
    """KEDA's metrics API server at `pod_ip`, asking the operator at `grpc_address`; the
    gRPC pair is the operator's own (`addons.keda_certs`: signed by the cluster CA, no
    extended key usage, so it serves and it presents as a client)."""
    tool = REHEARSAL_TOOLS["keda-metrics-apiserver"]()
    cmd = adapter_command(
        tool.bindir() / "keda-metrics-apiserver",
        pod_ip=pod_ip,
        kubeconfig=kubeconfig,
        serving=serving_cert(state),
        grpc_certs=state / "keda-certs",
        grpc_address=grpc_address,
        metrics_port=cluster.free_port(),
    )
    environ = dict(os.environ)
    environ.update(
        {
            # controller-runtime's `GetConfigOrDie` (the adapter's cache of ScaledObjects).
            "KUBECONFIG": str(kubeconfig),
            "WATCH_NAMESPACE": "",
            "POD_NAMESPACE": NAMESPACE,
            "KEDA_CLUSTER_OBJECT_NAMESPACE": NAMESPACE,
        }
    )
    return cluster.spawn(state, "keda-metrics-apiserver", cmd, environ)


def available(client: Kube) -> bool:
    """True when the aggregator marks the APIService Available; else False."""
    status = client.get(f"{APISERVICES}/{API_SERVICE}").get("status") or {}
    for cond in status.get("conditions") or []:
        if cond["type"] == "Available":
            return bool(cond["status"] == "True")
    return False


def availability(client: Kube) -> str:
    """The Available condition as the aggregator wrote it (for a report when it is not)."""
    status = client.get(f"{APISERVICES}/{API_SERVICE}").get("status") or {}
    conds = [c for c in status.get("conditions") or [] if c["type"] == "Available"]
    if not conds:
        return "no Available condition yet"
    c = conds[0]
    return f"{c['status']} ({c.get('reason')}): {c.get('message', '')}"
