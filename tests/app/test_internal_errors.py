"""An internal error is reported root cause first, then what it happened in."""

from __future__ import annotations

import pytest

from inferplane.app.exits import EXIT_INTERNAL, internal_error, root_cause

# The message the Pulumi SDK raises when an Output a resource takes failed to resolve
# (pulumi/runtime/resource.py): the outermost wrapper first, the cause last.
WRAPPED = (
    "While processing resource: 'cm', type: 'kubernetes:core/v1:ConfigMap'\n"
    "ValueError has risen: While processing input: 'metadata', type <class 'str'>, value {}\n"
    "KeyError has risen: 'gpu_units_per_node'"
)


def test_an_sdk_wrapped_error_names_its_innermost_exception_first() -> None:
    name, message, contexts = root_cause(ValueError(WRAPPED))
    assert (name, message) == ("KeyError", "'gpu_units_per_node'")
    assert contexts == [
        "While processing resource: 'cm', type: 'kubernetes:core/v1:ConfigMap'",
        "While processing input: 'metadata', type <class 'str'>, value {}",
    ]


def test_a_chained_exception_names_its_cause_first() -> None:
    try:
        try:
            {}["pool"]
        except KeyError as inner:
            raise RuntimeError("resolving environment prod") from inner
    except RuntimeError as exc:
        assert root_cause(exc) == (
            "KeyError",
            "'pool'",
            ["RuntimeError: resolving environment prod"],
        )


def test_the_report_leads_with_the_root_cause(capsys: pytest.CaptureFixture[str]) -> None:
    assert internal_error(ValueError(WRAPPED)) == EXIT_INTERNAL
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "inferplane: internal error: KeyError: 'gpu_units_per_node'"
    assert lines[1] == (
        "  while: While processing resource: 'cm', type: 'kubernetes:core/v1:ConfigMap'"
    )
    assert lines[-1].startswith("This is a bug in inferplane, not in your blueprint")


def test_a_plain_error_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    internal_error(RuntimeError("mock monitor exploded"))
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "inferplane: internal error: RuntimeError: mock monitor exploded"
    assert not err[1].startswith("  while:")
