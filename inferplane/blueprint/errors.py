"""The one error type of the blueprint layer, and how a diagnostic is formatted.

Every problem a user can cause is a `Diagnostic`: where (`Location`), which YAML path,
what is wrong, and how to fix it. `BlueprintError` carries one or more of them; the CLI
formats them once, as ``FILE:LINE:COL: error: <yaml.path>: <what is wrong>; <how to fix>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

YamlPath = tuple[str | int, ...]

# C0 and C1 controls (tab and line breaks included: one diagnostic is one line), DEL, the
# Unicode bidirectional controls (they make text display differently from how it reads:
# CVE-2021-42574, https://trojansource.codes/), line/paragraph separators, and lone
# surrogates (which no UTF-8 stream can carry).
_UNPRINTABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every control, bidirectional control and lone surrogate written as a
    visible escape (``\\x1b``, ``\\u202e``): user-supplied text reaches terminals, JSON,
    SARIF viewers and GitHub annotations, and must not steer any of them."""
    return _UNPRINTABLE.sub(_escape_char, text)


@dataclass(frozen=True, order=True)
class Location:
    """A position in a blueprint file; line and column are 1-based."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


def counted(count: float, noun: str, plural: str | None = None) -> str:
    """``1 GPU``, ``2 GPUs``, ``1 environment``: a count with its noun in the right number."""
    return f"{count:g} {noun if count == 1 else (plural or noun + 's')}"


def format_path(path: YamlPath) -> str:
    """``("models", "chat", "replicas", "min")`` -> ``models.chat.replicas.min``;
    list indices render as ``[0]``; the empty path is ``<document>``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + part
    return out or "<document>"


@dataclass(frozen=True)
class Diagnostic:
    """One problem in a blueprint, in the user's terms."""

    location: Location
    path: YamlPath
    message: str
    hint: str = ""
    severity: str = "error"

    def format(self) -> str:
        """The one-line form; user-supplied text in it is `printable`."""
        text = f"{self.location}: {self.severity}: {format_path(self.path)}: {self.message}"
        if self.hint:
            text += f"; {self.hint}"
        return printable(text)

    def __str__(self) -> str:
        return self.format()


def format_diagnostics(diagnostics: Iterable[Diagnostic]) -> str:
    """Diagnostics one per line, as every command prints them."""
    return "\n".join(d.format() for d in diagnostics)


class BlueprintError(Exception):
    """A blueprint cannot be used. Carries every diagnostic found, sorted by location."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics: Sequence[Diagnostic] = sorted(
            diagnostics, key=lambda d: (d.location, format_path(d.path))
        )
        if not self.diagnostics:
            raise ValueError("BlueprintError needs at least one diagnostic")
        super().__init__(format_diagnostics(self.diagnostics))
