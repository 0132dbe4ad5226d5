"""Exit codes of every `inferplane` command, and the one way problems reach stderr.

0 success; 1 mandatory policy violations (`check`); 2 invalid blueprint, policy config or
usage; 3 internal error — a bug in inferplane, never the user's fault; 130 interrupted.
"""

from __future__ import annotations

import os
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


def internal_error(exc: BaseException) -> int:
    """Report a bug: one line by default, the traceback with INFERPLANE_DEBUG=1."""
    if os.environ.get("INFERPLANE_DEBUG") == "1":
        traceback.print_exception(exc, file=sys.stderr)
    print(
        printable(f"inferplane: internal error: {type(exc).__name__}: {exc}") + "\n"
        "This is a bug in inferplane, not in your blueprint; rerun with INFERPLANE_DEBUG=1 "
        "and report the traceback.",
        file=sys.stderr,
    )
    return EXIT_INTERNAL
