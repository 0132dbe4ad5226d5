"""The rehearsal's network namespace (e2e/netns.py): pod and Service IPs are local addresses
inside it, and nothing leaves it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

NETNS = Path(__file__).resolve().parents[2] / "e2e" / "netns.py"

PROBE = r"""
import errno, json, socket, sys
sys.path.insert(0, sys.argv[1])
import netns
out = {"devices": netns.devices()}
for name, ip in (("pod", "10.244.3.7"), ("service", "10.96.0.10")):
    srv = socket.socket()
    srv.bind((ip, 8080))
    srv.listen()
    with socket.create_connection((ip, 8080), timeout=5) as conn:
        out[name] = conn.getpeername()[0]
    srv.close()
for name, ip in (("outside", "192.0.2.1"), ("host_lan", "10.0.0.1")):
    try:
        socket.create_connection((ip, 80), timeout=5).close()
        out[name] = "connected"
    except OSError as err:
        out[name] = errno.errorcode[err.errno]
print(json.dumps(out))
"""


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(NETNS), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


def in_netns(*cmd: str) -> subprocess.CompletedProcess[str]:
    res = run("--", *cmd)
    if res.returncode == 2 and res.stderr.startswith("netns: cannot make"):
        pytest.skip(res.stderr.strip())
    return res


def test_pod_and_service_ips_are_local_and_nothing_else_is_reachable() -> None:
    res = in_netns(sys.executable, "-c", PROBE, str(NETNS.parent))
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout) == {
        "devices": ["lo"],
        "pod": "10.244.3.7",
        "service": "10.96.0.10",
        "outside": "ENETUNREACH",
        "host_lan": "ENETUNREACH",
    }


def test_the_command_runs_in_place_of_the_runner_with_its_exit_status() -> None:
    res = in_netns(sys.executable, "-c", "import sys; print('in'); sys.exit(7)")
    assert (res.returncode, res.stdout) == (7, "in\n")


def test_a_missing_command_exits_127() -> None:
    res = in_netns("/no/such/command")
    assert (res.returncode, res.stderr) == (
        127,
        "netns: /no/such/command: No such file or directory\n",
    )


def test_a_cidr_that_is_not_a_network_exits_2_with_the_reason() -> None:
    res = run("--pod-cidr", "10.244.0.0/33", "--", "true")
    assert (res.returncode, res.stderr) == (
        2,
        "netns: cannot make the network namespace: '10.244.0.0/33' is not a network: "
        "'10.244.0.0/33' does not appear to be an IPv4 or IPv6 network\n",
    )


def test_without_iproute2_it_exits_2_with_the_reason() -> None:
    res = run("--", "true", env={"PATH": "/nonexistent"})
    assert (res.returncode, res.stderr) == (
        2,
        "netns: cannot make the network namespace: `ip` (iproute2) is not on PATH\n",
    )


def test_no_command_is_a_usage_error() -> None:
    res = run("--pod-cidr", "10.244.0.0/16")
    assert res.returncode == 2
    assert res.stderr.startswith("Run a command in a network namespace of its own")
