"""Every pod inferplane puts in the blueprint's namespace passes the Pod Security
Standards' ``restricted`` profile, which that namespace enforces, and runs as a uid above
10000 (`pod_security`, the checker, is itself tested here against each rule)."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from pod_security import ints, pods, violations
from serving_fixtures import serve, with_model

from inferplane.app.offline import RecordedResource, Recording
from inferplane.blueprint import naming
from inferplane.blueprint.model import MinMax, ModelSource, SecretRef


def assert_restricted(rec: Recording, namespace: str, at_least: int) -> None:
    found = pods(rec, namespace)
    assert len(found) >= at_least
    problems = [
        f"{name}: {problem}"
        for name, spec, annotations in found
        for problem in violations(ints(spec), annotations)
    ]
    assert problems == []


@pytest.mark.parametrize("env_name", ["staging", "prod"])
def test_every_pod_of_the_reference_stack_is_restricted(
    reference_recording: Callable[[str], Recording], env_name: str
) -> None:
    # 4 Deployments and 3 engine-build Jobs in each environment
    assert_restricted(reference_recording(env_name), naming.namespace("support-assistant"), 7)


def test_every_variant_is_restricted(staging, prod):
    """The branches the reference blueprint does not take: hf:// vLLM with a token read as
    a file and another read from the environment, ONNX Triton, an external scheme."""
    hf = ModelSource(
        uri="hf://Qwen/Qwen2.5-7B-Instruct@abc123",
        scheme="hf",
        bucket=None,
        key=None,
        hf_repo="Qwen/Qwen2.5-7B-Instruct",
        hf_revision="abc123",
    )
    secrets = (
        SecretRef(name="hf_token", path=("models", "chat", "secrets", "hf_token"), from_env="T"),
        SecretRef(name="api_key", path=("models", "chat", "secrets", "api_key"), from_env="K"),
    )
    env = with_model(staging, "chat", source=hf, secrets=secrets)
    env = with_model(env, "toxicity", tensorrt=None, batching=None)
    external = with_model(prod, "ranker", replicas=MinMax(1, 2))
    external = dataclasses.replace(
        external, load_balancer=dataclasses.replace(external.load_balancer, scheme="external")
    )
    namespace = naming.namespace("support-assistant")
    assert_restricted(serve(env, ["chat", "toxicity"]), namespace, 2)
    assert_restricted(serve(external, ["ranker"]), namespace, 2)


# --- the checker ------------------------------------------------------------------------
@pytest.fixture(scope="session")
def compliant(served: Callable[[str], Recording]) -> dict[str, Any]:
    """The ranker's serving pod (init container, server, config and emptyDir volumes)."""
    deployment: RecordedResource = next(
        r
        for r in served("staging").of_type("kubernetes:apps/v1:Deployment")
        if r.name.endswith("-ranker")
    )
    spec: dict[str, Any] = ints(deployment.get("spec", "template", "spec"))
    assert violations(spec) == []
    return spec


def _server(spec: dict[str, Any]) -> dict[str, Any]:
    server: dict[str, Any] = spec["containers"][0]
    return server


def _set(path: tuple[str | int, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(spec: dict[str, Any]) -> None:
        target: Any = spec
        for part in path[:-1]:
            target = target.setdefault(part, {}) if isinstance(part, str) else target[part]
        target[path[-1]] = value

    return change


def _drop(path: tuple[str | int, ...]) -> Callable[[dict[str, Any]], None]:
    def change(spec: dict[str, Any]) -> None:
        target: Any = spec
        for part in path[:-1]:
            target = target[part]
        del target[path[-1]]

    return change


SERVER = ("containers", 0)
SERVER_SC = (*SERVER, "securityContext")


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (_set(("hostNetwork",), True), "hostNetwork: true"),
        (_set(("hostPID",), True), "hostPID: true"),
        (_set((*SERVER_SC, "privileged"), True), "triton: privileged"),
        (
            _set((*SERVER_SC, "capabilities", "add"), ["SYS_ADMIN"]),
            "triton: adds non-default capabilities ['SYS_ADMIN']",
        ),
        (
            _set((*SERVER_SC, "capabilities", "drop"), ["NET_RAW"]),
            "triton: does not drop ALL capabilities",
        ),
        (
            _set(("volumes", 0), {"name": "host", "hostPath": {"path": "/"}}),
            "volume host: hostPath",
        ),
        (
            _set(("volumes", 0), {"name": "nfs", "nfs": {"server": "s", "path": "/"}}),
            "volume nfs: restricted type ['nfs']",
        ),
        (_set((*SERVER, "ports", 0, "hostPort"), 8000), "triton: hostPort 8000"),
        (
            _set((*SERVER_SC, "seLinuxOptions"), {"type": "spc_t"}),
            "triton: seLinuxOptions.type spc_t",
        ),
        (_set((*SERVER_SC, "procMount"), "Unmasked"), "triton: procMount Unmasked"),
        (
            _set(("securityContext", "sysctls"), [{"name": "kernel.msgmax", "value": "1"}]),
            "sysctl kernel.msgmax",
        ),
        (
            _set((*SERVER, "readinessProbe", "httpGet", "host"), "10.0.0.1"),
            "triton: httpGet.host set",
        ),
        (
            _set((*SERVER_SC, "allowPrivilegeEscalation"), True),
            "triton: allowPrivilegeEscalation not false",
        ),
        (
            _drop((*SERVER_SC, "allowPrivilegeEscalation")),
            "triton: allowPrivilegeEscalation not false",
        ),
        (_set((*SERVER_SC, "runAsNonRoot"), False), "triton: runAsNonRoot not true"),
        (_set((*SERVER_SC, "runAsUser"), 0), "triton: runAsUser 0"),
        (
            _set((*SERVER_SC, "seccompProfile"), {"type": "Unconfined"}),
            "triton: seccompProfile Unconfined",
        ),
        (_drop(("securityContext", "seccompProfile")), "triton: no seccompProfile"),
        (
            _set((*SERVER_SC, "appArmorProfile"), {"type": "Unconfined"}),
            "triton: appArmorProfile.type Unconfined",
        ),
        (_set((*SERVER_SC, "runAsUser"), 1000), "triton: runs as uid 1000, not above 10000"),
        (_drop(("securityContext", "runAsUser")), "triton: runs as uid None, not above 10000"),
    ],
)
def test_checker_finds_each_violation(compliant, change, problem):
    spec = copy.deepcopy(compliant)
    change(spec)
    assert problem in violations(spec)


def test_checker_reads_the_apparmor_annotation(compliant):
    key = "container.apparmor.security.beta.kubernetes.io/triton"
    assert violations(compliant, {key: "unconfined"}) == [f"annotation {key}: unconfined"]
    assert violations(compliant, {key: "runtime/default"}) == []


def test_checker_needs_run_as_non_root_somewhere(compliant):
    spec = copy.deepcopy(compliant)
    del spec["securityContext"]["runAsNonRoot"]
    for c in [*spec["initContainers"], *spec["containers"]]:
        del c["securityContext"]["runAsNonRoot"]
    assert violations(spec) == [
        "fetch-model: runAsNonRoot not true",
        "triton: runAsNonRoot not true",
    ]
