"""Policy waivers (``policies.waivers``) that say something: a target that exists, a reason
a reviewer can weigh, and environments the blueprint defines. Their expiry dates are
checked by `semantic_network.check_waiver_dates`.
"""

from __future__ import annotations

import re

from inferplane.blueprint.errors import Diagnostic, YamlPath
from inferplane.blueprint.source import Document


def _waiver_target_problem(doc: Document, target: str) -> tuple[str, str] | None:
    """Why a waiver's target (one object, by the schema's pattern) names nothing."""
    section, _, name = target.partition(".")
    if not name:  # load_balancer: every blueprint has one (its defaults when omitted)
        return None
    names = list(doc.data.get(section) or {})
    if name in names:
        return None
    kind = "model" if section == "models" else "GPU pool"
    return f"no {kind} named {name!r}", "use one of: " + ", ".join(f"{section}.{n}" for n in names)


def _says_something(reason: str) -> bool:
    """A reason (20+ characters, by the schema) of words, not punctuation or one key held."""
    letters = {c.lower() for c in reason if c.isalnum()}
    return len(letters) >= 5 and len(re.findall(r"[^\W\d_]{2,}", reason)) >= 3


def check_waivers(doc: Document) -> list[Diagnostic]:
    """Every waiver's target, reason and environments (once: waivers are not overridden)."""
    envs = doc.data["environments"]
    out = []
    for i, waiver in enumerate((doc.data.get("policies") or {}).get("waivers") or []):
        at: YamlPath = ("policies", "waivers", i)
        found = _waiver_target_problem(doc, waiver["target"])
        if found is not None:
            out.append(Diagnostic(doc.source.value((*at, "target")), (*at, "target"), *found))
        if not _says_something(waiver["reason"]):
            out.append(
                Diagnostic(
                    doc.source.value((*at, "reason")),
                    (*at, "reason"),
                    f"the reason {waiver['reason']!r} does not say why the exception is acceptable",
                    "write at least three words a reviewer can weigh (what is waived, why "
                    "it is safe, what ends it)",
                )
            )
        for j, name in enumerate(waiver.get("environments") or []):
            if name not in envs:
                path: YamlPath = ("policies", "waivers", i, "environments", j)
                out.append(
                    Diagnostic(
                        doc.source.value(path),
                        path,
                        f"no environment named {name!r}",
                        "use one of: " + ", ".join(envs),
                    )
                )
    return out
