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


@dataclass(frozen=True)
class Document:
    """A blueprint as loaded: plain data (dict/list/str/int/float/bool/None) and its sources."""

    data: dict[str, Any]
    source: SourceMap
