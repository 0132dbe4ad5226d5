"""Benchmark `inferplane check`: wall time and peak memory on the reference blueprint and on
generated blueprints of 20, 100 and 400 models (two environments each: one AWS, one GCP;
a size above what one blueprint may hold becomes several blueprints, checked in one run).

    python scripts/dev/bench_check.py [--sizes 20 100 400] [--environments 2] [--repeat 1]

The largest blueprint the schema allows is ``--sizes 128 --environments 8``.

Each case runs in a fresh interpreter, as the command does (imports included); the child
reports its wall time, peak RSS (its own or its environment workers', whichever is larger)
and the number of resources checked, so the cost per resource shows whether it grows
linearly.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "blueprints" / "support-assistant.yaml"
PER_BLUEPRINT = 128
"""Largest generated blueprint: the schema's cap on models per blueprint."""


def one(paths: list[str]) -> None:
    """Child: check `paths` in-process as `inferplane check` does; print one JSON line."""
    started = time.perf_counter()
    sys.path.insert(0, str(ROOT))
    import gc

    from inferplane.app import check
    from inferplane.app.cli import GC_THRESHOLDS

    gc.set_threshold(*GC_THRESHOLDS)  # as the CLI runs

    original = check.stack_of
    # Environments may run in forked workers: they append their counts to a file.
    tally = Path(tempfile.mkstemp(prefix="bench-check-")[1])

    def counting(env: Any) -> Any:
        stack = original(env)
        with tally.open("a") as out:
            out.write(f"{len(stack.resources)}\n")
        return stack

    check.stack_of = counting
    report = check.check_files(paths)
    wall = time.perf_counter() - started
    peak_kib = max(
        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    )
    counted = sum(int(n) for n in tally.read_text().split())
    tally.unlink()
    summary = {
        "wall_s": wall,
        "peak_mib": peak_kib / 1024,
        "resources": counted,
        "results": len(report.results),
    }
    print(json.dumps(summary))


def measure(paths: list[Path]) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, __file__, "--one", *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env={**os.environ, "HF_TOKEN": "bench"},
        timeout=3600,
    )
    if proc.returncode != 0:
        raise SystemExit(f"checking {' '.join(map(str, paths))} failed:\n{proc.stderr}")
    result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[20, 100, 400])
    parser.add_argument(
        "--environments", type=int, default=2, help="environments per generated blueprint"
    )
    parser.add_argument("--repeat", type=int, default=1, help="runs per case (best is shown)")
    parser.add_argument("--one", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.one)
        return 0
    sys.path.insert(0, str(ROOT / "scripts" / "dev"))
    from generate_blueprint import generate

    print(f"{'blueprint':40} {'resources':>9} {'wall':>8} {'ms/resource':>11} {'peak RSS':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        cases: list[tuple[str, list[Path]]] = [("reference (4 models)", [REFERENCE])]
        for size in args.sizes:
            files = -(-size // PER_BLUEPRINT)
            paths = []
            for i in range(files):
                count = size // files + (1 if i < size % files else 0)
                path = Path(tmp) / f"bench-{size}-{i}.yaml"
                path.write_text(
                    generate(count, args.environments).replace("name: bench", f"name: bench-{i}", 1)
                )
                paths.append(path)
            label = f"generated ({size} models x {args.environments} envs"
            cases.append((f"{label}, {files} file{'s' * (files > 1)})", paths))
        for label, paths in cases:
            runs = [measure(paths) for _ in range(max(args.repeat, 1))]
            best = min(runs, key=lambda r: r["wall_s"])
            per = 1000 * best["wall_s"] / max(best["resources"], 1)
            print(
                f"{label:40} {best['resources']:9d} {best['wall_s']:7.2f}s {per:10.2f}  "
                f"{best['peak_mib']:7.0f}MiB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
