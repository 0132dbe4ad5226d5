"""`inferplane explain RULE`: why a rule exists, how to comply, its config, and examples.

inferplane explain warm-replicas
inferplane explain --list
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

from inferplane.app.exits import EXIT_INVALID, EXIT_OK, usage_error
from inferplane.policies.framework import Rule
from inferplane.policies.rules import all_rules
from inferplane.policies.waivers import UNUSED_WAIVER, UNUSED_WAIVER_TEXT, UNUSED_WAIVER_TITLE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rule", nargs="?", metavar="RULE", help="a rule id, e.g. warm-replicas")
    parser.add_argument("--list", action="store_true", help="list every rule with its level")
    parser.add_argument("--format", choices=("text", "json"), default="text")


def _indent(text: str, by: str = "  ") -> str:
    return "\n".join(by + line if line else line for line in text.rstrip("\n").splitlines())


def _para(text: str) -> str:
    return textwrap.fill(text, width=88, initial_indent="  ", subsequent_indent="  ")


def _effect(rule: Rule) -> str:
    return "fails the check" if rule.level == "mandatory" else "reported, does not fail"


def explain_text(rule: Rule) -> str:
    parts = [
        f"{rule.id}: {rule.title}",
        f"level: {rule.level} by default ({_effect(rule)}); CrossGuard: {rule.scope} validation",
        "",
        "Why",
        _para(rule.rationale),
        "",
        "How to comply",
        _para(rule.remediation),
    ]
    if rule.config:
        parts += ["", "Config (policy config file, under the rule id)"]
        for key in rule.config:
            parts.append(f"  {key.name}: {json.dumps(key.default)}  — {key.description}")
    parts += ["", "What it reads", _para(rule.sources)]
    if rule.example_config:
        parts += ["", "With the platform's policy config", _indent(rule.example_config, "    ")]
    if rule.passing_example:
        parts += ["", "Passes", _indent(rule.passing_example, "    ")]
    if rule.failing_example:
        parts += ["", "Fails", _indent(rule.failing_example, "    ")]
    if rule.links:
        parts += ["", "References", *(f"  {link}" for link in rule.links)]
    parts += [
        "",
        "Waive it for one target (reported as waived, never hidden):",
        "    policies:",
        "      waivers:",
        f"        - rule: {rule.id}",
        "          target: models.<model>        # a YAML path prefix",
        "          environments: [staging]       # optional",
        "          reason: <why this is acceptable>",
        "          expires: <YYYY-MM-DD>",
    ]
    return "\n".join(parts) + "\n"


def explain_dict(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "title": rule.title,
        "level": rule.level,
        "scope": rule.scope,
        "rationale": rule.rationale,
        "remediation": rule.remediation,
        "config": [
            {
                "name": k.name,
                "default": k.default,
                "schema": dict(k.schema),
                "description": k.description,
            }
            for k in rule.config
        ],
        "sources": rule.sources,
        "links": list(rule.links),
        "passing_example": rule.passing_example,
        "failing_example": rule.failing_example,
        "example_config": rule.example_config,
    }


def run(args: argparse.Namespace) -> int:
    rules = {r.id: r for r in all_rules()}
    if args.list or not args.rule:
        if args.format == "json":
            print(json.dumps([explain_dict(r) for r in rules.values()], indent=2))
        else:
            width = max(len(i) for i in rules)
            for r in rules.values():
                print(f"{r.id.ljust(width)}  {r.level.ljust(9)}  {r.title}")
        return EXIT_OK
    if args.rule == UNUSED_WAIVER:
        print(f"{UNUSED_WAIVER}: {UNUSED_WAIVER_TITLE}\nlevel: advisory\n\n{UNUSED_WAIVER_TEXT}")
        return EXIT_OK
    rule = rules.get(args.rule)
    if rule is None:
        close = difflib.get_close_matches(args.rule, list(rules), n=1)
        hint = f"did you mean {close[0]}? " if close else ""
        return usage_error(
            "inferplane explain",
            f"no rule named {args.rule!r}; {hint}rules: {', '.join(rules)}",
        )
    if args.format == "json":
        print(json.dumps(explain_dict(rule), indent=2))
    else:
        sys.stdout.write(explain_text(rule))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="inferplane explain", description=__doc__.splitlines()[0])
    add_arguments(parser)
    try:
        return run(parser.parse_args(argv))
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_INVALID


if __name__ == "__main__":
    sys.exit(main())
