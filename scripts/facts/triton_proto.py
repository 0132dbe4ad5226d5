"""A reader of the part of the protobuf language Triton's `protobuf/model_config.proto` uses:
`syntax`, `package`, `option`, messages (nested), enums (nested), `oneof`, `map<K, V>`,
`repeated`/`optional` fields, `reserved`, field and value options in brackets, and `//`
and `/* */` comments (https://protobuf.dev/reference/protobuf/proto3-spec/). Anything else
(`import`, `extend`, `service`, groups) is refused with its line: the facts must say all
that the file says.

Type names are resolved the way protoc resolves them
(https://protobuf.dev/programming-guides/proto3/#packages-and-name-resolution): the first
component of a name is looked up from the innermost enclosing message outwards, the rest
descends from there. Every name is written relative to the file's package.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SCALARS = frozenset(
    {"double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64",
     "fixed32", "fixed64", "sfixed32", "sfixed64", "bool", "string", "bytes"}
)  # fmt: skip
"""The scalar value types of proto3 (https://protobuf.dev/programming-guides/proto3/#scalar)."""

_TOKEN = re.compile(
    r"""(?P<space>\s+)|(?P<line>//[^\n]*)|(?P<block>/\*.*?\*/)|(?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')"""
    r"""|(?P<word>\.?[A-Za-z_][A-Za-z0-9_.]*)|(?P<number>-?[0-9][0-9A-Za-z_.+-]*)|(?P<punct>[{}\[\]()<>;=,])""",
    re.DOTALL,
)


class ProtoError(ValueError):
    """The file is not in the subset this reader understands, or is not valid protobuf."""


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    """A scalar, or a message or enum name relative to the package (``ModelInput.Format``);
    a map field's value type."""
    label: str = ""
    """``repeated``, ``map<KEY>`` (the key's scalar type), or empty."""
    oneof: str = ""


@dataclass
class Message:
    name: str
    fields: list[Field] = field(default_factory=list)


@dataclass
class Proto:
    package: str
    messages: dict[str, Message]
    """By qualified name (``ModelInstanceGroup.SecondaryDevice``)."""
    enums: dict[str, list[str]]
    """Value names by qualified enum name (``ModelInstanceGroup.Kind``)."""


def tokens(text: str) -> list[tuple[str, int]]:
    """(token, line) pairs without whitespace and comments."""
    out: list[tuple[str, int]] = []
    pos, line = 0, 1
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ProtoError(f"line {line}: unexpected character {text[pos]!r}")
        if m.lastgroup in ("string", "word", "number", "punct"):
            out.append((m.group(), line))
        line += m.group().count("\n")
        pos = m.end()
    return out


class _Reader:
    def __init__(self, text: str) -> None:
        self.toks = tokens(text)
        self.i = 0
        self.package = ""
        self.messages: dict[str, Message] = {}
        self.enums: dict[str, list[str]] = {}
        # (scope, field) pairs whose type is resolved once every name is known
        self.pending: list[tuple[str, Message, Field]] = []

    def peek(self) -> str:
        return self.toks[self.i][0] if self.i < len(self.toks) else ""

    def line(self) -> int:
        return self.toks[min(self.i, len(self.toks) - 1)][1] if self.toks else 1

    def take(self, expected: str | None = None) -> str:
        if self.i >= len(self.toks):
            raise ProtoError(f"unexpected end of file, expected {expected or 'more'}")
        tok = self.toks[self.i][0]
        if expected is not None and tok != expected:
            raise ProtoError(f"line {self.line()}: expected {expected!r}, found {tok!r}")
        self.i += 1
        return tok

    def skip_statement(self) -> None:
        """An `option`/`reserved` statement up to its `;`."""
        while self.take() != ";":
            pass

    def skip_brackets(self) -> None:
        """Field options: ``[deprecated = true]``."""
        if self.peek() == "[":
            while self.take() != "]":
                pass

    def read_file(self) -> Proto:
        while self.i < len(self.toks):
            tok = self.peek()
            if tok in ("syntax", "edition"):
                self.take()
                self.take("=")
                if (version := self.take()) != '"proto3"':
                    raise ProtoError(f"line {self.line()}: only proto3 is read, not {version}")
                self.take(";")
            elif tok == "package":
                self.take()
                self.package = self.take()
                self.take(";")
            elif tok == "option":
                self.skip_statement()
            elif tok == "message":
                self.read_message("")
            elif tok == "enum":
                self.read_enum("")
            elif tok == ";":
                self.take()
            else:
                raise ProtoError(f"line {self.line()}: {tok!r} is not read by this script")
        for scope, message, f in self.pending:
            resolved = self.resolve(scope, f.type)
            index = message.fields.index(f)
            message.fields[index] = Field(f.name, resolved, f.label, f.oneof)
        return Proto(self.package, self.messages, self.enums)

    def read_message(self, scope: str) -> None:
        self.take("message")
        name = self.qualify(scope, self.take())
        if name in self.messages or name in self.enums:
            raise ProtoError(f"line {self.line()}: {name} is defined twice")
        message = self.messages[name] = Message(name)
        self.take("{")
        while self.peek() != "}":
            self.read_member(name, message, "")
        self.take("}")

    def read_member(self, scope: str, message: Message, oneof: str) -> None:
        tok = self.peek()
        if tok == "message" and not oneof:
            self.read_message(scope)
        elif tok == "enum" and not oneof:
            self.read_enum(scope)
        elif tok == "oneof" and not oneof:
            self.take()
            group = self.take()
            self.take("{")
            while self.peek() != "}":
                self.read_member(scope, message, group)
            self.take("}")
        elif tok in ("option", "reserved"):
            self.skip_statement()
        elif tok == ";":
            self.take()
        elif tok in ("extensions", "extend", "group", "import", "service"):
            raise ProtoError(f"line {self.line()}: {tok!r} is not read by this script")
        else:
            self.read_field(scope, message, oneof)

    def read_field(self, scope: str, message: Message, oneof: str) -> None:
        label = ""
        if self.peek() in ("repeated", "optional"):
            label = self.take()
            label = "" if label == "optional" else label
        if self.peek() == "map":
            self.take()
            self.take("<")
            key = self.take()
            if key not in SCALARS or key in ("double", "float", "bytes"):
                raise ProtoError(f"line {self.line()}: {key!r} cannot be a map key")
            self.take(",")
            type_name = self.take()
            self.take(">")
            label = f"map<{key}>"
        else:
            type_name = self.take()
        name = self.take()
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise ProtoError(f"line {self.line()}: {name!r} is not a field name")
        if any(f.name == name for f in message.fields):
            raise ProtoError(f"line {self.line()}: field {name} of {scope} is defined twice")
        self.take("=")
        self.take()
        self.skip_brackets()
        self.take(";")
        f = Field(name, type_name, label, oneof)
        message.fields.append(f)
        if type_name not in SCALARS:
            self.pending.append((scope, message, f))

    def read_enum(self, scope: str) -> None:
        self.take("enum")
        name = self.qualify(scope, self.take())
        if name in self.messages or name in self.enums:
            raise ProtoError(f"line {self.line()}: {name} is defined twice")
        values = self.enums[name] = []
        self.take("{")
        while self.peek() != "}":
            if self.peek() in ("option", "reserved"):
                self.skip_statement()
                continue
            if self.peek() == ";":
                self.take()
                continue
            values.append(self.take())
            self.take("=")
            self.take()
            self.skip_brackets()
            self.take(";")
        self.take("}")

    @staticmethod
    def qualify(scope: str, name: str) -> str:
        return f"{scope}.{name}" if scope else name

    def resolve(self, scope: str, name: str) -> str:
        """`name` as used inside message `scope`, qualified relative to the package."""
        known = self.messages.keys() | self.enums.keys()
        if name.startswith("."):
            full = name[1:]
            prefix = f"{self.package}." if self.package else ""
            if full.startswith(prefix) and full[len(prefix) :] in known:
                return full[len(prefix) :]
            raise ProtoError(f"type {name} (used in {scope}) is not defined in this file")
        first, _, rest = name.partition(".")
        parts = scope.split(".") if scope else []
        for depth in range(len(parts), -1, -1):
            base = self.qualify(".".join(parts[:depth]), first)
            if base in known:
                full = f"{base}.{rest}" if rest else base
                if full in known:
                    return full
                raise ProtoError(f"type {name} (used in {scope}) is not defined in this file")
        package = f"{self.package}."
        if self.package and name.startswith(package):
            return self.resolve(scope, name[len(package) :])
        raise ProtoError(f"type {name} (used in {scope}) is not defined in this file")


def parse(text: str) -> Proto:
    """The messages and enums of a .proto file (see the module docstring)."""
    return _Reader(text).read_file()
