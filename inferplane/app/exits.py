"""Exit codes of every `inferplane` command, and the one way problems reach stderr.

0 success; 1 mandatory policy violations (`check`); 2 invalid blueprint, policy config or
usage; 3 internal error — a bug in inferplane, never the user's fault; 130 interrupted.
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from collections.abc import Iterable
from typing import TextIO

from inferplane.blueprint.errors import Diagnostic, format_diagnostics, printable

EXIT_OK = 0
EXIT_VIOLATIONS = 1
EXIT_INVALID = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130


def print_diagnostics(diagnostics: Iterable[Diagnostic], stream: TextIO | None = None) -> int:
    """Print each diagnostic on its own line (``FILE:LINE:COL: error: <path>: <what>; <fix>``,
    user text escaped); returns EXIT_INVALID for the caller to return."""
    text = format_diagnostics(diagnostics)
    if text:
        print(text, file=stream or sys.stderr)
    return EXIT_INVALID


def usage_error(prog: str, message: str) -> int:
    """``<prog>: error: <message>`` on stderr (user text escaped); returns EXIT_INVALID."""
    print(printable(f"{prog}: error: {message}"), file=sys.stderr)
    return EXIT_INVALID


_RISEN = re.compile(r"\n?([A-Za-z_][A-Za-z0-9_.]*) has risen: ")
"""How the Pulumi SDK wraps an exception raised while it resolves a resource's inputs:
``While processing resource: ...`` then ``<Type> has risen: <inner message>`` per level
(pulumi/sdk/python/lib/pulumi/runtime/resource.py, ``do_register``/``serialize_property``)."""


def root_cause(exc: BaseException) -> tuple[str, str, list[str]]:
    """(type name, message, contexts outermost first) of what went wrong at the bottom of
    `exc`: the end of its ``__cause__``/``__context__`` chain, and within that the last
    message of an SDK-wrapped chain."""
    contexts: list[str] = []
    inner = exc
    seen = {id(inner)}
    while True:
        nxt = inner.__cause__ or (None if inner.__suppress_context__ else inner.__context__)
        if nxt is None or id(nxt) in seen:
            break
        contexts.append(f"{type(inner).__name__}: {inner}")
        seen.add(id(nxt))
        inner = nxt
    name, message = type(inner).__name__, str(inner)
    parts = _RISEN.split(message)
    if len(parts) > 1:  # [outer, type1, msg1, type2, msg2, ...]
        contexts.append(parts[0].strip())
        contexts += [m.strip() for m in parts[2:-1:2]]
        name, message = parts[-2], parts[-1].strip()
    return name, message, [c for c in contexts if c]


def internal_error(exc: BaseException) -> int:
    """Report a bug: the root cause first, then what it happened in (outermost first), on
    one line each; the traceback with INFERPLANE_DEBUG=1."""
    if os.environ.get("INFERPLANE_DEBUG") == "1":
        traceback.print_exception(exc, file=sys.stderr)
    name, message, contexts = root_cause(exc)
    lines = [f"inferplane: internal error: {name}: {message}"]
    lines += [f"  while: {' '.join(c.split())}" for c in contexts]
    print(
        "\n".join(printable(line) for line in lines) + "\n"
        "This is a bug in inferplane, not in your blueprint; rerun with INFERPLANE_DEBUG=1 "
        "and report the traceback.",
        file=sys.stderr,
    )
    return EXIT_INTERNAL
