"""Policy fixtures: the golden blueprint changed in one place, stored as data.

A fixture file (``fixtures/<rule-id>/<case>.yaml``)::

    base: golden.yaml
    description: why this case passes or fails
    set:                                  # YAML path -> new value (the one change)
      models.chat.replicas.min: 1
    expect:                               # results of the fixture's rule, exactly
      - {environment: staging, target: models.chat, line: 62}
    config:                               # optional: the platform's policy config
      warm-replicas: {min_warm_replicas_per_zone: 2}
    invokes: example                      # optional: recorded provider answers, a list
                                          # or `example` (the rule's example_invokes)

An empty `expect` makes it a passing fixture. `materialise` edits the golden text in place
(replacing a value on its own line, or inserting a new key under an existing mapping), so
every other line keeps its number and the expected line is the line a reader sees.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from inferplane.blueprint.loading.loader import load_text

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@dataclass(frozen=True)
class Fixture:
    rule: str
    name: str
    path: Path
    base: str
    description: str
    set: dict[str, Any]
    expect: list[dict[str, Any]]
    config: dict[str, Any] | None = None
    """The policy config the fixture is checked with (None: the defaults)."""
    invokes: Any = ()
    """Recorded provider answers the fixture is checked with (the capacity preflight's):
    a list, or ``example`` for its rule's `example_invokes`."""

    @property
    def passing(self) -> bool:
        return not self.expect

    @property
    def id(self) -> str:
        return f"{self.rule}/{self.name}"


def fixtures() -> list[Fixture]:
    out = []
    for path in sorted(FIXTURES.glob("*/*.yaml")):
        data = yaml.safe_load(path.read_text())
        out.append(
            Fixture(
                rule=path.parent.name,
                name=path.stem,
                path=path,
                base=data.get("base", "golden.yaml"),
                description=data.get("description", ""),
                set=dict(data.get("set") or {}),
                expect=list(data.get("expect") or []),
                config=data.get("config"),
                invokes=data.get("invokes") or (),
            )
        )
    return out


def _key(part: str) -> str | int:
    return int(part) if part.isdigit() else part


def _path(dotted: str) -> tuple[str | int, ...]:
    return tuple(_key(p) for p in dotted.split("."))


def _render(value: Any) -> str:
    return json.dumps(value)


def materialise(text: str, changes: dict[str, Any]) -> str:
    """`text` with each YAML path set to its value, every untouched line kept in place."""
    lines = text.splitlines()
    # Later lines first, so an insertion never moves a line still to be edited.
    edits = []
    for dotted, value in changes.items():
        source = load_text("\n".join(lines) + "\n", "golden.yaml").source
        path = _path(dotted)
        if source.has(path):
            loc = source.value(path)
            edits.append((loc.line, 0, path, value, loc.column))
        elif len(path) == 1:  # a new top-level section goes at the end
            edits.append((len(lines), 1, path, value, 1))
        else:
            parent = path[:-1]
            if not source.has(parent):
                raise ValueError(f"{dotted}: neither it nor its parent is in the base")
            children = [
                source.keys[p] for p in source.keys if len(p) == len(path) and p[:-1] == parent
            ]
            if not children:
                raise ValueError(f"{dotted}: the parent has no block-style children")
            first = min(children)
            edits.append((source.keys[parent].line, 1, path, value, first.column))
    for line_no, insert, path, value, column in sorted(edits, key=lambda e: -e[0]):
        if insert:
            lines.insert(line_no, " " * (column - 1) + f"{path[-1]}: {_render(value)}")
        else:
            old = lines[line_no - 1]
            comment = old.find(" #", column - 1)
            tail = old[comment:] if comment >= 0 else ""
            lines[line_no - 1] = old[: column - 1] + _render(value) + tail
    return "\n".join(lines) + "\n"


def write(fixture: Fixture, directory: Path) -> Path:
    """The fixture as a real blueprint file in `directory`."""
    text = (FIXTURES / fixture.base).read_text()
    out = directory / f"{fixture.rule}--{fixture.name}.yaml"
    out.write_text(materialise(text, fixture.set))
    return out


def write_config(fixture: Fixture, directory: Path) -> Path | None:
    """The fixture's policy config as a file in `directory` (None when it has none)."""
    if fixture.config is None:
        return None
    out = directory / f"{fixture.rule}--{fixture.name}.policy.yaml"
    out.write_text(yaml.safe_dump(fixture.config))
    return out


GOLDEN_PLACEMENTS = """\
deploy-placement:
  allowed_placements:
    golden/staging: [{cloud: aws, region: us-east-1}]
    golden/prod: [{cloud: gcp, project: golden-prod, region: us-central1, cluster: prod-gke}]
    golden-llm/prod: [{cloud: gcp, project: golden-llm-prod, region: us-central1}]
"""
"""A platform config placing the golden blueprints' environments: the default places no
aws or gcp environment (`deploy-placement`)."""


def placements_config(directory: Path) -> Path:
    """`GOLDEN_PLACEMENTS` as a file in `directory`."""
    out = directory / "golden-placements.policy.yaml"
    out.write_text(GOLDEN_PLACEMENTS)
    return out
