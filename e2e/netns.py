"""Run a command in a network namespace of its own, where pod and Service IPs are local.

    python e2e/netns.py [--pod-cidr CIDR] [--service-cidr CIDR] -- CMD [ARG...]

The namespace has only its own loopback device, brought up, and a `local` route on it for the
pod CIDR and the Service CIDR (e2e/cluster.py's POD_CIDR and SERVICE_CIDR by default): a
process inside may bind any pod IP KWOK hands out and be reached there, and no packet can
leave, because no other device exists. Everything of the rehearsal — the control plane, the
loops, the stand-in pods — runs in one such namespace, so its 127.0.0.1 is not the host's.

Why pods keep KWOK's ordinary pod CIDR addresses instead of loopback ones: the API server
accepts any valid IP in a pod's `status.podIPs` (k8s.io/kubernetes v1.37.2
pkg/apis/core/validation/validation.go `validatePodIPs` -> `IsValidIPForLegacyField`), but
an EndpointSlice address "may not be in the loopback range (127.0.0.0/8, ::1/128)" nor the
link-local one (same file, `ValidateEndpointIP`, called for every endpoint address by
pkg/apis/discovery/validation/validation.go): a pod at 127.x would never become a Service
endpoint, so Prometheus's endpoint discovery would never see it.

Root unshares the network namespace directly; another user gets one inside a new user
namespace that maps it to root there (where the kernel allows unprivileged user namespaces).
Exit status: CMD's own; 2 when the namespace cannot be made (the reason on stderr), 127 when
CMD is not found.
"""

from __future__ import annotations

import ctypes
import ipaddress
import os
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The same defaults as e2e/cluster.py (not imported: this module needs nothing of the e2e run).
POD_CIDR = "10.244.0.0/16"
SERVICE_CIDR = "10.96.0.0/16"

# <sched.h>
CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000


class NetnsUnavailable(Exception):
    """The network namespace cannot be made here; the message says why."""


def _unshare(flags: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(flags) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _map_to_root(uid: int, gid: int) -> None:
    """Make the caller root of the user namespace it just created (user_namespaces(7):
    setgroups must be denied before an unprivileged process writes its gid_map)."""
    Path("/proc/self/setgroups").write_text("deny")
    Path("/proc/self/uid_map").write_text(f"0 {uid} 1")
    Path("/proc/self/gid_map").write_text(f"0 {gid} 1")


def _ip(ip: str, *args: str) -> None:
    res = subprocess.run([ip, *args], capture_output=True, text=True, timeout=30)
    if res.returncode != 0:
        cmd = " ".join(["ip", *args])
        raise NetnsUnavailable(f"`{cmd}` failed: {res.stderr.strip() or res.returncode}")


def parse_cidrs(cidrs: list[str]) -> list[str]:
    out = []
    for cidr in cidrs:
        try:
            out.append(str(ipaddress.ip_network(cidr)))
        except ValueError as err:
            raise NetnsUnavailable(f"{cidr!r} is not a network: {err}") from None
    return out


def enter(cidrs: list[str]) -> None:
    """Move this process (and every child it starts afterwards) into a new network namespace
    with lo up and a local route for each of `cidrs`. Call it before starting any thread."""
    nets = parse_cidrs(cidrs)
    ip = shutil.which("ip")
    if ip is None:
        raise NetnsUnavailable("`ip` (iproute2) is not on PATH")
    uid, gid = os.getuid(), os.getgid()
    try:
        if uid == 0:
            _unshare(CLONE_NEWNET)
        else:
            _unshare(CLONE_NEWUSER | CLONE_NEWNET)
            _map_to_root(uid, gid)
    except OSError as err:
        how = "unshare(CLONE_NEWNET)" if uid == 0 else "unshare(CLONE_NEWUSER|CLONE_NEWNET)"
        raise NetnsUnavailable(f"{how} failed: {err.strerror or err}") from None
    _ip(ip, "link", "set", "lo", "up")
    for net in nets:
        _ip(ip, "route", "add", "local", net, "dev", "lo")


def devices() -> list[str]:
    """The network devices of the caller's namespace (/proc/self/net/dev follows the
    namespace; /sys/class/net shows the one sysfs was mounted in)."""
    lines = Path("/proc/self/net/dev").read_text().splitlines()[2:]
    return sorted(line.split(":", 1)[0].strip() for line in lines)


def main(argv: list[str]) -> int:
    pod, svc = POD_CIDR, SERVICE_CIDR
    args = list(argv)
    while args and args[0] != "--":
        flag = args.pop(0)
        if flag in ("--pod-cidr", "--service-cidr") and args:
            value = args.pop(0)
            if flag == "--pod-cidr":
                pod = value
            else:
                svc = value
        else:
            print(__doc__, file=sys.stderr)
            return 2
    cmd = args[1:]
    if not cmd:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        enter([pod, svc])
    except NetnsUnavailable as err:
        print(f"netns: cannot make the network namespace: {err}", file=sys.stderr)
        return 2
    sys.stdout.flush()
    try:
        os.execvp(cmd[0], cmd)
    except OSError as err:
        print(f"netns: {cmd[0]}: {err.strerror}", file=sys.stderr)
        return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
