"""What the rehearsal gives the API server's aggregation layer and KEDA's metrics API server
(e2e/pki.py, e2e/kedastack.py): the front proxy's certificates and flags, the adapter's
serving certificate, its command line, and the APIService."""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "e2e"))

import kedastack  # noqa: E402
import pki  # noqa: E402

# .ci/run installs openssl: under CI a missing one fails instead of skipping.
needs_openssl = pytest.mark.skipif(
    shutil.which("openssl") is None and os.environ.get("CI") != "true",
    reason="no openssl on PATH (the local control plane's certificates need it)",
)


def x509(cert: Path, *args: str) -> str:
    res = subprocess.run(
        ["openssl", "x509", "-in", str(cert), "-noout", *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return res.stdout


def verifies(ca: Path, cert: Path) -> bool:
    res = subprocess.run(
        ["openssl", "verify", "-CAfile", str(ca), str(cert)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return res.returncode == 0


@pytest.fixture(scope="session")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("openssl") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("openssl is required under CI (.ci/run installs it)")
        pytest.skip("no openssl on PATH (the local control plane's certificates need it)")
    folder = tmp_path_factory.mktemp("state")
    pki.make_pki(folder / "pki")
    return folder


@needs_openssl
def test_the_front_proxy_client_is_signed_by_its_own_ca_only(state: Path) -> None:
    folder = state / "pki"
    client = folder / "front-proxy-client.crt"
    assert x509(client, "-subject", "-issuer") == (
        "subject=CN = front-proxy-client\nissuer=CN = front-proxy-ca\n"
    )
    assert "TLS Web Client Authentication" in x509(client, "-ext", "extendedKeyUsage")
    assert verifies(folder / "front-proxy-ca.crt", client)
    # The cluster CA (which signed the admin's certificate) does not vouch for it, nor
    # the front proxy CA for the admin: neither can stand in for the other.
    assert not verifies(folder / "ca.crt", client)
    assert not verifies(folder / "front-proxy-ca.crt", folder / "admin.crt")


@needs_openssl
def test_an_older_state_folder_gets_the_front_proxy_and_keeps_its_cluster_ca(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "pki"
    pki.make_pki(folder)
    ca = (folder / "ca.crt").read_bytes()
    for name in pki.FRONT_PROXY_FILES:
        (folder / name).unlink()
    pki.make_pki(folder)
    assert (folder / "ca.crt").read_bytes() == ca
    assert verifies(folder / "front-proxy-ca.crt", folder / "front-proxy-client.crt")


def test_the_api_server_trusts_the_front_proxy_ca_for_request_headers() -> None:
    folder = Path("/state/pki")
    assert pki.aggregator_flags(folder) == [
        "--requestheader-client-ca-file=/state/pki/front-proxy-ca.crt",
        "--requestheader-allowed-names=front-proxy-client",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        "--proxy-client-cert-file=/state/pki/front-proxy-client.crt",
        "--proxy-client-key-file=/state/pki/front-proxy-client.key",
        "--enable-aggregator-routing=true",
    ]


@needs_openssl
def test_the_adapter_serves_under_the_name_the_aggregator_checks(state: Path) -> None:
    crt, key = kedastack.serving_cert(state)
    assert key == state / "keda-metrics-apiserver-certs" / "serving.key"
    assert x509(crt, "-ext", "subjectAltName,extendedKeyUsage") == (
        "X509v3 Subject Alternative Name: \n"
        "    DNS:keda-operator-metrics-apiserver.keda.svc, "
        "DNS:keda-operator-metrics-apiserver.keda.svc.cluster.local\n"
        "X509v3 Extended Key Usage: \n"
        "    TLS Web Server Authentication\n"
    )
    assert verifies(state / "pki" / "ca.crt", crt)


def test_the_api_service_is_kedas_with_the_ca_that_signed_the_adapter() -> None:
    assert kedastack.api_service(b"PEM") == {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": "v1beta1.external.metrics.k8s.io"},
        "spec": {
            "service": {
                "name": "keda-operator-metrics-apiserver",
                "namespace": "keda",
                "port": 443,
            },
            "group": "external.metrics.k8s.io",
            "version": "v1beta1",
            "caBundle": base64.b64encode(b"PEM").decode(),
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
        },
    }


def test_the_charts_service_sends_443_to_the_placeholder_pods_https_port() -> None:
    (_, deployment), (path, service) = kedastack.placeholder_objects()
    assert path == "/api/v1/namespaces/keda/services"
    assert service["spec"] == {
        "selector": {"app": "keda-operator-metrics-apiserver"},
        "ports": [{"name": "https", "port": 443, "targetPort": "https"}],
    }
    pod = deployment["spec"]["template"]
    assert pod["metadata"]["labels"]["app"] == "keda-operator-metrics-apiserver"
    assert pod["spec"]["containers"][0]["ports"] == [{"name": "https", "containerPort": 6443}]


def test_the_adapter_listens_at_the_pod_ip_and_asks_the_operator_over_grpc() -> None:
    cmd = kedastack.adapter_command(
        Path("/bin/keda-metrics-apiserver"),
        pod_ip="10.244.0.7",
        kubeconfig=Path("/s/kubeconfig"),
        serving=(Path("/s/serving.crt"), Path("/s/serving.key")),
        grpc_certs=Path("/s/keda-certs"),
        grpc_address="127.0.0.1:4000",
        metrics_port=4001,
    )
    assert cmd == [
        "/bin/keda-metrics-apiserver",
        "--bind-address=10.244.0.7",
        "--secure-port=6443",
        "--tls-cert-file=/s/serving.crt",
        "--tls-private-key-file=/s/serving.key",
        "--cert-dir=/s/keda-certs",
        "--authentication-kubeconfig=/s/kubeconfig",
        "--authorization-kubeconfig=/s/kubeconfig",
        "--lister-kubeconfig=/s/kubeconfig",
        "--metrics-service-address=127.0.0.1:4000",
        "--port=4001",
        "--zap-log-level=info",
    ]
