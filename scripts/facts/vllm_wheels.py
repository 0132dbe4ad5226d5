"""Fetches the PyPI wheel of every supported vLLM release (`vllm_serve_flags.WHEELS`: file
name and sha256), unpacks its ``vllm/`` sources once per version, and reads the facts again
from them with ``scripts/facts/vllm_serve_flags.py --check`` and
``scripts/facts/vllm_streaming.py --check``: stale facts fail.

    python scripts/facts/vllm_wheels.py [--cache DIR]

The wheels and their sources stay under ``~/.cache/inferplane/vllm`` (``<file>.whl`` and
``<version>/vllm``), where `tests/blueprint/test_vllm_allowlists.py` also reads the
annotations of the unpacked sources; a cached wheel is used again only while its sha256 is
the pinned one. CI runs this before the tests.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import vllm_serve_flags
import vllm_streaming

DEFAULT_CACHE = Path.home() / ".cache" / "inferplane" / "vllm"
SHARED_OBJECT = re.compile(r"\.so(\.[0-9]+)*$")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_args(cache: Path, release: str) -> list[str]:
    """``pip download`` of exactly the pinned wheel: its platform and ABI are the pinned file
    name's tags (``{name}-{version}-{python}-{abi}-{platform}.whl``, PEP 427), so another
    machine (aarch64, macOS) fetches the same file rather than its own platform's wheel;
    ``--platform`` and ``--abi`` need ``--no-deps`` or ``--only-binary=:all:`` (pip
    ``cli/cmdoptions.py``, ``check_dist_restriction``), both given here."""
    name, _ = vllm_serve_flags.WHEELS[release]
    _, _, _, abi, platforms = name.removesuffix(".whl").split("-")
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        "--only-binary=:all:",
        *(f"--platform={p}" for p in platforms.split(".")),
        f"--abi={abi}",
        "--dest",
        str(cache),
        f"vllm=={release.removeprefix('v')}",
    ]


def fetch(cache: Path, release: str) -> tuple[Path, Path]:
    """(wheel, unpacked ``vllm/`` root) of `release`, downloaded and unpacked if needed."""
    name, pinned = vllm_serve_flags.WHEELS[release]
    wheel = cache / name
    if not wheel.exists() or sha256(wheel) != pinned:
        # pip reuses a file already in --dest without checking it when no hash is required
        # (pip operations/prepare.py, ``_check_download_dir``): a truncated or corrupt wheel
        # would be "downloaded" again as it is, and every later run fail.
        wheel.unlink(missing_ok=True)
        subprocess.run(download_args(cache, release), check=True, timeout=1800)
    if not wheel.exists():
        raise SystemExit(f"pip downloaded no {name} for vllm {release}")
    found = sha256(wheel)
    if found != pinned:
        raise SystemExit(f"{wheel}: sha256 {found}, not the pinned {pinned}")
    version_dir = cache / release.removeprefix("v")
    root = version_dir / "vllm"
    if not root.is_dir():
        # Unpacked beside, then renamed: an interrupted unpacking leaves no partial
        # ``<version>/vllm`` that a later run (or the allowlist tests) would take as whole.
        partial = cache / f".{version_dir.name}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        with zipfile.ZipFile(wheel) as archive:
            # The sources, not the compiled kernels (``.so``, most of the wheel's size).
            members = [
                m
                for m in archive.namelist()
                if m.startswith("vllm/") and not SHARED_OBJECT.search(m)
            ]
            archive.extractall(partial, members)
        version_dir.mkdir(parents=True, exist_ok=True)
        (partial / "vllm").rename(root)
        shutil.rmtree(partial)
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
        status |= vllm_streaming.main([str(wheel), str(root), release, "--check"])
        print(f"vllm {release}: facts {'stale' if status else 'current'} ({wheel.name})")
        failed |= status
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
