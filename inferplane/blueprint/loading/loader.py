"""The strict blueprint loader: YAML text -> plain data + a source location for every value.

Blueprints are read with a deliberately small subset of YAML, so that what the user sees in
the editor is exactly what the toolkit reads:

- one document whose top level is a mapping; string keys only, each key once per mapping;
- no anchors, aliases, merge keys, tags or directives;
- plain scalars resolved with the YAML 1.2 core schema, and refused where YAML 1.1 tools
  read them differently (``yes``, ``012``, ``22:22``, ``0b101``, ``1_000``);
- finite numbers and 64-bit integers only; at most 32 levels of nesting;
- UTF-8 text of at most 1 MiB, without control characters, bidirectional controls, or tabs
  in indentation; every key and value, once parsed (escapes of double quotes included), a
  single line without those characters, tabs or lone surrogates.

The tree is built from PyYAML's pure-Python event parser with an explicit stack: PyYAML's
composer and constructors would accept all of the above, and its C parser crashes on deep
nesting. Every problem becomes a located `Diagnostic`; nothing else escapes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, Protocol

import yaml

from inferplane.blueprint.errors import BlueprintError, Diagnostic, Location, YamlPath
from inferplane.blueprint.loading.raw_text import (
    FORBIDDEN_PARSED,
    MAX_BYTES,
    MAX_DIAGNOSTICS,
    check_characters,
    decode,
    describe,
    file_error,
    too_large,
)
from inferplane.blueprint.loading.yaml_scalars import NULL, ScalarProblem, resolve_plain, show
from inferplane.blueprint.source import Document, SourceMap


class _HasPosition(Protocol):
    line: int
    column: int


_Mark = _HasPosition | None
"""Where an event starts (0-based); PyYAML types event marks as optional."""

MAX_DEPTH = 32
"""Deepest accepted nesting of mappings and lists; the top-level mapping is level 1."""

MAX_NODES = 50_000
"""Most keys, values and list items a blueprint may hold. A 128-model blueprint (the
schema's cap) has about 4,000; the cap keeps the pure-Python parser from spending tens of
seconds on a dense 1 MiB file before saying anything."""

_BOM = "\ufeff"
_NO_REUSE = (
    "blueprints do not use anchors, aliases or merge keys: write the values out in full "
    "(per-environment differences go in environments.<env>.overrides)"
)
_START_HINT = "a blueprint is a YAML mapping that starts with 'apiVersion: inferplane/v1'"
_NO_DIRECTIVE = "remove it: blueprints are read as YAML 1.2 and need no directives"

_SYNTAX_HINTS = (  # (part of PyYAML's problem text, what to do)
    (
        "mapping values are not allowed",
        "quote the value if it contains ': ', or check the indentation of this line",
    ),
    (
        "could not find expected ':'",
        "write each entry as 'key: value'; check indentation and quotes",
    ),
    ("unexpected end of stream", "close the quote or bracket that is still open"),
    ("'\\t'", "replace the tab with spaces"),
    ("cannot start any token", "quote the value: this character cannot start a plain value"),
    ("expected '-'", "check the indentation: the items of one list start in the same column"),
    ("expected key", "check the indentation: the keys of one mapping start in the same column"),
    (
        "expected <block end>",
        "check the indentation: the entries of one mapping or list start in the same column",
    ),
    (
        "expected ',' or",
        "check the brackets and commas; quote values that contain ',', '[', ']', '{' or '}'",
    ),
    ("unknown escape", "in double quotes write a backslash as '\\\\', or use single quotes"),
)


def load(path: str | Path, *, display_name: str | None = None) -> Document:
    """Load the blueprint file at `path`; locations name it `display_name` (default: `path`).

    Raises `BlueprintError` for every problem, including a file that cannot be read."""
    file = str(path) if display_name is None else display_name
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):  # a directory, FIFO or device could block or not end
            what = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
            raise file_error(
                file, 1, 1, f"cannot read the file: it is {what}", "name a blueprint YAML file"
            )
        if info.st_size > MAX_BYTES:
            raise too_large(file, info.st_size)
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)  # the file may have grown since stat()
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte or lone surrogate in `path`
        reason = getattr(exc, "strerror", None) or exc
        raise file_error(
            file, 1, 1, f"cannot read the file: {reason}", "check the path and its permissions"
        ) from None
    return load_text(data, file)


def load_text(text: str | bytes, file: str) -> Document:
    """Load blueprint text (UTF-8 bytes, or str); locations name it `file`."""
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            raise too_large(file, len(text))
        text = decode(text.removeprefix(_BOM.encode()), file)
    elif len(text) > MAX_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise too_large(file, len(text.encode("utf-8", "surrogatepass")))
    text = text.removeprefix(_BOM)
    check_characters(text, file)
    return _Builder(text, file).build()


class _Fatal(Exception):
    """Stops the build: what follows cannot be read reliably."""


class _Frame:
    """An open mapping or list; for a mapping, also the key whose value comes next."""

    __slots__ = ("awaiting_value", "container", "key", "keys", "path")

    def __init__(self, path: YamlPath, container: dict[str, Any] | list[Any]):
        self.path, self.container = path, container
        self.keys: dict[str, Location] = {}
        self.key: str | None = None  # None while awaiting a value: the key was unusable
        self.awaiting_value = False


class _Builder:
    """Builds the tree from parser events, iteratively, collecting diagnostics."""

    def __init__(self, text: str, file: str):
        self.text, self.file = text, file
        self.diagnostics: list[Diagnostic] = []
        self.values: dict[YamlPath, Location] = {}
        self.keys: dict[YamlPath, Location] = {}
        self.stack: list[_Frame] = []
        self.root: dict[str, Any] | None = None
        self.documents = 0
        self.skip = 0  # depth inside a subtree being dropped (an unusable key, or its value)
        self.nodes = 0

    def build(self) -> Document:
        loader = yaml.SafeLoader(self.text)
        try:
            while len(self.diagnostics) < MAX_DIAGNOSTICS and (event := self._next(loader)):
                self._event(event)
        except _Fatal:
            pass
        finally:
            loader.dispose()
        if not self.diagnostics and self.root is None:
            what = "empty" if not self.text.strip() else "only comments"
            self.diagnostics.append(
                Diagnostic(
                    Location(self.file, 1, 1),
                    (),
                    f"the file has no YAML content ({what})",
                    _START_HINT,
                )
            )
        if self.diagnostics or self.root is None:
            raise BlueprintError(self.diagnostics)
        return Document(self.root, SourceMap(self.file, self.values, self.keys))

    def _next(self, loader: yaml.SafeLoader) -> yaml.Event | None:
        """The next parser event; None at the end or after a syntax error (reported)."""
        try:
            return loader.get_event() if loader.check_event() else None
        except yaml.MarkedYAMLError as exc:
            problem = exc.problem or "the text cannot be read as YAML"
            hint = next(
                (h for part, h in _SYNTAX_HINTS if part in problem),
                "check the indentation and the quotes around here",
            )
            if exc.context and exc.context_mark:
                problem += f" ({exc.context} started at line {exc.context_mark.line + 1})"
            mark = exc.problem_mark or exc.context_mark or loader.get_mark()
            self._report(mark, self._current_path(), f"invalid YAML: {problem}", hint)
        except yaml.YAMLError as exc:
            self._report(
                loader.get_mark(),
                self._current_path(),
                f"invalid YAML: {show(str(exc))}",
                "check the syntax here",
            )
        except ValueError:  # PyYAML's int() of a '%YAML 1.<thousands of digits>' directive
            self._report(loader.get_mark(), (), "invalid YAML directive", _NO_DIRECTIVE)
        return None

    def _loc(self, mark: _Mark) -> Location:
        if mark is None:  # the pure-Python parser always sets marks; stay total anyway
            return Location(self.file, 1, 1)
        return Location(self.file, mark.line + 1, mark.column + 1)

    def _report(self, mark: _Mark, path: YamlPath, message: str, hint: str) -> None:
        self.diagnostics.append(Diagnostic(self._loc(mark), path, message, hint))

    def _fatal(self, mark: _Mark, path: YamlPath, message: str, hint: str) -> _Fatal:
        self._report(mark, path, message, hint)
        return _Fatal()

    def _current_path(self) -> YamlPath:
        if not self.stack:
            return ()
        frame = self.stack[-1]
        if frame.awaiting_value and frame.key is not None:
            return (*frame.path, frame.key)
        return frame.path

    def _event(self, event: yaml.Event) -> None:
        if isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise self._fatal(
                    event.start_mark,
                    (),
                    "a second YAML document starts here",
                    "a blueprint is one document: remove this '---' and what "
                    "follows it, or move that to a file of its own",
                )
            if event.version or event.tags:
                directive = "%YAML {}.{}".format(*event.version) if event.version else "%TAG"
                self._report(
                    event.start_mark, (), f"directive '{directive}' is not allowed", _NO_DIRECTIVE
                )
        elif isinstance(event, yaml.CollectionEndEvent):
            if self.skip:
                self.skip -= 1
            else:
                self.stack.pop()
        elif isinstance(event, yaml.NodeEvent):
            self._node(event)

    def _node(self, event: yaml.NodeEvent) -> None:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise self._fatal(
                event.start_mark,
                self._current_path(),
                f"the blueprint holds more than {MAX_NODES} values",
                "split it into several blueprints (one per application)",
            )
        if self.skip:
            if isinstance(event, yaml.CollectionStartEvent):
                self._skip(event.start_mark)
            return
        if not self.stack:
            self._root(event)
            return
        frame = self.stack[-1]
        container = frame.container
        if isinstance(container, list):
            container.append(self._value(event, (*frame.path, len(container))))
        elif not frame.awaiting_value:
            self._key(frame, event)
        else:
            frame.awaiting_value = False
            if frame.key is not None:
                container[frame.key] = self._value(event, (*frame.path, frame.key))
            elif isinstance(event, yaml.CollectionStartEvent):
                self._skip(event.start_mark)  # the value of an unusable key

    def _skip(self, mark: _Mark) -> None:
        self.skip += 1
        self._check_depth(len(self.stack) + self.skip, mark, self._current_path())

    def _check_depth(self, depth: int, mark: _Mark, path: YamlPath) -> None:
        if depth > MAX_DEPTH:
            raise self._fatal(
                mark,
                path,
                f"nesting is deeper than {MAX_DEPTH} levels",
                "a blueprint needs only a few levels: check the indentation or the brackets here",
            )

    def _check_node(self, event: yaml.NodeEvent, path: YamlPath) -> None:
        if isinstance(event, yaml.AliasEvent):
            self._report(
                event.start_mark, path, f"alias '*{event.anchor}' is not allowed", _NO_REUSE
            )
            return
        if event.anchor is not None:
            self._report(
                event.start_mark, path, f"anchor '&{event.anchor}' is not allowed", _NO_REUSE
            )
        tag = getattr(event, "tag", None)
        if tag is not None:
            if tag.startswith("tag:yaml.org,2002:"):
                tag = "!!" + tag.removeprefix("tag:yaml.org,2002:")
            elif not tag.startswith("!"):
                tag = f"!<{tag}>"
            self._report(
                event.start_mark,
                path,
                f"tag '{show(tag)}' is not allowed",
                "remove it: blueprint values are plain strings, numbers, booleans, "
                "lists and mappings (quote a value to make it a string)",
            )

    def _value(self, event: yaml.NodeEvent, path: YamlPath) -> Any:
        self.values[path] = self._loc(event.start_mark)
        self._check_node(event, path)
        if isinstance(event, yaml.ScalarEvent):
            self._check_string(event, path, "value")
            if event.style is not None or event.tag is not None:  # quoted, block or tagged
                return event.value
            try:
                return resolve_plain(event.value)
            except ScalarProblem as problem:
                self._report(event.start_mark, path, problem.message, problem.hint)
                return None
        if not isinstance(event, yaml.CollectionStartEvent):
            return None  # an alias, already reported
        self._check_depth(len(self.stack) + 1, event.start_mark, path)
        container: dict[str, Any] | list[Any] = (
            {} if isinstance(event, yaml.MappingStartEvent) else []
        )
        self.stack.append(_Frame(path, container))
        return container

    def _check_string(self, event: yaml.ScalarEvent, path: YamlPath, what: str) -> bool:
        """Report the first forbidden character of a parsed key or value; False if any."""
        match = FORBIDDEN_PARSED.search(event.value)
        if match is None:
            return True
        char = match.group()
        if char in "\n\r":
            message = f"line break in the {what} is not allowed"
            hint = f"write the {what} on one line"
        elif char == "\t":
            message, hint = f"tab in the {what} is not allowed", "write a space instead"
        else:
            message, hint = describe(char)
            message = message.replace(" is not", f" in the {what} is not", 1)
            hint += ' (escapes in double quotes, such as "\\x07", count too)'
        self._report(event.start_mark, path, message, hint)
        return False

    def _root(self, event: yaml.NodeEvent) -> None:
        if isinstance(event, yaml.MappingStartEvent):
            self.root = self._value(event, ())
            return
        what = "a single value"
        if isinstance(event, yaml.SequenceStartEvent):
            what = "a list"
        elif (
            isinstance(event, yaml.ScalarEvent)
            and event.style is None
            and event.tag is None
            and event.value in NULL
        ):
            what = "empty (null)"
        raise self._fatal(
            event.start_mark, (), f"the top level is {what}, not a mapping", _START_HINT
        )

    def _key(self, frame: _Frame, event: yaml.NodeEvent) -> None:
        frame.awaiting_value, frame.key = True, None
        mark = event.start_mark
        if isinstance(event, yaml.CollectionStartEvent):
            kind = "a mapping" if isinstance(event, yaml.MappingStartEvent) else "a list"
            self._report(
                mark,
                frame.path,
                f"mapping key is {kind}, not a string",
                "write keys as plain names: 'name: value'",
            )
            self._skip(mark)
            return
        self._check_node(event, frame.path)
        if not isinstance(event, yaml.ScalarEvent):
            return  # an alias, already reported
        key = event.value
        if not self._check_string(event, frame.path, "key"):
            return
        path = (*frame.path, key) if key else frame.path
        if event.style is None and event.tag is None:
            if key == "<<":
                self._report(mark, path, "merge key '<<' is not allowed", _NO_REUSE)
                return
            try:
                value = resolve_plain(key)
            except ScalarProblem as problem:
                message = problem.message.replace("ambiguous value", "ambiguous key", 1)
                self._report(mark, path, message, problem.hint)
                return
            if not isinstance(value, str):
                self._report(mark, path, *_non_string_key(key, value))
                return
        first = frame.keys.get(key)
        if first is not None:
            self._report(
                mark,
                path,
                f"duplicate key '{show(key)}' (first defined at line {first.line})",
                "remove one of the two, or merge them into one",
            )
            return
        frame.keys[key] = self.keys[(*frame.path, key)] = self._loc(mark)
        frame.key = key


def _non_string_key(raw: str, value: object) -> tuple[str, str]:
    if raw == "":
        return "mapping key is empty", "write a name before the ':'"
    kind = (
        "null"
        if value is None
        else "a boolean"
        if isinstance(value, bool)
        else "an integer"
        if isinstance(value, int)
        else "a number"
    )
    return f"mapping key '{show(raw)}' is {kind}, not a string", f'quote it ("{show(raw)}")'


__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_DIAGNOSTICS", "MAX_NODES", "load", "load_text"]
