"""`python e2e/rehearse_rollout_up.py [--keep]`: what the real `pulumi up` prints, and when
it returns, when a model with a `rollout` changes version.

Inside a network namespace of its own (e2e/netns.py), with the real local control plane and
KWOK nodes shaped like the blueprint's pools and zones (e2e/cluster.py, e2e/nodes.py), the
real Prometheus operator and Prometheus (e2e/promstack.py, at the port of the blueprint's
``query_url``), the real Argo Rollouts controller (`rehearse_rollout.start_controller`) and
the real KEDA operator, the model ``chat`` of e2e/rollout-blueprint.yaml (two zones, two
replicas each, ``rollout: {steps: [50, 100], step_s: 120}``) is deployed by the real Pulumi
CLI and Kubernetes provider, as `./dev e2e` deploys (e2e/run.py, e2e/pulumi_cli.py; with the
policy pack):

1. `pulumi up` of the blueprint; both zones' Rollouts Healthy;
2. the model's version changes (``vllm.max_model_len`` 8192 -> 4096: a new flag, so a new
   pod template) and `pulumi up` runs again, while each zone's Rollout is read every
   second: its exit code, its seconds, its summary and its lines for the Deployments and the
   Rollouts, and each Rollout's phase when it returned;
3. at once a third `pulumi up` without a change (the canary still in flight);
4. the Rollouts watched until the first zone is Healthy on the new template (its canary:
   50 %, a 120 s pause, 100 %) or `WATCH_S` after the second `up` returned;
5. the second zone, still waiting at its gate, aborted as `kubectl argo rollouts abort`
   aborts (its phase turns `Degraded`), and `pulumi up` once more.

The guard's AnalysisTemplate asks the blueprint's ``query_url``
(``kube-prometheus-stack-prometheus.monitoring.svc.cluster.local:9090``), as the stack wrote
it; the controller runs out of cluster, so that name is made to mean 127.0.0.1 for this
process and its children only: an ``/etc/hosts`` of the state folder bound over the file in
a mount namespace of its own (`private_hosts`), and Prometheus listens on that port. No
stand-in serves here: the guard finds no canary series (its ``failureCondition`` is
``len(result) > 0``), so it passes; the second zone's gate finds no series of the first
zone's pods, so it does not pass within this run.

Prints one JSON report. Exit 0 when every step ran (the observations are the report's; the
test asserts them), 1 otherwise, 2 when it cannot run here.
"""

from __future__ import annotations

import copy
import ctypes
import os
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

import addons  # noqa: E402
import cluster  # noqa: E402
import nodes  # noqa: E402
import rehearse_rollout  # noqa: E402
from kube import Kube, KubeError  # noqa: E402
from pulumi_cli import Pulumi, changes_of, plugin_dir, project_dir, tool_path  # noqa: E402
from rehearse_smoke import run, start_monitoring, stepper, wait  # noqa: E402
from run import secret_inputs  # noqa: E402
from tools import REHEARSAL_TOOLS, TOOLS  # noqa: E402

BLUEPRINT = HERE / "rollout-blueprint.yaml"
ENVIRONMENT = "local"
MODEL = "chat"
OLD_FLAG, NEW_FLAG = "max_model_len: 8192", "max_model_len: 4096"
UP_TIMEOUT_S = 300.0
WATCH_S = 200.0
API = "/apis/argoproj.io/v1alpha1"
ABORT = {"status": {"abort": True}}

# <sched.h>, <sys/mount.h>
CLONE_NEWNS = 0x00020000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18


def not_built() -> list[str]:
    needed = list(TOOLS.values())
    needed += [REHEARSAL_TOOLS[n] for n in ("prometheus", "prometheus-operator", "argo-rollouts")]
    return [tool.name for tool in (make() for make in needed) if not tool.built()]


def private_hosts(state: Path, names: list[str]) -> None:
    """`names` resolve to 127.0.0.1 for this process and every child it starts afterwards:
    a copy of /etc/hosts with them added, bound over /etc/hosts in a new mount namespace
    whose mounts do not propagate back (mount_namespaces(7)). Call it before any thread."""
    libc = ctypes.CDLL(None, use_errno=True)

    def check(rc: int, what: str) -> None:
        if rc != 0:
            err = ctypes.get_errno()
            raise OSError(f"{what} failed: {os.strerror(err)}")

    hosts = state / "hosts"
    hosts.write_text(Path("/etc/hosts").read_text() + "".join(f"127.0.0.1 {n}\n" for n in names))
    check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "mount --make-rprivate /")
    check(libc.mount(str(hosts).encode(), b"/etc/hosts", None, MS_BIND, None), "bind /etc/hosts")


def room_for_both(shapes: list[dict[str, Any]], per_zone: int) -> list[dict[str, Any]]:
    """`shapes` with GPU nodes added (copies of each zone's first) until every zone has
    room for the Deployment's pods and the Rollout's together (2 x `per_zone`, one GPU
    each): on the first `up` the Deployment runs its replicas until the Rollout is Healthy
    (``scaleDown: onsuccess``), and the Rollout's first pods need their own GPUs."""
    out = list(shapes)
    gpu_nodes: dict[str, list[dict[str, Any]]] = {}
    for node in shapes:
        if any(k.startswith("nvidia.com/") for k in node["status"]["capacity"]):
            zone = node["metadata"]["labels"]["topology.kubernetes.io/zone"]
            gpu_nodes.setdefault(zone, []).append(node)
    for have in gpu_nodes.values():
        for i in range(len(have), 2 * per_zone):
            extra = copy.deepcopy(have[0])
            name = f"{have[0]['metadata']['name'].rsplit('-', 1)[0]}-{i}"
            extra["metadata"]["name"] = name
            extra["metadata"]["labels"]["kubernetes.io/hostname"] = name
            out.append(extra)
    return out


def rollout_state(client: Kube, ns: str, name: str) -> dict[str, Any]:
    got = client.get(f"{API}/namespaces/{ns}/rollouts/{name}")
    st = got.get("status") or {}
    conds = {c["type"]: c["status"] for c in st.get("conditions") or []}
    return {
        "phase": st.get("phase"),
        "message": st.get("message"),
        "step": st.get("currentStepIndex"),
        "abort": bool(st.get("abort")),
        "stable": st.get("stableRS"),
        "current": st.get("currentPodHash"),
        "ready": st.get("readyReplicas"),
        "updated": st.get("updatedReplicas"),
        "conditions": conds,
    }


class Watch:
    """Each zone's Rollout read every second; an event on every change, in seconds after
    `origin`."""

    def __init__(self, client: Kube, ns: str, names: dict[str, str], origin: float) -> None:
        self.client, self.ns, self.names, self.origin = client, ns, names, origin
        self.events: list[dict[str, Any]] = []
        self.last: dict[str, dict[str, Any]] = {}

    def poll(self) -> dict[str, dict[str, Any]]:
        t = round(time.monotonic() - self.origin, 1)
        for zone, name in self.names.items():
            try:
                got = rollout_state(self.client, self.ns, name)
            except (OSError, KubeError):
                continue
            if self.last.get(zone) != got:
                self.events.append({"t": t, "zone": zone, **got})
                self.last[zone] = got
        return dict(self.last)


def printed(out: str) -> dict[str, Any]:
    """What `pulumi up` printed that a user reads: its lines for the model's Deployments
    and Rollouts, and its summary (from ``Resources:`` on)."""
    lines = out.splitlines()
    mine = [
        line.rstrip() for line in lines if re.search(r"(Deployment|Rollout)\s+\S*chat-zone-", line)
    ]
    start = next((i for i, line in enumerate(lines) if line.startswith("Resources:")), None)
    summary = [line.rstrip() for line in lines[start:]] if start is not None else []
    return {"resource_lines": mine, "summary": [line for line in summary if line.strip()]}


def timed_up(pulumi: Pulumi, state: Path, name: str, watch: Watch | None) -> dict[str, Any]:
    """`pulumi up` as e2e/run.py runs it; with `watch`, the Rollouts are read every second
    while it runs, and their state when it returned is kept."""
    box: dict[str, Any] = {}

    def go() -> None:
        try:
            box["res"] = pulumi.run(
                "up",
                "--stack",
                ENVIRONMENT,
                "--yes",
                "--skip-preview",
                "--policy-pack",
                str(REPO / "policies"),
                "--event-log",
                str(state / "logs" / f"{name}.events.jsonl"),
                check=False,
                log=name,
                timeout=UP_TIMEOUT_S,
            )
        except Exception as err:  # the timeout's StepFailed, said in the report
            box["error"] = str(err)

    start = time.monotonic()
    worker = threading.Thread(target=go, daemon=True)
    worker.start()
    while worker.is_alive():
        if watch is not None:
            watch.poll()
        worker.join(1.0)
    seconds = round(time.monotonic() - start, 1)
    if "error" in box:
        raise RuntimeError(f"pulumi up ({name}): {box['error']}")
    res = box["res"]
    out: dict[str, Any] = {
        "exit": res.returncode,
        "seconds": seconds,
        "ended_at": round(time.monotonic() - watch.origin, 1) if watch else None,
        **printed(res.stdout),
    }
    try:
        out["changes"] = changes_of(pulumi.events(name))
    except Exception as err:
        out["changes"] = f"none: {err}"
    if watch is not None:
        out["rollouts_when_it_returned"] = watch.poll()
    if res.returncode != 0:
        out["tail"] = (res.stdout + res.stderr).splitlines()[-40:]
    return out


def rehearse(state: Path, report: dict[str, Any]) -> None:
    from inferplane.blueprint import naming
    from inferplane.blueprint.resolution.resolve import load_blueprint, resolve
    from inferplane.components import argo_rollouts

    step = stepper(report)
    env = resolve(load_blueprint(BLUEPRINT)[0], ENVIRONMENT)
    query = urlsplit(env.cluster.addons.prometheus.query_url)
    assert query.hostname and query.port
    private_hosts(state, [query.hostname])
    blueprint = state / "rollout-blueprint.yaml"
    text = BLUEPRINT.read_text()
    assert text.count(OLD_FLAG) == 1
    blueprint.write_text(text)

    per_zone = env.models[MODEL].replicas.min // len(env.zones)
    shapes = room_for_both(nodes.nodes_for(env), per_zone)
    report["gpu_nodes_per_zone"] = 2 * per_zone
    cp = step("control plane up", lambda: cluster.up(state, shapes))
    client = cp.client()
    sync, _ = start_monitoring(state, cp, step, port=query.port)
    try:
        crds = [argo_rollouts.crd_path(f) for f in argo_rollouts.crd_files()]
        step("Argo Rollouts CRDs", lambda: addons.apply_crds(client, crds))
        addons.namespace(client, rehearse_rollout.CONTROLLER_NAMESPACE)
        report["controller"] = step(
            "controller started and leading",
            lambda: rehearse_rollout.start_controller(state, client, cp.kubeconfig),
        )
        bins = tool_path()
        bindir = plugin_dir(state, bins)

        def prepare() -> list[str]:
            done = addons.preinstall(client, env)
            addons.platform_namespace(client, env)
            addons.start_keda(state, bins["keda"], cp.kubeconfig, env)
            return sorted(done)

        step("existing add-ons, KEDA running", prepare)
        (state / "logs").mkdir(exist_ok=True)
        proj = project_dir(state, blueprint, ENVIRONMENT, cluster.CONTEXT)
        pulumi = Pulumi(state, bindir, proj, ENVIRONMENT, cp.kubeconfig)
        variables, config = secret_inputs(env)
        pulumi.env.update(variables)
        pulumi.run("stack", "init", ENVIRONMENT, log="init")
        for key, value in config.items():
            pulumi.run("config", "set", "--stack", ENVIRONMENT, "--secret", key, stdin=value)

        ns = naming.namespace(env.blueprint)
        zones = list(env.zones)
        names = {z: f"{MODEL}-{z}" for z in zones}
        watch1 = Watch(client, ns, names, time.monotonic())
        first = step("first pulumi up", lambda: timed_up(pulumi, state, "up-1", watch1))
        report["up_1"] = first
        if first["exit"] != 0:
            raise RuntimeError(f"the first pulumi up exited {first['exit']}")

        def healthy() -> Any:
            got = {z: rollout_state(client, ns, n) for z, n in names.items()}
            ok = all(s["phase"] == "Healthy" and s["ready"] == per_zone for s in got.values())
            return got if ok else None

        try:
            before = step("both zones Healthy", lambda: wait("both Rollouts Healthy", healthy, 120))
        finally:
            watch1.poll()
            report["up_1_events"] = watch1.events
        report["before"] = before
        blueprint.write_text(text.replace(OLD_FLAG, NEW_FLAG))
        report["change"] = f"vllm.{OLD_FLAG} -> {NEW_FLAG}"

        origin = time.monotonic()
        watch = Watch(client, ns, names, origin)
        watch.poll()
        report["up_2"] = step(
            "second pulumi up: a new version", lambda: timed_up(pulumi, state, "up-2", watch)
        )
        report["up_3"] = step(
            "third pulumi up: no change, canary in flight",
            lambda: timed_up(pulumi, state, "up-3", watch),
        )
        old = before[zones[0]]["stable"]
        until = origin + report["up_2"]["seconds"] + WATCH_S

        def first_zone_done() -> bool:
            a = watch.poll()[zones[0]]
            return a["phase"] == "Healthy" and a["stable"] not in (None, old)

        while time.monotonic() < until and not first_zone_done():
            time.sleep(1.0)
        report["watched_s"] = round(time.monotonic() - origin, 1)
        report["final"] = watch.poll()
        # The second zone, still at its gate, aborted as `kubectl argo rollouts abort` does
        # (pkg/kubectl-argo-rollouts/cmd/abort/abort.go: `{"status":{"abort":true}}`, a
        # merge patch of the status subresource), then `pulumi up` once more.
        last = zones[-1]
        client.merge_patch(f"{API}/namespaces/{ns}/rollouts/{names[last]}/status", ABORT)
        report["aborted_at"] = round(time.monotonic() - origin, 1)
        step(
            f"{last} aborted: Degraded",
            lambda: wait("Degraded", lambda: watch.poll()[last]["phase"] == "Degraded", 60),
        )
        report["up_4"] = step(
            "fourth pulumi up: no change, a zone aborted",
            lambda: timed_up(pulumi, state, "up-4", watch),
        )
        report["events"] = watch.events
        report["old_stable"] = {z: s["stable"] for z, s in before.items()}
    finally:
        sync.stop()


def main(argv: list[str]) -> int:
    return run(argv, not_built(), rehearse, "inferplane-rehearsal-rollout-up-")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
