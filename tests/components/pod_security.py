"""The Pod Security Standards' ``restricted`` profile (which includes ``baseline``), as a
checker of pod specs in the API's camelCase.

Rules and allowed values follow https://kubernetes.io/docs/concepts/security/pod-security-standards/
and the enforcement code, k8s.io/pod-security-admission ``policy/check_*.go`` (kubernetes/
pod-security-admission @ 8f84a87c7f617f64a4ddc1aea24aeeb7a2e07cb8), one function per check
file, newest version of each check. On top of the profile, inferplane's own rule: every
container's effective uid is above `MIN_UID`.

`violations(spec, annotations)` returns one line per violation, ``""`` never; an empty list
means the pod would be admitted by a namespace that enforces ``restricted``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol

Manifest = dict[str, Any]


class Recorded(Protocol):
    """What `pods` reads of a recorded resource (`inferplane.app.offline.RecordedResource`)."""

    type: str
    name: str
    inputs: dict[str, Any]

    def get(self, *path: str | int, default: Any = None) -> Any: ...


MIN_UID = 10000
"""inferplane runs every container with a uid above this (not a PSS rule)."""

# check_capabilities_baseline.go: the container runtime's default set.
BASELINE_CAPABILITIES = frozenset({
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
})  # fmt: skip
# check_restrictedVolumes.go (restrictedVolumes_1_0 plus `image`, allowed in newer versions).
RESTRICTED_VOLUME_SOURCES = frozenset({
    "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
    "projected", "secret", "image",
})  # fmt: skip
# check_sysctls.go: the "safe" sysctls of the newest version.
SAFE_SYSCTLS = frozenset({
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range", "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat",
})  # fmt: skip
SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t"})
SECCOMP_RESTRICTED = frozenset({"RuntimeDefault", "Localhost"})
APPARMOR_TYPES = frozenset({"RuntimeDefault", "Localhost"})
PROBES = ("livenessProbe", "readinessProbe", "startupProbe")


def containers(spec: Manifest) -> Iterator[Manifest]:
    for key in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(key) or []


def _sc(obj: Manifest) -> Manifest:
    return obj.get("securityContext") or {}


def violations(spec: Manifest, annotations: Manifest | None = None) -> list[str]:
    """Every way `spec` (a PodSpec) breaks ``restricted`` or inferplane's uid rule."""
    found: list[str] = []
    for check in (
        host_namespaces, privileged, capabilities, host_path_volumes, host_ports,
        selinux, proc_mount, seccomp, sysctls, windows_host_process, host_probes,
        restricted_volumes, allow_privilege_escalation, run_as_non_root, run_as_user,
    ):  # fmt: skip
        found += check(spec)
    found += apparmor(spec, annotations or {})
    found += uid_above_minimum(spec)
    return found


# --- baseline ---------------------------------------------------------------------------
def host_namespaces(spec: Manifest) -> list[str]:
    """check_hostNamespaces.go: hostNetwork, hostPID, hostIPC unset or false."""
    return [f"{key}: true" for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key)]


def privileged(spec: Manifest) -> list[str]:
    """check_privileged.go."""
    return [f"{c['name']}: privileged" for c in containers(spec) if _sc(c).get("privileged")]


def capabilities(spec: Manifest) -> list[str]:
    """check_capabilities_baseline.go and check_capabilities_restricted.go: drop ALL, add
    at most NET_BIND_SERVICE."""
    out = []
    for c in containers(spec):
        caps = _sc(c).get("capabilities") or {}
        added = set(caps.get("add") or [])
        if added - BASELINE_CAPABILITIES:
            out.append(f"{c['name']}: adds non-default capabilities {sorted(added)}")
        if added - {"NET_BIND_SERVICE"}:
            out.append(f"{c['name']}: adds capabilities {sorted(added)}")
        if "ALL" not in (caps.get("drop") or []):
            out.append(f"{c['name']}: does not drop ALL capabilities")
    return out


def host_path_volumes(spec: Manifest) -> list[str]:
    """check_hostPathVolumes.go."""
    return [f"volume {v['name']}: hostPath" for v in spec.get("volumes") or [] if "hostPath" in v]


def host_ports(spec: Manifest) -> list[str]:
    """check_hostPorts.go: hostPort unset or 0."""
    return [
        f"{c['name']}: hostPort {p['hostPort']}"
        for c in containers(spec)
        for p in c.get("ports") or []
        if p.get("hostPort")
    ]


def selinux(spec: Manifest) -> list[str]:
    """check_seLinuxOptions.go: type in the allowed set, no user or role."""
    out = []
    for where, sc in [("pod", _sc(spec)), *((c["name"], _sc(c)) for c in containers(spec))]:
        options = sc.get("seLinuxOptions") or {}
        if options.get("type", "") not in SELINUX_TYPES:
            out.append(f"{where}: seLinuxOptions.type {options['type']}")
        for key in ("user", "role"):
            if options.get(key):
                out.append(f"{where}: seLinuxOptions.{key} set")
    return out


def proc_mount(spec: Manifest) -> list[str]:
    """check_procMount_baseline.go / _restricted.go: Default or unset."""
    return [
        f"{c['name']}: procMount {_sc(c)['procMount']}"
        for c in containers(spec)
        if _sc(c).get("procMount", "Default") != "Default"
    ]


def sysctls(spec: Manifest) -> list[str]:
    """check_sysctls.go."""
    return [
        f"sysctl {s['name']}"
        for s in _sc(spec).get("sysctls") or []
        if s.get("name") not in SAFE_SYSCTLS
    ]


def windows_host_process(spec: Manifest) -> list[str]:
    """check_windowsHostProcess.go."""
    scopes = [("pod", _sc(spec)), *((c["name"], _sc(c)) for c in containers(spec))]
    return [
        f"{where}: windowsOptions.hostProcess"
        for where, sc in scopes
        if (sc.get("windowsOptions") or {}).get("hostProcess")
    ]


def host_probes(spec: Manifest) -> list[str]:
    """check_hostProbesAndhostLifecycle.go: no ``host`` in probes and lifecycle handlers."""
    out = []
    for c in containers(spec):
        handlers = [c.get(p) or {} for p in PROBES]
        handlers += list((c.get("lifecycle") or {}).values())
        for handler in handlers:
            for kind in ("httpGet", "tcpSocket"):
                if (handler.get(kind) or {}).get("host"):
                    out.append(f"{c['name']}: {kind}.host set")
    return out


def apparmor(spec: Manifest, annotations: Manifest) -> list[str]:
    """check_appArmorProfile.go: the annotation and the field."""
    out = [
        f"annotation {key}: {value}"
        for key, value in annotations.items()
        if key.startswith("container.apparmor.security.beta.kubernetes.io/")
        and value != "runtime/default"
        and not str(value).startswith("localhost/")
    ]
    for where, sc in [("pod", _sc(spec)), *((c["name"], _sc(c)) for c in containers(spec))]:
        profile = sc.get("appArmorProfile")
        if profile is not None and profile.get("type") not in APPARMOR_TYPES:
            out.append(f"{where}: appArmorProfile.type {profile.get('type')}")
    return out


# --- restricted -------------------------------------------------------------------------
def restricted_volumes(spec: Manifest) -> list[str]:
    """check_restrictedVolumes.go: only the listed inline volume sources."""
    out = []
    for volume in spec.get("volumes") or []:
        sources = set(volume) - {"name"}
        if not sources or sources - RESTRICTED_VOLUME_SOURCES:
            out.append(f"volume {volume['name']}: restricted type {sorted(sources)}")
    return out


def allow_privilege_escalation(spec: Manifest) -> list[str]:
    """check_allowPrivilegeEscalation.go: false on every container (unset is not enough)."""
    return [
        f"{c['name']}: allowPrivilegeEscalation not false"
        for c in containers(spec)
        if _sc(c).get("allowPrivilegeEscalation") is not False
    ]


def run_as_non_root(spec: Manifest) -> list[str]:
    """check_runAsNonRoot.go: true at pod level (containers may leave it unset) or on
    every container; never false."""
    if spec.get("hostUsers") is False:
        return []
    pod = _sc(spec).get("runAsNonRoot")
    out = ["pod: runAsNonRoot false"] if pod is False else []
    for c in containers(spec):
        value = _sc(c).get("runAsNonRoot")
        if value is False or (value is None and pod is not True):
            out.append(f"{c['name']}: runAsNonRoot not true")
    return out


def run_as_user(spec: Manifest) -> list[str]:
    """check_runAsUser.go: never uid 0."""
    if spec.get("hostUsers") is False:
        return []
    scopes = [("pod", _sc(spec)), *((c["name"], _sc(c)) for c in containers(spec))]
    return [f"{where}: runAsUser 0" for where, sc in scopes if sc.get("runAsUser") == 0]


def seccomp(spec: Manifest) -> list[str]:
    """check_seccompProfile_restricted.go (which implies _baseline): RuntimeDefault or
    Localhost, at pod level or on every container; never Unconfined."""
    pod = (_sc(spec).get("seccompProfile") or {}).get("type")
    out = []
    if pod is not None and pod not in SECCOMP_RESTRICTED:
        out.append(f"pod: seccompProfile {pod}")
    for c in containers(spec):
        own = (_sc(c).get("seccompProfile") or {}).get("type")
        if own is not None and own not in SECCOMP_RESTRICTED:
            out.append(f"{c['name']}: seccompProfile {own}")
        elif own is None and pod is None:
            out.append(f"{c['name']}: no seccompProfile")
    return out


# --- inferplane -------------------------------------------------------------------------
def uid_above_minimum(spec: Manifest) -> list[str]:
    """Every container's effective ``runAsUser`` (its own, else the pod's) is set and above
    `MIN_UID`: an unset uid is the image's, root for the serving images."""
    pod = _sc(spec).get("runAsUser")
    out = []
    for c in containers(spec):
        uid = _sc(c).get("runAsUser", pod)
        if uid is None or uid <= MIN_UID:
            out.append(f"{c['name']}: runs as uid {uid}, not above {MIN_UID}")
    return out


# --- reading recordings ----------------------------------------------------------------
POD_TEMPLATE_KINDS = {"Deployment", "Job", "StatefulSet", "DaemonSet", "ReplicaSet"}


PodOf = tuple[str, Manifest, Manifest]


def pods(rec: Iterable[Recorded], namespace: str) -> list[PodOf]:
    """(object, pod spec, pod annotations) of every pod-creating object in `namespace`."""
    out = []
    for r in rec:
        kind = r.type.rsplit(":", 1)[-1]
        if not r.type.startswith("kubernetes:") or r.get("metadata", "namespace") != namespace:
            continue
        if kind in POD_TEMPLATE_KINDS:
            template = r.get("spec", "template")
        elif kind == "CronJob":
            template = r.get("spec", "jobTemplate", "spec", "template")
        elif kind == "Pod":
            template = r.inputs
        else:
            continue
        meta = template.get("metadata") or {}
        out.append((f"{kind} {r.name}", template["spec"], meta.get("annotations") or {}))
    return out


def ints(value: Any) -> Any:
    """Mocked inputs carry numbers as floats."""
    if isinstance(value, dict):
        return {k: ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [ints(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
