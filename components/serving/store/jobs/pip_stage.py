"""Stages and installs a Python step's pinned requirements; run in the Triton image, whose
Python is the one the step runs with.

    python3 pip_stage.py download <dir>              (the staging Job; REQUIREMENTS)
    python3 pip_stage.py install <wheels> <target>   (the serving pod; REQUIREMENTS)

``download`` writes the requirements (``REQUIREMENTS``: one ``name==version
--hash=sha256:<hex>`` per line) to ``<dir>/requirements.txt`` and downloads exactly those
wheels into ``<dir>``: ``pip download --require-hashes --no-deps --only-binary=:all:`` —
every file checked against its pinned hash, no dependency resolved behind the list's back,
no source build. ``install`` installs the same lines — ``REQUIREMENTS`` again, set by the
program from the blueprint, never the ``requirements.txt`` copied from the store, which
whoever can write the store could change — from that directory alone: ``pip install
--no-index --find-links <wheels> --require-hashes --no-deps --target <target> -r <lines>``,
where ``<lines>`` is a file of its own outside the copied folder; so nothing comes from
the internet at start, and a wheel is installed only when it is one of the blueprint's
lines with its hash. ``--target`` also skips the "externally managed"
refusal of Ubuntu's Python (PEP 668; pip ``src/pip/_internal/commands/install.py``:
"Specifying --root, --target, or --prefix disables the check").
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

REQUIREMENTS_FILE = "requirements.txt"
PINNED = re.compile(
    r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?==[A-Za-z0-9][A-Za-z0-9.+!_-]*"
    r"( --hash=sha256:[0-9a-f]{64})+$"
)
"""What the blueprint schema accepts: a pinned version and at least one sha256 hash."""
USAGE = "usage: pip_stage.py download <dir> | install <wheels> <target>"


class RequirementsError(Exception):
    """A requirement that is not pinned with its hashes; the message names it."""


def requirement_lines(text: str) -> list[str]:
    """The non-empty lines of `text`, each checked to be pinned with its hashes."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        raise RequirementsError("REQUIREMENTS is empty")
    bad = [line for line in lines if not PINNED.match(line)]
    if bad:
        raise RequirementsError(
            "not pinned as name==version --hash=sha256:<hex>: " + "; ".join(bad)
        )
    return lines


def download_command(directory: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--disable-pip-version-check",
        "--no-cache-dir",
        "--require-hashes",
        "--no-deps",
        "--only-binary=:all:",
        "--dest",
        directory,
        "-r",
        f"{directory}/{REQUIREMENTS_FILE}",
    ]


def install_command(wheels: str, target: str, requirements: str) -> list[str]:
    """`requirements`: the file of the blueprint's lines, never one inside `wheels`."""
    return [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--disable-pip-version-check",
        "--no-cache-dir",
        "--no-index",
        "--find-links",
        wheels,
        "--require-hashes",
        "--no-deps",
        "--only-binary=:all:",
        "--target",
        target,
        "-r",
        requirements,
    ]


def install(wheels: str, target: str, lines: list[str]) -> int:
    """Install `lines` from `wheels`; the lines go to a file of their own in ``$TMPDIR``."""
    with tempfile.TemporaryDirectory(prefix="pip-stage-") as own:
        requirements = Path(own, REQUIREMENTS_FILE)
        requirements.write_text("\n".join(lines) + "\n", encoding="utf-8")
        command = install_command(wheels, target, str(requirements))
        return subprocess.run(command, check=False).returncode


def main(argv: Sequence[str]) -> int:
    if not argv or {"download": 2, "install": 3}.get(argv[0]) != len(argv):
        print(USAGE, file=sys.stderr)
        return 1
    try:
        lines = requirement_lines(os.environ.get("REQUIREMENTS", ""))
    except RequirementsError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if argv[0] == "install":
        return install(argv[1], argv[2], lines)
    Path(argv[1]).mkdir(parents=True, exist_ok=True)
    Path(argv[1], REQUIREMENTS_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return subprocess.run(download_command(argv[1]), check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
