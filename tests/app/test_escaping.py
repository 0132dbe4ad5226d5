"""User-supplied text never reaches any output format raw: controls (ANSI escapes, CR/LF,
NUL), bidirectional overrides and lone surrogates are shown as visible escapes."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from inferplane.app.exits import EXIT_INVALID, print_diagnostics, usage_error
from inferplane.app.report import CheckReport, render
from inferplane.blueprint.errors import Diagnostic, Location, printable
from inferplane.policies.engine import Result

HOSTILE = "chat\x1b[2J\u202egnp.exe\r\n::error::x 100%,"
SHOWN = "chat\\x1b[2J\\u202egnp.exe\\x0d\\x0a::error::x 100%,"
RAW = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _report(tmp_path: Path) -> CheckReport:
    blueprint = tmp_path / "bp.yaml"
    blueprint.write_text("models:\n  chat: {}\n")
    where = Location(str(blueprint), 2, 3)
    result = Result(
        "latency-signal",
        "advisory",
        "violation",
        "staging",
        f"models.{HOSTILE}",
        ("models", HOSTILE),
        f"model {HOSTILE} scales on GPU utilisation",
        where,
    )
    invalid = Diagnostic(Location(f"in\x1bvalid{HOSTILE}.yaml", 4, 5), ("models", HOSTILE), HOSTILE)
    return CheckReport([result], [(str(blueprint), "staging")], [invalid])


def test_printable_escapes_controls_bidi_and_surrogates() -> None:
    assert printable(HOSTILE) == SHOWN
    assert (
        printable("\t\x00\x7f\x85\u2066\u2029\ud800") == "\\x09\\x00\\x7f\\x85\\u2066\\u2029\\ud800"
    )
    assert printable("models.chat: 100% on a100, \u00e9t\u00e9 \U0001f680") == (
        "models.chat: 100% on a100, \u00e9t\u00e9 \U0001f680"
    )


def test_diagnostics_are_printed_escaped_by_the_one_function() -> None:
    out = io.StringIO()
    diagnostic = Diagnostic(Location("bp.yaml", 3, 7), ("models", HOSTILE), HOSTILE, "rename it")
    assert print_diagnostics([diagnostic], out) == EXIT_INVALID
    assert out.getvalue() == f"bp.yaml:3:7: error: models.{SHOWN}: {SHOWN}; rename it\n"


def test_usage_errors_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    assert usage_error("inferplane explain", f"no rule named {HOSTILE!r}") == EXIT_INVALID
    assert capsys.readouterr().err == (
        "inferplane explain: error: no rule named 'chat\\x1b[2J\\u202egnp.exe\\r\\n::error::x "
        "100%,'\n"
    )


def test_text_format(tmp_path: Path) -> None:
    text = render(_report(tmp_path), "text")
    assert not RAW.search(text.replace("\n", ""))
    assert (
        f"  {tmp_path / 'bp.yaml'}:2:3: advisory latency-signal: models.{SHOWN}: model {SHOWN} "
        "scales on GPU utilisation"
    ) in text.splitlines()


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_json_and_sarif_carry_visible_escapes(tmp_path: Path, fmt: str) -> None:
    output = render(_report(tmp_path), fmt)
    decoded = json.loads(output)
    strings: list[str] = []

    def walk(value: object) -> None:
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(k)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(decoded["results"] if fmt == "json" else decoded["runs"][0]["results"])
    if fmt == "json":
        walk(decoded["diagnostics"])
    # Rule help text may hold line breaks of its own; user text may not hold any.
    assert not [s for s in strings if RAW.search(s)]
    assert f"model {SHOWN} scales on GPU utilisation" in output.replace("\\\\", "\\")
    assert f"in\\x1bvalid{SHOWN}.yaml" in output.replace("\\\\", "\\")


def test_sarif_messages_exactly(tmp_path: Path) -> None:
    (invalid, result) = json.loads(render(_report(tmp_path), "sarif"))["runs"][0]["results"]
    assert invalid["message"] == {"text": f"models.{SHOWN}: {SHOWN}"}
    assert result["message"] == {
        "text": f"[staging] models.{SHOWN}: model {SHOWN} scales on GPU utilisation"
    }


def test_github_annotations_escape_workflow_commands(tmp_path: Path) -> None:
    lines = render(_report(tmp_path), "github").splitlines()
    prop = "chat\\x1b[2J\\u202egnp.exe%0D%0A%3A%3Aerror%3A%3Ax 100%25%2C"
    data = "chat\\x1b[2J\\u202egnp.exe%0D%0A::error::x 100%25,"
    assert lines[0] == (
        f"::error file=in\\x1bvalid{prop}.yaml,line=4,col=5,title=invalid-blueprint::"
        f"models.{data}: {data}"
    )
    assert lines[1].endswith(
        f",line=2,col=3,title=latency-signal [staging] models.{prop}::"
        f"model {data} scales on GPU utilisation"
    )
    # One result is one line: nothing the blueprint says starts a second workflow command.
    assert len(lines) == 3
