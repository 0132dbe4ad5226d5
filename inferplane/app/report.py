"""How `inferplane check` reports: text for people, JSON for tools, SARIF for code scanning,
GitHub workflow annotations for pull requests.

Every format carries the same results: rule, level (mandatory|advisory), status
(violation|waived), environment, blueprint target, message, and the `file:line:col` of the
blueprint value that caused it (inside `environments.<env>.overrides` when an override set
it). Waived results are always shown, with the waiver that waived them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inferplane import __version__
from inferplane.blueprint.errors import Diagnostic, Location, format_path, printable

FORMATS = ("text", "json", "sarif", "github")
JSON_VERSION = 1
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/inferplane/inferplane"
INVALID_INPUT = "invalid-blueprint"
"""Rule id under which SARIF and GitHub annotations report a blueprint that cannot be checked."""
INVALID_INPUT_TITLE = "The blueprint is valid"
INVALID_INPUT_TEXT = (
    "A blueprint (or policy config) that fails the schema or semantic checks cannot be "
    "checked: none of its environments were judged. Fix the value the diagnostic points at."
)


def _printable_tree(value: Any) -> Any:
    """Every string in a JSON-able tree made `printable`: report text holds user input."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(str(k)): _printable_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_printable_tree(v) for v in value]
    return value


@dataclass
class CheckReport:
    """The results of checking some blueprints' environments."""

    results: list[Any]
    """`inferplane.policies.engine.Result`s, sorted by file, environment and line."""
    checked: list[tuple[str, str]] = field(default_factory=list)
    """(blueprint file, environment) pairs that were checked, in order."""
    invalid: list[Diagnostic] = field(default_factory=list)
    """Why some inputs could not be checked (invalid blueprints or policy config)."""
    not_checked: list[dict[str, str]] = field(default_factory=list)
    """What an offline check cannot judge, per environment (blueprint, environment, check,
    reason): the preflight of the capacity sources of pools that list them, which needs the
    cloud's answers (`inferplane.app.plan_sources.NOT_CHECKED`)."""

    @property
    def mandatory(self) -> int:
        return sum(1 for r in self.results if r.blocking)

    @property
    def advisory(self) -> int:
        return sum(1 for r in self.results if r.status == "violation" and r.level == "advisory")

    @property
    def waived(self) -> int:
        return sum(1 for r in self.results if r.status == "waived")

    @property
    def invalid_files(self) -> int:
        """Files (blueprints or the policy config) that could not be checked."""
        return len({d.location.file for d in self.invalid})

    @property
    def passed(self) -> bool:
        return self.mandatory == 0 and not self.invalid

    def summary(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "mandatory": self.mandatory,
            "advisory": self.advisory,
            "waived": self.waived,
            "invalid": self.invalid_files,
            "mandatory_waivers": self.mandatory_waivers(),
            "environments": [{"blueprint": f, "environment": e} for f, e in self.checked],
        }

    def mandatory_waivers(self) -> list[dict[str, Any]]:
        """The waivers of mandatory rules in use: every format's summary lists them."""
        from inferplane.policies.waivers import mandatory_waivers

        return mandatory_waivers(self.results)

    def mandatory_waiver_lines(self) -> list[str]:
        from inferplane.policies.waivers import describe_mandatory

        return [describe_mandatory(entry) for entry in self.mandatory_waivers()]


def render(report: CheckReport, fmt: str, *, color: bool = False) -> str:
    if fmt == "json":
        return json.dumps(to_json(report), indent=2) + "\n"
    if fmt == "sarif":
        return json.dumps(to_sarif(report), indent=2) + "\n"
    if fmt == "github":
        return to_github(report)
    return to_text(report, color=color)


# --- json ----------------------------------------------------------------------------------
def _loc(loc: Location | None) -> dict[str, Any] | None:
    return None if loc is None else {"file": loc.file, "line": loc.line, "column": loc.column}


def result_dict(r: Any) -> dict[str, Any]:
    return {
        "rule": r.rule,
        "level": r.level,
        "status": r.status,
        "environment": r.environment,
        "target": r.target,
        "field": format_path(r.field),
        "message": r.message,
        "location": _loc(r.location),
        "resource": None
        if r.resource is None
        else {"urn": r.resource.urn, "name": r.resource.name, "type": r.resource.type},
        "waiver": r.waiver.as_dict() if r.waiver is not None else None,
    }


def diagnostic_dict(d: Diagnostic) -> dict[str, Any]:
    return {
        "severity": d.severity,
        "location": _loc(d.location),
        "field": format_path(d.path),
        "message": d.message,
        "hint": d.hint,
    }


def to_json(report: CheckReport) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "version": JSON_VERSION,
        "diagnostics": [diagnostic_dict(d) for d in report.invalid],
        "results": [result_dict(r) for r in report.results],
        "summary": report.summary(),
    }
    if report.not_checked:  # only where a pool lists its capacity sources
        doc["not_checked"] = list(report.not_checked)
    return _printable_tree(doc)


# --- sarif ---------------------------------------------------------------------------------
def _uri(file: str) -> str:
    path = Path(file)
    if path.is_absolute():
        try:
            path = path.relative_to(Path.cwd())
        except ValueError:
            return path.as_uri()
    return path.as_posix()


def _invalid_descriptor() -> dict[str, Any]:
    return {
        "id": INVALID_INPUT,
        "name": "InvalidBlueprint",
        "shortDescription": {"text": INVALID_INPUT_TITLE},
        "fullDescription": {"text": INVALID_INPUT_TEXT},
        "help": {"text": INVALID_INPUT_TEXT, "markdown": INVALID_INPUT_TEXT},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["inferplane", "input"]},
    }


def _sarif_location(loc: Location) -> dict[str, Any]:
    return {
        "artifactLocation": {"uri": _uri(loc.file), "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": loc.line, "startColumn": loc.column},
    }


def _sarif_invalid(d: Diagnostic, index: int) -> dict[str, Any]:
    """An input that could not be checked, as a SARIF result at the value to blame."""
    text = f"{format_path(d.path)}: {d.message}" + (f"; {d.hint}" if d.hint else "")
    return {
        "ruleId": INVALID_INPUT,
        "ruleIndex": index,
        "level": "error",
        "message": {"text": text},
        "locations": [{"physicalLocation": _sarif_location(d.location)}],
        "properties": {"field": format_path(d.path)},
    }


def _rule_descriptors() -> list[dict[str, Any]]:
    from inferplane.policies.rules import all_rules
    from inferplane.policies.waivers import UNUSED_WAIVER, UNUSED_WAIVER_TEXT, UNUSED_WAIVER_TITLE

    out = []
    for rule in all_rules():
        config = "".join(
            f"\n- `{k.name}` (default `{k.default}`): {k.description}" for k in rule.config
        )
        markdown = (
            f"**{rule.title}** ({rule.level})\n\n{rule.rationale}\n\n**How to comply.** "
            f"{rule.remediation}" + (f"\n\n**Config**{config}" if config else "")
        )
        descriptor: dict[str, Any] = {
            "id": rule.id,
            "name": "".join(p.capitalize() for p in rule.id.split("-")),
            "shortDescription": {"text": rule.title},
            "fullDescription": {"text": rule.rationale},
            "help": {"text": f"{rule.rationale}\n\n{rule.remediation}", "markdown": markdown},
            "defaultConfiguration": {"level": "error" if rule.level == "mandatory" else "warning"},
            "properties": {"tags": ["inferplane", rule.level, *rule.tags]},
        }
        if rule.links:
            descriptor["helpUri"] = rule.links[0]
        out.append(descriptor)
    out.append(
        {
            "id": UNUSED_WAIVER,
            "name": "UnusedWaiver",
            "shortDescription": {"text": UNUSED_WAIVER_TITLE},
            "fullDescription": {"text": UNUSED_WAIVER_TEXT},
            "help": {"text": UNUSED_WAIVER_TEXT, "markdown": UNUSED_WAIVER_TEXT},
            "defaultConfiguration": {"level": "warning"},
            "properties": {"tags": ["inferplane", "advisory"]},
        }
    )
    out.append(_invalid_descriptor())
    return out


def _fingerprint(r: Any) -> str:
    key = "\x1f".join((r.rule, r.environment, r.target, format_path(r.field), r.message))
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def to_sarif(report: CheckReport) -> dict[str, Any]:
    rules = _rule_descriptors()
    index = {d["id"]: i for i, d in enumerate(rules)}
    results = [_printable_tree(_sarif_invalid(d, index[INVALID_INPUT])) for d in report.invalid]
    for r in report.results:
        loc = r.location or Location(report.checked[0][0] if report.checked else "", 1, 1)
        result: dict[str, Any] = {
            "ruleId": r.rule,
            "ruleIndex": index.get(r.rule, 0),
            "level": "error" if r.level == "mandatory" else "warning",
            "message": {"text": f"[{r.environment}] {r.target}: {r.message}"},
            "locations": [
                {
                    "physicalLocation": _sarif_location(loc),
                    "logicalLocations": [{"fullyQualifiedName": r.target, "kind": "member"}],
                }
            ],
            "partialFingerprints": {"inferplaneResult/v1": _fingerprint(r)},
            "properties": {
                "environment": r.environment,
                "target": r.target,
                "field": format_path(r.field),
                "status": r.status,
            },
        }
        if r.status == "waived" and r.waiver is not None:
            result["suppressions"] = [
                {
                    "kind": "external",
                    "status": "accepted",
                    "justification": f"{r.waiver.reason} (expires {r.waiver.expires})",
                }
            ]
        results.append(_printable_tree(result))
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "inferplane",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
                "results": results,
                "columnKind": "unicodeCodePoints",
                "properties": {"mandatoryWaivers": report.mandatory_waivers()},
            }
        ],
    }


# --- github annotations --------------------------------------------------------------------
# Workflow-command escaping as the runner decodes it: data escapes %, CR and LF; property
# values also `:` and `,` (actions/toolkit packages/core/src/command.ts, escapeData and
# escapeProperty). Other controls and bidi overrides are then made `printable`.
def _escape_data(text: str) -> str:
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _github_invalid(d: Diagnostic) -> str:
    props = [
        f"file={_escape_property(_uri(d.location.file))}",
        f"line={d.location.line}",
        f"col={d.location.column}",
        f"title={_escape_property(INVALID_INPUT)}",
    ]
    text = f"{format_path(d.path)}: {d.message}" + (f"; {d.hint}" if d.hint else "")
    return f"::error {','.join(props)}::{_escape_data(text)}"


def to_github(report: CheckReport) -> str:
    """Workflow commands that annotate the blueprint lines in a pull request."""
    lines = [_github_invalid(d) for d in report.invalid]
    for r in report.results:
        if r.status == "waived":
            command = "notice"
            suffix = f" (waived until {r.waiver.expires}: {r.waiver.reason})" if r.waiver else ""
        else:
            command = "error" if r.level == "mandatory" else "warning"
            suffix = ""
        props = []
        if r.location is not None:
            props += [
                f"file={_escape_property(_uri(r.location.file))}",
                f"line={r.location.line}",
                f"col={r.location.column}",
            ]
        props.append(f"title={_escape_property(f'{r.rule} [{r.environment}] {r.target}')}")
        lines.append(f"::{command} {','.join(props)}::{_escape_data(r.message + suffix)}")
    lines.append(f"inferplane check: {_summary_line(report)}")
    lines.extend(f"  {line}" for line in report.mandatory_waiver_lines())
    return "\n".join(lines) + "\n"


# --- text ----------------------------------------------------------------------------------
def _summary_line(report: CheckReport) -> str:
    envs = len(report.checked)
    files = len({f for f, _ in report.checked})
    verdict = "passed" if report.passed else "failed"
    bad = report.invalid_files
    invalid = f", {bad} invalid file{'s' if bad != 1 else ''}" if bad else ""
    return (
        f"{report.mandatory} mandatory violation{'s' if report.mandatory != 1 else ''}, "
        f"{report.advisory} advisory, {report.waived} waived in {envs} environment"
        f"{'s' if envs != 1 else ''} of {files} blueprint{'s' if files != 1 else ''}"
        f"{invalid}: {verdict}"
    )


class _Lines:
    """Source lines of blueprint files, read once, for quoting."""

    def __init__(self) -> None:
        self._cache: dict[str, list[str]] = {}

    def get(self, file: str, line: int) -> str | None:
        if file not in self._cache:
            try:
                self._cache[file] = Path(file).read_text(encoding="utf-8").splitlines()
            except OSError:
                self._cache[file] = []
        lines = self._cache[file]
        return lines[line - 1] if 0 < line <= len(lines) else None


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def to_text(report: CheckReport, *, color: bool = False) -> str:
    source = _Lines()
    by_env: dict[tuple[str, str], list[Any]] = {key: [] for key in report.checked}
    extra: list[Any] = []
    for r in report.results:
        file = r.location.file if r.location else ""
        key = (file, r.environment)
        by_env.get(key, extra).append(r)
    out: list[str] = []
    for (file, env), results in by_env.items():
        out.append(_paint(printable(f"{file} · environment {env}"), "1", color))
        out.extend(_block(r, source, color) for r in results)
        if not results:
            out.append("  no findings\n")
        for skipped in report.not_checked:
            if (skipped["blueprint"], skipped["environment"]) == (file, env):
                out.append(f"  not checked: {skipped['check']}: {skipped['reason']}\n")
    if extra:
        out.append(_paint("blueprint-wide", "1", color))
        out.extend(_block(r, source, color) for r in extra)
    out.append(f"inferplane check: {_summary_line(report)}")
    out.extend(f"  {line}" for line in report.mandatory_waiver_lines())
    return "\n".join(out) + "\n"


_LEVEL_COLORS: Mapping[str, str] = {"mandatory": "31", "advisory": "33", "waived": "36"}


def _block(r: Any, source: _Lines, color: bool) -> str:
    state = "waived" if r.status == "waived" else r.level
    head = printable(f"{r.location}: ") if r.location else ""
    tag = _paint(f"{state} {r.rule}", _LEVEL_COLORS[state], color)
    lines = [f"  {head}{tag}: {printable(f'{r.target}: {r.message}')}"]
    if r.location is not None:
        text = source.get(r.location.file, r.location.line)
        if text is not None:
            gutter = str(r.location.line)
            lines.append(f"    {gutter} | {printable(text)}")
            lines.append(f"    {' ' * len(gutter)} | {' ' * (r.location.column - 1)}^")
    if r.waiver is not None and r.rule != "unused-waiver":
        where = f" ({r.waiver.location})" if r.waiver.location else ""
        if r.waiver.refused and not r.waiver.expired:
            # The message says why it does not apply; "waived until" would say it does.
            lines.append(printable(f"    not waived by the waiver{where}"))
        else:
            what = "expired on" if r.waiver.expired else "waived until"
            lines.append(printable(f"    {what} {r.waiver.expires}{where}: {r.waiver.reason}"))
    return "\n".join(lines) + "\n"


def wants_color(stream: Any) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)()) and "NO_COLOR" not in os.environ
