"""A stand-in for the ``aws`` and ``gcloud`` commands the store containers run, over a
folder (``$FAKE_STORE/<bucket>/<key>``), with the two behaviours a retry meets:

- ``FAKE_NO_OVERWRITE=1``: writing an object that exists is refused, as GCS refuses
  ``roles/storage.objectCreator`` ("to replace existing objects, both storage.objects.create
  and storage.objects.delete permissions are required",
  https://cloud.google.com/storage/docs/access-control/iam-permissions);
- ``$FAKE_WRITES_LEFT`` (a file holding a number): each object written takes one; at zero
  the command dies, as a pod killed mid-upload does, leaving what it wrote so far.

Only the forms inferplane's containers use are understood; anything else fails loudly.
Run as ``fake_store_cli.py aws ...`` or ``fake_store_cli.py gcloud ...`` (`install`
writes the two commands that do so).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def store_root() -> Path:
    return Path(os.environ["FAKE_STORE"])


def fail(message: str, code: int = 1) -> None:
    print(message, file=sys.stderr)
    sys.exit(code)


def remote(uri: str) -> Path | None:
    for scheme in ("s3://", "gs://"):
        if uri.startswith(scheme):
            return store_root() / uri[len(scheme) :]
    return None


def write(source: Path, target: Path) -> None:
    if target.is_file():
        if target.read_bytes() == source.read_bytes():
            return  # a sync skips what is already there
        if os.environ.get("FAKE_NO_OVERWRITE") == "1":
            fail(f"HTTPError 403: does not have storage.objects.delete access to {target}")
    budget = os.environ.get("FAKE_WRITES_LEFT")
    if budget:
        left = int(Path(budget).read_text())
        if left <= 0:
            fail("connection reset: the upload died", 137)
        Path(budget).write_text(str(left - 1))
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def copy(src: str, dst: str) -> None:
    source, target = remote(src), remote(dst)
    if source is not None and dst == "-":
        if not source.is_file():
            fail(f"NoSuchKey: {src}")
        sys.stdout.write(source.read_text())
    elif source is not None and target is None:
        if not source.is_file():
            fail(f"NoSuchKey: {src}")
        Path(dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dst)
    elif source is None and target is not None:
        write(Path(src), target)
    else:
        fail(f"unsupported copy {src} -> {dst}", 2)


def sync(src: str, dst: str) -> None:
    source, target = remote(src), remote(dst)
    if source is None and target is not None:
        for path in sorted(p for p in Path(src).rglob("*") if p.is_file()):
            write(path, target / path.relative_to(src))
    elif source is not None and target is None:
        if source.is_dir():
            for path in sorted(p for p in source.rglob("*") if p.is_file()):
                out = Path(dst) / path.relative_to(source)
                out.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, out)
    else:
        fail(f"unsupported sync {src} -> {dst}", 2)


def exists(path: Path | None) -> None:
    if path is None or not path.is_file():
        fail("404 Not Found")


def install(bin_dir: Path) -> None:
    """Writes ``aws`` and ``gcloud`` into `bin_dir`, running this file."""
    for command in ("aws", "gcloud"):
        path = bin_dir / command
        path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{__file__}" {command} "$@"\n')
        path.chmod(0o755)


def main(argv: list[str]) -> None:
    command = argv[1]
    args = [a for a in argv[2:] if a not in ("--only-show-errors", "--recursive")]
    if command == "aws" and args[:2] == ["s3", "cp"]:
        copy(args[2], args[3])
    elif command == "aws" and args[:2] == ["s3", "sync"]:
        sync(args[2], args[3])
    elif command == "aws" and args[:2] == ["s3api", "head-object"]:
        bucket, key = args[args.index("--bucket") + 1], args[args.index("--key") + 1]
        exists(store_root() / bucket / key)
    elif command == "gcloud" and args[:2] == ["storage", "cp"]:
        copy(args[2], args[3])
    elif command == "gcloud" and args[:2] == ["storage", "rsync"]:
        sync(args[2], args[3])
    elif command == "gcloud" and args[:3] == ["storage", "objects", "describe"]:
        exists(remote(args[3]))
    elif command == "gcloud" and args[:2] == ["storage", "cat"]:
        copy(args[2], "-")
    else:
        fail(f"fake {command}: unsupported {args}", 2)


if __name__ == "__main__":
    main(sys.argv)
