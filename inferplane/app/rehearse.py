"""`inferplane rehearse BLUEPRINT --env ENV --traffic PROFILE [--slower F] [--time-scale S]
[--fault KIND@SECONDS ...] [--out DIR]`: the blueprint's control loops, for real, under a
traffic profile, with the faults asked for (`rehearsal.faults`).

For a ``cloud: kubernetes`` environment it runs the harness of a source checkout
(e2e/rehearse_run.py) in a network namespace of its own: the real API server and scheduler
(KWOK nodes), the real Prometheus and its operator, the real KEDA and its metrics API
server, the real HPA; each vLLM model's pods are STAND-INS whose latency comes from the
capacity planner's model (`inferplane.app.rehearsal.engine`). It sends the profile
(`inferplane.app.rehearsal.traffic`) streamed, as a chat client calls vLLM, and times what
each caller saw (`inferplane.app.rehearsal.stream`), prints a progress line every 5 s, and
writes to DIR:

- ``timeline.json``: per model, a row every 5 s (`rehearsal.timeline`);
- ``verdict.json`` and the verdict on stdout (`rehearsal.verdict`): Prometheus's p95s,
  judged against the SLO, with the client-side p95s and failed requests beside them;
- ``rehearsal.html``: the picture (`rehearsal.picture`; no PNG: matplotlib is not a
  dependency);
- ``harness.json``: the harness's own report (steps, counts of requests sent).

A model the stand-ins cannot stand in for yet (a Triton model, llm-aware routing, a model
that scales from zero: `rehearsal.scope`) is named in the verdict as "not rehearsed: <reason>",
and the others are still rehearsed. Exit 0 when every rehearsed model held its SLO, 1 when
one did not, 2 when it cannot run here (not a ``cloud: kubernetes`` environment, no model it
can rehearse, the tools not built, no network namespace, no harness: the reason on stderr)
or the input is invalid (located diagnostics).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from inferplane.app import platform_scale_out
from inferplane.app.exits import EXIT_INVALID, usage_error
from inferplane.app.rehearsal import faults, picture, scope, timeline, traffic, verdict
from inferplane.blueprint.errors import BlueprintError, Diagnostic

HARNESS = Path(__file__).resolve().parents[2] / "e2e" / "rehearse_run.py"
SETUP_S = 600
STOP_GRACE_S = 120
"""How long a harness asked to stop (SIGTERM) may take to stop what it started: its control
plane, Prometheus, KEDA and stand-ins run in sessions of their own, so only the harness's
own teardown (`e2e/rehearse_smoke.run`) stops them, by PID."""
"""What the harness may take besides the profile: the control plane, Prometheus, KEDA."""
PROG = "inferplane rehearse"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("blueprint", metavar="BLUEPRINT", help="blueprint YAML file")
    parser.add_argument("--env", required=True, help="a `cloud: kubernetes` environment")
    parser.add_argument(
        "--traffic",
        required=True,
        metavar="PROFILE",
        help=f"a bundled profile ({', '.join(traffic.BUNDLED)}) or a profile file",
    )
    parser.add_argument(
        "--slower",
        type=float,
        default=1.0,
        metavar="F",
        help="divide every rate of the stand-ins' model by F (1.3: the estimate's slow end)",
    )
    parser.add_argument(
        "--time-scale",
        type=float,
        default=1.0,
        metavar="S",
        help="shorten the stand-ins' start-up (the plan's scale-out parts) S-fold; the "
        "control loops' own periods are never shortened",
    )
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="KIND@SECONDS",
        help="inject a fault at SECONDS into the profile (repeatable): kill-replica (each "
        "model's first ready replica dies with requests in flight and restarts)",
    )
    parser.add_argument(
        "--policy-config",
        metavar="FILE",
        help="the platform's policy config: levers: auto chooses against its "
        "scale-out-budget bound and estimates, as in plan and pulumi up, and the stand-ins "
        "start after that budget",
    )
    parser.add_argument("--out", type=Path, metavar="DIR", help="where to write the results")


def _rehearsed(env: Any) -> list[str]:
    return scope.split(env)[0]


def not_rehearsed(env: Any) -> list[dict[str, Any]]:
    """verdict.json's entries for the models a rehearsal cannot run yet, with the reason."""
    return [
        {"model": n, "held": None, "verdict": f"not rehearsed: {why}"}
        for n, why in scope.split(env)[1].items()
    ]


def plans_for(env: Any, profile: traffic.Profile, doc: Any) -> dict[str, traffic.Plan]:
    """Each rehearsed model's traffic plan; raises `BlueprintError` (located) when the profile
    does not fit a model."""
    found: list[Diagnostic] = []
    out: dict[str, traffic.Plan] = {}
    for name in _rehearsed(env):
        model = env.models[name]
        t = model.traffic
        path = ("models", name)
        try:
            out[name] = traffic.for_model(
                profile,
                peak_rps=t.peak_rps if t else None,
                input_tokens=t.input_tokens if t else None,
                output_tokens=t.output_tokens if t else None,
                env_zones=list(env.pool_of(model).zones),
                model_path=path,
                model_location=doc.source.value(path),
            )
        except BlueprintError as err:
            found.extend(err.diagnostics)
    if found:
        raise BlueprintError(found)
    return out


def judge(
    env: Any,
    plans: dict[str, traffic.Plan],
    harness: dict[str, Any],
    time_scale: float = 1.0,
    constants: Any = None,
) -> tuple[dict[str, list[timeline.Row]], list[verdict.Verdict]]:
    """The timelines and verdicts of a harness report's samples (`constants`: the scale-out
    estimates the budget is judged with; the defaults when None)."""
    rows: dict[str, list[timeline.Row]] = {}
    verdicts = []
    for name, samples in sorted((harness.get("samples") or {}).items()):
        got = [
            timeline.Row(
                t=float(s["t"]),
                offered_rps=s.get("offered_rps") or {},
                queue=s.get("queue"),
                running=s.get("running"),
                desired=s.get("desired"),
                ready=s.get("ready"),
                pending_pods=s.get("pending_pods"),
                latency_ms=s.get("latency_ms") or {},
                alerts_pending=tuple(s.get("alerts_pending") or ()),
                alerts_firing=tuple(s.get("alerts_firing") or ()),
            )
            for s in samples
        ]
        plan = plans[name]
        rows[name] = timeline.resample(got, until=plan.profile.seconds)
        exp = dataclasses.replace(verdict.expectation(env, name, constants), time_scale=time_scale)
        if exp.replica_rps:
            # The plan's count for this profile's peak, not the blueprint's traffic.peak_rps.
            zones = max(1, len(plan.zones))
            per_zone = math.ceil(plan.peak_offered / zones / exp.replica_rps)
            # Not capped at replicas.max: a max below the plan's count is what the verdict
            # must show, not hide.
            planned = max(exp.replicas_min, per_zone * zones)
            exp = dataclasses.replace(exp, planned_replicas=planned)
        client = (harness.get("client") or {}).get(name)
        verdicts.append(verdict.judge(rows[name], exp, client))
    return rows, verdicts


def notes(args: argparse.Namespace, plans: dict[str, traffic.Plan]) -> list[str]:
    out = [
        "Real: the API server, scheduler, controller manager (HPA), KEDA and its metrics API "
        "server, the Prometheus operator and Prometheus, the alert rules.",
        "STAND-IN: every serving pod is a stand-in process (not vLLM); its latency comes "
        "from the capacity planner's model of the model on its GPU"
        + (f", every rate divided by {args.slower:g} (--slower)" if args.slower != 1 else "")
        + ".",
        "A new replica serves after the plan's scale-out budget"
        + (f", shortened {args.time_scale:g}-fold (--time-scale)" if args.time_scale != 1 else "")
        + "; the control loops' periods are their own.",
    ]
    for name, plan in plans.items():
        out.append(
            f"{name}: profile {plan.profile.name}, peak {plan.peak_offered:g} rps, "
            f"{plan.input_tokens} prompt / {plan.output_tokens} output tokens (from "
            f"{plan.lengths_from})."
        )
    if args.fault:
        out.append(
            f"Faults: {', '.join(args.fault)}. A killed replica is a stand-in process killed "
            "by PID that starts again after the same start-up, as a restarted container."
        )
    out.append("No PNG: matplotlib is not among inferplane's dependencies.")
    return out


def stop_harness(proc: subprocess.Popen[str]) -> None:
    """Ask the harness to stop (SIGTERM: it tears down what it started, then exits) and wait
    `STOP_GRACE_S` for it; only then kill it."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        proc.communicate(timeout=STOP_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


def run(args: argparse.Namespace) -> int:
    from inferplane.blueprint.resolution.resolve import load_blueprint, resolve

    doc, envs = load_blueprint(args.blueprint)
    if args.env not in envs:
        return usage_error(
            PROG, f"no environment {args.env!r}; the blueprint has {', '.join(envs)}"
        )
    scaling = platform_scale_out.of_file(args.policy_config)
    env = resolve(doc, args.env, scaling)
    if env.cloud != "kubernetes":
        print(
            f"{PROG}: cannot run here: environment {args.env} is `cloud: {env.cloud}`; a "
            "rehearsal runs a `cloud: kubernetes` environment in a local control plane",
            file=sys.stderr,
        )
        return EXIT_INVALID
    if not 1 <= args.slower <= 10 or not 1 <= args.time_scale <= 100:
        return usage_error(PROG, "--slower is from 1 to 10 and --time-scale from 1 to 100")
    profile = traffic.find(args.traffic)
    try:
        injected = [faults.parse(f, profile.seconds) for f in args.fault]
    except faults.FaultError as err:
        return usage_error(PROG, str(err))
    if not _rehearsed(env):
        skipped = not_rehearsed(env)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "verdict.json").write_text(
                json.dumps({"wall_s": 0, "models": skipped}, indent=1) + "\n"
            )
        for entry in skipped:
            print(f"{entry['model']}: {entry['verdict']}")
        print(
            f"{PROG}: cannot run here: environment {args.env} has no model a rehearsal can "
            "run yet (each is named above with the reason)",
            file=sys.stderr,
        )
        return EXIT_INVALID
    plans = plans_for(env, profile, doc)
    if not HARNESS.is_file():
        print(
            f"{PROG}: cannot run here: the rehearsal's harness ({HARNESS}) is part of a "
            "source checkout of inferplane, not of an installed package",
            file=sys.stderr,
        )
        return EXIT_INVALID
    out: Path = args.out or Path(f"rehearsal-{env.blueprint}-{args.env}")
    out.mkdir(parents=True, exist_ok=True)
    cmd = [
        sys.executable,
        str(HARNESS),
        str(args.blueprint),
        args.env,
        args.traffic,
        "--slower",
        str(args.slower),
        "--time-scale",
        str(args.time_scale),
        *(a for f in injected for a in ("--fault", f.arg())),
        *(("--policy-config", str(args.policy_config)) if args.policy_config else ()),
    ]
    started = time.monotonic()
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )
    try:
        stdout, _ = proc.communicate(timeout=profile.seconds + SETUP_S)
    except subprocess.TimeoutExpired:
        stop_harness(proc)
        print(
            f"{PROG}: the harness ran past {profile.seconds + SETUP_S} s and was stopped",
            file=sys.stderr,
        )
        return EXIT_INVALID
    except KeyboardInterrupt:
        stop_harness(proc)
        raise
    res = subprocess.CompletedProcess(cmd, proc.returncode, stdout)
    wall = time.monotonic() - started
    try:
        harness = json.loads(res.stdout)
    except ValueError:
        print(f"{PROG}: the harness printed no report (exit {res.returncode})", file=sys.stderr)
        return EXIT_INVALID
    harness["wall_s"] = round(wall, 1)
    (out / "harness.json").write_text(json.dumps(harness, indent=1) + "\n")
    if res.returncode != 0:
        why = harness.get("not_run") or (harness.get("error") or "").strip().splitlines()[-1:]
        print(
            f"{PROG}: cannot run here: {why}; the harness's report is {out / 'harness.json'}",
            file=sys.stderr,
        )
        return EXIT_INVALID
    rows, verdicts = judge(env, plans, harness, args.time_scale, scaling.constants)
    slo = {n: verdict.expectation(env, n).slo_ms for n in rows}
    judged = {
        n: faults.judge(
            rows[n], [e for e in harness.get("faults") or [] if e["model"] == n], slo[n]
        )
        for n in rows
    }
    (out / "timeline.json").write_text(
        json.dumps({n: [r.as_json() for r in rs] for n, rs in rows.items()}, indent=1) + "\n"
    )
    (out / "verdict.json").write_text(
        json.dumps(
            {
                "wall_s": harness["wall_s"],
                "slower": args.slower,
                "time_scale": args.time_scale,
                "sent": harness.get("sent"),
                "models": [
                    *(
                        {
                            **v.as_json(),
                            "verdict": "held" if v.held else "breached",
                            "faults": judged[v.model],
                        }
                        for v in verdicts
                    ),
                    *not_rehearsed(env),
                ],
            },
            indent=1,
        )
        + "\n"
    )
    blocks = [picture.model_block(rows[v.model], v, slo[v.model]) for v in verdicts]
    title = f"Rehearsal of {env.blueprint} / {args.env} under {profile.name}"
    said = notes(args, plans)
    (out / "rehearsal.html").write_text(picture.page(title, said, blocks))
    # What is a stand-in and what was shortened or slowed, above the verdicts that rest on it.
    print(
        "\n".join(line for line in said if line.startswith(("STAND-IN", "A new replica", "Faults")))
    )
    for v in verdicts:
        print("\n".join(v.lines() + faults.lines(judged[v.model])))
    for entry in not_rehearsed(env):
        print(f"{entry['model']}: {entry['verdict']}")
    print(
        f"wall time {wall:.0f} s; written to {out}/ (timeline.json, verdict.json, "
        "rehearsal.html, harness.json)"
    )
    return verdict.exit_code(verdicts)
