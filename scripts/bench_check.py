"""Benchmark `inferplane check`: wall time and peak memory on the reference blueprint and on
generated blueprints of 20, 100 and 400 models (two environments: one AWS, one GCP).

    python scripts/bench_check.py [--sizes 20 100 400] [--repeat 1]

Each case runs in a fresh interpreter, as the command does (imports included); the child
reports its own wall time, peak RSS and the number of resources checked, so the cost per
resource shows whether it grows linearly.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "blueprints" / "support-assistant.yaml"


def one(path: str) -> None:
    """Child: check `path` in-process as `inferplane check` does; print one JSON line."""
    started = time.perf_counter()
    sys.path.insert(0, str(ROOT))
    from inferplane import check

    counted: list[int] = []
    original = check.stack_of

    def counting(env: object) -> object:
        stack = original(env)  # type: ignore[arg-type]
        counted.append(len(stack.resources))
        return stack

    check.stack_of = counting  # type: ignore[assignment]
    report = check.check_files([path])
    wall = time.perf_counter() - started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "wall_s": wall,
                "peak_mib": peak_mib,
                "resources": sum(counted),
                "results": len(report.results),
            }
        )
    )


def measure(path: Path) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, __file__, "--one", str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"HF_TOKEN": "bench", "PATH": "/usr/bin:/bin"},
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[20, 100, 400])
    parser.add_argument("--repeat", type=int, default=1, help="runs per case (best is shown)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.one)
        return 0
    sys.path.insert(0, str(ROOT / "scripts"))
    from generate_blueprint import generate

    print(f"{'blueprint':28} {'resources':>9} {'wall':>8} {'ms/resource':>11} {'peak RSS':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        cases = [("reference (4 models)", REFERENCE)]
        for size in args.sizes:
            path = Path(tmp) / f"bench-{size}.yaml"
            path.write_text(generate(size, 2))
            cases.append((f"generated ({size} models)", path))
        for label, path in cases:
            runs = [measure(path) for _ in range(max(args.repeat, 1))]
            best = min(runs, key=lambda r: r["wall_s"])
            per = 1000 * best["wall_s"] / max(best["resources"], 1)
            print(
                f"{label:28} {best['resources']:9d} {best['wall_s']:7.2f}s {per:10.2f}  "
                f"{best['peak_mib']:7.0f}MiB"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
