"""The `inferplane` command line.

Exit codes, for every command: 0 success; 1 policy violations (`check`); 2 invalid
blueprint or usage; 3 internal error — a bug in inferplane, never the user's fault.
Diagnostics go to stderr as ``FILE:LINE:COL: error: <yaml.path>: <what>; <fix>``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import sys
from collections.abc import Callable, Sequence

from inferplane import __version__
from inferplane.app.exits import (
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_OK,
    internal_error,
    print_diagnostics,
    usage_error,
)
from inferplane.blueprint.errors import BlueprintError, counted, printable

DESCRIPTION = """\
Low-latency GPU inference on Kubernetes from one blueprint YAML.

  inferplane validate blueprints/app.yaml            check the file (schema + semantics)
  inferplane plan blueprints/app.yaml --env prod     what `pulumi up -s prod` would create
  inferplane diff out/prod-old out/prod              what a blueprint edit changes in a plan
  inferplane check blueprints/app.yaml               policy rules, offline, every environment
  inferplane explain warm-replicas                   why a rule exists and how to comply

Nothing here needs cloud credentials. `pulumi up -s <env>` in stacks/ provisions.
"""

EPILOG = "Exit codes: 0 ok, 1 policy violations, 2 invalid blueprint or usage, 3 internal error."


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 with one line of usage help (never a traceback)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(usage_error(self.prog, message))


def _cmd_validate(args: argparse.Namespace) -> int:
    from inferplane.blueprint.checks.semantic_vllm import advisories
    from inferplane.blueprint.resolution.resolve import load_blueprint_warned

    failed = False
    for path in args.blueprints:
        try:
            doc, envs, warned = load_blueprint_warned(path)
        except BlueprintError as exc:
            failed = True
            print_diagnostics(exc.diagnostics)
            continue
        # Warnings: what could not be checked (e.g. an LLM's GPU memory fit) and the capacity
        # plan's advisories; exit 0.
        for diagnostic in sorted([*advisories(doc), *warned], key=lambda d: d.location):
            print(diagnostic.format(), file=sys.stderr)
        if not args.quiet:
            count = counted(len(envs), "environment")
            print(printable(f"{path}: valid ({count}: {', '.join(envs)})"))
    return EXIT_INVALID if failed else EXIT_OK


def _cmd_schema(args: argparse.Namespace) -> int:
    from inferplane.blueprint.loading.schema import schema

    print(json.dumps(schema(), indent=2))
    return EXIT_OK


def _cmd_catalog(args: argparse.Namespace) -> int:
    from inferplane.blueprint.catalog import GPUS

    if args.format == "json":
        rows = [
            {
                "gpu": g.id,
                "name": g.display_name,
                "memory_gib": g.memory_gib,
                "architecture": g.architecture,
                "compute_capability": g.compute_capability,
                "mig_profiles": dict(g.mig_profiles),
                "aws": {str(k): v for k, v in g.aws_instances.items()},
                "gcp": {str(k): v for k, v in g.gcp_machines.items()},
            }
            for g in GPUS.values()
        ]
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    header = ("GPU", "MEMORY", "ARCH (CC)", "MIG PROFILES", "AWS (gpus=type)", "GCP (gpus=type)")
    table = [header]
    for g in GPUS.values():
        table.append(
            (
                g.id,
                f"{g.memory_gib} GiB",
                f"{g.architecture} ({g.compute_capability})",
                ", ".join(g.mig_profiles) or "-",
                ", ".join(f"{n}={t}" for n, t in g.aws_instances.items()) or "-",
                ", ".join(f"{n}={t}" for n, t in g.gcp_machines.items()) or "-",
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
    return EXIT_OK


def _add_validate(p: argparse.ArgumentParser) -> None:
    p.add_argument("blueprints", nargs="+", metavar="BLUEPRINT", help="blueprint YAML file(s)")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing when valid")


def _add_catalog(p: argparse.ArgumentParser) -> None:
    p.add_argument("--format", choices=("text", "json"), default="text")


# (name, help, module providing add_arguments/run, or local functions)
_Runner = Callable[[argparse.Namespace], int]
_Adder = Callable[[argparse.ArgumentParser], None]
_LOCAL: dict[str, tuple[str, _Adder | None, _Runner]] = {
    "validate": (
        "validate blueprints: strict YAML, schema, semantic checks",
        _add_validate,
        _cmd_validate,
    ),
    "schema": ("print the blueprint JSON Schema", None, _cmd_schema),
    "catalog": ("list the built-in GPU catalog", _add_catalog, _cmd_catalog),
}
_MODULES: dict[str, tuple[str, str]] = {
    "plan": ("show (and write) what `pulumi up` would create, offline", "inferplane.app.plan"),
    "check": ("apply the policy rules to every environment, offline", "inferplane.app.check"),
    "explain": (
        "explain a policy rule: rationale, remediation, config, examples",
        "inferplane.app.explain",
    ),
    "diff": (
        "list the resources two plans (`plan --out`) add, remove and change",
        "inferplane.app.diff",
    ),
    "rehearse": (
        "run the real control loops against stand-in replicas under a traffic profile",
        "inferplane.app.rehearse",
    ),
}
_ORDER = ("validate", "plan", "diff", "check", "rehearse", "explain", "schema", "catalog")


def build_parser(selected: str | None = None) -> argparse.ArgumentParser:
    """The parser; only the `selected` command's module is imported (plan and check load
    Pulumi, which `validate` must not pay for)."""
    parser = _Parser(
        prog="inferplane",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"inferplane {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in _ORDER:
        if name in _LOCAL:
            help_text, adder, runner = _LOCAL[name]
            p = sub.add_parser(name, help=help_text, description=help_text, epilog=EPILOG)
            if adder:
                adder(p)
            p.set_defaults(func=runner)
        else:
            help_text, module_name = _MODULES[name]
            p = sub.add_parser(
                name,
                help=help_text,
                description=help_text,
                epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter,
            )
            if name == selected:
                module = importlib.import_module(module_name)
                module.add_arguments(p)
                p.set_defaults(func=module.run)
    return parser


# Loading the Pulumi provider SDKs for `plan` and `check` allocates millions of short-lived
# objects (typing constructs of generated classes); at CPython's default first-generation
# threshold (700) the cyclic collector runs thousands of times for nothing. A larger first
# generation makes those commands ~12% faster for a few MiB more peak memory.
GC_THRESHOLDS = (100_000, 50, 100)


def main(argv: Sequence[str] | None = None) -> int:
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        selected = next((a for a in argv if not a.startswith("-")), None)
        parser = build_parser(selected)
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help(sys.stderr)
            return EXIT_INVALID
        return int(args.func(args))
    except BlueprintError as exc:
        return print_diagnostics(exc.diagnostics)
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        # A path the user gave that cannot be read: their input, not our bug.
        return usage_error(str(exc.filename), f"cannot read: {exc.strerror}")
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except SystemExit as exc:  # argparse: --help/--version exit 0, usage errors 2
        return exc.code if isinstance(exc.code, int) else EXIT_INVALID
    except Exception as exc:
        return internal_error(exc)


if __name__ == "__main__":
    sys.exit(main())
