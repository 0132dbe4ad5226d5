"""What a rehearsal test does when its harness says it cannot run here (exit 2: a tool not
built, no network namespace): skip on a developer's machine, fail under CI (``CI=true``),
which builds every tool and runs as root, so "cannot run" there is a fault to see."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def cannot_run(reason: str) -> NoReturn:
    if os.environ.get("CI") == "true":
        pytest.fail(f"the rehearsal could not run under CI: {reason}")
    pytest.skip(reason)
