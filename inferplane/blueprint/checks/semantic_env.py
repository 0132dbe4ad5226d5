"""The view every semantic check works on: one environment's merged blueprint.

Locations follow overrides, so a problem an override introduces points into
`environments.<env>.overrides`. The check modules (`semantic`, `semantic_*`) all take it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inferplane.blueprint.errors import Diagnostic, Location, YamlPath
from inferplane.blueprint.loading.overrides import merged
from inferplane.blueprint.source import Document


class EnvView:
    """One environment's merged view, with locations that follow overrides."""

    def __init__(self, doc: Document, name: str):
        self.doc = doc
        self.name = name
        self.data, self.origins = merged(doc, name)
        self.spec: Mapping[str, Any] = self.data["environments"][name]
        self.out: list[Diagnostic] = []

    def where(self, path: YamlPath) -> Location:
        return self.doc.source.locate(path, self.origins)

    def shown_path(self, path: YamlPath) -> YamlPath:
        """The path to show: the override's path when an override set the value."""
        covered, written = self.doc.source.written(path, self.origins)
        return written + path[covered:] if self.origins.get(path[:covered]) else path

    def error(self, path: YamlPath, message: str, hint: str) -> None:
        self.out.append(Diagnostic(self.where(path), self.shown_path(path), message, hint))
