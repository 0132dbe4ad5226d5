"""A reader of protobuf text format, the language of Triton's ``config.pbtxt``, into a tree
that keeps each field's line and column (https://protobuf.dev/reference/protobuf/textformat-spec/):

- ``name: value`` for a scalar (a string, possibly several adjacent ones that concatenate;
  a number; an identifier: an enum value, ``true``, ``inf``);
- ``name { ... }``, ``name: { ... }`` or ``name < ... >`` for a message;
- ``name: [ v, v ]`` / ``name [ { ... }, { ... } ]`` for several values of a repeated field;
- ``#`` comments, and an optional ``,`` or ``;`` after each field.

What the values mean (which names exist, which types they have) is the schema's business:
`inferplane.blueprint.upstream.triton_facts` checks a tree against the model configuration of a
Triton release. Extension and ``Any`` field names (``[type.name]``) are refused: ModelConfig has
none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""(?P<space>[ \t\r\n]+)|(?P<comment>\#[^\n]*)"""
    r"""|(?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    r"""|(?P<number>[-+]?(?:0[xX][0-9a-fA-F]+|[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?[fF]?|\.[0-9]+(?:[eE][-+]?[0-9]+)?[fF]?))"""
    r"""|(?P<ident>-?[A-Za-z_][A-Za-z0-9_]*)|(?P<punct>[{}\[\]<>:;,])"""
)


class PbtxtError(ValueError):
    """Not protobuf text format; `line` and `col` (1-based) say where."""

    def __init__(self, line: int, col: int, message: str) -> None:
        super().__init__(f"{line}:{col}: {message}")
        self.line = line
        self.col = col
        self.message = message


@dataclass(frozen=True)
class Value:
    """One value: a scalar token (`kind` string, number or ident, `text` as written; a
    string's `text` is its concatenated literals) or a message (`kind` message, `fields`)."""

    kind: str
    text: str
    line: int
    col: int
    fields: tuple[Entry, ...] = ()


@dataclass(frozen=True)
class Entry:
    """One ``name ...`` of a message: its values (several when written as a list)."""

    name: str
    values: tuple[Value, ...]
    listed: bool
    """Written as ``[ ... ]`` (only a repeated field may be)."""
    line: int
    col: int


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str
    line: int
    col: int


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    pos, line, start = 0, 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise PbtxtError(line, pos - start + 1, f"unexpected character {text[pos]!r}")
        kind = m.lastgroup or ""
        if kind not in ("space", "comment"):
            out.append(_Tok(kind, m.group(), line, pos - start + 1))
        newlines = m.group().count("\n")
        if newlines:
            line += newlines
            start = pos + m.group().rindex("\n") + 1
        pos = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> _Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def where(self) -> tuple[int, int]:
        tok = self.peek() or (self.toks[-1] if self.toks else _Tok("", "", 1, 1))
        return tok.line, tok.col

    def take(self, *texts: str) -> _Tok:
        tok = self.peek()
        if tok is None:
            raise PbtxtError(*self.where(), f"expected {' or '.join(texts) or 'a value'}, "
                             "found the end of the text")  # fmt: skip
        if texts and tok.text not in texts:
            raise PbtxtError(
                tok.line, tok.col, f"expected {' or '.join(texts)}, found {tok.text!r}"
            )
        self.i += 1
        return tok

    def message(self, close: str | None) -> tuple[Entry, ...]:
        entries: list[Entry] = []
        while True:
            tok = self.peek()
            if tok is None or tok.text == close:
                if tok is None and close is not None:
                    raise PbtxtError(
                        *self.where(), f"expected {close!r}, found the end of the text"
                    )
                return tuple(entries)
            if tok.kind != "ident" or tok.text.startswith("-"):
                raise PbtxtError(tok.line, tok.col, f"expected a field name, found {tok.text!r}")
            entries.append(self.field())
            nxt = self.peek()
            if nxt is not None and nxt.text in (",", ";"):
                self.i += 1

    def field(self) -> Entry:
        name = self.take()
        colon = False
        if (tok := self.peek()) is not None and tok.text == ":":
            self.i += 1
            colon = True
        tok = self.peek()
        if tok is not None and tok.text == "[":
            self.i += 1
            values: list[Value] = []
            while (nxt := self.peek()) is not None and nxt.text != "]":
                if values:
                    self.take(",")
                values.append(self.value(colon=True))
            self.take("]")
            return Entry(name.text, tuple(values), True, name.line, name.col)
        return Entry(name.text, (self.value(colon),), False, name.line, name.col)

    def value(self, colon: bool) -> Value:
        tok = self.take()
        if tok.text in ("{", "<"):
            fields = self.message("}" if tok.text == "{" else ">")
            self.take("}" if tok.text == "{" else ">")
            return Value("message", "", tok.line, tok.col, fields)
        if not colon:
            raise PbtxtError(tok.line, tok.col, f"expected ':' or '{{' before {tok.text!r}")
        if tok.kind == "string":
            text = _unquote(tok)
            while (nxt := self.peek()) is not None and nxt.kind == "string":
                text += _unquote(self.take())
            return Value("string", text, tok.line, tok.col)
        if tok.kind in ("number", "ident"):
            return Value(tok.kind, tok.text, tok.line, tok.col)
        raise PbtxtError(tok.line, tok.col, f"expected a value, found {tok.text!r}")


def _unquote(tok: _Tok) -> str:
    body = tok.text[1:-1]
    try:
        return body.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError as err:
        raise PbtxtError(tok.line, tok.col, f"bad escape in {tok.text}: {err.reason}") from None


def parse(text: str) -> tuple[Entry, ...]:
    """The fields of the message `text` writes (see the module docstring)."""
    parser = _Parser(text)
    return parser.message(None)
