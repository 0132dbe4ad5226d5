"""`inferplane check`: the policy rules on every environment of some blueprints, offline.

    inferplane check BLUEPRINT... [--env NAME]... [--format text|json|sarif|github]
                     [--policy-config FILE] [--output FILE]

Each environment's stack program runs in-process under mocks (as `inferplane plan` does);
every rule of `policies/` judges the resources it registers; each result is mapped back to
the blueprint value that caused it, then the blueprint's waivers apply.

Exit codes (`inferplane.app.exits`), the worst found: 0 no mandatory violation; 1 at least
one; 2 invalid blueprint, policy config or usage (reported in the chosen format — located
diagnostics on stderr for text — while every valid file is still checked); 3 internal
error (one line; the traceback with INFERPLANE_DEBUG=1).
"""

from __future__ import annotations

import argparse
import datetime as dt
import multiprocessing
import os
import pickle
import sys
import traceback
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from inferplane.app import plan_sources, platform_scale_out
from inferplane.app.exits import (
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_VIOLATIONS,
    internal_error,
    print_diagnostics,
    usage_error,
)
from inferplane.app.joined_names import joined_name_problems
from inferplane.app.report import FORMATS, CheckReport, render, wants_color
from inferplane.app.shared_clusters import shared_cluster_problems
from inferplane.app.shared_stores import shared_store_problems
from inferplane.blueprint import naming
from inferplane.blueprint.errors import BlueprintError, Diagnostic, Location, format_path
from inferplane.blueprint.model import Environment
from inferplane.policies import waivers
from inferplane.policies.config import GRANT_LISTS, PolicyConfig
from inferplane.policies.config import load as load_policy_config
from inferplane.policies.engine import Result, evaluate
from inferplane.policies.resources import Resource
from inferplane.policies.rules import all_rules
from inferplane.policies.stack import Stack


class UsageError(Exception):
    """A command-line mistake (exit 2)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("blueprints", nargs="+", metavar="BLUEPRINT", help="blueprint YAML file(s)")
    parser.add_argument(
        "--env",
        action="append",
        dest="envs",
        metavar="NAME",
        help="check only this environment (repeatable; default: every environment)",
    )
    parser.add_argument(
        "--format", choices=FORMATS, default="text", help="report format (default: text)"
    )
    parser.add_argument(
        "--policy-config",
        metavar="FILE",
        help="rule levels and thresholds (YAML or JSON; the CrossGuard pack reads the same file)",
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write the report to FILE instead of stdout"
    )
    parser.add_argument(
        "--invokes",
        metavar="FILE",
        help="provider answers recorded from a real run (a YAML list of {token, args, "
        "answer}): the capacity preflight and its rules run on them",
    )
    # Waiver expiry is judged against this date (tests pin it; INFERPLANE_TODAY also works).
    parser.add_argument("--today", help=argparse.SUPPRESS)


def stack_of(env: Environment, invokes: Invokes = (), today: dt.date | None = None) -> Stack:
    """Run `env`'s program offline and wrap what it registered for the rules; `invokes`:
    recorded provider answers, which run the capacity preflight (`run_program`), as of the
    start of `today` (default: now)."""
    from inferplane.app.offline import run_program  # imports Pulumi: only when checking

    if invokes:
        now = {"inferplane:preflightNow": f"{today.isoformat()}T00:00:00Z"} if today else {}
        recording = run_program(env, invokes=invokes, config=now)
    else:
        recording = run_program(env)
    resources = [
        Resource(type=r.type, name=r.name, urn=r.urn, props=r.inputs, parent=r.parent)
        for r in recording.resources
        if not r.read  # looked-up objects exist already; the stack does not create them
    ]
    return Stack.of(resources, env)


Invokes = Sequence[Mapping[str, Any]]
"""Recorded provider answers (`inferplane.app.offline_mocks.recorded_answer`)."""


def _stack(env: Environment, invokes: Invokes, today: dt.date | None) -> Stack:
    """`stack_of`, called with the recorded answers only where there are some."""
    return stack_of(env, invokes, today) if invokes else stack_of(env)


_PENDING: list[tuple[Environment, PolicyConfig, Invokes, dt.date | None]] = []
"""Environments handed to forked workers (inherited, not pickled: the model holds
read-only mappings that do not pickle)."""


def _evaluate_one(index: int) -> list[Result] | BaseException:
    """Worker: one environment's unwaived results, or the exception its run raised."""
    env, config, invokes, today = _PENDING[index]
    try:
        return evaluate(_stack(env, invokes, today), config)
    except BaseException as exc:  # handed back to the parent, which raises it
        if os.environ.get("INFERPLANE_DEBUG") == "1":
            exc.add_note("in environment " + env.name + ":\n" + traceback.format_exc())
        if isinstance(exc, BlueprintError):
            return _RemoteBlueprintError(list(exc.diagnostics))
        try:
            pickle.dumps(exc)
        except Exception:
            return RuntimeError(f"{type(exc).__name__}: {exc}")
        return exc


class _RemoteBlueprintError(Exception):
    """A BlueprintError on its way back from a worker (BlueprintError does not pickle)."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__(diagnostics)
        self.diagnostics = diagnostics


def _max_jobs() -> int:
    """$INFERPLANE_JOBS: the most environments checked at once (default 8)."""
    value = os.environ.get("INFERPLANE_JOBS", "").strip() or "8"
    if not value.isascii() or not value.isdigit() or not 1 <= int(value) <= 256:
        raise UsageError(
            f"INFERPLANE_JOBS={value!r} is not a number of processes from 1 to 256; "
            "set it to a whole number such as 2, or unset it"
        )
    return int(value)


def evaluate_environments(
    environments: Sequence[Environment],
    config: PolicyConfig,
    invokes: Invokes = (),
    today: dt.date | None = None,
) -> list[list[Result]]:
    """Each environment's results (no waivers).

    The first environment runs in this process: that run imports the program's modules and
    fills its caches, which is most of a cold run's time. When two or more remain, they
    then run one process per environment on the cores there are, forked from this warm
    process, so none of them pays for the imports again (and a long-lived caller, such as
    a test session or `check` of several blueprints, pays for them once)."""
    if not environments:
        return []
    most = _max_jobs()  # a bad $INFERPLANE_JOBS is refused before any work
    first = [evaluate(_stack(environments[0], invokes, today), config)]
    rest = environments[1:]
    jobs = min(len(rest), os.cpu_count() or 1, most)
    if jobs < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return first + [evaluate(_stack(env, invokes, today), config) for env in rest]
    _PENDING[:] = [(env, config, invokes, today) for env in rest]
    try:
        try:
            with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork")) as pool:
                outcomes = list(pool.map(_evaluate_one, range(len(rest))))
        except BrokenProcessPool:
            # A forked worker died (a fork of a process that runs threads can crash in the
            # child). The executor notices, where a Pool would wait for it forever: the
            # environments run here instead, one after the other.
            outcomes = [_evaluate_one(i) for i in range(len(rest))]
    finally:
        _PENDING.clear()
    out = first
    for outcome in outcomes:
        if isinstance(outcome, _RemoteBlueprintError):
            raise BlueprintError(outcome.diagnostics)
        if isinstance(outcome, BaseException):
            raise outcome
        out.append(outcome)
    return out


def check_environments(
    environments: Sequence[Environment],
    config: PolicyConfig,
    today: dt.date,
    invokes: Invokes = (),
) -> list[Result]:
    """Results of every rule on `environments` (one blueprint), waivers applied, plus one
    advisory result per waiver that matched nothing in any of them."""
    results: list[Result] = []
    use = waivers.WaiverUse.new()
    max_days = config.waiver_max_days
    found_all = evaluate_environments(environments, config, invokes, today if invokes else None)
    for env, found in zip(environments, found_all, strict=True):
        # The platform's waivers first (they alone may waive a mandatory rule), then the
        # blueprint's (advisory rules only).
        platform = waivers.platform_waivers(config.mandatory_waivers, env.blueprint)
        found = waivers.apply(
            found, platform, today, config.locate_mandatory_waiver, None, max_days, platform=True
        )
        results.extend(waivers.apply(found, env.waivers, today, env.locate, use, max_days))
    if environments:
        first = environments[0]
        enabled = [r.id for r in all_rules() if config.level(r) != "disabled"]
        results.extend(
            waivers.unused(
                first.waivers,
                [e.name for e in environments],
                use,
                today,
                first.locate,
                enabled,
            )
        )
    return results


def cross_blueprint_problems(docs: Sequence[Any]) -> list[Diagnostic]:
    """What no blueprint shows alone, found across the files checked together: two
    blueprints with one name, and two (blueprint, environment) pairs whose joined name
    (`naming.stack_name`, the prefix of node groups, roles, load balancers and hosts) is the
    same, e.g. ``team-x`` + ``prod-eu`` and ``team-x-prod`` + ``eu``. The later file is
    blamed, at its ``name`` or its environment's key."""
    out: list[Diagnostic] = []
    names: dict[str, str] = {}
    joined: dict[str, tuple[str, str, str]] = {}
    for doc in docs:
        name, file = str(doc.data["name"]), doc.source.file
        if name in names:
            out.append(
                Diagnostic(
                    doc.source.value(("name",)),
                    ("name",),
                    f"blueprint name {name!r} is also the name of {names[name]}: the name "
                    "keys its namespace, cloud resources and model-store areas",
                    "give one of the blueprints another name",
                )
            )
            continue
        names[name] = file
        for env in doc.data["environments"]:
            stack = naming.stack_name(name, str(env))
            other = joined.get(stack)
            if other is not None and other[:2] != (name, str(env)):
                out.append(
                    Diagnostic(
                        doc.source.key(("environments", env)),
                        ("environments", env),
                        f"blueprint {name!r} environment {env!r} names its resources "
                        f"{stack!r}, as blueprint {other[0]!r} environment {other[1]!r} of "
                        f"{other[2]} does",
                        "rename the environment or the blueprint so that "
                        "<blueprint>-<environment> differs",
                    )
                )
            joined.setdefault(stack, (name, str(env), file))
    out.extend(_pool_name_collisions(docs))
    return out


def _pool_name_collisions(docs: Sequence[Any]) -> list[Diagnostic]:
    """``<blueprint>-<environment>-<pool>`` names node groups, NodePools and EC2NodeClasses
    (cluster-scoped), and two different triples can join to one name: blueprint ``a``,
    environment ``b``, pool ``c-d`` and blueprint ``a-b``, environment ``c``, pool ``d``.
    The later file is blamed at its pool."""
    out: list[Diagnostic] = []
    seen: dict[str, tuple[str, str, str, str]] = {}
    for doc in docs:
        name, file = str(doc.data["name"]), doc.source.file
        for pool in doc.data.get("gpu_pools") or {}:
            for env in doc.data["environments"]:
                joined = f"{naming.stack_name(name, str(env))}-{pool}"
                triple = (name, str(env), str(pool), file)
                other = seen.setdefault(joined, triple)
                if other[:3] == triple[:3] or other[0] == name:
                    continue
                out.append(
                    Diagnostic(
                        doc.source.key(("gpu_pools", pool)),
                        ("gpu_pools", pool),
                        f"pool {pool!r} of blueprint {name!r} environment {env!r} names its "
                        f"node groups and Karpenter objects {joined!r}, as pool {other[2]!r} "
                        f"of blueprint {other[0]!r} environment {other[1]!r} of {other[3]} "
                        "does",
                        "rename the pool, the environment or the blueprint so that "
                        "<blueprint>-<environment>-<pool> differs",
                    )
                )
    return out


def ambiguous_grant_keys(config: PolicyConfig, docs: Sequence[Any]) -> list[Diagnostic]:
    """Keys of the per-blueprint grant lists that are an environment's name in a checked
    blueprint. Such a key names a blueprint (`policies.scoping`), so a config written for an
    environment `prod` would grant its stores or registries to whichever blueprint is
    named `prod`, which a pull request may add."""
    environments: dict[str, str] = {}
    for doc in docs:
        for env in doc.data["environments"]:
            environments.setdefault(str(env), str(doc.data["name"]))
    out = []
    for rule_id, key in GRANT_LISTS:
        for name in config.values.get(rule_id, {}).get(key) or {}:
            owner = environments.get(str(name))
            if owner is None:
                continue
            path: tuple[str, ...] = (rule_id, key, str(name))
            where = config.key_locations.get(path) or Location(config.file or "<config>", 1, 1)
            out.append(
                Diagnostic(
                    where,
                    path,
                    f"key {name!r} is the name of an environment (of blueprint {owner!r}), "
                    "and keys of this list name blueprints: it would grant to a blueprint "
                    f"named {name!r}, not to that environment",
                    f"write {owner}/{name} for that environment of {owner!r}, or the "
                    "blueprint's name for all its environments",
                )
            )
    return out


def check_files(
    paths: Iterable[str],
    env_names: Sequence[str] | None = None,
    config_file: str | None = None,
    today: dt.date | None = None,
    invokes: Invokes = (),
) -> CheckReport:
    """Check every environment (or those named) of each blueprint.

    An invalid blueprint or policy config does not stop the others: its diagnostics go to
    the report's `invalid` and every valid file is still checked. Raises UsageError for an
    environment no blueprint has.
    """
    from inferplane.blueprint.resolution.resolve import load_blueprint, resolve

    report = CheckReport(results=[])
    try:
        config = load_policy_config(config_file) if config_file else PolicyConfig()
    except BlueprintError as exc:  # no rule can be judged without its levels
        report.invalid.extend(exc.diagnostics)
        return report
    try:
        on = today or waivers.today()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    paths = list(paths)
    loaded = []
    for path in paths:
        try:
            loaded.append(load_blueprint(path))
        except BlueprintError as exc:
            report.invalid.extend(exc.diagnostics)
        except OSError as exc:
            report.invalid.append(
                Diagnostic(
                    Location(path, 1, 1),
                    (),
                    f"cannot read the file: {exc.strerror}",
                    "check the path",
                )
            )
    wanted = list(dict.fromkeys(env_names or ()))
    every = {name for _, names in loaded for name in names}
    unknown = [name for name in wanted if name not in every]
    if unknown and loaded:
        raise UsageError(
            f"no environment named {', '.join(map(repr, unknown))} in "
            f"{', '.join(paths)} (environments: {', '.join(sorted(every))})"
        )
    report.invalid.extend(cross_blueprint_problems([doc for doc, _ in loaded]))
    report.invalid.extend(ambiguous_grant_keys(config, [doc for doc, _ in loaded]))
    scaling = platform_scale_out.of_config(config)  # what `levers: auto` chooses against
    resolved = []
    # Every environment of every file, chosen or not, is compared across blueprints: a
    # `--env prod` run must still see prod installing what another blueprint's staging
    # installs on the same cluster.
    every_env: list[Environment] = []
    for doc, names in loaded:
        chosen = [n for n in names if not wanted or n in wanted]
        envs: dict[str, Environment] = {}
        problems: list[Diagnostic] = []
        for n in names:
            try:
                envs[n] = resolve(doc, n, scaling)
            except BlueprintError as exc:  # valid alone, but not deployable: the user's
                if n in chosen:
                    problems.extend(exc.diagnostics)
        every_env.extend(envs.values())
        if problems:
            report.invalid.extend(problems)
        else:
            resolved.append((doc, chosen, [envs[n] for n in chosen]))
    report.invalid.extend(shared_cluster_problems(every_env))
    report.invalid.extend(shared_store_problems(every_env))
    report.invalid.extend(joined_name_problems(every_env))
    for doc, chosen, environments in resolved:
        try:
            found = check_environments(environments, config, on, invokes)
        except BlueprintError as exc:
            report.invalid.extend(exc.diagnostics)
            continue
        report.results.extend(found)
        report.checked.extend((doc.source.file, n) for n in chosen)
        report.not_checked.extend(
            {
                "blueprint": doc.source.file,
                "environment": env.name,
                "check": "capacity-preflight",
                "reason": plan_sources.NOT_CHECKED,
            }
            for env in environments
            if not env.kubernetes
            and plan_sources.listed(env)
            and not invokes  # with recorded answers it ran
        )
    report.results.sort(key=Result.sort_key)
    report.invalid.sort(key=lambda d: (d.location, format_path(d.path)))
    return report


def _invokes(path: str | None) -> list[dict[str, Any]]:
    from inferplane.app import recorded_invokes

    try:
        return recorded_invokes.load(path) if path else []
    except recorded_invokes.InvokesError as exc:
        raise UsageError(f"--invokes {exc}") from None


def run(args: argparse.Namespace) -> int:
    """Run `inferplane check` with parsed `args`; returns the exit code, the worst found:
    2 when any input is invalid, else 1 on a mandatory violation, else 0."""
    try:
        today = dt.date.fromisoformat(args.today) if args.today else None
    except ValueError:
        return usage_error("inferplane check", f"--today {args.today!r} is not YYYY-MM-DD")
    try:
        invokes = _invokes(args.invokes)
        report = check_files(args.blueprints, args.envs, args.policy_config, today, invokes)
    except UsageError as exc:
        return usage_error("inferplane check", str(exc))
    if args.format == "text":  # the located lines an editor jumps to; other formats carry them
        print_diagnostics(report.invalid)
    if args.output:
        text = render(report, args.format)
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except (OSError, ValueError) as exc:  # a missing or unwritable folder, a name too long
            reason = getattr(exc, "strerror", None) or exc
            print(f"inferplane check: error: --output {args.output}: {reason}", file=sys.stderr)
            return EXIT_INVALID
    else:
        sys.stdout.write(render(report, args.format, color=wants_color(sys.stdout)))
    if report.invalid:
        return EXIT_INVALID
    return EXIT_OK if report.passed else EXIT_VIOLATIONS


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m inferplane.app.check ...`: the same command without the `inferplane` wrapper."""
    parser = argparse.ArgumentParser(
        prog="inferplane check", description="apply the policy rules to every environment, offline"
    )
    add_arguments(parser)
    try:
        args = parser.parse_args(argv)
        return run(args)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_INVALID
    except BlueprintError as exc:
        return print_diagnostics(exc.diagnostics)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as exc:
        return internal_error(exc)


if __name__ == "__main__":
    sys.exit(main())
