"""A local Kubernetes control plane on loopback, with KWOK nodes shaped like a blueprint's pools.

    python e2e/cluster.py up STATE_DIR [--nodes nodes.json]   # start; prints the kubeconfig
    python e2e/cluster.py down STATE_DIR                      # stop every process by PID

etcd, kube-apiserver (PodSecurity admission on, as on EKS and GKE: it is in the API server's
default admission plugins since 1.25, kubernetes/kubernetes
pkg/kubeapiserver/options/plugins.go `DefaultOffAdmissionPlugins`), kube-controller-manager,
kube-scheduler and KWOK, all bound to 127.0.0.1 and stopped by PID. No kubelet or kube-proxy
runs: KWOK (sigs.k8s.io/kwok) keeps the nodes' leases and moves pods through the stages of
its module's `kustomize/stage/` files (node initialize + heartbeat, pod ready, Job pods
complete, pod delete), so the real scheduler places pods, KWOK marks them Ready, and Jobs
complete. Service and pod CIDRs are only addresses in API objects: nothing routes them
(outside the rehearsal's network namespace, e2e/netns.py). The API server's aggregation
layer is on, with a front proxy of its own (e2e/pki.py), so an extension API server such as
KEDA's metrics server can be registered with an APIService.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from kube import Kube, KubeError  # noqa: E402
from pki import aggregator_flags, make_pki  # noqa: E402
from tools import TOOLS  # noqa: E402

CONTEXT = "inferplane-local"
SERVICE_CIDR = "10.96.0.0/16"
POD_CIDR = "10.244.0.0/16"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def kubeconfig(state: Path, port: int, context: str = CONTEXT) -> Path:
    pki = state / "pki"
    path = state / "kubeconfig"
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": context,
                "cluster": {
                    "server": f"https://127.0.0.1:{port}",
                    "certificate-authority": str(pki / "ca.crt"),
                },
            }
        ],
        "users": [
            {
                "name": "admin",
                "user": {
                    "client-certificate": str(pki / "admin.crt"),
                    "client-key": str(pki / "admin.key"),
                },
            }
        ],
        "contexts": [{"name": context, "context": {"cluster": context, "user": "admin"}}],
        "current-context": context,
    }
    path.write_text(json.dumps(cfg, indent=1))
    return path


@dataclass
class ControlPlane:
    state: Path
    port: int

    @property
    def kubeconfig(self) -> Path:
        return self.state / "kubeconfig"

    def client(self) -> Kube:
        pki = self.state / "pki"
        return Kube("127.0.0.1", self.port, pki / "ca.crt", pki / "admin.crt", pki / "admin.key")


def spawn(state: Path, name: str, cmd: list[str], env: dict[str, str] | None = None) -> int:
    """Start `cmd` in a session of its own, log to logs/<name>.log, and record its PID."""
    # Appended: a process started again under its name (a restarted stand-in) keeps the
    # log of the one before.
    log = open(state / "logs" / f"{name}.log", "ab")  # noqa: SIM115 - lives with the process
    proc = subprocess.Popen(
        cmd,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
    )
    try:
        # A binary that dies at once (a bad flag, a port taken) fails here, with its log.
        code = proc.wait(timeout=0.5)
    except subprocess.TimeoutExpired:
        code = None
    if code is not None:
        tail = (state / "logs" / f"{name}.log").read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{name} exited with {code} at start:\n{tail}")
    pids = _records(state)
    pids[name] = {"pid": proc.pid, "start": _start_time(proc.pid)}
    (state / "pids.json").write_text(json.dumps(pids))
    return proc.pid


def _records(state: Path) -> dict[str, dict]:
    f = state / "pids.json"
    return json.loads(f.read_text()) if f.exists() else {}


def _pids(state: Path) -> dict[str, int]:
    """Name -> PID of each recorded process that is still the one this state started (a
    PID the kernel has since given to another process is left alone)."""
    return {
        name: rec["pid"]
        for name, rec in _records(state).items()
        if _start_time(rec["pid"]) == rec["start"]
    }


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (/proc/<pid>/stat field 22)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    # A zombie child still answers kill(0): read its state.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def down(state: Path) -> None:
    """Stop every process of the control plane, newest first, by PID (its process group:
    the component and anything it started)."""
    for name, pid in reversed(list(_pids(state).items())):
        if not _alive(pid):
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            continue
        try:
            os.killpg(pid, signal.SIGTERM)
        except OSError:
            continue
        for _ in range(50):
            if not _alive(pid):
                break
            time.sleep(0.1)
        else:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
        print(f"stopped {name} (pid {pid})", file=sys.stderr)
    (state / "pids.json").unlink(missing_ok=True)


def kwok_stages(state: Path) -> Path:
    """The Stage objects KWOK needs (node initialize + heartbeat, pod ready/complete/delete),
    copied from its module's `kustomize/stage/` when the tool was built."""
    stages = sorted((TOOLS["kwok"]().share() / "stages").glob("*.yaml"))
    out = state / "kwok-stages.yaml"
    out.write_text("\n---\n".join(p.read_text().strip() for p in stages) + "\n")
    return out


def up(state: Path, nodes: list[dict] | None = None, timeout: float = 60) -> ControlPlane:
    """Start etcd, the API server, controller manager, scheduler and KWOK; create `nodes`."""
    start = time.monotonic()
    state = state.resolve()
    (state / "logs").mkdir(parents=True, exist_ok=True)
    if any(_alive(p) for p in _pids(state).values()):
        raise RuntimeError(f"a control plane already runs from {state}; stop it first")
    bins = {}
    for name in ("kubernetes", "etcd", "kwok"):
        tool = TOOLS[name]()
        if not tool.built():
            raise RuntimeError(f"{name} is not built: run `python e2e/tools.py build {name}`")
        bins[name] = tool.bindir()
    pki = state / "pki"
    make_pki(pki)
    etcd_port, etcd_peer, api_port = free_port(), free_port(), free_port()
    shutil.rmtree(state / "etcd", ignore_errors=True)
    spawn(
        state,
        "etcd",
        [
            str(bins["etcd"] / "etcd"),
            "--name",
            "local",
            "--data-dir",
            str(state / "etcd"),
            "--listen-client-urls",
            f"http://127.0.0.1:{etcd_port}",
            "--advertise-client-urls",
            f"http://127.0.0.1:{etcd_port}",
            "--listen-peer-urls",
            f"http://127.0.0.1:{etcd_peer}",
            "--initial-advertise-peer-urls",
            f"http://127.0.0.1:{etcd_peer}",
            "--initial-cluster",
            f"local=http://127.0.0.1:{etcd_peer}",
            "--listen-metrics-urls",
            f"http://127.0.0.1:{free_port()}",
            "--unsafe-no-fsync",
        ],
    )
    k8s = bins["kubernetes"]
    spawn(
        state,
        "kube-apiserver",
        [
            str(k8s / "kube-apiserver"),
            "--etcd-servers",
            f"http://127.0.0.1:{etcd_port}",
            "--bind-address",
            "127.0.0.1",
            "--advertise-address",
            "127.0.0.1",
            "--secure-port",
            str(api_port),
            # A loopback advertise address cannot be the `kubernetes` Service's endpoint.
            "--endpoint-reconciler-type",
            "none",
            "--service-cluster-ip-range",
            SERVICE_CIDR,
            "--tls-cert-file",
            str(pki / "server.crt"),
            "--tls-private-key-file",
            str(pki / "server.key"),
            "--client-ca-file",
            str(pki / "ca.crt"),
            "--service-account-key-file",
            str(pki / "sa.pub"),
            "--service-account-signing-key-file",
            str(pki / "sa.key"),
            "--service-account-issuer",
            "https://kubernetes.default.svc.cluster.local",
            "--authorization-mode",
            "RBAC",
            "--allow-privileged=true",
            "--cert-dir",
            str(state / "apiserver-certs"),
            # The aggregation layer: KEDA's metrics API server is reached through it.
            *aggregator_flags(pki),
        ],
    )
    kubeconfig(state, api_port)
    cp = ControlPlane(state, api_port)
    client = cp.client()
    client.wait(
        "the default namespace",
        lambda: client.exists("/api/v1/namespaces/default"),
        timeout,
    )
    kc = str(cp.kubeconfig)

    def component(binary: str) -> list[str]:
        """A control-plane component on the admin kubeconfig, serving on loopback only."""
        return [
            str(k8s / binary),
            "--kubeconfig",
            kc,
            "--authentication-kubeconfig",
            kc,
            "--authorization-kubeconfig",
            kc,
            "--bind-address",
            "127.0.0.1",
            "--secure-port",
            str(free_port()),
            "--leader-elect=false",
        ]

    spawn(
        state,
        "kube-controller-manager",
        [
            *component("kube-controller-manager"),
            "--service-account-private-key-file",
            str(pki / "sa.key"),
            "--root-ca-file",
            str(pki / "ca.crt"),
            "--use-service-account-credentials=false",
            "--cluster-cidr",
            POD_CIDR,
            "--service-cluster-ip-range",
            SERVICE_CIDR,
            # Nodes come from KWOK with their own podCIDR: no node IPAM. (The providerless
            # build has no cloud controllers to turn off.)
            "--controllers",
            "*,-nodeipam",
        ],
    )
    spawn(state, "kube-scheduler", component("kube-scheduler"))
    stages = kwok_stages(state)
    spawn(
        state,
        "kwok",
        [
            str(bins["kwok"] / "kwok"),
            "--kubeconfig",
            kc,
            "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--node-lease-duration-seconds=40",
            "--cidr",
            POD_CIDR,
            "--node-ip",
            "10.240.0.1",
            "--server-address",
            f"127.0.0.1:{free_port()}",
            "--config",
            str(stages),
        ],
    )
    for node in nodes or []:
        client.create("/api/v1/nodes", node)
    if nodes:
        client.wait("every node Ready", lambda: all_nodes_ready(client, len(nodes)), timeout)
    client.wait(
        "the default ServiceAccount",
        lambda: client.exists("/api/v1/namespaces/default/serviceaccounts/default"),
        timeout,
    )
    print(f"control plane up in {time.monotonic() - start:.1f} s: KUBECONFIG={kc}", file=sys.stderr)
    return cp


def all_nodes_ready(client: Kube, count: int) -> bool:
    ready = 0
    for node in client.items("/api/v1/nodes"):
        conds = node.get("status", {}).get("conditions", [])
        if any(c["type"] == "Ready" and c["status"] == "True" for c in conds):
            ready += 1
    return ready >= count


def main(argv: list[str]) -> int:
    if len(argv) < 2 or argv[0] not in ("up", "down"):
        print(__doc__, file=sys.stderr)
        return 2
    state = Path(argv[1])
    if argv[0] == "down":
        down(state)
        return 0
    nodes = []
    if "--nodes" in argv:
        nodes = json.loads(Path(argv[argv.index("--nodes") + 1]).read_text())
    try:
        cp = up(state, nodes)
    except (RuntimeError, TimeoutError, KubeError) as err:
        print(f"error: {err}", file=sys.stderr)
        down(state)
        return 1
    print(cp.kubeconfig)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
