"""The Python language host the end-to-end run gives the Pulumi engine (e2e/langhost.py).

It is started as the engine starts a plugin (prints its port, serves gRPC on 127.0.0.1) and
asked what the engine asks: the plugins the program needs, and to run the policy pack."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import language_pb2, language_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
E2E = ROOT / "e2e"
sys.path.insert(0, str(E2E))

import langhost  # noqa: E402

VENV = Path(sys.prefix)


def _info(program_dir: Path, **options: str) -> language_pb2.ProgramInfo:
    opts = struct_pb2.Struct()
    opts.update(options)
    return language_pb2.ProgramInfo(
        root_directory=str(program_dir),
        program_directory=str(program_dir),
        entry_point=".",
        options=opts,
    )


def test_a_program_runs_through_the_exec_shim_with_the_engine_s_arguments() -> None:
    req = language_pb2.RunRequest(
        project="inferplane",
        stack="local",
        pwd="/srv/p/stacks",
        dryRun=True,
        parallel=16,
        monitor_address="127.0.0.1:1",
        organization="organization",
        config={"inferplane:blueprint": "../blueprints/x.yaml"},
        configSecretKeys=["inferplane:token"],
        info=_info(Path("/srv/p/stacks")),
    )
    cmd = langhost.program_command(req, "/venv/bin/python", "/bin/shim", "127.0.0.1:2")
    assert cmd == [
        "/venv/bin/python", "-u", "/bin/shim",
        "--monitor", "127.0.0.1:1", "--engine", "127.0.0.1:2", "--project", "inferplane",
        "--root_directory", "/srv/p/stacks", "--stack", "local", "--pwd", "/srv/p/stacks",
        "--dry_run", "true", "--parallel", "16", "--organization", "organization", ".",
    ]  # fmt: skip
    env = langhost.program_env(req)
    assert json.loads(env["PULUMI_CONFIG"]) == {"inferplane:blueprint": "../blueprints/x.yaml"}
    assert json.loads(env["PULUMI_CONFIG_SECRET_KEYS"]) == ["inferplane:token"]


def test_the_virtualenv_is_relative_to_the_project_root(tmp_path: Path) -> None:
    python, env = langhost.venv_python(_info(tmp_path / "stacks", virtualenv="../.venv"), False)
    assert python == str(tmp_path / "stacks" / ".." / ".venv" / "bin" / "python")
    assert env["VIRTUAL_ENV"] == str(tmp_path / "stacks" / ".." / ".venv")
    assert env["PATH"].startswith(str(tmp_path / "stacks" / ".." / ".venv" / "bin"))


def test_a_toolchain_other_than_pip_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="poetry"):
        langhost.venv_python(_info(tmp_path, toolchain="poetry"), False)


@pytest.fixture(scope="session")
def host() -> Iterator[language_pb2_grpc.LanguageRuntimeStub]:
    proc = subprocess.Popen(
        [sys.executable, str(E2E / "langhost.py"), "-use-executor", "/nonexistent"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        grpc.channel_ready_future(channel).result(timeout=30)
        yield language_pb2_grpc.LanguageRuntimeStub(channel)
        channel.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_host_reports_its_version(host: language_pb2_grpc.LanguageRuntimeStub) -> None:
    assert host.GetPluginInfo(empty_pb2.Empty(), timeout=30).version == langhost.VERSION


def test_required_packages_are_the_resource_plugins_of_the_project_s_virtualenv(
    host: language_pb2_grpc.LanguageRuntimeStub,
) -> None:
    stacks = ROOT / "stacks"
    req = language_pb2.GetRequiredPackagesRequest(info=_info(stacks, virtualenv=str(VENV)))
    got = {p.name: p.version for p in host.GetRequiredPackages(req, timeout=120).packages}
    from importlib.metadata import version

    # plugin versions as the SDK packages state them (no "v": the engine parses either)
    assert got["kubernetes"] == version("pulumi-kubernetes")
    # pulumi-policy ships a pulumi-plugin.json too, but it is no resource plugin.
    assert "policy" not in got


def test_the_policy_pack_starts_through_the_host_and_reports_its_port(
    host: language_pb2_grpc.LanguageRuntimeStub,
) -> None:
    """RunPlugin for an analyzer runs ``python -u -m pulumi.policy <engine> <pack dir>``;
    the pack's first line of output is the port the engine then dials."""
    pack = ROOT / "policies"
    req = language_pb2.RunPluginRequest(
        kind="analyzer",
        name="inferplane",
        args=["127.0.0.1:1"],
        info=_info(pack, virtualenv=str(VENV)),
        pwd=str(pack),
    )
    stream = host.RunPlugin(req, timeout=120)
    out = b""
    for msg in stream:
        out += msg.stdout
        if b"\n" in out:
            break
        assert not msg.HasField("exitcode") or msg.exitcode == 0, msg
    port = int(out.split(b"\n", 1)[0])
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    from pulumi.runtime.proto import analyzer_pb2_grpc

    try:
        stub = analyzer_pb2_grpc.AnalyzerStub(channel)
        info = stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=30)
    finally:
        channel.close()
        # The engine ending the call stops the pack (the host interrupts it).
        stream.cancel()
    assert info.name == "inferplane"
    assert {p.name for p in info.policies} >= {"warm-replicas", "same-zone-placement"}


@pytest.mark.parametrize(
    ("code", "error", "bail"),
    [(0, "", False), (32, "", True), (3, "program exited with non-zero exit code: 3", False)],
)
def test_the_program_s_exit_code_becomes_the_run_s_answer(
    tmp_path: Path, code: int, error: str, bail: bool
) -> None:
    """main.go `Run`: 0 succeeds, 32 means the program already showed the user an actionable
    message (bail), anything else is an error; the config arrives as PULUMI_CONFIG."""
    shim = tmp_path / "shim.py"
    shim.write_text(
        "import json, os, sys\n"
        "config = json.loads(os.environ['PULUMI_CONFIG'])\n"
        f"sys.exit({code} if config == {{'p:k': 'v'}} else 99)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, str(E2E / "langhost.py"), "-use-executor", str(shim)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        channel = grpc.insecure_channel(f"127.0.0.1:{int(proc.stdout.readline())}")
        stub = language_pb2_grpc.LanguageRuntimeStub(channel)
        req = language_pb2.RunRequest(
            project="p",
            stack="s",
            pwd=str(tmp_path),
            config={"p:k": "v"},
            info=_info(tmp_path, virtualenv=str(VENV)),
        )
        res = stub.Run(req, timeout=60)
        channel.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert (res.error, res.bail) == (error, bail)
