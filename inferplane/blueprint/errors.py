"""The one error type of the blueprint layer, and how a diagnostic is formatted.

Every problem a user can cause is a `Diagnostic`: where (`Location`), which YAML path,
what is wrong, and how to fix it. `BlueprintError` carries one or more of them; the CLI
formats them once, as ``FILE:LINE:COL: error: <yaml.path>: <what is wrong>; <how to fix>``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

YamlPath = tuple[str | int, ...]


@dataclass(frozen=True, order=True)
class Location:
    """A position in a blueprint file; line and column are 1-based."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


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
        text = f"{self.location}: {self.severity}: {format_path(self.path)}: {self.message}"
        if self.hint:
            text += f"; {self.hint}"
        return text

    def __str__(self) -> str:
        return self.format()


class BlueprintError(Exception):
    """A blueprint cannot be used. Carries every diagnostic found, sorted by location."""

    def __init__(self, diagnostics: Iterable[Diagnostic]):
        self.diagnostics: Sequence[Diagnostic] = sorted(
            diagnostics, key=lambda d: (d.location, format_path(d.path))
        )
        if not self.diagnostics:
            raise ValueError("BlueprintError needs at least one diagnostic")
        super().__init__("\n".join(d.format() for d in self.diagnostics))
