"""The vendored upstream files are the ones tests/reference/README.md names, unchanged."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent / "reference"
ROW = re.compile(
    r"^\| `([^`]+)` \| ([^|]+) \| `([^`]+)` \| ([0-9a-f]{40}) \| ([^|]+) \| ([0-9a-f]{64}) \|$"
)


def test_every_vendored_file_is_listed_with_its_hash() -> None:
    rows = [ROW.match(line) for line in (HERE / "README.md").read_text().splitlines()]
    listed = {m.group(1): m.group(6) for m in rows if m}
    present = {
        str(p.relative_to(HERE)) for p in HERE.rglob("*") if p.is_file() and p.name != "README.md"
    }
    assert listed and set(listed) == present
    for name, digest in listed.items():
        assert hashlib.sha256((HERE / name).read_bytes()).hexdigest() == digest, name
