"""Waivers: explicit, visible, expiring exceptions to a rule (`policies.waivers` in a blueprint).

A waiver names one rule, a target (a YAML path prefix: ``models.chat`` waives
``models.chat`` and anything under it), optionally the environments it applies to, a
reason and an expiry date. Its effect:

- a matching result is reported with status ``waived`` — never dropped;
- once the expiry date has passed the waiver no longer waives: the result stays a
  violation and says the waiver expired;
- a waiver that matches no result in any checked environment is itself reported, as an
  advisory `unused-waiver` result, so stale exceptions get removed.

A waiver is valid up to and including its expiry date, and waives only while that date is
at most `MAX_DAYS` (policy config ``waivers.max_days``) after the day of the check: an
exception is re-justified at least that often. Its target is one object (the blueprint
schema and semantic checks refuse sections, wildcards and targets that do not exist), and its
reason must say something (`REASON_MIN_CHARS`, checked by the schema and `reason_problem`).
Waivers of mandatory rules in use are listed in every report's summary (`mandatory_waivers`).

A blueprint may waive advisory rules only: its authors are not the owners of the mandatory
rules, so a blueprint waiver of a mandatory result does not waive and says where such a
waiver lives instead, the platform's policy config (``mandatory_waivers``, each naming its
blueprint; `platform_waivers`), which the pull-request check reads from the base branch.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inferplane.blueprint.errors import Location, format_path
from inferplane.blueprint.model import Waiver
from inferplane.policies.config import WAIVER_MAX_DAYS
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
MAX_DAYS = WAIVER_MAX_DAYS
"""Default of the policy config's ``waivers.max_days``: the furthest expiry, in days ahead."""


def today(override: str | None = None) -> dt.date:
    """Today's date for expiry, or `override` / $INFERPLANE_TODAY (YYYY-MM-DD) when set.

    Raises ValueError, saying which setting is wrong, for anything but a YYYY-MM-DD date."""
    value = override or os.environ.get(TODAY_ENV)
    if not value:
        return dt.date.today()
    try:
        if len(value) != 10:
            raise ValueError(value)
        return dt.date.fromisoformat(value)
    except ValueError:
        where = "the date" if override else TODAY_ENV
        raise ValueError(f"{where}={value!r} is not a date YYYY-MM-DD; unset it") from None


def target_matches(prefix: str, target: str) -> bool:
    """``models.chat`` matches itself and ``models.chat.replicas``, not ``models.chat2``."""
    return target == prefix or target.startswith(prefix + ".") or target.startswith(prefix + "[")


def expired(waiver: Waiver, on: dt.date) -> bool:
    return dt.date.fromisoformat(str(waiver.expires)[:10]) < on


def too_far(waiver: Waiver, on: dt.date, max_days: int = MAX_DAYS) -> str | None:
    """Why `waiver` expires too far after `on`, or None."""
    latest = on + dt.timedelta(days=max_days)
    if dt.date.fromisoformat(str(waiver.expires)[:10]) <= latest:
        return None
    return (
        f"it expires {waiver.expires}, more than {max_days} days after {on.isoformat()}; "
        f"set expires to {latest.isoformat()} or earlier"
    )


MANDATORY_IN_BLUEPRINT = (
    "a blueprint may waive advisory rules only; a waiver of mandatory rule {rule} is kept in "
    "the platform's policy config (mandatory_waivers), which the platform team owns"
)


def _refusal(waiver: Waiver, on: dt.date, max_days: int, level: str, platform: bool) -> str | None:
    """Why a waiver that is not expired does not waive a result of `level`, or None."""
    if level == "mandatory" and not platform:
        return MANDATORY_IN_BLUEPRINT.format(rule=waiver.rule)
    return too_far(waiver, on, max_days)


def _info(
    waiver: Waiver,
    on: dt.date,
    location: Location | None,
    max_days: int = MAX_DAYS,
    refused: str | None = None,
) -> WaiverInfo:
    return WaiverInfo(
        rule=waiver.rule,
        target=waiver.target,
        environments=waiver.environments,
        reason=waiver.reason,
        expires=str(waiver.expires),
        expired=expired(waiver, on),
        location=location,
        refused=refused if refused is not None else too_far(waiver, on, max_days),
    )


def mandatory_waivers(results: Iterable[Result]) -> list[dict[str, Any]]:
    """Each waiver that waives a mandatory rule somewhere in `results`, once, with the
    environments where it does: what a reviewer must see in every report's summary."""
    found: dict[tuple[str, str, Location | None, str], dict[str, Any]] = {}
    for r in results:
        if r.status != "waived" or r.level != "mandatory" or r.waiver is None:
            continue
        w = r.waiver
        entry = found.setdefault(
            (w.rule, w.target, w.location, w.expires),
            {
                "rule": w.rule,
                "target": w.target,
                "environments": [],
                "expires": w.expires,
                "reason": w.reason,
                "location": str(w.location) if w.location else None,
            },
        )
        if r.environment not in entry["environments"]:
            entry["environments"].append(r.environment)
    return list(found.values())


def describe_mandatory(entry: Mapping[str, Any]) -> str:
    """One summary line for a `mandatory_waivers` entry."""
    where = f" ({entry['location']})" if entry["location"] else ""
    return (
        f"waived mandatory rule {entry['rule']} on {entry['target']} in "
        f"{', '.join(entry['environments'])} until {entry['expires']}{where}: {entry['reason']}"
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
    max_days: int = MAX_DAYS,
    platform: bool = False,
) -> list[Result]:
    """`results` with waivers applied. An unexpired match waives; an expired one, one that
    expires more than `max_days` after `on`, or a blueprint's (not `platform`) waiver of a
    mandatory result, is noted and does not waive. Results already waived stay as they are.

    `locate(path) -> Location` places the waiver in the file; `use` collects which waivers
    matched (for `unused`).
    """
    out: list[Result] = []
    for result in results:
        if result.status == "waived":
            out.append(result)
            continue

        def waives(w: Waiver, level: str = result.level) -> bool:
            return not expired(w, on) and _refusal(w, on, max_days, level, platform) is None

        chosen: tuple[int, Waiver] | None = None
        for i, waiver in enumerate(waivers):
            if (
                waiver.rule == result.rule
                and waiver.applies_to(result.environment)
                and target_matches(waiver.target, result.target)
            ):
                if use is not None:
                    use.matched.add(i)
                # A waiver that applies beats an expired or refused one for the same result.
                if chosen is None or (not waives(chosen[1]) and waives(waiver)):
                    chosen = (i, waiver)
        if chosen is None:
            out.append(result)
        else:
            loc = locate(chosen[1].path) if locate else None
            refused = _refusal(chosen[1], on, max_days, result.level, platform)
            out.append(result.with_waiver(_info(chosen[1], on, loc, max_days, refused)))
    return out


def platform_waivers(config_waivers: Sequence[Mapping[str, Any]], blueprint: str) -> list[Waiver]:
    """The policy config's ``mandatory_waivers`` of `blueprint`, as waivers whose path is
    their place in the config (``mandatory_waivers[i]``)."""
    out = []
    for i, w in enumerate(config_waivers):
        if w["blueprint"] != blueprint:
            continue
        envs = w.get("environments")
        out.append(
            Waiver(
                rule=str(w["rule"]),
                target=str(w["target"]),
                environments=tuple(envs) if envs else None,
                reason=str(w["reason"]),
                expires=str(w["expires"])[:10],
                path=("mandatory_waivers", i),
            )
        )
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
