"""The Pulumi CLI of the end-to-end run, on loopback: the cached tools on one PATH, a project
whose one stack is the environment, the CLI run in a process group of its own, and what its
event logs say (resource changes, policy verdicts), with the verdicts of `inferplane check`
they must equal."""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from tools import TOOLS

from inferplane.components.serving.routing import router
from inferplane.policies.rules import all_rules

OFFLINE_ONLY = frozenset(r.id for r in all_rules() if r.offline_only)
"""Rules that judge what only the blueprint says (`Rule.offline_only`): CrossGuard, which has
no blueprint, finds nothing with them, so they are left out of the comparison."""

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
VENV = Path(os.environ.get("VENV", REPO / ".venv")).resolve()


class StepFailed(Exception):
    pass


def tool_path() -> dict[str, Path]:
    """The cached tools; the run builds none (`./dev e2e-tools` does, once)."""
    tools = {name: make() for name, make in TOOLS.items()}
    missing = [name for name, tool in tools.items() if not tool.built()]
    if missing:
        raise StepFailed(
            f"not built: {', '.join(missing)} (cache {tools[missing[0]].folder().parent}); "
            "run ./dev e2e-tools first"
        )
    return {name: tool.bindir() for name, tool in tools.items()}


def plugin_dir(state: Path, bins: dict[str, Path]) -> Path:
    """One folder on PATH: the CLI, the providers, and the language host beside its shim."""
    d = state / "bin"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    for folder in bins.values():
        for f in folder.iterdir():
            (d / f.name).symlink_to(f)
    host = d / "pulumi-language-python"
    python, script = (
        shlex.quote(str(VENV / "bin" / "python")),
        shlex.quote(str(HERE / "langhost.py")),
    )
    shim = shlex.quote(str(d / "pulumi-language-python-exec"))
    host.write_text(f'#!/bin/sh\nexec {python} {script} -use-executor {shim} "$@"\n')
    host.chmod(0o755)
    # The dynamic providers' plugin (a Redis cache's password, `generated_password`): the
    # CLI's release ships it beside the Python language host, as this script (pulumi/pulumi
    # sdk/python/dist/pulumi-resource-pulumi-python: `python -u -m pulumi.dynamic` in the
    # project's virtualenv); a CLI built from its Go module has none.
    dynamic = d / "pulumi-resource-pulumi-python"
    dynamic.write_text(f'#!/bin/sh\nexec {python} -u -m pulumi.dynamic "$@"\n')
    dynamic.chmod(0o755)
    return d


ROUTER_CHART = REPO / "tests" / "reference" / "llm-d-router-v0.10.0" / "charts"


def _router_chart(state: Path) -> Path:
    """The pinned chart source with its dependency in charts/, as a user prepares a local
    copy (`router.local_chart_problem`)."""
    copy = state / "router-chart"
    if not copy.exists():
        shutil.copytree(ROUTER_CHART, copy)
        shutil.copytree(copy / "routerlib", copy / router.ROUTER_CHART / "charts" / "router")
    return copy


def project_dir(state: Path, blueprint: Path, environment: str, context: str) -> Path:
    """A Pulumi project like stacks/, whose one stack is `environment` of `blueprint` on the
    kubeconfig `context` of the local control plane (the stack's own ``kubernetes:context``,
    which the program holds the blueprint's ``cluster.context`` to)."""
    proj = state / "project"
    proj.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "stacks" / "__main__.py", proj / "__main__.py")
    text = (REPO / "stacks" / "Pulumi.yaml").read_text()
    text = text.replace("virtualenv: ../.venv", f"virtualenv: {VENV}")
    (proj / "Pulumi.yaml").write_text(text)
    (proj / f"Pulumi.{environment}.yaml").write_text(
        "config:\n"
        f"  inferplane:blueprint: {json.dumps(str(blueprint))}\n"
        f"  inferplane:environment: {json.dumps(environment)}\n"
        f"  kubernetes:context: {json.dumps(context)}\n"
        # No registry is reachable here: the llm-d router's chart comes from its pinned
        # source, kept (and hash-checked) in tests/reference.
        f"  inferplane:routerChart: {json.dumps(str(_router_chart(state)))}\n"
    )
    return proj


class Pulumi:
    def __init__(self, state: Path, bindir: Path, proj: Path, stack: str, kubeconfig: Path):
        self.proj = proj
        self.stack = stack
        self.state = state
        self.env = {
            "HOME": os.environ.get("HOME", str(state)),
            "LANG": "C.UTF-8",
            "PATH": f"{bindir}{os.pathsep}{VENV / 'bin'}{os.pathsep}/usr/bin:/bin",
            "PULUMI_HOME": str(state / "pulumi-home"),
            "PULUMI_BACKEND_URL": f"file://{state / 'backend'}",
            "PULUMI_CONFIG_PASSPHRASE": secrets.token_hex(16),
            # Nothing is downloaded: the plugins on PATH are the ones used
            # (sdk/go/common/workspace/plugins.go, GetPluginPath).
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_SKIP_CONFIRMATIONS": "true",
            # `--event-log` (engine events as JSON lines, policy verdicts included) is
            # registered only with debug commands on (pkg/cmd/pulumi/operations/preview.go,
            # up.go, destroy.go: `if env.DebugCommands.Value()`).
            "PULUMI_DEBUG_COMMANDS": "true",
            "KUBECONFIG": str(kubeconfig),
        }
        (state / "backend").mkdir(parents=True, exist_ok=True)

    def run(
        self,
        *args: str,
        check: bool = True,
        log: str | None = None,
        stdin: str | None = None,
        timeout: float = 1800,
    ) -> subprocess.CompletedProcess:
        """Run the CLI in a process group of its own: on a timeout the whole group (the
        engine, the language host, the program, the providers) is killed, not the CLI alone.
        `stdin` feeds a value (a secret) that must not be on a command line."""
        cmd = [
            "pulumi",
            *args,
            "--non-interactive",
            "--color",
            "never",
            "--cwd",
            str(self.proj),
        ]
        print(f"   $ {' '.join(cmd)}", file=sys.stderr, flush=True)
        proc = subprocess.Popen(
            cmd,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(stdin or "", timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate(timeout=30)
            raise StepFailed(f"pulumi {args[0]} took over {timeout:.0f} s") from None
        res = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
        if log:
            (self.state / "logs" / f"{log}.log").write_text(
                res.stdout + "\n--- stderr\n" + res.stderr
            )
        if check and res.returncode != 0:
            tail = "\n".join((res.stdout + res.stderr).splitlines()[-60:])
            raise StepFailed(f"pulumi {args[0]} exited {res.returncode}:\n{tail}")
        return res

    def events(self, name: str) -> list[dict]:
        path = self.state / "logs" / f"{name}.events.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def changes_of(events: list[dict]) -> dict[str, int]:
    """The summary's resource changes; StepFailed when the operation did not succeed or left
    no summary (an empty answer must not read as "nothing changed")."""
    for ev in events:
        if "summaryEvent" in ev:
            summary = ev["summaryEvent"]
            if summary.get("result", "succeeded") != "succeeded":
                raise StepFailed(f"the operation ended {summary.get('result')!r}")
            return dict(summary.get("resourceChanges") or {})
    raise StepFailed("the engine wrote no summary event")


def policy_verdicts_of(events: list[dict]) -> list[dict]:
    out = []
    for ev in events:
        pe = ev.get("policyEvent")
        if pe:
            out.append(
                {
                    "rule": pe.get("policyName"),
                    "level": pe.get("enforcementLevel"),
                    "urn": pe.get("resourceUrn") or "",
                }
            )
    return sorted(out, key=lambda v: (v["rule"], v["urn"], v["level"]))


def check_verdicts(blueprint: Path, environment: str) -> list[dict]:
    """`inferplane check`'s violations of `environment`, but those of `OFFLINE_ONLY` rules."""
    res = subprocess.run(
        [
            str(VENV / "bin" / "inferplane"),
            "check",
            str(blueprint),
            "--env",
            environment,
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if res.returncode not in (0, 1):
        raise StepFailed(f"inferplane check exited {res.returncode}: {res.stderr[-2000:]}")
    data = json.loads(res.stdout)
    out = []
    for r in data["results"]:
        if r["status"] != "violation" or r.get("waiver") or r["rule"] in OFFLINE_ONLY:
            continue
        out.append(
            {
                "rule": r["rule"],
                "level": r["level"],
                "urn": (r.get("resource") or {}).get("urn") or "",
            }
        )
    return sorted(out, key=lambda v: (v["rule"], v["urn"], v["level"]))
