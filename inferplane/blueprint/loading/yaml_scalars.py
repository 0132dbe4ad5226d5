"""Plain YAML scalars under the YAML 1.2 core schema, refusing what YAML 1.1 reads differently.

A blueprint is read as YAML 1.2, but editors, linters and older tools often use YAML 1.1, where
``yes``, ``off``, ``012``, ``22:22``, ``0b101`` and ``1_000`` are booleans and numbers. Those
plain scalars are refused rather than silently read one way, so a value never changes meaning
between tools. Quoted and block scalars are always strings and never come here.
"""

from __future__ import annotations

import math
import re
from typing import Any

_INT64 = (-(2**63), 2**63 - 1)

# The YAML 1.2 core schema.
NULL = frozenset({"", "~", "null", "Null", "NULL"})
"""The plain scalars that are null."""
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_SPECIAL_START = frozenset("0123456789+-.~nNtTfFyYoO")  # first characters of non-strings
_DEC = re.compile(r"[-+]?[0-9]+")
_OCT = re.compile(r"0o[0-7]+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_NON_FINITE = re.compile(r"[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")
# Plain scalars that YAML 1.1 (the type repository; PyYAML's resolver) reads differently.
_BOOL11 = frozenset(
    {
        "y",
        "Y",
        "yes",
        "Yes",
        "YES",
        "n",
        "N",
        "no",
        "No",
        "NO",
        "on",
        "On",
        "ON",
        "off",
        "Off",
        "OFF",
    }
)
_LEADING_ZERO = re.compile(r"[-+]?0[0-9]+")
_OCT11 = re.compile(r"[-+]?0[0-7]+")
_NUMBER11 = re.compile(  # binary, octal, decimal, hex, base 60, float; `_` allowed
    r"[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
    r"|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*"
    r"|[-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?|\.[0-9][0-9_]*([eE][-+][0-9]+)?"
)


class ScalarProblem(Exception):
    """A value that cannot be used: what is wrong (`message`) and what to do (`hint`)."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.message, self.hint = message, hint


def show(raw: str) -> str:
    """`raw`, shortened for a message."""
    return raw if len(raw) <= 40 else raw[:37] + "..."


def resolve_plain(raw: str) -> Any:
    """A plain scalar's value under the YAML 1.2 core schema.

    Raises `ScalarProblem` when it is unusable: ambiguous, not finite, or out of range."""
    if raw in NULL:
        return None
    if raw[0] not in _SPECIAL_START:
        return raw
    if raw in _BOOL:
        return _BOOL[raw]
    shown = show(raw)
    quote = f'quote it ("{shown}")'
    if raw in _BOOL11:
        raise ScalarProblem(
            f"ambiguous value '{raw}': YAML 1.1 reads it as a boolean, YAML 1.2 as a string",
            f"write true/false, or {quote}",
        )
    if _NON_FINITE.fullmatch(raw):
        raise ScalarProblem(
            f"value '{raw}' is not a finite number",
            f"write a finite number, or {quote} if it is text",
        )
    if _LEADING_ZERO.fullmatch(raw):
        decimal = _int64(raw, raw, quote)
        reading, fix = "as a string", f"write {decimal}"
        if _OCT11.fullmatch(raw):
            reading = f"as the octal number {int(raw, 8)}"
            if raw[0] not in "+-":  # the core schema's 0o form has no sign
                fix += f" (or 0o{raw[1:]} for an octal number)"
        raise ScalarProblem(
            f"ambiguous value '{shown}': YAML 1.1 reads it {reading}, "
            f"YAML 1.2 as the decimal number {decimal}",
            f"{fix}, or {quote}",
        )
    if _DEC.fullmatch(raw):
        return _int64(raw, raw, quote)
    if _OCT.fullmatch(raw):
        return _int64(raw[2:], raw, quote, 8)
    if _HEX.fullmatch(raw):
        return _int64(raw[2:], raw, quote, 16)
    if _FLOAT.fullmatch(raw):
        value = float(raw)
        if math.isinf(value):
            raise ScalarProblem(
                f"number '{shown}' is too large: it overflows to infinity",
                f"write a smaller number, or {quote} if it is text",
            )
        return value
    if _NUMBER11.fullmatch(raw):
        number, base60 = _yaml11_number(raw), ":" in raw
        reading = f"the {'base-60 ' if base60 else ''}number {number}" if number else "a number"
        fix = quote if base60 or not number else f"write {number}, or {quote}"
        raise ScalarProblem(
            f"ambiguous value '{shown}': YAML 1.1 reads it as {reading}, YAML 1.2 as a string", fix
        )
    return raw


def _int64(digits: str, raw: str, quote: str, base: int = 10) -> int:
    # Length first: int() refuses decimal strings of more than 4300 digits.
    if len(digits.lstrip("+-").lstrip("0")) <= {8: 22, 10: 19, 16: 16}[base]:
        value = int(digits, base)
        if _INT64[0] <= value <= _INT64[1]:
            return value
    raise ScalarProblem(
        f"integer '{show(raw)}' is out of range",
        f"use a value from {_INT64[0]} to {_INT64[1]}, or {quote} if it is text",
    )


def _yaml11_number(raw: str) -> str | None:
    """The number YAML 1.1 reads in `raw` (one of its number forms), as text for a message."""
    text = raw.replace("_", "")
    sign, text = (-1 if text.startswith("-") else 1), text.lstrip("+-")
    try:
        value: float = 0
        if ":" in text:
            for part in text.split(":"):
                value = value * 60 + (float(part) if "." in part else int(part))
        elif text[:2] in ("0b", "0x"):
            value = int(text[2:] or "0", 2 if text[1] == "b" else 16)
        elif "." in text:
            value = float(text)
        else:
            value = int(text, 8 if text.startswith("0") else 10)
        return str(sign * value)
    except ValueError:  # more digits than int() and str() accept
        return None
