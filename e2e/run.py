"""`./dev e2e BLUEPRINT --env ENV [--keep]`: deploy one environment for real, on loopback.

With the real Pulumi CLI and Kubernetes provider (built by e2e/tools.py, run by
e2e/pulumi_cli.py), a local file state backend and a local control plane (e2e/cluster.py)
whose KWOK nodes are the environment's GPU pools per zone:

1. `pulumi preview --policy-pack policies`: its verdicts must equal `inferplane check`'s;
2. `pulumi up`, with the add-ons the environment marks `existing` pre-installed from their
   upstream CRDs, and the real KEDA operator running out of cluster (ScaledObjects -> HPAs);
3. assertions: every Deployment Ready, each pod on a node of its pool and zone, no GPU
   shared between models on exclusive/MIG pools, every pod admitted under its namespace's
   Pod Security level, spare-GPU placeholders preempted when a model needs their GPUs;
4. a second `pulumi up` changes nothing; `pulumi destroy` leaves nothing of the blueprint.

Prints one JSON report. Exit 0 when every step passed, 1 otherwise, 2 when the environment
needs a tool that cannot be built here (the report's `not_run` says which and why).
`--keep` leaves the control plane running and prints the kubeconfig path.
"""

from __future__ import annotations

import argparse
import json
import secrets
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import addons  # noqa: E402
import cluster  # noqa: E402
import nodes as node_shapes  # noqa: E402
import preemption  # noqa: E402
import teardown  # noqa: E402
import verify  # noqa: E402
from pulumi_cli import (  # noqa: E402
    OFFLINE_ONLY,
    Pulumi,
    StepFailed,
    changes_of,
    check_verdicts,
    plugin_dir,
    policy_verdicts_of,
    project_dir,
    tool_path,
)


class Report:
    def __init__(self, blueprint: str, environment: str) -> None:
        self.data: dict[str, Any] = {
            "blueprint": blueprint,
            "environment": environment,
            "steps": [],
            "passed": False,
        }

    def step(self, name: str, fn: Callable[[], Any]) -> Any:
        start = time.monotonic()
        entry: dict[str, Any] = {"step": name}
        self.data["steps"].append(entry)
        print(f"== {name}", file=sys.stderr, flush=True)
        try:
            result = fn()
        except Exception as err:
            entry.update(outcome="failed", seconds=round(time.monotonic() - start, 1))
            entry["error"] = str(err) if isinstance(err, StepFailed) else traceback.format_exc()
            print(f"   failed: {entry['error']}", file=sys.stderr, flush=True)
            raise StepFailed(name) from err
        entry.update(outcome="passed", seconds=round(time.monotonic() - start, 1))
        if result is not None:
            entry["detail"] = result
        return result


NOT_RUNNABLE = 2


def not_runnable(env: Any) -> list[str]:
    """Why this environment cannot be deployed here, if it cannot.

    An add-on in `install` mode is a Helm release of its upstream chart, and no chart can be
    fetched here: the environment must mark every add-on `existing`.
    """
    reasons = []
    installed = [
        key
        for key in ("gpu_operator", "keda", "keda_http_add_on", "prometheus")
        if not getattr(env.cluster.addons, key).existing
    ]
    if installed:
        reasons.append(
            f"add-ons {', '.join(installed)} are `install`: their Helm charts cannot be "
            "fetched here (mark them `existing` to deploy end to end)"
        )
    return reasons


def secret_inputs(env: Any) -> tuple[dict[str, str], dict[str, str]]:
    """Made-up values for the secrets the blueprint reads when `pulumi up` runs, as a user
    provides them: runner variables (``from_env``) and Pulumi config (``from_pulumi_config``,
    set with ``pulumi config set --secret``)."""
    refs = [r for m in env.models.values() for r in m.secrets]
    refs += [r for rc in env.observability.alert_receivers for r in rc.secrets]
    variables = {r.from_env: f"e2e-secret-{secrets.token_hex(12)}" for r in refs if r.from_env}
    config = {
        r.from_pulumi_config: f"e2e-secret-{secrets.token_hex(12)}"
        for r in refs
        if r.from_pulumi_config
    }
    return variables, config


def state_folders(state: Path) -> list[Path]:
    """What a run writes: the state backend, Pulumi's home, the project, the logs and event
    logs. Not etcd's data (the cluster's own copy of its Secrets) or the tool links."""
    return [state / d for d in ("backend", "pulumi-home", "project", "logs")]


def plain_text_leaks(values: list[str], folders: list[Path]) -> list[str]:
    """Files under `folders` (state, logs, event logs) that hold any of `values` in plain text."""
    found = []
    for folder in folders:
        for path in folder.rglob("*"):
            if not path.is_file():
                continue
            data = path.read_bytes()
            found += [f"{path}: {v[:14]}..." for v in values if v.encode() in data]
    return found


def run(blueprint: Path, environment: str, keep: bool, state: Path) -> dict:
    from inferplane.blueprint.resolution.resolve import load_blueprint, resolve

    report = Report(str(blueprint), environment)
    doc, _ = load_blueprint(blueprint)
    env = resolve(doc, environment)
    if env.cloud != "kubernetes":
        raise SystemExit(
            f"error: environment {environment!r} is cloud {env.cloud!r}: the "
            "end-to-end run deploys `cloud: kubernetes` environments only"
        )
    blocked = not_runnable(env)
    if blocked:
        report.data["not_run"] = blocked
        return report.data
    cp: cluster.ControlPlane | None = None
    platform_secrets: list[str] = []
    try:
        bins = report.step("tools", tool_path)
        report.data["steps"][-1]["detail"] = {k: str(v) for k, v in bins.items()}
        bindir = plugin_dir(state, bins)
        shapes = node_shapes.nodes_for(env)

        def start() -> dict:
            nonlocal cp
            cp = cluster.up(state, shapes)
            return {"nodes": len(shapes), "kubeconfig": str(cp.kubeconfig)}

        report.step("control plane", start)
        assert cp is not None
        client = cp.client()

        def prepare() -> dict:
            done = addons.preinstall(client, env)
            done["platform"] = addons.platform_namespace(client, env)
            platform_secrets.extend(done["platform"]["secrets"])
            pid = addons.start_keda(state, bins["keda"], cp.kubeconfig, env)
            done["keda_operator"] = f"running out of cluster, pid {pid}"
            return done

        report.step("existing add-ons", prepare)
        proj = project_dir(state, blueprint.resolve(), environment, cluster.CONTEXT)
        pulumi = Pulumi(state, bindir, proj, environment, cp.kubeconfig)
        variables, config = secret_inputs(env)
        pulumi.env.update(variables)

        def init() -> dict:
            pulumi.run("stack", "init", environment, log="init")
            for key, value in config.items():
                # The value goes in on standard input, never on a command line
                # (`pulumi config set KEY` reads a non-terminal stdin).
                pulumi.run("config", "set", "--stack", environment, "--secret", key, stdin=value)
            return {"secret_variables": sorted(variables), "secret_config": sorted(config)}

        report.step("stack init", init)

        def preview() -> dict:
            ev = state / "logs" / "preview.events.jsonl"
            res = pulumi.run(
                "preview",
                "--stack",
                environment,
                "--policy-pack",
                str(REPO / "policies"),
                "--event-log",
                str(ev),
                check=False,
                log="preview",
            )
            got = policy_verdicts_of(pulumi.events("preview"))
            mandatory = [v for v in got if v["level"] == "mandatory"]
            if res.returncode != 0 and not mandatory:
                tail = "\n".join((res.stdout + res.stderr).splitlines()[-40:])
                raise StepFailed(f"pulumi preview exited {res.returncode}:\n{tail}")
            want = check_verdicts(blueprint, environment)
            if got != want:
                raise StepFailed(
                    "pulumi preview --policy-pack and inferplane check disagree:\n"
                    f"  preview only: {[v for v in got if v not in want]}\n"
                    f"  check only:   {[v for v in want if v not in got]}"
                )
            return {
                "verdicts": len(got),
                "changes": changes_of(pulumi.events("preview")),
                "offline_only_rules": sorted(OFFLINE_ONLY),
            }

        report.step("preview with policies = check", preview)

        def up(name: str) -> dict:
            ev = state / "logs" / f"{name}.events.jsonl"
            # With the policy pack, as in production: a mandatory violation stops the update.
            pulumi.run(
                "up",
                "--stack",
                environment,
                "--yes",
                "--skip-preview",
                "--policy-pack",
                str(REPO / "policies"),
                "--event-log",
                str(ev),
                log=name,
            )
            return {"changes": changes_of(pulumi.events(name))}

        first = report.step("up", lambda: up("up"))
        made_up = [*variables.values(), *config.values()]
        generated: dict[str, str] = {}

        def no_leaks() -> dict:
            # Every made-up value reached the cluster (a Secret in the namespace holds it) ...
            held = verify.secret_values(client, env)
            lost = [v[:14] + "..." for v in made_up if v not in held]
            if lost:
                raise StepFailed(f"secret values that no Secret of the namespace holds: {lost}")
            # ... and none, nor a password the stack generated, is in plain text in the
            # state, the logs or the event logs.
            generated.update(verify.generated_passwords(client, env))
            made_up.extend(generated.values())
            leaks = plain_text_leaks(made_up, state_folders(state))
            if leaks:
                raise StepFailed(f"secret values in plain text: {leaks}")
            return {"secrets_checked": len(made_up), "generated": sorted(generated)}

        report.step("secrets reach the cluster, never state or logs", no_leaks)
        # The pools first: what they select is settled once `up` has awaited the model's
        # Deployments, whatever else is still starting.
        report.step("one pool per zone", lambda: verify.inference_pools(client, env))
        report.step("deployed as declared", lambda: verify.deployed(client, env))
        report.step("placeholders preempted", lambda: preemption.preemption(client, env))

        def up_again() -> dict:
            result = up("up-again")
            created = first["changes"].get("create", 0)
            # A read (`Service.get` of the Prometheus query Service) is done again on every
            # update; it changes nothing.
            kept = {k: v for k, v in result["changes"].items() if k != "read"}
            if kept != {"same": created}:
                raise StepFailed(
                    f"the second `pulumi up` did more than keep the {created} resources the "
                    f"first created: {result['changes']}"
                )
            # A generated password is kept, not drawn again.
            changed = [
                name
                for name, value in verify.generated_passwords(client, env).items()
                if generated.get(name) != value
            ]
            if changed:
                raise StepFailed(f"the second `pulumi up` changed the passwords of {changed}")
            return {**result, "passwords_kept": sorted(generated)}

        report.step("second up is a no-op", up_again)

        def destroy() -> dict:
            exported = json.loads(pulumi.run("stack", "export", "--stack", environment).stdout)
            objects = teardown.stack_objects(exported)
            pulumi.run("destroy", "--stack", environment, "--yes", "--skip-preview", log="destroy")
            # Every object the stack recorded is gone (404), and nothing else of the
            # blueprint is left in its namespace, labelled with it, or named after it.
            left = teardown.still_there(client, objects)
            platform = {f"secrets/{n}" for n in platform_secrets}
            left += teardown.leftovers(client, env, platform)
            if left:
                raise StepFailed(f"objects of the blueprint left after destroy: {left}")
            leaks = plain_text_leaks(made_up, state_folders(state))
            if leaks:
                raise StepFailed(f"secret values in plain text after destroy: {leaks}")
            return {"objects_removed": len(objects), "left": left}

        report.step("destroy leaves nothing", destroy)
        report.data["passed"] = True
    except StepFailed:
        pass
    finally:
        if cp is not None:
            try:
                report.data["pods"] = verify.pod_table(cp.client())
            except Exception as err:
                report.data["pods"] = f"could not list pods: {err}"
        if keep and cp is not None:
            report.data["kubeconfig"] = str(cp.kubeconfig)
            report.data["stop"] = f"python e2e/cluster.py down {state}"
        else:
            cluster.down(state)
    return report.data


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="./dev e2e", description=__doc__.split("\n\n")[0])
    ap.add_argument("blueprint", type=Path)
    ap.add_argument("--env", required=True)
    ap.add_argument("--keep", action="store_true", help="leave the control plane running")
    ap.add_argument("--state", type=Path, help="state folder (default: a new temporary one)")
    args = ap.parse_args(argv)
    temporary = args.state is None
    state = (args.state or Path(tempfile.mkdtemp(prefix="inferplane-e2e-"))).resolve()
    state.mkdir(parents=True, exist_ok=True)
    # A reused state folder starts over: no stack, log or project of an earlier run.
    for stale in ("backend", "pulumi-home", "project", "logs", "bin"):
        shutil.rmtree(state / stale, ignore_errors=True)
    # A termination (CI cancelled, `timeout`) unwinds through `run`'s cleanup, which stops
    # the control plane and KEDA by PID.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    data = run(args.blueprint, args.env, args.keep, state)
    data["state"] = str(state)
    if temporary and data["passed"] and not args.keep:
        # A passed run's temporary folder (etcd's data, logs) has told all it has to.
        shutil.rmtree(state, ignore_errors=True)
        data["state"] = None
    print(json.dumps(data, indent=2, default=str))
    where = f"{args.blueprint} --env {args.env}"
    if data.get("not_run"):
        print(f"e2e: {where}: not run: {'; '.join(data['not_run'])}", file=sys.stderr)
        return NOT_RUNNABLE
    steps = ", ".join(f"{s['step']} {s['seconds']} s" for s in data["steps"])
    verdict = "passed" if data["passed"] else "FAILED"
    print(f"e2e: {where}: {verdict} ({steps})", file=sys.stderr)
    return 0 if data["passed"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
