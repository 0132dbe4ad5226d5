"""Mirror the installed layout of the package under ``build/tree`` as links to the sources.

The editable install maps ``components/`` and ``policies/`` into ``inferplane.components``
and ``inferplane.policies`` with an import hook, which static tools (mypy, import-linter)
cannot follow. Run with ``build/tree`` first on their path, they see exactly the modules a
wheel installs, each linked back to the file you edit (so their messages name real lines).

    python scripts/dev/link_tree.py          # (re)create build/tree; prints its path
"""

from __future__ import annotations

import shutil
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREE = ROOT / "build" / "tree"
SUFFIXES = {".py", ".pyi", ".json", ".yaml", ".typed"}


def package_dirs() -> dict[str, Path]:
    """Each package of the distribution and the source folder it is installed from."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools = config["tool"]["setuptools"]
    mapping: dict[str, str] = setuptools["package-dir"]
    out = {}
    for package in setuptools["packages"]:
        # The nearest mapped ancestor decides where a package's folder is.
        parts = package.split(".")
        for cut in range(len(parts), 0, -1):
            base = ".".join(parts[:cut])
            if base in mapping:
                out[package] = ROOT / mapping[base] / Path(*parts[cut:])
                break
    return out


def build() -> Path:
    if TREE.exists():
        shutil.rmtree(TREE)
    for package, source in package_dirs().items():
        target = TREE / Path(*package.split("."))
        target.mkdir(parents=True, exist_ok=True)
        for file in source.iterdir():
            if file.is_file() and file.suffix in SUFFIXES:
                (target / file.name).symlink_to(file)
    return TREE


if __name__ == "__main__":
    print(build())
    sys.exit(0)
