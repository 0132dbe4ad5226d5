"""Fuzz `inferplane check` with hostile blueprint values: no case may end in exit 3.

    python scripts/dev/fuzz_check.py [--seed 0] [--cases 200] [--seconds 0] [--out fuzz-crashes]
                                 [--only CASE] [--timeout 300]

Each case copies one bundled blueprint (blueprints/*.yaml, e2e/blueprints/*.yaml), picks a
surface (a YAML path pattern of `SURFACES`: `*` matches every key or item there, the last key
is replaced or inserted) and writes one hostile value from that surface's pool (or, one time
in eight, a generic mutation: a wrong type, a huge or fractional number, an empty or very
long string, null, or the key deleted) into a temporary folder, beside the files a surface
may need (profile CSVs, symbolic links, a FIFO). It runs `inferplane validate` on that file
in-process and, when validation passes, `inferplane check` (one environment: the mutated
one, else one picked by the seed; the platform's policy config, itself the target of the
`config:` surfaces). A case's values depend only on `--seed` and its number, so
`--only CASE` replays it.

It prints, per surface, the cases, how many validation refused and how many were checked,
and the exit codes seen. Exit 3 (an internal error) or a case over `--timeout` is a crash:
its folder is copied under `--out` with `case.txt` (surface, path, value, stderr) and the
script exits 1. Adding a field to fuzz is one line of `SURFACES` (scripts/dev/fuzz_surfaces.py).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import json
import os
import random
import resource
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from fuzz_surfaces import DELETE, GENERIC, SURFACES, Case, Surface

ROOT = Path(__file__).resolve().parents[2]
BLUEPRINTS = sorted((ROOT / "blueprints").glob("*.yaml")) + sorted(
    (ROOT / "e2e" / "blueprints").glob("*.yaml")
)
POLICY_CONFIG = ROOT / "policies" / "platform-config.yaml"
TODAY = "2026-06-01"
"""Waiver expiry is judged against a fixed day, so that a case's outcome is reproducible."""

Path_ = tuple[str | int, ...]


# --- the mutation ------------------------------------------------------------------------


def _children(node: Any) -> Iterator[str | int]:
    if isinstance(node, dict):
        yield from node
    elif isinstance(node, list):
        yield from range(len(node))


def matches(data: Any, parts: Sequence[str]) -> list[tuple[Path_, int]]:
    """Concrete paths of pattern `parts` in `data`, each with how much of it exists: 2 the
    value, 1 its parents, 0 less (missing literal keys are created when it is written)."""
    out: list[tuple[Path_, int]] = []

    def walk(node: Any, i: int, path: Path_, level: int) -> None:
        if i == len(parts) - 1:
            if parts[i] == "*":
                out.extend(((*path, k), level) for k in _children(node))
            elif isinstance(node, dict) or node is None:
                there = isinstance(node, dict) and parts[i] in node
                out.append(((*path, parts[i]), level + 1 if there and level else level))
            return
        if parts[i] == "*":
            for k in _children(node):
                walk(node[k], i + 1, (*path, k), level)
        elif isinstance(node, dict) and isinstance(node.get(parts[i]), dict | list):
            walk(node[parts[i]], i + 1, (*path, parts[i]), level)
        elif isinstance(node, dict) and parts[i] not in node:
            walk(None, i + 1, (*path, parts[i]), 0)

    walk(data, 0, (), 1)
    return out


def every_path(data: Any, path: Path_ = ()) -> Iterator[Path_]:
    for k in _children(data):
        yield (*path, k)
        yield from every_path(data[k], (*path, k))


def write(data: Any, path: Path_, value: Any) -> None:
    """Set (or with DELETE remove) `path`, creating missing mappings on the way."""
    node = data
    for part in path[:-1]:
        if isinstance(node, dict) and not isinstance(node.get(part), dict | list):
            node[part] = {}
        node = node[part]
    if value is DELETE:
        if isinstance(node, dict):
            node.pop(path[-1], None)
        else:
            del node[path[-1]]
    else:
        node[path[-1]] = value


def mutate(surface: Surface, docs: dict[str, Any], case: Case) -> tuple[str, str, Path_, Any]:
    """(blueprint file, target: blueprint|config, path, value) of one case on `surface`."""
    rng = case.rng
    target = "config" if surface.pattern.startswith("config:") else "blueprint"
    pattern = surface.pattern.removeprefix("config:")
    if target == "config":
        file = rng.choice(sorted(docs["blueprints"]))
        found = matches(docs["config"], pattern.split("."))
    elif pattern == "*":
        file = rng.choice(sorted(docs["blueprints"]))
        found = [(p, 2) for p in every_path(docs["blueprints"][file])]
    else:
        found_in = {f: matches(d, pattern.split(".")) for f, d in docs["blueprints"].items()}
        files = sorted(f for f, m in found_in.items() if m)
        file = rng.choice([f for f in files if max(w for _, w in found_in[f]) > 0] or files)
        found = found_in[file]
    # Mostly where the value is (or could be), sometimes anywhere the pattern reaches.
    best = max(w for _, w in found)
    path = rng.choice([p for p, w in found if w == best or rng.random() < 0.3])
    if surface.override:
        data = docs["blueprints"][file]
        envs = list(data.get("environments") or {})
        at = next((i for i, part in enumerate(path) if isinstance(part, int)), None)
        if at is not None:  # an override replaces a list whole: the list, one item changed
            items = copy.deepcopy(data)
            for part in path[:at]:
                items = items[part]
            value = _value(surface, case)
            items[path[at]] = value
            return file, target, ("environments", rng.choice(envs), "overrides", *path[:at]), items
        path = ("environments", rng.choice(envs), "overrides", *path)
    return file, target, path, _value(surface, case)


def _value(surface: Surface, case: Case) -> Any:
    pool = surface.values if case.rng.random() < 0.875 else GENERIC
    value = case.rng.choice(pool)
    return value(case) if callable(value) else value


# --- running a case ----------------------------------------------------------------------


class CaseTimeout(BaseException):
    """A case ran past `--timeout` (a BaseException: `inferplane` must not catch it)."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise CaseTimeout


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True  # a value used twice is written twice: blueprints refuse anchors


def dump(data: Any) -> str:
    options: dict[str, Any] = {"Dumper": _Dumper, "sort_keys": False, "width": 10**9}
    try:
        return yaml.dump(data, allow_unicode=True, **options)
    except UnicodeEncodeError:  # a lone surrogate: written as an escape instead
        return yaml.dump(data, allow_unicode=False, **options)


def inferplane(argv: list[str], timeout: int) -> tuple[int | str, str]:
    """(exit code, or `timeout`/the exception that escaped; stderr) of `inferplane ARGV`."""
    from inferplane.app import cli

    out, err = io.StringIO(), io.StringIO()
    signal.alarm(timeout)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            return cli.main(argv), err.getvalue()
    except CaseTimeout:
        return "timeout", err.getvalue()
    except BaseException as exc:  # main must return, whatever happens
        return f"raised {type(exc).__name__}", f"{err.getvalue()}\n{type(exc).__name__}: {exc}"
    finally:
        signal.alarm(0)


@dataclass
class Outcome:
    surface: str
    file: str
    path: Path_
    value: Any
    validate: int | str
    check: int | str | None
    stderr: str

    @property
    def crashed(self) -> bool:
        return self.validate not in (0, 2) or self.check not in (None, 0, 1, 2)


def run_case(
    n: int, seed: int, docs: dict[str, Any], work: Path, timeout: int, surfaces: Sequence[Surface]
) -> Outcome:
    surface = surfaces[(seed + n) % len(surfaces)]
    folder = work / f"case-{n}"
    folder.mkdir()
    case = Case(random.Random(f"{seed}:{n}"), folder)
    file, target, path, value = mutate(surface, docs, case)
    blueprint = copy.deepcopy(docs["blueprints"][file])
    config = copy.deepcopy(docs["config"])
    write(config if target == "config" else blueprint, path, value)
    name = folder / Path(file).name
    name.write_text(dump(blueprint), encoding="utf-8")
    (folder / "policy-config.yaml").write_text(dump(config), encoding="utf-8")
    rc, stderr = inferplane(["validate", "-q", str(name)], timeout)
    checked: int | str | None = None
    if rc == 0:
        envs = blueprint.get("environments")
        envs = sorted(e for e in envs if isinstance(e, str)) if isinstance(envs, dict) else []
        env = path[1] if target == "blueprint" and path[:1] == ("environments",) else None
        env = env if env in envs else (case.rng.choice(envs) if envs else None)
        argv = ["check", str(name), "--today", TODAY]
        argv += ["--policy-config", str(folder / "policy-config.yaml")]
        checked, stderr = inferplane([*argv, *(["--env", str(env)] if env else [])], timeout)
    return Outcome(surface.name, file, path, value, rc, checked, stderr)


def keep(outcome: Outcome, n: int, seed: int, work: Path, out: Path) -> Path:
    """Copy case `n`'s folder under `out`, with case.txt saying what it was."""
    dest = out / f"case-{n}"
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(work / f"case-{n}", dest, symlinks=True, ignore_dangling_symlinks=True)
    shown = repr(outcome.value)
    (dest / "case.txt").write_text(
        f"python scripts/dev/fuzz_check.py --seed {seed} --only {n}\n"
        f"surface: {outcome.surface}\nfile: {outcome.file}\npath: {outcome.path!r}\n"
        f"value: {shown[:2000]}{' ...' if len(shown) > 2000 else ''}\n"
        f"validate: {outcome.validate}\ncheck: {outcome.check}\n\n{outcome.stderr[-6000:]}",
        encoding="utf-8",
    )
    return dest


def load_docs() -> dict[str, Any]:
    blueprints = {
        str(p.relative_to(ROOT)): yaml.safe_load(p.read_text(encoding="utf-8")) for p in BLUEPRINTS
    }
    config = yaml.safe_load(POLICY_CONFIG.read_text(encoding="utf-8"))
    return {"blueprints": blueprints, "config": config}


def report(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Per surface: cases, refused by validate, checked, exit codes of check, crashes."""
    rows: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"cases": 0, "refused": 0, "checked": 0, "exits": Counter(), "crashes": 0}
    )
    for o in outcomes:
        row = rows[o.surface]
        row["cases"] += 1
        row["refused"] += o.validate == 2
        row["checked"] += o.check is not None
        row["exits"][str(o.check if o.check is not None else f"validate {o.validate}")] += 1
        row["crashes"] += o.crashed
    surfaces = {s: {**r, "exits": dict(sorted(r["exits"].items()))} for s, r in rows.items()}
    total: Counter[str] = Counter()
    for r in surfaces.values():
        total.update({k: r[k] for k in ("cases", "refused", "checked", "crashes")})
        total.update({f"exit {k}": v for k, v in r["exits"].items()})
    return {"surfaces": dict(sorted(surfaces.items())), "total": dict(sorted(total.items()))}


def print_report(counts: dict[str, Any], seconds: float) -> None:
    width = max(len(s) for s in counts["surfaces"]) if counts["surfaces"] else 10
    print(f"{'SURFACE'.ljust(width)}  CASES  REFUSED  CHECKED  CRASHES  EXITS")
    for name, r in counts["surfaces"].items():
        exits = ", ".join(f"{k}: {v}" for k, v in r["exits"].items())
        print(
            f"{name.ljust(width)}  {r['cases']:5}  {r['refused']:7}  {r['checked']:7}  "
            f"{r['crashes']:7}  {exits}"
        )
    print(f"total: {json.dumps(counts['total'])} in {seconds:.0f} s")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", type=int, default=200, help="most cases to run")
    parser.add_argument("--seconds", type=float, default=0, help="stop after this long (0: no)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds one case may take")
    parser.add_argument("--only", type=int, action="append", help="run only this case number")
    parser.add_argument("--out", type=Path, default=Path("fuzz-crashes"), help="crash folders")
    parser.add_argument("--json", type=Path, help="also write the counts here")
    parser.add_argument("-v", "--verbose", action="store_true", help="a line per case")
    parser.add_argument("--surface", help="only the surfaces whose name contains this")
    args = parser.parse_args(argv)
    surfaces = [s for s in SURFACES if not args.surface or args.surface in s.name]
    if not surfaces:
        parser.error(f"no surface name contains {args.surface!r}")
    os.environ["INFERPLANE_JOBS"] = "1"  # one environment per check: no worker processes
    signal.signal(signal.SIGALRM, _on_alarm)
    docs = load_docs()
    started = time.monotonic()
    outcomes: list[Outcome] = []
    crashes: list[Path] = []
    numbers = args.only or range(args.cases)
    with tempfile.TemporaryDirectory(prefix="fuzz-check-") as tmp:
        for n in numbers:
            if args.seconds and time.monotonic() - started > args.seconds:
                break
            outcome = run_case(n, args.seed, docs, Path(tmp), args.timeout, surfaces)
            outcomes.append(outcome)
            if outcome.crashed:
                crashes.append(keep(outcome, n, args.seed, Path(tmp), args.out))
                print(f"case {n}: {outcome.surface}: crash, kept in {crashes[-1]}", flush=True)
            if args.verbose:
                first = next((line for line in outcome.stderr.splitlines() if line), "")
                print(f"case {n}: {outcome.validate}/{outcome.check}: {first[:200]}", flush=True)
    counts = report(outcomes)
    print_report(counts, time.monotonic() - started)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"peak memory: {peak} MiB; crashes: {len(crashes)}")
    if args.json:
        args.json.write_text(json.dumps(counts, indent=2) + "\n", encoding="utf-8")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
