"""The words of schema errors: a value as the user wrote it, the closest allowed key or
value, and the usual fix for a value of the wrong type or a missing key.

Subschemas are read with their local ``$ref`` resolved in `root`, the whole schema.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from inferplane.blueprint.loading.schema_dialect import js_regex

TYPE_WORDS = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "true or false",
    "object": "a mapping",
    "array": "a list",
    "null": "nothing",
}


def json_type(value: Any) -> str:
    """The JSON Schema type of a YAML value (integers are also numbers)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "integer" if isinstance(value, int) else "number"
    names = {dict: "object", list: "array", str: "string", type(None): "null"}
    return names.get(type(value), "object")


def closest(word: str, candidates: Sequence[str]) -> str | None:
    """The candidate `word` most likely meant: camelCase and '-' spellings count as equal."""
    norm = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", word).lower().replace("-", "_")
    if norm in candidates:
        return norm
    found = difflib.get_close_matches(norm, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def show_value(value: Any) -> str:
    """A value as the user wrote it, quoted when it is a string; long ones shortened."""
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 72 else text[:68] + '…"'
    return show_plain(value)


_PLAIN = re.compile(r"^[A-Za-z_/][\w./@:+-]*$")
_NOT_PLAIN = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


def show_plain(value: Any) -> str:
    """A value in YAML flow style: `true`, `1.0`, `nvidia-l4`, `"1.33"`, `[1, 128]`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, str):
        plain = _PLAIN.match(value) and value.lower() not in _NOT_PLAIN
        return value if plain else json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(show_plain(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {show_plain(v)}" for k, v in value.items()) + "}"
    if isinstance(value, int | float):
        return repr(value)
    return str(value)


def deref(node: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    """A subschema with its local ``$ref`` target merged in (the subschema's own keys win)."""
    ref = node.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/$defs/"):
        return dict(node)
    target = deref(root["$defs"][ref.removeprefix("#/$defs/")], root)
    return {**target, **{k: v for k, v in node.items() if k != "$ref"}}


def add_hint(key: str, prop: Mapping[str, Any], root: Mapping[str, Any]) -> str:
    """How to add a missing key, with its allowed values or an example."""
    if "const" in prop:
        return f"add `{key}: {show_plain(prop['const'])}`"
    if "enum" in prop:
        return f"add `{key}:` with one of {', '.join(show_plain(v) for v in prop['enum'])}"
    if prop.get("examples"):
        return f"add `{key}:`, e.g. `{key}: {show_plain(prop['examples'][0])}`"
    if "propertyNames" in prop:
        title = deref(prop["propertyNames"], root).get("title", "entry")
        return f"add `{key}:` with at least one {title}"
    return f"add `{key}:`"


def type_hint(want: str, value: Any, node: Mapping[str, Any]) -> str:
    """The usual fix when YAML read a value as another type than intended."""
    if want in ("integer", "number"):
        if isinstance(value, bool):
            return "write a number; true and false are booleans"
        if isinstance(value, float):
            return (
                f"write it without a decimal point: {int(value)}"
                if value.is_integer()
                else "use a whole number"
            )
        if isinstance(value, str) and re.fullmatch(r"-?\d+(\.\d+)?", value.strip()):
            return f"remove the quotes: {value.strip()}"
        return "write a number"
    if want == "string" and isinstance(value, bool | int | float):
        # YAML has already turned 25.10 into 25.1; suggest the documented form instead.
        text, pattern = show_plain(value), node.get("pattern")
        if pattern and not js_regex(pattern).search(text) and node.get("examples"):
            return f'quote it so YAML keeps it as written, e.g. "{node["examples"][0]}"'
        return f'quote it so YAML reads it as text: "{text}"'
    if want == "boolean":
        return "write true or false, without quotes"
    if want == "array" and not isinstance(value, dict | list) and value is not None:
        return f"write a list: [{show_plain(value)}]"
    if want == "object":
        props = list(node.get("properties", {}))[:4]
        return (
            f"write a mapping with keys such as {', '.join(props)}"
            if props
            else "write a mapping of names to settings"
        )
    if value is None:
        return "give a value, or remove the key to use the default"
    return f"write {TYPE_WORDS.get(want, want)}"
