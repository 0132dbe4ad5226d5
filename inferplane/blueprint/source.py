"""Where every value of a loaded blueprint came from.

The loader records, for each YAML path, the location of the value and (for mapping
entries) of its key. Lookups fall back to the nearest ancestor, so a defaulted value
points at the mapping that would have held it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inferplane.blueprint.errors import Location, YamlPath


@dataclass(frozen=True)
class SourceMap:
    """Locations of the values (and keys) of one blueprint file, by YAML path."""

    file: str
    values: Mapping[YamlPath, Location] = field(default_factory=dict)
    keys: Mapping[YamlPath, Location] = field(default_factory=dict)

    def value(self, path: YamlPath) -> Location:
        """The location of the value at `path`, or of its nearest recorded ancestor."""
        for i in range(len(path), -1, -1):
            loc = self.values.get(path[:i])
            if loc is not None:
                return loc
        return Location(self.file, 1, 1)

    def key(self, path: YamlPath) -> Location:
        """The location of the key that holds `path`; the value's location if it has none."""
        loc = self.keys.get(path)
        return loc if loc is not None else self.value(path)

    def has(self, path: YamlPath) -> bool:
        return path in self.values

    def written(
        self, path: YamlPath, origins: Mapping[YamlPath, YamlPath] | None = None
    ) -> tuple[int, YamlPath]:
        """Where the value behind `path` is written: (how many leading parts of `path` that
        covers, its YAML path in the file). `origins` maps an environment's effective paths
        to the `environments.<env>.overrides` paths that set them; overrides win, and a
        defaulted value is written at its nearest written ancestor (the document at worst)."""
        for i in range(len(path), -1, -1):
            prefix = path[:i]
            origin = origins.get(prefix) if origins else None
            if origin is not None:
                return i, origin
            if self.has(prefix):
                return i, prefix
        return 0, ()

    def locate(
        self, path: YamlPath, origins: Mapping[YamlPath, YamlPath] | None = None
    ) -> Location:
        """The file:line:col of the value that set `path` (see `written`)."""
        return self.value(self.written(path, origins)[1])


@dataclass(frozen=True)
class Document:
    """A blueprint as loaded: plain data (dict/list/str/int/float/bool/None) and its sources."""

    data: dict[str, Any]
    source: SourceMap
