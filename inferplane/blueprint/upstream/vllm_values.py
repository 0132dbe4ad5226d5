"""The values `vllm.extra_args` may give the allowed options whose value is free-form JSON
or a choice: the keys and choices of ``inferplane/facts/vllm/<release>/flag_values.txt``,
read by ``scripts/facts/vllm_serve_flags.py`` from the release's own config classes and Literals.

A JSON option (``--attention-config``) takes a JSON object of its config class's keys, or
one key at a time: vLLM's parser turns ``--x.key value`` (and ``--x.key=value``;
``--x.key+ a,b`` is the list ``["a", "b"]``) into ``{"key": value}``, reading the value as
JSON, else as text (v0.33.0 ``vllm/utils/argparse_utils.py``,
``FlexibleArgumentParser.parse_args``). Every string in it must be a name — letters,
digits, ``_`` and ``-`` — but in the keys the table calls text: no key of these classes
takes a path, URL or module, and a value shaped like one is refused rather than handed to
vLLM. A choice option (``--prefix-caching-hash-algo``) takes one of its choices; vLLM's own
choices that inferplane refuses say why.

A plain-dict option (``--limit-mm-per-prompt``, ``--custom-histogram-buckets``) takes the
keys the release reads of it (``*``: any name, less the refused keys), and each key's value
is of the table's type (``TYPES``), names when it gives none.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Final

from inferplane.blueprint.loading import loader

FILE: Final = "flag_values.txt"
MAX_DEPTH: Final = loader.MAX_DEPTH
"""The deepest JSON value an option may give: the same bound as the blueprint's own YAML."""
NAME: Final = re.compile(r"[A-Za-z0-9_-]*")
"""A string a name-only key takes: enum members, backends, dtypes (``FLASH_ATTN``,
``trtllm-gen``, ``fp8_e4m3``)."""
KEY: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
"""A key of a dict that takes any key: a keyword argument or template variable."""
ANY: Final = "*"
TYPES: Final = {
    "count": "a whole number of 0 or more",
    "count-or-options": "a whole number of 0 or more, or an object of such numbers "
    '(e.g. {"count": 2, "width": 512})',
    "numbers": "a non-empty JSON list of numbers",
    "scalar": "a number or true/false",
    "scalars": "numbers and true/false (in lists and objects too), no string",
}
"""What a key's value may be, by the type `flag_values.txt` names
(`scripts/facts/vllm_value_classes.py`, DICT_FLAGS, cites what vLLM does with each)."""


@dataclass(frozen=True)
class Rule:
    """What one option's value may be: a JSON object of `keys` (`text` keys take any
    string; `refused_keys`: key -> why), or one of `choices` (`refused`: choice -> why)."""

    keys: frozenset[str] = frozenset()
    text: frozenset[str] = frozenset()
    refused_keys: dict[str, str] = field(default_factory=dict)
    choices: frozenset[str] = frozenset()
    refused: dict[str, str] = field(default_factory=dict)
    values: str = "names"


@functools.cache
def rules(release: str) -> dict[str, Rule]:
    """Option -> its rule, for vLLM `release` (none when its table does not exist)."""
    path = resources.files("inferplane").joinpath("facts", "vllm", release, FILE)
    if not path.is_file():
        return {}
    parts: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        flag, kind, *rest = line.split("\t")
        got = parts.setdefault(flag, {"refused": {}, "refused_keys": {}})
        if kind == "keys":
            got["keys"] = frozenset(rest[0].split())
            if rest[1:2] == ["text"]:
                got["text"] = frozenset(rest[2].split())
        elif kind == "values":
            got["values"] = rest[0]
        elif kind == "source":
            continue  # where the keys were read from (the table's citation)
        elif kind == "choices":
            got["choices"] = frozenset(rest[0].split())
        elif kind == "refused-key":
            got["refused_keys"][rest[0]] = rest[1]
        else:
            got["refused"][rest[0]] = rest[1]
    return {flag: Rule(**spec) for flag, spec in parts.items()}


def _strings(value: Any) -> Iterator[str]:
    """Every string of a JSON value, object keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from _strings(v)


def json_depth(text: str) -> int:
    """How deeply the arrays and objects of JSON `text` nest (brackets inside strings do not
    count), read without decoding: Python's decoder and every walk over its result recurse
    once per level, so a value nested thousands deep must be refused before either runs."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _dotted_value(text: str, listed: bool) -> Any:
    """The value vLLM's parser makes of ``--x.key <text>`` (``+``: a comma list)."""
    if listed:
        return text.split(",")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _key_problem(flag: str, key: str, rule: Rule, where: str) -> tuple[str, str] | None:
    if key in rule.refused_keys:
        return f"`{flag}` key `{key}` is refused: {rule.refused_keys[key]}", "remove it"
    if ANY in rule.keys:
        if KEY.fullmatch(key):
            return None
        return f"`{flag}` key {key!r} is no name", "give a key of letters, digits and `_`"
    if key not in rule.keys:
        return (
            f"`{key}` is not a key of `{flag}` inferplane passes",
            f"use a key {where} lists for `{flag}` (the keys vLLM {where.split('/')[3]} "
            "reads of it)",
        )
    return None


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _number(value: Any) -> bool:
    """A JSON number; NaN and the infinities (which Python's JSON reader accepts) are not."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _scalars(value: Any) -> bool:
    if isinstance(value, list):
        return all(_scalars(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _scalars(v) for k, v in value.items())
    return isinstance(value, bool) or _number(value)


CHECKS: Final[dict[str, Callable[[Any], bool]]] = {
    "count": _count,
    "count-or-options": lambda v: (
        _count(v) or (isinstance(v, dict) and bool(v) and all(_count(x) for x in v.values()))
    ),
    "numbers": lambda v: isinstance(v, list) and bool(v) and all(_number(x) for x in v),
    "scalar": lambda v: _number(v) or isinstance(v, bool),
    "scalars": _scalars,
}


def _string_problem(flag: str, key: str, value: Any, rule: Rule) -> tuple[str, str] | None:
    if rule.values in CHECKS:
        if CHECKS[rule.values](value):
            return None
        return (
            f"`{flag}` key `{key}` is given {json.dumps(value)}: it takes {TYPES[rule.values]}",
            f"write {TYPES[rule.values]}, as vLLM reads this key",
        )
    if key in rule.text:
        return None
    bad = next((s for s in _strings(value) if not NAME.fullmatch(s)), None)
    if bad is None:
        return None
    return (
        f"`{flag}` key `{key}` is given {bad!r}: this key takes names and numbers, and a path, "
        "URL or module is refused",
        "give a name (letters, digits, `_`, `-`), as vLLM's choices for the key are",
    )


def _dotted(arg: str) -> tuple[str, list[str], bool] | None:
    """(key, inner keys, whether a ``+`` list) of ``--x.key.inner+[=value]``; None for
    ``--x``."""
    head = arg.split("=", 1)[0]
    if "." not in head:
        return None
    key, *inner = (k.removesuffix("+") for k in head.split(".")[1:])
    return key, inner, head.endswith("+")


def key_problem(arg: str, flag: str, release: str) -> tuple[str, str] | None:
    """(what is wrong, how to fix) when `arg` sets one key of JSON option `flag`
    (``--x.key``) that it may not, else None."""
    rule = rules(release).get(flag)
    dotted = _dotted(arg)
    if rule is None or dotted is None or not rule.keys:
        return None
    return _key_problem(flag, dotted[0], rule, f"inferplane/facts/vllm/{release}/{FILE}")


def value_problem(arg: str, flag: str, value: str | None, release: str) -> tuple[str, str] | None:
    """(what is wrong, how to fix) when `value` (None: none given) is not one `flag` (the
    long option `arg` names, as `vllm_owned.flag_name` returns it) may take, else None; the
    key of ``--x.key`` is `key_problem`'s."""
    rule = rules(release).get(flag)
    if rule is None:
        return None
    if value is None:
        return f"`{flag}` needs a value", f"give it one, e.g. {flag}={_example(rule)}"
    # ``--x.a.b.c value`` nests the value one object per dotted key: they count too.
    dotted_keys = arg.split("=", 1)[0].count(".")
    if dotted_keys + json_depth(value) > MAX_DEPTH:
        return (
            f"the value of `{flag}` nests deeper than {MAX_DEPTH} levels",
            "vLLM's options are a few levels deep: give the keys the option takes",
        )
    if rule.choices or rule.refused:
        choices = ("one of " if len(rule.choices) > 1 else "") + ", ".join(sorted(rule.choices))
        if _dotted(arg) is not None:
            # vLLM would pass {"key": value}, which no choice is.
            return f"`{flag}` takes one value, not keys", (
                f"write the value alone, e.g. {flag}={_example(rule)}"
            )
        if value in rule.refused:
            return f"`{flag}` {value} is refused: {rule.refused[value]}", f"use {choices}"
        if value not in rule.choices:
            return f"{value!r} is not a choice of `{flag}` of vLLM {release}", f"use {choices}"
        return None
    dotted = _dotted(arg)
    if dotted is not None:
        # ``--x.a.b value`` is {"a": {"b": value}}: the inner keys are strings of the value.
        key, inner, listed = dotted
        nested = _dotted_value(value, listed)
        for k in reversed(inner):
            nested = {k: nested}
        return _string_problem(flag, key, nested, rule)
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        return f"`{flag}` takes a JSON object", f"write it as {flag}={_example(rule)}"
    where = f"inferplane/facts/vllm/{release}/{FILE}"
    found = (
        _key_problem(flag, k, rule, where) or _string_problem(flag, k, v, rule)
        for k, v in parsed.items()
    )
    return next((p for p in found if p is not None), None)


def _example(rule: Rule) -> str:
    if rule.choices:
        return sorted(rule.choices)[0]
    if ANY in rule.keys or rule.values != "names":
        return '{"<key>": <value>}, with a key the table lists'
    return '{"<key>": <value>}, with a key of its config class'
