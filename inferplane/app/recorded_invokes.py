"""`--invokes FILE`: provider answers recorded from a real run, for the offline harness.

The file (YAML or JSON) is a list of entries ``{token, args, answer}``: ``token`` is the
invoke's token (e.g. ``aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings``), ``args``
(optional) the arguments the entry answers (a subset: every key given must match, a list
item by item), and ``answer`` what the provider returned, in its camelCase wire names.
`inferplane.app.offline_mocks.CloudMocks` answers an invoke with the first entry that
matches, before any made-up answer. With such a file, ``inferplane check`` and ``plan``
run the capacity preflight on it (`inferplane.components.capacity_preflight`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


class InvokesError(Exception):
    """The file is not a list of recorded answers; the message says what to fix."""


def load(path: str | Path) -> list[dict[str, Any]]:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvokesError(f"cannot read {path}: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise InvokesError(f"{path} is not YAML or JSON: {exc}") from None
    if not isinstance(data, list):
        raise InvokesError(
            f"{path}: expected a list of recorded answers ({{token, args, answer}}), got "
            f"{type(data).__name__}"
        )
    for i, entry in enumerate(data):
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            raise InvokesError(f"{path}: entry {i} needs a string `token`")
        if not isinstance(entry.get("args", {}), dict):
            raise InvokesError(f"{path}: entry {i}: `args` must be a mapping")
        if not isinstance(entry.get("answer"), dict):
            raise InvokesError(f"{path}: entry {i} needs an `answer` mapping")
        unknown = set(entry) - {"token", "args", "answer"}
        if unknown:
            raise InvokesError(
                f"{path}: entry {i} has unknown keys {', '.join(sorted(unknown))}; "
                "use token, args and answer"
            )
    return data


__all__ = ["InvokesError", "load"]
