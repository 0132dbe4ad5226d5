"""Waivers: explicit, visible, expiring exceptions to a rule (`policies.waivers` in a blueprint).

A waiver names one rule, a target (a YAML path prefix: ``models.chat`` waives
``models.chat`` and anything under it), optionally the environments it applies to, a
reason and an expiry date. Its effect:

- a matching result is reported with status ``waived`` — never dropped;
- once the expiry date has passed the waiver no longer waives: the result stays a
  violation and says the waiver expired;
- a waiver that matches no result in any checked environment is itself reported, as an
  advisory `unused-waiver` result, so stale exceptions get removed.

A waiver is valid up to and including its expiry date.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from inferplane.blueprint.errors import Location, format_path
from inferplane.blueprint.model import Waiver
from inferplane.policies.engine import Result, WaiverInfo

UNUSED_WAIVER = "unused-waiver"
"""Rule id of the advisory result for a waiver that matches nothing."""
UNUSED_WAIVER_TITLE = "Every waiver matches a result"
UNUSED_WAIVER_TEXT = (
    "A waiver that matches no result hides nothing today but will silently hide the next "
    "violation of its rule on its target. Remove it, or correct its rule, target or "
    "environments."
)
TODAY_ENV = "INFERPLANE_TODAY"


def today(override: str | None = None) -> dt.date:
    """Today's date for expiry, or `override` / $INFERPLANE_TODAY (YYYY-MM-DD) when set."""
    value = override or os.environ.get(TODAY_ENV)
    return dt.date.fromisoformat(value) if value else dt.date.today()


def target_matches(prefix: str, target: str) -> bool:
    """``models.chat`` matches itself and ``models.chat.replicas``, not ``models.chat2``."""
    return target == prefix or target.startswith(prefix + ".") or target.startswith(prefix + "[")


def expired(waiver: Waiver, on: dt.date) -> bool:
    return dt.date.fromisoformat(str(waiver.expires)[:10]) < on


def _info(waiver: Waiver, on: dt.date, location: Location | None) -> WaiverInfo:
    return WaiverInfo(
        rule=waiver.rule,
        target=waiver.target,
        environments=waiver.environments,
        reason=waiver.reason,
        expires=str(waiver.expires),
        expired=expired(waiver, on),
        location=location,
    )


@dataclass
class WaiverUse:
    """Which waivers matched anything, across every environment checked."""

    matched: set[int]

    @classmethod
    def new(cls) -> WaiverUse:
        return cls(set())


def apply(
    results: Iterable[Result],
    waivers: Sequence[Waiver],
    on: dt.date,
    locate: Any = None,
    use: WaiverUse | None = None,
) -> list[Result]:
    """`results` with waivers applied. An unexpired match waives; an expired one is noted.

    `locate(path) -> Location` places the waiver in the file; `use` collects which waivers
    matched (for `unused`).
    """
    out: list[Result] = []
    for result in results:
        chosen: tuple[int, Waiver] | None = None
        for i, waiver in enumerate(waivers):
            if (
                waiver.rule == result.rule
                and waiver.applies_to(result.environment)
                and target_matches(waiver.target, result.target)
            ):
                if use is not None:
                    use.matched.add(i)
                # An unexpired waiver beats an expired one for the same result.
                if chosen is None or (expired(chosen[1], on) and not expired(waiver, on)):
                    chosen = (i, waiver)
        if chosen is None:
            out.append(result)
        else:
            loc = locate(chosen[1].path) if locate else None
            out.append(result.with_waiver(_info(chosen[1], on, loc)))
    return out


def unused(
    waivers: Sequence[Waiver],
    environments: Sequence[str],
    use: WaiverUse,
    on: dt.date,
    locate: Any = None,
    enabled_rules: Iterable[str] | None = None,
) -> list[Result]:
    """Advisory results for waivers (in scope of `environments`) that matched nothing."""
    enabled = set(enabled_rules) if enabled_rules is not None else None
    out: list[Result] = []
    for i, waiver in enumerate(waivers):
        scope = [e for e in environments if waiver.applies_to(e)]
        if i in use.matched or not scope:
            continue
        if enabled is not None and waiver.rule not in enabled and _known(waiver.rule):
            continue  # the rule is disabled by config: nothing can match, nothing to clean up
        why = (
            f"no rule is named {waiver.rule!r}"
            if not _known(waiver.rule)
            else f"{waiver.rule} reports nothing on {waiver.target}"
        )
        location = locate(waiver.path) if locate else None
        state = " and it has expired" if expired(waiver, on) else ""
        out.append(
            Result(
                rule=UNUSED_WAIVER,
                level="advisory",
                status="violation",
                environment=",".join(scope),
                target=format_path(waiver.path),
                field=waiver.path,
                message=f"waiver matches nothing in {', '.join(scope)}: {why}{state}; "
                "remove the waiver, or correct its rule, target or environments",
                location=location,
                waiver=_info(waiver, on, location),
            )
        )
    return out


def _known(rule_id: str) -> bool:
    from inferplane.policies.rules import rule_ids

    return rule_id in rule_ids()
