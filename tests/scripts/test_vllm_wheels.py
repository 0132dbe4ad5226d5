"""scripts/facts/vllm_wheels.py without PyPI: a corrupt cached wheel is fetched again, pip is asked
for exactly the pinned file's platform and ABI, and only the sources (no shared object) are
unpacked, whole or not at all."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "facts"))

import vllm_serve_flags  # noqa: E402
import vllm_wheels  # noqa: E402

NAME = "vllm-0.0.1-cp38-abi3-manylinux1_x86_64.whl"
MEMBERS = {
    "vllm/__init__.py": "",
    "vllm/sonnet.py": "",
    "vllm/_C.abi3.so": "",
    "vllm/foo.so.1": "",
    "vllm/lib.cpython-312-x86_64-linux-gnu.so": "",
    "vllm-0.0.1.dist-info/METADATA": "",
}


def _wheel() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in MEMBERS.items():
            archive.writestr(name, text)
    return buffer.getvalue()


@pytest.fixture
def pinned(monkeypatch: pytest.MonkeyPatch) -> bytes:
    data = _wheel()
    monkeypatch.setitem(vllm_serve_flags.WHEELS, "v0.0.1", (NAME, hashlib.sha256(data).hexdigest()))
    return data


def test_a_corrupt_cached_wheel_is_removed_before_pip_runs(
    tmp_path: Path, pinned: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pip takes a file already in --dest as downloaded when no hash is required (pip
    ``operations/prepare.py``, ``_check_download_dir``): it must not find the corrupt one."""
    (tmp_path / NAME).write_bytes(b"truncated")
    calls: list[list[str]] = []

    def run(args: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        assert not (tmp_path / NAME).exists()
        calls.append(args)
        (tmp_path / NAME).write_bytes(pinned)
        return subprocess.CompletedProcess(args, 0)

    monkeypatch.setattr(vllm_wheels.subprocess, "run", run)
    wheel, root = vllm_wheels.fetch(tmp_path, "v0.0.1")
    assert wheel == tmp_path / NAME and root == tmp_path / "0.0.1" / "vllm"
    [args] = calls
    assert "--platform=manylinux1_x86_64" in args and "--abi=abi3" in args
    assert args[-1] == "vllm==0.0.1"
    unpacked = sorted(str(p.relative_to(tmp_path / "0.0.1")) for p in root.rglob("*"))
    assert unpacked == ["vllm/__init__.py", "vllm/sonnet.py"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0.0.1", NAME]


def test_an_interrupted_unpacking_is_redone(
    tmp_path: Path, pinned: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / NAME).write_bytes(pinned)
    (tmp_path / ".0.0.1.partial" / "vllm").mkdir(parents=True)
    monkeypatch.setattr(vllm_wheels.subprocess, "run", None)  # the cached wheel is used
    _, root = vllm_wheels.fetch(tmp_path, "v0.0.1")
    assert (root / "__init__.py").exists()
    assert not (tmp_path / ".0.0.1.partial").exists()
