"""The local control plane's certificates, made with openssl, and the API server flags that
use the aggregation layer's share of them.

`make_pki` writes, once per state folder:

- ``ca.crt``/``ca.key``: the cluster CA; the API server's serving certificate (``server``),
  an admin client (``admin``, group ``system:masters``) and the service-account key pair;
- ``front-proxy-ca`` and ``front-proxy-client``: what the API server's aggregator shows when
  it proxies a request to an extension API server (KEDA's metrics API server), laid out as
  kubeadm lays them out (k8s.io/kubernetes v1.37.2 cmd/kubeadm/app/constants/constants.go
  `FrontProxyCACertName`, `FrontProxyClientCertName`; the flags of
  cmd/kubeadm/app/phases/controlplane/manifests.go `getAPIServerCommand`). The front proxy
  has a CA of its own, as kubeadm gives it: the extension server trusts request headers
  only from a client that CA signed, with the allowed name, so no other client certificate
  of the cluster CA (the admin's) can claim to speak for a user through headers.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

DAYS = "30"
FRONT_PROXY_CLIENT = "front-proxy-client"
# Each file make_pki writes; a state folder missing any of them gets the missing groups.
CLUSTER_FILES = ("ca.crt", "server.crt", "admin.crt", "sa.key", "sa.pub")
FRONT_PROXY_FILES = ("front-proxy-ca.crt", f"{FRONT_PROXY_CLIENT}.crt", f"{FRONT_PROXY_CLIENT}.key")


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def new_ca(folder: Path, name: str, subject: str) -> None:
    """A self-signed CA, ``<name>.crt``/``<name>.key``."""
    openssl(
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
        "-out", f"{name}.crt", "-days", DAYS, "-subj", subject, cwd=folder,
    )  # fmt: skip


def issue(folder: Path, name: str, subject: str, ext: str, ca: Path) -> Path:
    """A key and certificate ``<name>.key``/``<name>.crt`` in `folder`, signed by the CA
    ``<ca>.crt``/``<ca>.key`` (`ca` without the suffix), with the extensions `ext` (openssl
    ``-extfile`` lines). Returns the certificate's path."""
    ca = ca.resolve()
    (folder / f"{name}.ext").write_text(ext)
    openssl(
        "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
        "-out", f"{name}.csr", "-subj", subject, cwd=folder,
    )  # fmt: skip
    openssl(
        "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key",
        "-CAcreateserial", "-out", f"{name}.crt", "-days", DAYS, "-extfile", f"{name}.ext",
        cwd=folder,
    )  # fmt: skip
    return folder / f"{name}.crt"


def server_ext(ips: list[str], dns: list[str]) -> str:
    """The extensions of a serving certificate for `ips` and `dns` names."""
    sans = [f"IP:{ip}" for ip in ips] + [f"DNS:{name}" for name in dns]
    return f"subjectAltName={','.join(sans)}\nextendedKeyUsage=serverAuth\n"


CLIENT_EXT = "extendedKeyUsage=clientAuth\n"


def make_pki(pki: Path) -> None:
    """The cluster's certificates and the front proxy's (module docstring); what exists is
    kept."""
    pki.mkdir(parents=True, exist_ok=True)
    if not all((pki / f).exists() for f in CLUSTER_FILES):
        new_ca(pki, "ca", "/CN=inferplane-local-ca")
        server_dns = ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"]
        server_dns.append("kubernetes.default.svc.cluster.local")
        ca = pki / "ca"
        serving = server_ext(["127.0.0.1", "10.96.0.1"], server_dns)
        issue(pki, "server", "/CN=kube-apiserver", serving, ca)
        issue(pki, "admin", "/O=system:masters/CN=inferplane-e2e-admin", CLIENT_EXT, ca)
        openssl("genrsa", "-out", "sa.key", "2048", cwd=pki)
        openssl("rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=pki)
    if not all((pki / f).exists() for f in FRONT_PROXY_FILES):
        new_ca(pki, "front-proxy-ca", "/CN=front-proxy-ca")
        front_ca = pki / "front-proxy-ca"
        issue(pki, FRONT_PROXY_CLIENT, f"/CN={FRONT_PROXY_CLIENT}", CLIENT_EXT, front_ca)


def aggregator_flags(pki: Path) -> list[str]:
    """kube-apiserver's flags for the aggregation layer: kubeadm's request-header and proxy
    client flags (manifests.go `getAPIServerCommand`), and `--enable-aggregator-routing`,
    which makes the aggregator send a request to an endpoint of the APIService's Service
    (its EndpointSlices) rather than to its cluster IP (cmd/kube-apiserver/app/server.go
    `buildServiceResolver`; k8s.io/apiserver pkg/util/proxy/proxy.go `ResolveEndpoint`):
    no kube-proxy runs here to carry a cluster IP to a pod. The same resolver serves
    admission webhooks, of which the local control plane has none of its own."""
    return [
        f"--requestheader-client-ca-file={pki / 'front-proxy-ca.crt'}",
        f"--requestheader-allowed-names={FRONT_PROXY_CLIENT}",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--proxy-client-cert-file={pki / f'{FRONT_PROXY_CLIENT}.crt'}",
        f"--proxy-client-key-file={pki / f'{FRONT_PROXY_CLIENT}.key'}",
        "--enable-aggregator-routing=true",
    ]
