"""Classifies every option of `vllm serve` and every variable of `vllm/envs.py` of each
supported vLLM release, read from the source of its PyPI wheel, into the allowlists that
`vllm.extra_args` and `vllm.env` of a model running that release are checked against.

    python scripts/facts/vllm_wheels.py      # fetches and unpacks every release of WHEELS (cached)
    python scripts/facts/vllm_serve_flags.py ~/.cache/inferplane/vllm/vllm-0.33.0-*.whl \
        ~/.cache/inferplane/vllm/0.33.0/vllm

writes `inferplane/facts/vllm/v0.33.0/serve_flags.txt`, `env_vars.txt`,
`tool_parsers.txt` (the names `--tool-call-parser` accepts), `defaults.txt` (the engine
defaults the fit check models), `metrics.txt` (the v1 engine's Prometheus metric
families, with the renames their documentation announces), `deprecations.txt` (the
replacements the release's own deprecation notices name, read as
`vllm_read.deprecations` says) and `flag_values.txt` (the keys
and choices the allowed JSON and choice options take, read from the config classes and
Literals of the release, and what each key of a plain-dict option takes:
`vllm_value_classes.JSON_CONFIG_FLAGS` / `CHOICE_FLAGS` / `DICT_FLAGS`);
`routes.txt` (every HTTP route of the API server, classified: `vllm_routes.py`);
`histogram_buckets.txt` (the default bounds of each histogram bucket family and the family
each histogram draws from, or a release's fixed bounds: `vllm_read.histogram_buckets`);
`--check` compares instead of writing. Every name the wheel defines must be classified (in
`vllm_flag_classes.py` / `vllm_env_classes.py`), and every name classified there must exist
in at least one supported release: a new release has no facts until a person has decided
about each new option and variable.

Upgrading vLLM: download the new wheel, add it to `WHEELS` (file name and the sha256 PyPI
lists), run the script (it names every unclassified option and variable), classify them
under the same trust rules (nothing that loads code, widens access, reaches credentials or
sets what inferplane owns is allowed), run it again, read the diff of the new facts against
the previous release's, then add the release to `releases.json` and move the pin.

The parser of `vllm serve` is built by `make_arg_parser` (vllm/entrypoints/openai/cli_args.py
up to 0.10.x, vllm/entrypoints/common/cli_args.py in 0.33.0: its own options, then
`FrontendArgs.add_cli_args`, one `--<field>` per dataclass field of FrontendArgs and its
base) and `vllm/engine/arg_utils.py` (`EngineArgs.add_cli_args`: explicit `add_argument`
calls). A field typed ``bool`` (or ``Optional[bool]``) gets ``argparse.BooleanOptionalAction``
in `arg_utils._compute_kwargs`, i.e. also ``--no-<name>``. argparse adds ``-h``/``--help`` to
every parser (``add_help=True``, Lib/argparse.py). The variables are the keys of
``environment_variables`` in `vllm/envs.py`.

`tests/blueprint/test_vllm_allowlists.py` regenerates every release's tables from the names
they list (no download) and fails when they differ from what this script's classification
and version say, or when a supported release has no tables.
"""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import vllm_env_classes as env_classes
import vllm_flag_classes as flag_classes
import vllm_read
import vllm_routes
import vllm_value_classes as value_classes

SCRIPT_VERSION = "8"
"""Written into every table; raise it whenever a change here or in the classification
modules changes what the tables say, so tables of the previous version read as stale."""

FACTS = Path(__file__).resolve().parents[2] / "inferplane" / "facts" / "vllm"
FLAGS_FILE = "serve_flags.txt"
ENV_FILE = "env_vars.txt"
PARSERS_FILE = "tool_parsers.txt"
DEFAULTS_FILE = "defaults.txt"
METRICS_FILE = "metrics.txt"
VALUES_FILE = "flag_values.txt"
DEPRECATIONS_FILE = "deprecations.txt"
BUCKETS_FILE = "histogram_buckets.txt"

# The wheels classified: release -> (file, sha256 of the PyPI wheel,
# https://pypi.org/project/vllm/<version>/#files). A wheel not listed here is refused, so
# the tables always name a file anyone can fetch and compare.
WHEELS: dict[str, tuple[str, str]] = {
    "v0.10.2": (
        "vllm-0.10.2-cp38-abi3-manylinux1_x86_64.whl",
        "e0cba6110483d9bf25c4402d8655cf78d366dd13e4155210980cc3480ed98b7b",
    ),
    "v0.33.0": (
        "vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl",
        "4b6bdec4ab269990bf70d45a3c1e94c3760a27064513760193b26d6f0da883aa",
    ),
}

HEADER = """\
# {what} of vLLM {release}{how}.
# Source: PyPI wheel {wheel}
# (sha256 {sha256}), files {files},
# read and classified by scripts/facts/vllm_serve_flags.py version {script} (see its docstring).
# One name a line: NAME<TAB>allowed | NAME<TAB>owned<TAB>how to set it from the blueprint |
# NAME<TAB>refused<TAB>why{extra}"""


def _header(what: str, release: str, files: str, extra: str, how: str = ", classified") -> str:
    wheel, sha256 = WHEELS[release]
    return HEADER.format(
        what=what,
        release=release,
        how=how,
        wheel=wheel,
        sha256=sha256,
        files=files,
        script=SCRIPT_VERSION,
        extra=extra,
    )


def flags_table(
    release: str, longs: Iterable[str], shorts: dict[str, str], every: Iterable[str]
) -> str:
    """The flag table of `release`; `every` is the long options of all supported releases
    (a classified name in none of them is stale)."""
    lines = [
        _header(
            "Every option of `vllm serve`",
            release,
            "vllm/engine/arg_utils.py, vllm/entrypoints/*/cli_args.py, vllm/config/*.py",
            " | -SHORT<TAB>short<TAB>--its-long-option",
        )
    ]
    longs = set(longs)
    unclassified = []
    for flag in sorted(longs):
        try:
            kind, text = flag_classes.classify_flag(flag)
        except KeyError:
            unclassified.append(flag)
            continue
        lines.append("\t".join(x for x in (flag, kind, text) if x))
    for short in sorted(shorts):
        lines.append(f"{short}\tshort\t{shorts[short]}")
    stale = flag_classes.classified() - longs - set(every)
    if unclassified or stale:
        raise SystemExit(
            f"classify these options of vllm serve {release}: {sorted(unclassified)}; "
            f"an option of no supported release, remove them here: {sorted(stale)}"
        )
    return "\n".join(lines) + "\n"


def env_table(release: str, names: Iterable[str], every: Iterable[str]) -> str:
    """The variable table of `release`; `every` is the envs.py variables of all supported
    releases."""
    lines = [
        _header(
            "Every variable of vllm/envs.py, and a few others",
            release,
            "vllm/envs.py",
            "\n# A name in no line is refused as unclassified.",
        )
    ]
    names = set(names)
    unclassified = []
    for var in sorted(names | env_classes.OTHER_ENV):
        try:
            kind, text = (
                env_classes.classify_env(var)
                if var in names
                else env_classes.classify_other_env(var)
            )
        except KeyError:
            unclassified.append(var)
            continue
        lines.append("\t".join(x for x in (var, kind, text) if x))
    stale = env_classes.classified() - names - set(every)
    if unclassified or stale:
        raise SystemExit(
            f"classify these variables of vllm/envs.py {release}: {sorted(unclassified)}; "
            f"a variable of no supported release, remove them here: {sorted(stale)}"
        )
    return "\n".join(lines) + "\n"


def parsers_table(release: str, names: Iterable[str]) -> str:
    """The names `--tool-call-parser` of `release` accepts, one a line."""
    head = _header(
        "Every tool-call parser name",
        release,
        "vllm/entrypoints/openai/tool_parsers/*.py, vllm/tool_parsers/__init__.py",
        "",
        how="",
    ).rsplit("\n", 2)[0]
    return head + "\n# One name a line.\n" + "".join(f"{n}\n" for n in sorted(names))


def defaults_table(release: str, values: dict[str, str]) -> str:
    """The engine defaults inferplane's checks model (the fit's budget), NAME<TAB>value."""
    head = _header("Engine defaults", release, "vllm/config/cache.py", "", how="")
    head = head.rsplit("\n", 2)[0]
    lines = [f"{k}\t{v}\n" for k, v in sorted(values.items())]
    return head + "\n# One default a line: NAME<TAB>value.\n" + "".join(lines)


def deprecations_table(release: str, notices: dict[str, tuple[str, str]]) -> str:
    """The replacements the release's own deprecation notices name,
    NAME<TAB>replacement<TAB>file:line of the notice."""
    head = _header(
        "Every deprecation notice that names a replacement", release, "vllm/**/*.py", "", how=""
    )
    head = head.rsplit("\n", 2)[0]
    lines = [f"{k}\t{new}\t{where}\n" for k, (new, where) in sorted(notices.items())]
    note = "\n# One notice a line: NAME<TAB>what it names instead<TAB>where the notice is.\n"
    return head + note + "".join(lines)


def metrics_table(release: str, families: dict[str, tuple[str, str]]) -> str:
    """The Prometheus metric families of the v1 engine, NAME<TAB>kind[<TAB>renamed NEW]."""
    head = _header("Every Prometheus metric family", release, "vllm/v1/**/*.py", "", how="")
    head = head.rsplit("\n", 2)[0]
    lines = [
        "\t".join(x for x in (name, kind, f"renamed {new}" if new else "") if x) + "\n"
        for name, (kind, new) in sorted(families.items())
    ]
    note = (
        "\n# One family a line: NAME<TAB>counter|gauge|histogram[<TAB>renamed NEW] (renamed:"
        "\n# its documentation says DEPRECATED: Use NEW instead). prometheus_client exposes a"
        "\n# counter as NAME_total and a histogram as NAME_bucket, NAME_sum and NAME_count.\n"
    )
    return head + note + "".join(lines)


def buckets_table(
    release: str,
    bounds: dict[str, tuple[float, ...]],
    uses: dict[str, str],
    fixed: dict[str, tuple[float, ...]],
) -> str:
    """Each bucket family's default bounds and each histogram's family, or, for a release
    without families, each histogram's fixed bounds."""
    head = _header(
        "Histogram bucket bounds", release, "vllm/v1/metrics/{buckets,loggers}.py", "", how=""
    )
    head = head.rsplit("\n", 2)[0]
    note = (
        "\n# family<TAB>NAME<TAB>bound,bound,...: a bucket family's default upper bounds, in"
        "\n# increasing order (--custom-histogram-buckets replaces a family's list);"
        "\n# histogram<TAB>METRIC<TAB>FAMILY: the family a histogram draws its bounds from;"
        "\n# fixed<TAB>METRIC<TAB>bound,bound,...: a histogram's bounds in a release without"
        "\n# families, written inline (no option changes them).\n"
    )

    def numbers(values: tuple[float, ...]) -> str:
        return ",".join(repr(b) for b in values)

    lines = [f"family\t{name}\t{numbers(values)}\n" for name, values in sorted(bounds.items())]
    lines += [f"histogram\t{metric}\t{family}\n" for metric, family in sorted(uses.items())]
    lines += [f"fixed\t{metric}\t{numbers(values)}\n" for metric, values in sorted(fixed.items())]
    return head + note + "".join(lines)


def values_table(
    release: str,
    keys: dict[str, list[str]],
    choices: dict[str, list[str]],
    types: dict[str, str],
    sources: dict[str, list[str]],
) -> str:
    """The values the allowed JSON and choice options of `release` take
    (`value_classes.value_rules`); `keys`, `choices`, `types` and `sources` are what
    `derived_values` reads."""
    modules = {value_classes.JSON_CONFIG_FLAGS[f][0] for f in keys if f not in types}
    modules |= {value_classes.CHOICE_FLAGS[f][0] for f in choices}
    modules |= {m for read in sources.values() for m in read}
    head = _header(
        "Keys and choices of the restricted options",
        release,
        ", ".join(f"vllm/{m}" for m in sorted(modules)),
        "",
        how="",
    ).rsplit("\n", 2)[0]
    note = (
        "\n# FLAG<TAB>keys<TAB>K1 K2 ...[<TAB>text<TAB>T1 ...]: a JSON object of only these"
        "\n# keys (* : any name) (or --FLAG.KEY VALUE), every string a name (letters, digits,"
        "\n# _ and -) but in the text keys | FLAG<TAB>values<TAB>TYPE: every key's value is a"
        "\n# TYPE (count, count-or-options, numbers, scalar, scalars: scripts/facts/"
        "\n# vllm_value_classes.py) | FLAG<TAB>source<TAB>M1 ...: the modules its keys are read"
        "\n# from | FLAG<TAB>refused-key<TAB>KEY<TAB>why: a key inferplane"
        "\n# refuses | FLAG<TAB>choices<TAB>V1 V2 ...: one of these values |"
        "\n# FLAG<TAB>refused<TAB>VALUE<TAB>why: a choice of vLLM that inferplane refuses.\n"
    )
    rules = value_classes.value_rules(keys, choices, types, sources)
    lines = ["\t".join(row) + "\n" for row in rules]
    return head + note + "".join(lines)


def derived_values(
    root: Path, longs: Iterable[str]
) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, str], dict[str, list[str]]]:
    """(flag -> the keys of its config class or dict, flag -> its choices, flag -> what a
    key of its dict takes, flag -> the modules its dict's keys are read from), read from the
    source at `root`, for the options of `longs` that `value_classes` restricts."""
    longs = set(longs)
    keys = {
        flag: vllm_read.config_keys(root, module, cls)
        for flag, (module, cls) in value_classes.JSON_CONFIG_FLAGS.items()
        if flag in longs
    }
    choices = {
        flag: vllm_read.literal_values(root, module, alias)
        for flag, (module, alias) in value_classes.CHOICE_FLAGS.items()
        if flag in longs
    }
    types: dict[str, str] = {}
    sources: dict[str, list[str]] = {}
    for flag, (how, modules, name, kind) in value_classes.DICT_FLAGS.items():
        if flag not in longs:
            continue
        keys[flag], read = dict_keys(root, how, modules, name)
        if read:
            sources[flag] = read
        if flag == "--limit-mm-per-prompt":
            kind = value_classes.limit_type(
                vllm_read.field_annotation(root, "EngineArgs", "limit_mm_per_prompt")
            )
        types[flag] = kind
    return keys, choices, types, sources


def dict_keys(
    root: Path, how: str, modules: tuple[str, ...], name: str
) -> tuple[list[str], list[str]]:
    """(the keys of a plain-dict option, read as `value_classes.DICT_FLAGS` says, the
    modules read)."""
    if how == "any":
        return ["*"], []
    # The module that defines the name ("reads": every module that names it).
    marker = {"class": rf"^class {name}\b", "literal": rf"^{name} = ", "list": rf"\b{name} = "}
    mark = re.compile(marker.get(how, rf"\b{name}\b"), re.MULTILINE)
    present = [m for m in modules if (root / m).exists() and mark.search((root / m).read_text())]
    if not present:
        raise SystemExit(f"{root}: no {name} in {', '.join(modules)}")
    if how == "reads":
        return sorted({k for m in present for k in vllm_read.keys_read(root, m, name)}), present
    read = {
        "class": vllm_read.config_keys,
        "literal": vllm_read.literal_values,
        "list": vllm_read.listed,
    }[how]
    return read(root, present[0], name), present[:1]


def routes_table(root: Path, release: str, every: Iterable[str]) -> str:
    """The route table of `release` (`vllm_routes.table`), read from the source at `root`;
    `every` is the paths the stored tables of the other releases list."""
    head = _header(
        "Every HTTP route of the API server", release, "vllm/entrypoints/**/*.py", "", how=""
    ).rsplit("\n", 2)[0]
    found = vllm_routes.routes(root)
    return vllm_routes.table(release, head, found, vllm_routes.guarded_prefixes(root), every)


def stored_routes(skip: str) -> set[str]:
    """The paths the stored route tables of every release but `skip` list."""
    out: set[str] = set()
    for folder in sorted(FACTS.glob("v*")):
        table = folder / vllm_routes.ROUTES_FILE
        if folder.name != skip and table.exists():
            out |= set(vllm_routes.stored(table.read_text())[0])
    return out


def rows(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


def stored_names(skip: str = "") -> tuple[set[str], set[str]]:
    """(long options, envs.py variables) the stored tables of every release but `skip` list."""
    flags: set[str] = set()
    env: set[str] = set()
    for folder in sorted(FACTS.glob("v*")):
        if folder.name == skip:
            continue
        if (folder / FLAGS_FILE).exists():
            flags |= {r[0] for r in rows((folder / FLAGS_FILE).read_text()) if r[1] != "short"}
        if (folder / ENV_FILE).exists():
            env |= {r[0] for r in rows((folder / ENV_FILE).read_text())}
    return flags, env - env_classes.OTHER_ENV


def main(argv: list[str]) -> int:
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    wheel, root = Path(args[0]), Path(args[1])
    release = "v" + wheel.name.split("-")[1]
    sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if WHEELS.get(release) != (wheel.name, sha256):
        raise SystemExit(f"{wheel.name} (sha256 {sha256}) is not in WHEELS: add it there")
    longs, shorts = vllm_read.options(root)
    names = vllm_read.env_vars(root)
    other_flags, other_env = stored_names(skip=release)
    out = FACTS / release
    tables = {
        out / FLAGS_FILE: flags_table(release, longs, shorts, other_flags),
        out / ENV_FILE: env_table(release, names, other_env),
        out / PARSERS_FILE: parsers_table(release, vllm_read.tool_parsers(root)),
        out / DEFAULTS_FILE: defaults_table(release, vllm_read.engine_defaults(root)),
        out / METRICS_FILE: metrics_table(release, vllm_read.metrics(root)),
        out / VALUES_FILE: values_table(release, *derived_values(root, longs)),
        out / DEPRECATIONS_FILE: deprecations_table(release, vllm_read.deprecations(root)),
        out / vllm_routes.ROUTES_FILE: routes_table(root, release, stored_routes(release)),
    }
    tables[out / BUCKETS_FILE] = buckets_table(release, *vllm_read.histogram_buckets(root))
    stale = [str(p) for p, text in tables.items() if not p.exists() or p.read_text() != text]
    if check:
        if stale:
            print(f"stale: {', '.join(stale)}; rerun without --check", file=sys.stderr)
        return 1 if stale else 0
    out.mkdir(parents=True, exist_ok=True)
    for path, text in tables.items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
