"""Fetches the PyPI wheel of every supported vLLM release (`vllm_serve_flags.WHEELS`: file
name and sha256), unpacks its ``vllm/`` sources once per version, and reads the facts again
from them with ``scripts/vllm_serve_flags.py --check``: stale facts fail.

    python scripts/vllm_wheels.py [--cache DIR]

The wheels and their sources stay under ``~/.cache/inferplane/vllm`` (``<file>.whl`` and
``<version>/vllm``), where `tests/blueprint/test_vllm_allowlists.py` also reads the
annotations of the unpacked sources; a cached wheel is used again only while its sha256 is
the pinned one. CI runs this before the tests.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import vllm_serve_flags

DEFAULT_CACHE = Path.home() / ".cache" / "inferplane" / "vllm"
SHARED_OBJECT = re.compile(r"\.so(\.[0-9]+)*$")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch(cache: Path, release: str) -> tuple[Path, Path]:
    """(wheel, unpacked ``vllm/`` root) of `release`, downloaded and unpacked if needed."""
    name, pinned = vllm_serve_flags.WHEELS[release]
    wheel = cache / name
    if not wheel.exists() or sha256(wheel) != pinned:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--only-binary=:all:",
                "--dest",
                str(cache),
                f"vllm=={release.removeprefix('v')}",
            ],
            check=True,
            timeout=1800,
        )
    found = sha256(wheel)
    if found != pinned:
        raise SystemExit(f"{wheel}: sha256 {found}, not the pinned {pinned}")
    root = cache / release.removeprefix("v") / "vllm"
    if not root.is_dir():
        with zipfile.ZipFile(wheel) as archive:
            # The sources, not the compiled kernels (``.so``, most of the wheel's size).
            members = [
                m
                for m in archive.namelist()
                if m.startswith("vllm/") and not SHARED_OBJECT.search(m)
            ]
            archive.extractall(root.parent, members)
    return wheel, root


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    failed = 0
    for release in vllm_serve_flags.WHEELS:
        wheel, root = fetch(args.cache, release)
        status = vllm_serve_flags.main([str(wheel), str(root), "--check"])
        print(f"vllm {release}: facts {'stale' if status else 'current'} ({wheel.name})")
        failed |= status
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
