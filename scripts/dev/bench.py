"""Benchmark `inferplane validate` and `plan`: wall time, in-process and as a CLI process.

    ./dev bench            # or: python scripts/dev/bench.py [--repeat N]

Numbers, not a test: run it on the 2-core reference machine and compare.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts" / "dev"))

from generate_blueprint import generate  # noqa: E402

from inferplane.blueprint.resolution.resolve import load_blueprint, resolve  # noqa: E402


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples), min(samples)


def cli_time(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "inferplane", *args],
        check=True,
        capture_output=True,
        cwd=ROOT,
        timeout=3600,
    )
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    reference = ROOT / "blueprints" / "support-assistant.yaml"
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "bench-128x8.yaml"
        big.write_text(generate(128, 8))
        print(f"{'case':44} {'median':>9} {'best':>9}")
        for label, path in (
            ("reference (4 models, 2 envs)", reference),
            ("generated (128 models, 8 envs)", big),
        ):
            med, best = timed(lambda p=path: load_blueprint(p), args.repeat)
            print(f"validate in-process  {label:23} {med * 1000:7.1f}ms {best * 1000:7.1f}ms")

            def validate_and_resolve(p: Path = path) -> None:
                doc, envs = load_blueprint(p)
                for env in envs:
                    resolve(doc, env)

            med, best = timed(validate_and_resolve, args.repeat)
            print(f"+ resolve all envs   {label:23} {med * 1000:7.1f}ms {best * 1000:7.1f}ms")
            cli = [cli_time("validate", "-q", str(path)) for _ in range(3)]
            print(
                f"validate CLI process {label:23} {statistics.median(cli) * 1000:7.1f}ms "
                f"{min(cli) * 1000:7.1f}ms"
            )
    for env in ("staging", "prod"):
        walls, total = [], ""
        for _ in range(3):
            started = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-m", "inferplane", "plan", str(reference), "--env", env],
                check=True,
                capture_output=True,
                text=True,
                cwd=ROOT,
                timeout=3600,
            ).stdout
            walls.append(time.perf_counter() - started)
            total = next(
                (ln.split()[0] for ln in out.splitlines() if ln.strip().endswith("total")), "?"
            )
        print(
            f"plan CLI process     reference {env:13} {statistics.median(walls) * 1000:7.1f}ms "
            f"{min(walls) * 1000:7.1f}ms  ({total} resources)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
