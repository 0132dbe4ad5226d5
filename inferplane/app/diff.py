"""`inferplane diff OLD_PLAN_DIR NEW_PLAN_DIR`: what a blueprint edit changes.

Reads the ``plan.json`` of two `inferplane plan --out` directories and lists the resources
added, removed and changed, each change with its field path and old → new value, e.g.::

    ~ kubernetes:apps/v1:Deployment shop-prod-chat
        inputs.spec.replicas: 2 → 3
        inputs.spec.template.spec.containers[0].args: --max-num-seqs 16 → 24

A container's ``args`` and ``command`` are compared as the command line they are: flag by
flag (``--flag value...`` and ``--flag=value``), so a setting that moves the flags after it
shows as that one flag changed, not as every position after it; a flag only on one side is
``+ --flag value`` or ``- --flag value``.

A Deployment whose pod template changes says how the change reaches its pods: through the
Argo Rollout that takes the Deployment's pods (a canary in steps, guarded by the model's
SLO, after the zone before it where a gate holds it), or every pod at once by the
Deployment's own rolling update. Every other change applies at once::

    ~ kubernetes:apps/v1:Deployment shop-prod-chat-us-east-1b
        inputs.spec.template.metadata.labels.inferplane.dev/revision: "0a1b…" → "9f8e…"
        rolls out: Rollout chat-us-east-1b, canary 10% → 50% → 100%, after chat-us-east-1a

Resources are matched by type, name and parent. Secret values never appear: the plan holds
them as ``"[secret]"`` already, and any field or flag whose name says it is a credential,
or that lies in a Kubernetes Secret's data, is shown only as changed.

Exit codes: 0 compared (whether or not anything changed); 2 a directory is not a plan.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inferplane.blueprint import naming

EXIT_OK, EXIT_INVALID = 0, 2
PLAN_FILE = "plan.json"  # `plan_output.PLAN_FILE`; not imported: plan_output loads yaml
SECRET = "[secret]"
FIELDS = ("parent", "provider", "depends_on", "options", "read", "inputs")
"""What is compared, in this order."""
_SENSITIVE = re.compile(
    r"password|passwd|token|secret|credential|private[_-]?key|api[_-]?key|access[_-]?key", re.I
)
_SECRET_TYPES = ("kubernetes:core/v1:Secret",)
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
ROLLOUT = "kubernetes:argoproj.io/v1alpha1:Rollout"
ANALYSIS_TEMPLATE = "kubernetes:argoproj.io/v1alpha1:AnalysisTemplate"
_TEMPLATE = "inputs.spec.template"

Key = tuple[str, str, str]
"""(type, name, parent name)."""
_ARGV_KEYS = ("args", "command")
"""Fields that hold a container's command line (core/v1 ``Container``)."""
_VALUE = re.compile(r"^-?\d")
"""A token that starts like a number (``-1``) is a value, not a flag."""


@dataclass(frozen=True)
class Flag:
    """One flag of a command line and its values on one side of the diff (None: absent)."""

    flag: str
    values: tuple[str, ...] | None

    def text(self) -> str:
        return " ".join(_word(v) for v in self.values or ())


def _word(value: str) -> str:
    """One argument as a shell would read it; a multi-line one (a script) as a JSON string,
    so each change stays on one line."""
    if any(c in value for c in "\n\r\t"):
        return json.dumps(value, ensure_ascii=False)
    return shlex.quote(value)


class NotAPlan(Exception):
    """A directory that holds no readable plan."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD_PLAN_DIR", type=Path, help="the plan before")
    parser.add_argument("new", metavar="NEW_PLAN_DIR", type=Path, help="the plan after")


def load_plan(directory: Path) -> dict[Key, dict[str, Any]]:
    """The resources of the plan in `directory`, by (type, name, parent)."""
    hint = "write one with `inferplane plan BLUEPRINT --env ENV --out DIR`"
    if not directory.is_dir():
        raise NotAPlan(f"{directory}: not a directory; {hint}")
    path = directory / PLAN_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotAPlan(f"{directory}: no {PLAN_FILE}, so not a plan directory; {hint}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotAPlan(f"{path}: not a readable plan ({exc}); {hint}") from None
    resources = doc.get("resources") if isinstance(doc, dict) else None
    if not isinstance(resources, list) or not all(
        isinstance(r, dict) and isinstance(r.get("type"), str) and isinstance(r.get("name"), str)
        for r in resources
    ):
        raise NotAPlan(f"{path}: has no list of resources with type and name; {hint}")
    out: dict[Key, dict[str, Any]] = {}
    for res in resources:
        out[(res["type"], res["name"], str(res.get("parent") or ""))] = res
    return out


def _is_flag(token: str) -> bool:
    return token.startswith("-") and len(token) > 1 and not _VALUE.match(token)


def parse_argv(argv: Sequence[str]) -> tuple[list[str], dict[str, tuple[str, ...]]]:
    """The positional arguments before the first flag, and every flag with its values in
    order (``--a=x`` and ``--a x y`` alike; a repeated flag's values are joined)."""
    positional: list[str] = []
    flags: dict[str, tuple[str, ...]] = {}
    current: str | None = None
    for token in argv:
        if _is_flag(token):
            name, eq, value = token.partition("=")
            current = name
            flags[name] = flags.get(name, ()) + ((value,) if eq else ())
        elif current is None:
            positional.append(token)
        else:
            flags[current] += (token,)
    return positional, flags


def _is_argv(path: str, old: Any, new: Any) -> bool:
    """Both sides are a container's command line (strings, at least one a flag)."""
    if path.rsplit(".", 1)[-1] not in _ARGV_KEYS:
        return False
    if not (isinstance(old, list) and isinstance(new, list)):
        return False
    tokens = [*old, *new]
    return all(isinstance(t, str) for t in tokens) and any(_is_flag(t) for t in tokens)


def _argv_changes(path: str, old: list[str], new: list[str]) -> Iterator[tuple[str, Any, Any]]:
    found = list(_flag_changes(path, old, new))
    if not found and old != new:
        # Same flags and values, another order or grouping (`--x a --x b` -> `--x a b`): the
        # pod template still changes and rolls, so say so with the whole command line.
        found = [(path, old, new)]
    yield from found


def _flag_changes(path: str, old: list[str], new: list[str]) -> Iterator[tuple[str, Any, Any]]:
    old_pos, old_flags = parse_argv(old)
    new_pos, new_flags = parse_argv(new)
    if old_pos != new_pos:
        if len(old_pos) == len(new_pos):
            for i, (was, now) in enumerate(zip(old_pos, new_pos, strict=True)):
                if was != now:
                    yield f"{path}[{i}]", was, now
        else:
            yield path, old_pos, new_pos
    for flag in [*old_flags, *(f for f in new_flags if f not in old_flags)]:
        a, b = old_flags.get(flag), new_flags.get(flag)
        if a != b:
            yield path, Flag(flag, a), Flag(flag, b)


def changes(old: Any, new: Any, path: str = "") -> Iterator[tuple[str, Any, Any]]:
    """(field path, old, new) for every leaf that differs; a missing side is ``None``. A
    container's command line differs by `Flag` (`parse_argv`)."""
    if _is_argv(path, old, new):
        yield from _argv_changes(path, old, new)
    elif isinstance(old, Mapping) and isinstance(new, Mapping):
        for key in sorted(set(old) | set(new)):
            sub = f"{path}.{key}" if path else str(key)
            yield from changes(old.get(key), new.get(key), sub)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            yield from changes(a, b, f"{path}[{i}]")
    elif old != new:
        yield path, old, new


def _sensitive(type_: str, path: str) -> bool:
    if type_ in _SECRET_TYPES and re.match(r"inputs\.(data|stringData)\b", path):
        return True
    return any(_SENSITIVE.search(part) for part in re.split(r"[.\[\]]", path) if part)


def show(value: Any) -> str:
    if value is None:
        return "(absent)"
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def show_flag(old: Flag, new: Flag, arrow: str) -> str:
    """``--max-num-seqs 16 → 24``, ``+ --enforce-eager``, ``- --kv-cache-dtype fp8``."""
    if old.values is None:
        return f"+ {new.flag} {new.text()}".rstrip()
    if new.values is None:
        return f"- {old.flag} {old.text()}".rstrip()
    return f"{old.flag} {old.text() or '(no value)'} {arrow} {new.text() or '(no value)'}"


def _inputs(res: Mapping[str, Any], *path: str) -> Any:
    value: Any = res.get("inputs")
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _object(res: Mapping[str, Any]) -> tuple[str, str]:
    """(namespace, name) of a Kubernetes resource of a plan."""
    return (
        str(_inputs(res, "metadata", "namespace") or ""),
        str(_inputs(res, "metadata", "name") or ""),
    )


def _rollout_of(
    plan: Mapping[Key, Mapping[str, Any]], namespace: str, name: str
) -> tuple[Key, Mapping[str, Any]] | None:
    """The Rollout of `plan` whose ``workloadRef`` is the Deployment `name`."""
    for key, r in plan.items():
        if (
            key[0] == ROLLOUT
            and _object(r)[0] == namespace
            and _inputs(r, "spec", "workloadRef", "kind") == "Deployment"
            and _inputs(r, "spec", "workloadRef", "name") == name
        ):
            return key, r
    return None


def how_it_rolls(
    old: Mapping[Key, Mapping[str, Any]],
    plan: Mapping[Key, Mapping[str, Any]],
    deployment: Mapping[str, Any],
) -> str:
    """How a change of `deployment`'s pod template reaches its pods: `plan` is the new
    plan, `old` the one before (a Rollout new in this plan runs no canary yet)."""
    namespace, name = _object(deployment)
    found = _rollout_of(plan, namespace, name)
    if found is None:
        return "rolls every pod now: the Deployment's own rolling update, no canary"
    key, rollout = found
    if key not in old:
        # A Rollout's first revision has no stable ReplicaSet, and then the controller
        # takes the pods to full size without its steps (argo-rollouts v1.10.1
        # utils/replicaset/canary.go, `CalculateReplicaCountsForBasicCanary`).
        return (
            "rolls every pod now: the Deployment's own rolling update; the new Rollout "
            f"{_object(rollout)[1]} then takes the pods without steps, and canaries start "
            "with the next change"
        )
    steps = _inputs(rollout, "spec", "strategy", "canary", "steps") or []
    shares = [f"{s['setWeight']}%" for s in steps if isinstance(s, Mapping) and "setWeight" in s]
    text = f"rolls out: Rollout {_object(rollout)[1]}, canary {' → '.join(shares)}"
    gates = [
        t["templateName"]
        for s in steps
        if isinstance(s, Mapping) and isinstance(s.get("analysis"), Mapping)
        for t in s["analysis"].get("templates") or []
        if isinstance(t, Mapping) and "templateName" in t
    ]
    for gate in gates:
        template = next(
            (
                r
                for (type_, _, _), r in plan.items()
                if type_ == ANALYSIS_TEMPLATE and _object(r) == (namespace, gate)
            ),
            None,
        )
        annotations = _inputs(template, "metadata", "annotations") if template else None
        before = (annotations or {}).get(naming.AFTER_ANNOTATION)
        text += f", after {before}" if before else f", after gate {gate}"
    return text


def render(
    old: dict[Key, dict[str, Any]], new: dict[Key, dict[str, Any]], arrow: str = "→"
) -> list[str]:
    """The diff as lines: removed, added, then changed resources, each sorted."""
    lines: list[str] = []
    removed = sorted(set(old) - set(new))
    added = sorted(set(new) - set(old))
    changed = []
    for key in sorted(set(old) & set(new)):
        fields = [c for f in FIELDS for c in changes(old[key].get(f), new[key].get(f), f)]
        if fields:
            changed.append((key, fields))
    lines += [f"- {t} {n}" for t, n, _ in removed]
    lines += [f"+ {t} {n}" for t, n, _ in added]
    for (type_, name, _parent), fields in changed:
        lines.append(f"~ {type_} {name}")
        for path, a, b in fields:
            if isinstance(a, Flag) and isinstance(b, Flag):
                values = (*(a.values or ()), *(b.values or ()))
                if _sensitive(type_, path) or _sensitive(type_, a.flag) or SECRET in values:
                    lines.append(f"    {path}: {a.flag} {SECRET} (changed)")
                else:
                    lines.append(f"    {path}: {show_flag(a, b, arrow)}")
            elif _sensitive(type_, path) or SECRET in (a, b):
                lines.append(f"    {path}: {SECRET} (changed)")
            else:
                lines.append(f"    {path}: {show(a)} {arrow} {show(b)}")
        if type_ == DEPLOYMENT and any(p.startswith(_TEMPLATE) for p, _, _ in fields):
            rolls = how_it_rolls(old, new, new[(type_, name, _parent)])
            lines.append(f"    {rolls if arrow == '→' else rolls.replace('→', arrow)}")
    unchanged = len(set(old) & set(new)) - len(changed)
    lines.append(
        f"{len(added)} to add, {len(removed)} to remove, {len(changed)} to change, "
        f"{unchanged} unchanged"
    )
    return lines


def run(args: argparse.Namespace) -> int:
    try:
        old, new = load_plan(args.old), load_plan(args.new)
    except NotAPlan as exc:
        print(f"inferplane diff: error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    encoding = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
    arrow = "→" if encoding.startswith("utf") else "->"
    for line in render(old, new, arrow):
        print(line)
    return EXIT_OK
