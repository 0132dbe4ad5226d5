"""How the blueprint validator reads JSON Schema: as editors do, and as YAML's values need.

YAML gives Python ints, floats and bools, and Python's regular expressions differ from
ECMA-262 (JSON Schema's dialect, and editors') at ``$``; `BlueprintValidator` is Draft 2020-12
with both read the way an editor validating the file reads them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

from jsonschema import Draft202012Validator, TypeChecker, validators
from jsonschema.exceptions import ValidationError


# YAML gives Python ints, floats and bools; JSON Schema's integer must not accept 1.0 (the
# stock checker does) and no number may be a bool, or `replicas: true` would mean 1.
def _is_integer(_checker: TypeChecker, instance: object) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(_checker: TypeChecker, instance: object) -> bool:
    return isinstance(instance, int | float) and not isinstance(instance, bool)


@functools.cache
def js_regex(pattern: str) -> re.Pattern[str]:
    """`pattern` as ECMA-262 (JSON Schema's dialect, and editors') reads it: an unescaped
    ``$`` outside a character class matches only at the very end. Python's ``$`` also
    matches before a final line break, so ``^[a-z]+$`` would accept ``"ranker\\n"``."""
    out: list[str] = []
    in_class = escaped = False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "$" and not in_class:
            char = r"\Z"
        out.append(char)
    return re.compile("".join(out))


def _pattern(_validator: Any, pattern: str, instance: object, _schema: Any) -> Iterator[Any]:
    if isinstance(instance, str) and not js_regex(pattern).search(instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


BlueprintValidator = validators.extend(
    Draft202012Validator,
    validators={"pattern": _pattern},
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _is_integer, "number": _is_number}
    ),
)
