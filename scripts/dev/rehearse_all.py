"""Rehearse every bundled blueprint's `local` environment, one after another, and say in one
line per blueprint what each model did.

    ./dev rehearse-all [--time-scale S] [--out DIR] [--resume] [BLUEPRINT ...]

Each blueprint in blueprints/*.yaml (or those named) with a `local` environment runs
`inferplane rehearse` under `spike-5x` when every model it rehearses states its traffic
(`traffic.peak_rps`), else under e2e/traffic/short-spike.yaml (absolute rates: 4 rps, then
40 rps for 90 s, then 4 rps). Each run is bounded (the profile's length plus the
rehearsal's set-up allowance, plus a margin) and writes to DIR/NAME/. With --resume, a
blueprint whose DIR/NAME/ already holds the results of the same profile and time scale is
summarised from them (marked "earlier run") instead of rehearsed again.

One line per blueprint: per model held / breached / not rehearsed (and why), the seconds
from the first overload to a new ready replica against the plan's scale-out budget, and the
wall time. Exit 0 when every rehearsed model held its SLO, 1 when one breached, 2 when a
rehearsal could not run (the reason on its line).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from inferplane.app import rehearse  # noqa: E402
from inferplane.app.rehearsal import scope, traffic  # noqa: E402
from inferplane.blueprint.resolution.resolve import load_blueprint, resolve  # noqa: E402

SHORT = ROOT / "e2e" / "traffic" / "short-spike.yaml"
MARGIN_S = 120
"""Beyond the rehearsal's own bound (its harness is stopped at the profile plus SETUP_S)."""


def profile_for(env: Any) -> str:
    """spike-5x when every model the rehearsal runs states its traffic, else the short one."""
    runs, _ = scope.split(env)
    stated = all(env.models[n].traffic and env.models[n].traffic.peak_rps for n in runs)
    return "spike-5x" if runs and stated else str(SHORT)


def _scale_out(so: dict[str, Any]) -> str:
    budget = so.get("budget_s")
    against = f" against a budget of {budget:.0f} s" if budget is not None else " (no budget)"
    if so.get("seconds") is None:
        return f"scale-out: {so.get('note')}"
    return f"scale-out {so['seconds']:.0f} s{against}"


def model_part(m: dict[str, Any]) -> str:
    word = m.get("verdict") or ("held" if m.get("held") else "breached")
    if m.get("held") is None:
        # "not rehearsed: server triton: ..." -> "not rehearsed (server triton)"
        why = word.removeprefix("not rehearsed: ").split(":")[0]
        return f"{m['model']} not rehearsed ({why})"
    return f"{m['model']} {word}, {_scale_out(m.get('scale_out') or {})}"


def summary(name: str, profile: str, got: dict[str, Any]) -> str:
    parts = [model_part(m) for m in got.get("models") or []]
    tail = f"wall {got['wall_s']:.0f} s" if got.get("wall_s") else "nothing ran"
    if got.get("earlier"):
        tail += " (earlier run)"
    if got.get("error"):
        parts.append(got["error"])
    head = f"{name} [{Path(profile).stem}, exit {got['exit']}]" if got.get("wall_s") else name
    return f"{head}: {'; '.join(parts)}; {tail}"


def earlier(out: Path, profile: str, time_scale: float) -> dict[str, Any] | None:
    """The results already in `out` when they are of this profile and time scale."""
    try:
        got = json.loads((out / "verdict.json").read_text())
        harness = json.loads((out / "harness.json").read_text())
    except (OSError, ValueError):
        return None
    if got.get("time_scale") != time_scale:
        return None
    if (harness.get("profile") or {}).get("name") != traffic.find(profile).name:
        return None
    held = [m.get("held") for m in got.get("models") or [] if m.get("held") is not None]
    return {**got, "exit": 0 if all(held) else 1, "earlier": True}


def rehearse_one(blueprint: Path, args: argparse.Namespace) -> tuple[str, int]:
    name = blueprint.stem
    doc, envs = load_blueprint(blueprint)
    if "local" not in envs:
        return f"{name}: not rehearsed (no `local` environment)", 0
    env = resolve(doc, "local")
    profile = profile_for(env)
    out = args.out / name
    if args.resume and (got := earlier(out, profile, args.time_scale)) is not None:
        return summary(name, profile, got), got["exit"]
    if not scope.split(env)[0]:
        got = {"exit": 0, "models": rehearse.not_rehearsed(env)}
        return summary(name, profile, got), 0
    cmd = [
        str(Path(sys.executable).parent / "inferplane"),
        "rehearse",
        str(blueprint),
        "--env",
        "local",
        "--traffic",
        profile,
        "--time-scale",
        str(args.time_scale),
        "--out",
        str(out),
    ]
    out.mkdir(parents=True, exist_ok=True)
    bound = traffic.find(profile).seconds + rehearse.SETUP_S + MARGIN_S
    started = time.monotonic()
    log = out / "rehearse.log"
    print(f"{name}: rehearsing under {Path(profile).stem} (at most {bound} s; log {log})")
    with log.open("w") as fh:
        try:
            code = subprocess.run(
                cmd, stdout=fh, stderr=subprocess.STDOUT, timeout=bound
            ).returncode
        except subprocess.TimeoutExpired:
            code = 2
    wall = time.monotonic() - started
    try:
        got = json.loads((out / "verdict.json").read_text())
    except (OSError, ValueError):
        got = {"models": []}
    got = {**got, "exit": code, "wall_s": wall}
    if code == 2:
        lines = [ln for ln in log.read_text().splitlines() if ln.strip()]
        got["models"] = rehearse.not_rehearsed(env)
        got["error"] = "could not run: " + (lines[-1][:300] if lines else "no output")
    return summary(name, profile, got), code


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="./dev rehearse-all", description=__doc__.split("\n")[0])
    parser.add_argument("--time-scale", type=float, default=1.0, metavar="S")
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "rehearse-all", metavar="DIR")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("blueprints", nargs="*", type=Path, metavar="BLUEPRINT")
    args = parser.parse_args(argv)
    worst = 0
    lines = []
    for blueprint in args.blueprints or sorted((ROOT / "blueprints").glob("*.yaml")):
        line, code = rehearse_one(blueprint, args)
        print(line, flush=True)
        lines.append(line)
        worst = max(worst, code)
    print("\nsummary:")
    print("\n".join(lines))
    return worst


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
