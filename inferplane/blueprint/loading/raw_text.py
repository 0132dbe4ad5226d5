"""The raw text of a blueprint file, checked before YAML reads it: its size, its encoding
(UTF-8, an optional leading BOM), and the characters no blueprint may hold anywhere
(controls, bidirectional controls, invisible characters, lone surrogates, tabs in
indentation), each reported at its line and column as the YAML reader counts them."""

from __future__ import annotations

import re
import unicodedata

from inferplane.blueprint.errors import BlueprintError, Diagnostic, Location

MAX_BYTES = 1024 * 1024
"""Largest accepted blueprint file, in bytes. A real blueprint is a few KiB."""

MAX_DIAGNOSTICS = 20
"""Stop collecting problems after this many."""

# Characters that are invisible, reorder the displayed text, or make editors and the YAML
# reader disagree about line and column numbers. U+FEFF is allowed only as the leading BOM.
FORBIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029"
    "\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff\ud800-\udfff]"
)
# In a parsed key or value, escapes of double-quoted YAML ("\x07", "\u202e", "\ud800")
# can produce any of the above, and every blueprint string is a single line: names, paths and
# labels end up in scripts, configs and PromQL, where a line break or a tab changes meaning.
FORBIDDEN_PARSED = re.compile(FORBIDDEN.pattern.replace("[", "[\t\n\r", 1))
BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
INDENT_TAB = re.compile(r"(?:\A|(?<=[\r\n])) *\t")
UNICODE_SPACES = "\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
"""The space separators (Unicode category Zs) other than the plain space: YAML indents and
separates with U+0020 alone and reads these as text (YAML 1.2.2, 5.5 "White Space
Characters": ``s-white ::= s-space | s-tab``)."""
INDENT_UNICODE_SPACE = re.compile(
    f"(?:\\A|(?<=[\\r\\n]))(?:[ \\t{UNICODE_SPACES}]|-(?=[ \\t{UNICODE_SPACES}]))*?"
    f"([{UNICODE_SPACES}])"
)
"""The first non-plain space in a line's indentation (its leading blanks and list dashes).
Editors and word processors put U+00A0 there when text is pasted from a web page or a chat."""
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def file_error(file: str, line: int, column: int, message: str, hint: str) -> BlueprintError:
    return BlueprintError([Diagnostic(Location(file, line, column), (), message, hint)])


def too_large(file: str, size: int) -> BlueprintError:
    return file_error(
        file,
        1,
        1,
        f"the file is {size} bytes, more than the {MAX_BYTES} bytes (1 MiB) a blueprint may have",
        "check that this is the right file: a blueprint is a few KiB",
    )


def line_col(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of `offset`, counting line breaks as the YAML reader does."""
    starts = [0] + [m.end() for m in LINE_BREAK.finditer(text, 0, offset)]
    return len(starts), offset - starts[-1] + 1


def decode(data: bytes, file: str) -> str:
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise file_error(
            file, 1, 1, "the file is UTF-16 encoded, not UTF-8", "save the file as UTF-8"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = data[: exc.start].decode("utf-8")
        raise file_error(
            file,
            *line_col(prefix, len(prefix)),
            f"the file is not valid UTF-8 (byte 0x{data[exc.start]:02x}: {exc.reason})",
            "save the file as UTF-8",
        ) from None


def describe(char: str) -> tuple[str, str]:
    """What is wrong with a forbidden character, and the fix."""
    code = f"U+{ord(char):04X}"
    named = f"{code} ({unicodedata.name(char, '')})".replace(" ()", "")
    if char in BIDI:
        return (
            f"Unicode bidirectional control {named} is not allowed",
            "remove it: it makes the text display differently from how it is read",
        )
    if unicodedata.category(char) == "Cc":
        return (
            f"control character {code} is not allowed",
            "remove it: only tab, line feed and carriage return may appear",
        )
    if unicodedata.category(char) in ("Cs", "Cn"):  # lone surrogates, U+FFFE, U+FFFF
        return f"{code} is not a valid Unicode character", "remove it, and save the file as UTF-8"
    return (
        f"invisible character {named} is not allowed",
        "remove it: editors and tools disagree about how it displays",
    )


def check_characters(text: str, file: str) -> None:
    found: list[Diagnostic] = []
    for match in FORBIDDEN.finditer(text):
        message, hint = describe(match.group())
        line, column = line_col(text, match.start())
        found.append(Diagnostic(Location(file, line, column), (), message, hint))
        if len(found) == MAX_DIAGNOSTICS:
            break
    for match in INDENT_TAB.finditer(text):
        if len(found) >= MAX_DIAGNOSTICS:
            break
        line, column = line_col(text, match.end() - 1)
        found.append(
            Diagnostic(
                Location(file, line, column),
                (),
                "tab character in indentation",
                "indent with spaces only: YAML does not allow tabs for indentation",
            )
        )
    for match in INDENT_UNICODE_SPACE.finditer(text):
        if len(found) >= MAX_DIAGNOSTICS:
            break
        line, column = line_col(text, match.start(1))
        char = match.group(1)
        name = unicodedata.name(char).lower()
        article = "an" if name[0] in "aeiou" else "a"
        found.append(
            Diagnostic(
                Location(file, line, column),
                (),
                f"line {line} has {article} {name} (U+{ord(char):04X}) in its indentation",
                "indent with plain spaces",
            )
        )
    if found:
        raise BlueprintError(found)


__all__ = [
    "BIDI",
    "FORBIDDEN",
    "FORBIDDEN_PARSED",
    "INDENT_TAB",
    "LINE_BREAK",
    "MAX_BYTES",
    "MAX_DIAGNOSTICS",
    "check_characters",
    "decode",
    "describe",
    "file_error",
    "line_col",
    "too_large",
]
