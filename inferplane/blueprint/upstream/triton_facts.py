"""What a Triton release accepts in a ``config.pbtxt``, and a check of a config against it.

The facts are every message and enum of ``protobuf/model_config.proto`` of
triton-inference-server/common at the release's branch, written per supported release into
``inferplane/facts/triton/<release>/model_config.txt`` by ``scripts/facts/triton_facts.py``
(provenance, proto blob sha, script version and format in the header).

`config_problems(text, release)` reads a config in protobuf text format
(`inferplane.blueprint.upstream.pbtxt`) as an ``inference.ModelConfig`` and names every field that
message has not, every enum value its enum has not, every value of the wrong kind (a
message where a scalar goes, a string for a number), every field written twice or as a list
that is not repeated, and a second field of one ``oneof``: what tritonserver's parser
(protobuf's ``TextFormat``) refuses when it loads the model. Map fields are read as protobuf
writes them, a repeated message of ``key`` and ``value``. An enum may be given by number
(proto3 enums are open).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources

from inferplane.blueprint import defaults, releases
from inferplane.blueprint.upstream import pbtxt

ROOT_MESSAGE = "ModelConfig"
_INTS = frozenset(
    {"int32", "int64", "uint32", "uint64", "sint32", "sint64",
     "fixed32", "fixed64", "sfixed32", "sfixed64"}
)  # fmt: skip
_FLOATS = frozenset(("double", "float"))
_BOOLS = frozenset(("true", "false", "True", "False", "t", "f", "1", "0"))
_INT = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|[0-9]+)")
_FLOAT_WORDS = frozenset(("inf", "-inf", "infinity", "-infinity", "nan", "-nan"))


@dataclass(frozen=True)
class FieldFact:
    name: str
    type: str
    """A scalar type, or a message or enum name of the facts (a map field: its value type)."""
    label: str = ""
    """``repeated``, ``map<KEY>`` or empty."""
    oneof: str = ""


@dataclass(frozen=True)
class ModelConfigFacts:
    release: str
    messages: Mapping[str, Mapping[str, FieldFact]]
    enums: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class Problem:
    line: int
    col: int
    path: str
    """Dotted field path from the root, list positions in brackets: ``input[1].dims``."""
    message: str

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        return f"{self.line}:{self.col}: {where}{self.message}"


def facts_path(release: str) -> str:
    """Where the facts of Triton `release` are, relative to the repository."""
    return f"inferplane/facts/triton/{release}/model_config.txt"


def has_facts(release: str) -> bool:
    return resources.files("inferplane").joinpath("facts", "triton", release).is_dir()


def read_facts(release: str, text: str) -> ModelConfigFacts:
    """The facts of `release` from the text of its facts file."""
    messages: dict[str, dict[str, FieldFact]] = {}
    enums: dict[str, list[str]] = {}
    current: dict[str, FieldFact] | list[str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        if line.startswith("\t") and isinstance(current, dict):
            name, type_, *rest = line[1:].split("\t")
            label = next((x for x in rest if not x.startswith("oneof ")), "")
            oneof = next((x.removeprefix("oneof ") for x in rest if x.startswith("oneof ")), "")
            current[name] = FieldFact(name, type_, label, oneof)
        elif line.startswith("\t") and isinstance(current, list):
            current.append(line[1:])
        elif line.startswith("message "):
            current = messages.setdefault(line.removeprefix("message "), {})
        elif line.startswith("enum "):
            current = enums.setdefault(line.removeprefix("enum "), [])
        else:
            raise ValueError(f"{facts_path(release)}:{number}: not a facts line: {line!r}")
    if ROOT_MESSAGE not in messages:
        raise ValueError(f"{facts_path(release)}: no message {ROOT_MESSAGE}")
    return ModelConfigFacts(release, messages, {k: tuple(v) for k, v in enums.items()})


@functools.cache
def model_config_facts(release: str | None = None) -> ModelConfigFacts:
    """The facts of Triton `release` (default: the pinned one)."""
    release = defaults.VERSIONS["triton"] if release is None else release
    if not has_facts(release):
        raise ValueError(
            f"no facts for Triton {release}: run scripts/facts/triton_facts.py for it "
            f"({facts_path(release)})"
        )
    path = resources.files("inferplane").joinpath("facts", "triton", release, "model_config.txt")
    return read_facts(release, path.read_text())


def has_field(release: str, message: str, field: str) -> bool:
    """Whether `message` (``ModelEnsembling``) of Triton `release` has `field`."""
    return field in model_config_facts(release).messages.get(message, {})


def releases_with_field(message: str, field: str) -> tuple[str, ...]:
    """The supported Triton releases whose `message` has `field`, oldest first: what a
    validation names when a blueprint asks for a field its release lacks."""
    return tuple(
        r.release
        for r in releases.engine_releases("triton")
        if has_field(r.release, message, field)
    )


def config_problems(text: str, release: str | None = None) -> list[Problem]:
    """What Triton `release` (default: the pin) would refuse in the config.pbtxt `text`."""
    facts = model_config_facts(release)
    try:
        entries = pbtxt.parse(text)
    except pbtxt.PbtxtError as err:
        return [Problem(err.line, err.col, "", err.message)]
    problems: list[Problem] = []
    _Walk(facts, problems).message(ROOT_MESSAGE, facts.messages[ROOT_MESSAGE], entries, "")
    return problems


def check_config(text: str, release: str | None = None) -> None:
    """Raises ValueError listing every problem of `config_problems`."""
    problems = config_problems(text, release)
    if problems:
        raise ValueError("\n".join(map(str, problems)))


class _Walk:
    def __init__(self, facts: ModelConfigFacts, problems: list[Problem]) -> None:
        self.facts = facts
        self.problems = problems

    def report(self, where: pbtxt.Value | pbtxt.Entry, path: str, message: str) -> None:
        self.problems.append(Problem(where.line, where.col, path, message))

    def message(
        self,
        type_name: str,
        fields: Mapping[str, FieldFact],
        entries: Iterable[pbtxt.Entry],
        path: str,
    ) -> None:
        seen: dict[str, int] = {}
        oneofs: dict[str, str] = {}
        for entry in entries:
            here = f"{path}.{entry.name}" if path else entry.name
            fact = fields.get(entry.name)
            if fact is None:
                self.report(
                    entry,
                    here,
                    f"{type_name} has no field {entry.name} in Triton {self.facts.release}",
                )
                continue
            many = fact.label == "repeated" or fact.label.startswith("map<")
            seen[entry.name] = seen.get(entry.name, 0) + len(entry.values)
            if not many and (entry.listed or seen[entry.name] > 1):
                self.report(
                    entry, here, f"{type_name}.{entry.name} is not repeated: give one value"
                )
            if fact.oneof:
                other = oneofs.setdefault(fact.oneof, entry.name)
                if other != entry.name:
                    self.report(
                        entry,
                        here,
                        f"{entry.name} and {other} are both of the oneof {type_name}.{fact.oneof}: "
                        "give one of them",
                    )
            for index, value in enumerate(entry.values):
                at = f"{here}[{index}]" if entry.listed else here
                self.value(fact, value, at)

    def value(self, fact: FieldFact, value: pbtxt.Value, path: str) -> None:
        if fact.label.startswith("map<"):
            key = fact.label.removeprefix("map<").removesuffix(">")
            entry_fields = {"key": FieldFact("key", key), "value": FieldFact("value", fact.type)}
            self.composite(f"map<{key}, {fact.type}>", entry_fields, value, path)
        elif fact.type in self.facts.messages:
            self.composite(fact.type, self.facts.messages[fact.type], value, path)
        elif value.kind == "message":
            self.report(value, path, f"is {_article(fact.type)} {fact.type}, not a message")
        elif fact.type in self.facts.enums:
            values = self.facts.enums[fact.type]
            if not (value.kind == "ident" and value.text in values) and not (
                value.kind == "number" and _INT.fullmatch(value.text)
            ):
                self.report(
                    value,
                    path,
                    f"{value.text} is not a value of {fact.type} in Triton {self.facts.release} "
                    f"(one of {', '.join(values)})",
                )
        else:
            self.scalar(fact.type, value, path)

    def composite(
        self, type_name: str, fields: Mapping[str, FieldFact], value: pbtxt.Value, path: str
    ) -> None:
        if value.kind != "message":
            self.report(value, path, f"is a message {type_name}: write {{ ... }}, not {value.text}")
            return
        self.message(type_name, fields, value.fields, path)

    def scalar(self, type_name: str, value: pbtxt.Value, path: str) -> None:
        if type_name in ("string", "bytes"):
            ok = value.kind == "string"
        elif type_name == "bool":
            ok = value.kind in ("ident", "number") and value.text in _BOOLS
        elif type_name in _INTS:
            ok = value.kind == "number" and bool(_INT.fullmatch(value.text))
            ok = ok and not (type_name.startswith(("uint", "fixed")) and value.text.startswith("-"))
        elif type_name in _FLOATS:
            ok = value.kind == "number" or value.text.lower() in _FLOAT_WORDS
        else:
            self.report(value, path, f"the facts name no type {type_name}")
            return
        if not ok:
            shown = f'"{value.text}"' if value.kind == "string" else value.text
            self.report(value, path, f"{shown} is not of type {type_name}")


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


@functools.cache
def metric_families(release: str | None = None) -> dict[str, str]:
    """name -> counter|gauge|histogram|summary of every family tritonserver of Triton
    `release` (default: the pinned one) registers, read by scripts/facts/triton_metrics.py from
    core ``src/metrics.cc``; raises ValueError for a release whose metrics were not read."""
    release = defaults.VERSIONS["triton"] if release is None else release
    path = resources.files("inferplane").joinpath("facts", "triton", release, "metrics.txt")
    if not path.is_file():
        raise ValueError(f"no metrics for Triton {release}: run scripts/facts/triton_metrics.py")
    return dict(
        line.split("\t", 1)
        for line in path.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    )


def metric_series(release: str | None = None) -> frozenset[str]:
    """The series names of `metric_families`: prometheus-cpp exposes a counter or gauge under
    its name (no ``_total``), a histogram as ``_bucket``/``_sum``/``_count`` and a summary as
    its name (the quantiles) with ``_sum``/``_count`` (jupp0r/prometheus-cpp
    ``core/src/text_serializer.cc``, ``SerializeHistogram``/``SerializeSummary``)."""
    suffixes = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("", "_sum", "_count")}
    return frozenset(
        f"{name}{suffix}"
        for name, kind in metric_families(release).items()
        for suffix in suffixes.get(kind, ("",))
    )
