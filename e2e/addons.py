"""The add-ons an environment marks `existing`, made to exist on the local control plane.

Helm charts cannot be fetched here, so add-ons in `install` mode are not exercised; an
environment deployed end to end sets every add-on to `existing`, and this module provides
what those add-ons own that the stack's objects depend on: their namespaces and their
CustomResourceDefinitions, read from the upstream files —

- KEDA: every CRD of the pinned operator's own module (`config/crd/bases/`), since the
  operator watches all of them; and the KEDA operator itself (`cmd/operator`), run out of
  cluster against the local API server, so ScaledObjects become HorizontalPodAutoscalers;
- the KEDA HTTP add-on: `HTTPScaledObject` and `InterceptorRoute` (shared/reference, 0.15.0);
- Prometheus: the prometheus-operator CRDs (ServiceMonitor, PodMonitor, PrometheusRule);
- the GPU Operator: `ClusterPolicy`.
"""

from __future__ import annotations

import os
from pathlib import Path
from secrets import token_hex
from typing import Any
from urllib.parse import urlsplit

import cluster
import yaml
from kube import Kube
from pki import issue
from tools import TOOLS

from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment
from inferplane.components import prometheus_query

REPO = Path(__file__).resolve().parent.parent
REFERENCE = Path(os.environ.get("INFERPLANE_REFERENCE", REPO.parent / "shared" / "reference"))

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


class _CRDLoader(yaml.SafeLoader):
    """YAML as Kubernetes reads it: a plain ``=`` is the string "=" (the Prometheus operator's
    CRDs list it among match types), not PyYAML's YAML 1.1 ``value`` tag, which it cannot
    construct."""


_CRDLoader.add_constructor("tag:yaml.org,2002:value", _CRDLoader.construct_yaml_str)


def _docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.load_all(path.read_text(), Loader=_CRDLoader) if d]


def keda_crds() -> list[Path]:
    """Every CRD of the pinned KEDA release (its module's `config/crd/bases/`)."""
    return sorted((TOOLS["keda"]().share() / "crds").glob("*.yaml"))


def reference_crds(key: str) -> list[Path]:
    files = {
        "keda_http_add_on": [
            "keda-http-add-on-0.15.0/crd-httpscaledobjects.yaml",
            "keda-http-add-on-0.15.0/crd-interceptorroutes.yaml",
        ],
        "prometheus": [
            "prometheus-operator/crd/monitoring.coreos.com_servicemonitors.yaml",
            "prometheus-operator/crd/monitoring.coreos.com_podmonitors.yaml",
            "prometheus-operator/crd/monitoring.coreos.com_prometheusrules.yaml",
        ],
        "gpu_operator": ["gpu-operator/helm/crds/nvidia.com_clusterpolicies.yaml"],
    }[key]
    paths = [REFERENCE / f for f in files]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise FileNotFoundError(
            f"upstream CRDs not found: {missing}; set INFERPLANE_REFERENCE to the folder of "
            "the reference copies (shared/reference)"
        )
    return paths


def apply_crds(client: Kube, paths: list[Path]) -> list[str]:
    names = []
    for path in paths:
        for doc in _docs(path):
            if doc.get("kind") != "CustomResourceDefinition":
                continue
            doc.get("metadata", {}).pop("creationTimestamp", None)
            doc.pop("status", None)
            client.create(CRD_PATH, doc)
            names.append(doc["metadata"]["name"])
    for name in names:
        client.wait(
            f"CRD {name} established",
            lambda n=name: any(
                c["type"] == "Established" and c["status"] == "True"
                for c in (client.get(f"{CRD_PATH}/{n}").get("status") or {}).get("conditions") or []
            ),
            60,
        )
    return names


def namespace(client: Kube, name: str) -> None:
    client.create(
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
    )


def preinstall(client: Kube, env: Environment) -> dict[str, Any]:
    addons = env.cluster.addons
    done: dict[str, Any] = {}
    for key in ("gpu_operator", "keda", "keda_http_add_on", "prometheus"):
        addon = getattr(addons, key)
        namespace(client, addon.namespace)
        paths = keda_crds() if key == "keda" else reference_crds(key)
        done[key] = {"namespace": addon.namespace, "crds": apply_crds(client, paths)}
    if addons.prometheus.existing:
        done["prometheus"]["service"] = query_service(client, addons.prometheus.query_url)
    return done


def query_service(client: Kube, url: str) -> str:
    """The Service the existing Prometheus is queried through: the stack reads it before it
    deploys (`components/prometheus_query.py`) and refuses an ExternalName one."""
    ns, name = prometheus_query.query_service(url)
    port = urlsplit(url).port or (443 if url.startswith("https:") else 80)
    client.create(
        f"/api/v1/namespaces/{ns}/services",
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": name, "namespace": ns},
            "spec": {
                "type": "ClusterIP",
                "selector": {"app.kubernetes.io/name": "prometheus"},
                "ports": [{"name": "web", "port": port}],
            },
        },
    )
    return f"{ns}/{name}"


def keda_certs(state: Path) -> Path:
    """The certificates of the operator's gRPC metrics service: it loads ``ca.crt``,
    ``tls.crt`` and ``tls.key`` from ``--cert-dir`` and exits without them
    (pkg/metricsservice/server.go `Start`, pkg/metricsservice/utils/tls.go
    `LoadGrpcTLSCredentials`);
    without cert rotation nothing else writes them."""
    pki = state / "pki"
    certs = state / "keda-certs"
    certs.mkdir(exist_ok=True)
    # No extended key usage: the adapter presents the same pair as its gRPC client.
    san = "subjectAltName=IP:127.0.0.1,DNS:localhost\n"
    issue(certs, "tls", "/CN=keda-operator", san, pki / "ca")
    (certs / "ca.crt").write_bytes((pki / "ca.crt").read_bytes())
    # --ca-dir: every file in it must be a certificate (pkg/util/certificates.go getRootCAs)
    (certs / "ca").mkdir(exist_ok=True)
    (certs / "ca" / "ca.crt").write_bytes((pki / "ca.crt").read_bytes())
    return certs


def platform_namespace(client: Kube, env: Environment) -> dict[str, Any]:
    """What a platform team prepares for a `cloud: kubernetes` environment before its first
    `pulumi up`: the blueprint's namespace, with the model store's credential Secrets in it
    (one per role the blueprint names; pods read Secrets only in their own namespace). The
    keys are made up: nothing here reaches a store."""
    ns = naming.namespace(env.blueprint)
    namespace(client, ns)
    secrets = env.model_store_secrets
    names = sorted(
        {
            n
            for n in (
                secrets.reader,
                secrets.engine_builder,
                secrets.weights_stager,
                secrets.vllm_compiler,
            )
            if n
        }
        if secrets
        else set()
    )
    for name in names:
        client.create(
            f"/api/v1/namespaces/{ns}/secrets",
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": name, "namespace": ns},
                "stringData": {
                    "AWS_ACCESS_KEY_ID": f"e2e-{name}",
                    "AWS_SECRET_ACCESS_KEY": token_hex(20),
                },
            },
        )
    return {"namespace": ns, "secrets": names}


def start_keda(state: Path, bindir: Path, kubeconfig: Path, env: Environment) -> int:
    """The real KEDA operator for the environment's KEDA namespace (`start_keda_operator`)."""
    ns = env.cluster.addons.keda.namespace
    return start_keda_operator(state, bindir, kubeconfig, ns)[0]


def start_keda_operator(
    state: Path, bindir: Path, kubeconfig: Path, namespace: str
) -> tuple[int, str]:
    """The real KEDA operator (cmd/operator of github.com/kedacore/keda/v2), out of cluster.
    Returns its PID and the loopback address of its gRPC metrics service, which KEDA's
    metrics API server asks for the values the HPA reads.

    Flags and variables from that release's `cmd/operator/main.go` and its Helm chart's
    operator Deployment: `KEDA_CLUSTER_OBJECT_NAMESPACE`/`POD_NAMESPACE` name its own
    namespace, `WATCH_NAMESPACE=""` watches all; cert rotation (for its webhooks and metrics
    server, which do not run here) is off.
    """
    certs = keda_certs(state)
    environ = dict(os.environ)
    environ.update(
        {
            "KUBECONFIG": str(kubeconfig),
            "WATCH_NAMESPACE": "",
            "POD_NAMESPACE": namespace,
            "KEDA_CLUSTER_OBJECT_NAMESPACE": namespace,
            "POD_NAME": "keda-operator-e2e",
            "OPERATOR_NAME": "keda-operator",
        }
    )
    grpc = f"127.0.0.1:{cluster.free_port()}"
    pid = cluster.spawn(
        state,
        "keda-operator",
        [
            str(bindir / "keda-operator"),
            "--leader-elect=false",
            "--enable-cert-rotation=false",
            "--metrics-bind-address=127.0.0.1:0",
            f"--metrics-service-bind-address={grpc}",
            f"--cert-dir={certs}",
            f"--ca-dir={certs / 'ca'}",
            "--health-probe-bind-address=127.0.0.1:0",
            "--zap-log-level=info",
        ],
        environ,
    )
    return pid, grpc
