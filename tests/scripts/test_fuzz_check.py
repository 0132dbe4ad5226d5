"""scripts/dev/fuzz_check.py: a short seeded run ends in no exit 3 and counts every surface it
tried; the mutation lands where its pattern says; a crash is kept with what replays it."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "dev"))

import fuzz_check  # noqa: E402

DOC: dict[str, Any] = {
    "environments": {"prod": {"region": "us-east-1", "zones": ["us-east-1a"]}},
    "models": {"chat": {"vllm": {"extra_args": ["--a", "--b"]}}, "rank": {"gpus": 1}},
}


def test_a_seeded_run_ends_without_an_internal_error_and_counts_each_surface(
    tmp_path: Path,
) -> None:
    counts_file = tmp_path / "counts.json"
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "dev" / "fuzz_check.py"), "--seed", "11",
         "--cases", "24", "--seconds", "40", "--out", str(tmp_path / "crashes"),
         "--json", str(counts_file)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert not (tmp_path / "crashes").exists()
    counts = json.loads(counts_file.read_text())
    surfaces = counts["surfaces"]
    assert surfaces, run.stdout
    names = {s.name for s in fuzz_check.SURFACES}
    for name, row in surfaces.items():
        assert name in names
        assert row["crashes"] == 0
        assert "3" not in row["exits"] and "validate 3" not in row["exits"]
        assert row["cases"] == sum(row["exits"].values()) >= 1
        assert row["refused"] + row["checked"] == row["cases"]
        assert any(line.startswith(name + " ") for line in run.stdout.splitlines())
    assert counts["total"]["cases"] == sum(r["cases"] for r in surfaces.values())
    assert counts["total"]["crashes"] == 0


def test_a_pattern_reaches_existing_values_and_the_keys_it_may_insert() -> None:
    assert fuzz_check.matches(DOC, ["environments", "*", "region"]) == [
        (("environments", "prod", "region"), 2)
    ]
    assert fuzz_check.matches(DOC, ["models", "*", "vllm", "chat_template"]) == [
        (("models", "chat", "vllm", "chat_template"), 1),
        (("models", "rank", "vllm", "chat_template"), 0),
    ]
    assert fuzz_check.matches(DOC, ["models", "*", "vllm", "extra_args", "*"]) == [
        (("models", "chat", "vllm", "extra_args", 0), 1),
        (("models", "chat", "vllm", "extra_args", 1), 1),
    ]


def test_a_write_creates_missing_mappings_and_a_delete_removes_the_key() -> None:
    data: dict[str, Any] = {"models": {"rank": {"gpus": 1}}}
    fuzz_check.write(data, ("models", "rank", "vllm", "env"), {"A": "1"})
    fuzz_check.write(data, ("models", "rank", "gpus"), fuzz_check.DELETE)
    fuzz_check.write(data, ("models", "rank", "absent"), fuzz_check.DELETE)
    assert data == {"models": {"rank": {"vllm": {"env": {"A": "1"}}}}}


def test_an_override_of_a_list_item_replaces_the_list_with_that_item_changed(
    tmp_path: Path,
) -> None:
    surface = fuzz_check.Surface("models.*.vllm.extra_args.*", ["--c"], override=True)
    docs = {"blueprints": {"bp.yaml": DOC}, "config": {}}
    seen = set()
    for n in range(40):
        case = fuzz_check.Case(random.Random(f"1:{n}"), tmp_path)
        file, target, path, value = fuzz_check.mutate(surface, docs, case)
        assert (file, target) == ("bp.yaml", "blueprint")
        assert path == ("environments", "prod", "overrides", "models", "chat", "vllm", "extra_args")
        seen.add(str(value))
    assert "['--c', '--b']" in seen and "['--a', '--c']" in seen
    assert DOC["models"]["chat"]["vllm"]["extra_args"] == ["--a", "--b"]  # not changed


def test_a_case_is_the_same_for_the_same_seed_and_number(tmp_path: Path) -> None:
    docs = fuzz_check.load_docs()
    surface = next(s for s in fuzz_check.SURFACES if s.name == "models.*.vllm.extra_args")

    def one(seed: str, folder: str) -> tuple[Any, ...]:
        (tmp_path / folder).mkdir()
        case = fuzz_check.Case(random.Random(seed), tmp_path / folder)
        return fuzz_check.mutate(surface, docs, case)

    assert one("5:3", "a") == one("5:3", "b")
    assert len({repr(one(f"5:{n}", f"c{n}")) for n in range(6)}) > 1


def test_an_internal_error_is_kept_with_the_line_that_replays_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from inferplane.app import cli

    def crash(argv: list[str]) -> int:
        print("inferplane: internal error: KeyError: 'x'", file=sys.stderr)
        return 3

    monkeypatch.setattr(cli, "main", crash)
    monkeypatch.setenv("INFERPLANE_JOBS", "1")
    out = tmp_path / "crashes"
    code = fuzz_check.main(["--seed", "2", "--only", "4", "--out", str(out)])
    assert code == 1
    kept = (out / "case-4" / "case.txt").read_text().splitlines()
    assert kept[0] == "python scripts/dev/fuzz_check.py --seed 2 --only 4"
    assert kept[1] == f"surface: {fuzz_check.SURFACES[6 % len(fuzz_check.SURFACES)].name}"
    assert "validate: 3" in kept
    assert kept[-1] == "inferplane: internal error: KeyError: 'x'"
