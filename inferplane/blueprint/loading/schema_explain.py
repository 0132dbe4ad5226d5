"""One jsonschema error in the blueprint author's words: `Explain` turns it into findings,
each a located `Diagnostic` saying what is wrong and how to fix it (values and fixes are
worded by `schema_words`); `schema.validate_document` chooses which findings to report.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from jsonschema.exceptions import ValidationError, best_match

from inferplane.blueprint import catalog
from inferplane.blueprint.errors import Diagnostic
from inferplane.blueprint.loading.schema_words import (
    TYPE_WORDS,
    add_hint,
    closest,
    deref,
    json_type,
    show_plain,
    show_value,
    type_hint,
)
from inferplane.blueprint.source import SourceMap

_SHA256: Final = re.compile(r"sha256:([0-9A-Fa-f]*)")


def cut_digest(error: ValidationError) -> tuple[str, str] | None:
    """(message, hint) for a value that fails a pattern asking for ``sha256:`` and 64 hex
    digits (an image digest, a pip ``--hash``) because its digest is cut short or too long:
    the usual slip of copying a digest as a screen abbreviates it."""
    value = error.instance
    if "sha256:" not in str(error.validator_value) or not isinstance(value, str):
        return None
    for match in _SHA256.finditer(value):
        digits = len(match.group(1))
        if digits == 64:
            continue
        if "--hash=sha256:" in value:
            fix = "copy the whole hash: `pip hash <file>` prints it"
        else:
            fix = (
                "copy the whole digest: `docker buildx imagetools inspect <image>` prints it, "
                "or pin by tag alone"
            )
        return f"a sha256 digest is 64 hex characters; this one has {digits}", fix
    return None


@dataclass(frozen=True)
class Finding:
    """One problem to report, and how it ranks against the others about the same value."""

    diag: Diagnostic
    single: bool  # a problem of the value itself: only the first one per value is reported
    is_type: bool = False
    forbids: bool = False


class Explain:
    """Turns one jsonschema error into findings worded for the blueprint's author."""

    def __init__(self, source: SourceMap, root: Mapping[str, Any]):
        self.source = source
        self.root = root
        """The whole schema, where subschemas' ``$ref`` point."""

    def run(self, error: ValidationError) -> Iterator[Finding]:
        node = error.schema if isinstance(error.schema, dict) else {}
        custom = node.get("x-errors", {}).get(error.validator)
        if error.validator in ("anyOf", "oneOf") and not custom and error.context:
            yield from self._alternatives(error)
            return
        self.error, self.node, self.path = error, node, tuple(error.absolute_path)
        self.sensitive = bool(node.get("x-sensitive"))
        if "propertyNames" in error.absolute_schema_path:
            yield self._name()
            return
        handler = getattr(self, f"_{error.validator}", None)
        if error.validator in ("additionalProperties", "required"):
            yield from handler()  # type: ignore[misc]
            return
        cut = cut_digest(error) if error.validator == "pattern" else None
        if cut is not None:
            message, hint = cut
        elif custom:
            message, hint = custom["message"], custom.get("hint", "")
            message = message.replace("{value}", self.show(error.instance))
        elif handler is not None:
            message, hint = handler()
        else:
            message, hint = error.message, ""
        # A refused key, or a mapping that lacks something, is pointed at by its key.
        forbids = error.validator == "not" and node.get("not") == {}
        keyed = forbids or error.validator in ("minProperties", "dependentRequired", "anyOf")
        loc = self.source.key(self.path) if keyed else self.source.value(self.path)
        yield Finding(
            Diagnostic(loc, self.path, message, hint),
            single=True,
            is_type=error.validator == "type",
            forbids=forbids,
        )

    def _alternatives(self, error: ValidationError) -> Iterator[Finding]:
        """A value that fits none of several shapes. When the shapes differ by type (a
        mapping or a list), the one of the value's type explains it; a value of none of
        those types gets a type error naming them all."""
        found = [deref(b, self.root).get("type") for b in error.validator_value]
        types = [t for t in found if isinstance(t, str)]
        if len(types) != len(found) or len(set(types)) != len(types):
            yield from self.run(best_match(error.context))
            return
        kind = json_type(error.instance)
        if kind in types:
            branch = types.index(kind)
            for sub in error.context:
                if sub.relative_schema_path and sub.relative_schema_path[0] == branch:
                    yield from self.run(sub)
            return
        self.error, self.node, self.path = error, {}, tuple(error.absolute_path)
        self.sensitive = False
        message = (
            f"expected {' or '.join(TYPE_WORDS.get(t, t) for t in types)}, "
            f"got {self.describe(error.instance)}"
        )
        hint = type_hint(types[0], error.instance, deref(error.validator_value[0], self.root))
        yield Finding(
            Diagnostic(self.source.value(self.path), self.path, message, hint),
            single=True,
            is_type=True,
        )

    # --- wording helpers -----------------------------------------------------------------
    def show(self, value: Any) -> str:
        return "(not shown: it may be a secret)" if self.sensitive else show_value(value)

    def describe(self, value: Any) -> str:
        if self.sensitive:
            return "a value (not shown: it may be a secret)"
        kind = {bool: "a boolean", int: "an integer", float: "a float", str: "a string"}
        if isinstance(value, dict):
            return "a mapping"
        if isinstance(value, list):
            return "a list"
        if value is None:
            return "nothing (an empty value)"
        return f"{show_value(value)} ({kind.get(type(value), type(value).__name__)})"

    def _range_hint(self) -> str:
        hi = self.node.get("maximum")
        if "exclusiveMinimum" in self.node:
            return f"use a value greater than {self.node['exclusiveMinimum']} and at most {hi}"
        return f"use a value from {self.node.get('minimum')} to {hi}"

    # --- key-level problems: one finding per key -----------------------------------------
    def _additionalProperties(self) -> Iterator[Finding]:
        allowed = list(self.node.get("properties", {}))
        for key in self.error.instance:
            if key in allowed:
                continue
            match = closest(str(key), allowed)
            hint = f"did you mean `{match}`?" if match else f"allowed here: {', '.join(allowed)}"
            path = (*self.path, key)
            yield Finding(
                Diagnostic(self.source.key(path), path, f"unknown key `{key}`", hint), single=False
            )

    def _required(self) -> Iterator[Finding]:
        custom = self.node.get("x-errors", {}).get("required")
        for key in self.error.validator_value:
            if key in self.error.instance:
                continue
            if custom:
                message, hint = custom["message"], custom.get("hint", "")
            else:
                prop = deref(self.node.get("properties", {}).get(key, {}), self.root)
                message, hint = f"missing required key `{key}`", add_hint(key, prop, self.root)
            yield Finding(
                Diagnostic(self.source.key(self.path), self.path, message, hint), single=False
            )

    def _name(self) -> Finding:
        name, title = self.error.instance, self.node.get("title", "name")
        path = (*self.path, name)
        hint = self.node.get("x-format-hint", "")
        if self.error.validator == "maxLength":
            message = (
                f"{title} {show_value(name)} is {len(name)} characters long, more than "
                f"{self.error.validator_value}"
            )
        else:
            message = f"invalid {title} {show_value(name)}"
        return Finding(Diagnostic(self.source.key(path), path, message, hint), single=False)

    # --- value-level problems: (message, hint) -------------------------------------------
    def _type(self) -> tuple[str, str]:
        want = self.error.validator_value
        wants = [want] if isinstance(want, str) else list(want)
        value = self.error.instance
        message = (
            f"expected {' or '.join(TYPE_WORDS.get(w, w) for w in wants)}, "
            f"got {self.describe(value)}"
        )
        return message, "" if self.sensitive else type_hint(wants[0], value, self.node)

    def _enum(self) -> tuple[str, str]:
        allowed = [show_plain(v) for v in self.error.validator_value]
        if self.path[-1:] == ("gpu",) and isinstance(self.error.instance, str):
            # GPUs are told apart by family and memory, not spelling: string distance
            # would offer nvidia-h200 for nvidia-h100.
            matches = catalog.suggest(self.error.instance)
            hint = (
                "did you mean " + " or ".join(f"`{m}`" for m in matches) + "?"
                if matches
                else "choose one of these values"
            )
            return f"{self.show(self.error.instance)} is not one of {', '.join(allowed)}", hint
        match = closest(str(self.error.instance), allowed)
        hint = f"did you mean `{match}`?" if match else "choose one of these values"
        return f"{self.show(self.error.instance)} is not one of {', '.join(allowed)}", hint

    def _const(self) -> tuple[str, str]:
        want = show_plain(self.error.validator_value)
        key = self.path[-1] if self.path else "value"
        return (
            f"expected `{want}`, got {self.show(self.error.instance)}",
            f"write `{key}: {want}`",
        )

    def _pattern(self) -> tuple[str, str]:
        hint = self.node.get("x-format-hint", f"match the pattern {self.error.validator_value}")
        return f"invalid value {self.show(self.error.instance)}", hint

    def _minLength(self) -> tuple[str, str]:
        hint = self.node.get("x-format-hint", "give a value, or remove the key")
        return "must not be empty", hint

    def _maxLength(self) -> tuple[str, str]:
        limit, value = self.error.validator_value, self.error.instance
        return (
            f"{self.show(value)} is {len(value)} characters long; at most {limit} are allowed",
            self.node.get("x-format-hint", f"shorten it to {limit} characters"),
        )

    def _minimum(self) -> tuple[str, str]:
        words = {"minimum": "is less than the minimum", "maximum": "is more than the maximum"}
        relation = words.get(str(self.error.validator), "is not greater than")
        bound = self.error.validator_value
        return f"{self.show(self.error.instance)} {relation} {bound}", self._range_hint()

    _exclusiveMinimum = _maximum = _minimum

    def _minItems(self) -> tuple[str, str]:
        n = self.error.validator_value
        message = (
            "the list is empty" if not self.error.instance else f"the list needs at least {n} items"
        )
        return message, f"give at least {n} item{'s' if n > 1 else ''}"

    def _maxItems(self) -> tuple[str, str]:
        n = len(self.error.instance)
        return (
            f"the list has {n} items; at most {self.error.validator_value} are allowed",
            "remove some of them",
        )

    def _uniqueItems(self) -> tuple[str, str]:
        items = self.error.instance
        dup = next(v for i, v in enumerate(items) if v in items[:i])
        return f"{self.show(dup)} is listed more than once", "list each value once"

    def _minProperties(self) -> tuple[str, str]:
        names = deref(self.node.get("propertyNames", {}), self.root)
        return "must not be empty", f"add at least one {names.get('title', 'entry')}"

    def _maxProperties(self) -> tuple[str, str]:
        n = len(self.error.instance)
        return (
            f"has {n} entries; at most {self.error.validator_value} are allowed",
            "remove some of them",
        )

    def _dependentRequired(self) -> tuple[str, str]:
        present = self.error.instance
        for key, needed in self.error.validator_value.items():
            missing = [n for n in needed if key in present and n not in present]
            if missing:
                return f"`{key}` needs `{missing[0]}`", f"add `{missing[0]}:`"
        return self.error.message, ""

    def _not(self) -> tuple[str, str]:
        return "this value is not allowed here", "remove it"
