"""What `vllm.extra_args` and `vllm.env` may set: allowlists of the vLLM release a model runs.

Both pass-throughs are checked against tables generated from each supported vLLM release's
wheel by ``scripts/facts/vllm_serve_flags.py`` (provenance, wheel sha256, script version and format
in their headers): ``inferplane/facts/vllm/<release>/serve_flags.txt`` classifies every
option of ``vllm serve`` and ``env_vars.txt`` every variable of ``vllm/envs.py`` (and a few
others) as allowed, owned by a blueprint field (the hint says which), or refused (the
reason says why). Anything in neither table is
refused: a new option or variable is usable only once someone has classified it.

How vLLM reads its command line decides what an argument names
(``FlexibleArgumentParser.parse_args``: v0.10.2 ``vllm/utils/__init__.py``, v0.33.0
``vllm/utils/argparse_utils.py``): ``--a_b`` is ``--a-b``; ``--x.key value`` sets one key of
the JSON option ``--x``; ``--x=v`` is ``--x v``; ``-O3`` and ``-O.level`` are
``--compilation-config`` in v0.10.2 and ``--optimization-level`` in v0.33.0 (the tables list
``-O`` as the short option of the one it becomes). argparse's default ``allow_abbrev`` accepts any
unambiguous prefix of a long option (``--tensor-parallel``), and single-dash arguments are
matched by prefix against the short options whatever ``allow_abbrev`` says (CPython 3.11-3.13
``Lib/argparse.py``, ``ArgumentParser._get_option_tuples``: the single-prefix branch has no
``allow_abbrev`` test), so ``-t 4`` is ``-tp 4`` and ``-a 3`` is ``-asc 3``. Abbreviations and
short options are therefore refused, naming the option argparse would read.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Final

from inferplane.blueprint import defaults, releases, secret_refs
from inferplane.blueprint.upstream import vllm_values


@dataclass(frozen=True)
class Entry:
    """One classified name: `kind` is allowed, values, owned or refused; `text` is the hint
    (owned), the reason (refused), or the values allowed, a tab, and why any other is
    refused (values)."""

    kind: str
    text: str = ""


def facts_path(release: str, name: str) -> str:
    """Where the facts file `name` of vLLM `release` is, relative to the repository."""
    return f"inferplane/facts/vllm/{release}/{name}"


def has_facts(release: str) -> bool:
    """Whether the tables of vLLM `release` exist (every supported release has them)."""
    return resources.files("inferplane").joinpath("facts", "vllm", release).is_dir()


def _release(release: str | None) -> str:
    return defaults.VERSIONS["vllm"] if release is None else release


def _table(release: str, name: str) -> dict[str, str]:
    text = resources.files("inferplane").joinpath("facts", "vllm", release, name).read_text()
    return {
        line.split("\t", 1)[0]: line.split("\t", 1)[1] if "\t" in line else ""
        for line in text.splitlines()
        if line.strip() and not line.startswith("#")
    }


@functools.cache
def flag_table(release: str | None = None) -> dict[str, Entry]:
    """Every long option of ``vllm serve`` of vLLM `release` (default the pinned one),
    classified."""
    out = {}
    for name, rest in _table(_release(release), "serve_flags.txt").items():
        kind, _, text = rest.partition("\t")
        if kind != "short":
            out[name] = Entry(kind, text)
    return out


@functools.cache
def short_options(release: str | None = None) -> dict[str, str]:
    """Short option -> its long option (``-tp`` -> ``--tensor-parallel-size``)."""
    out = {}
    for name, rest in _table(_release(release), "serve_flags.txt").items():
        kind, _, long = rest.partition("\t")
        if kind == "short":
            out[name] = long
    return out


@functools.cache
def env_table(release: str | None = None) -> dict[str, Entry]:
    """Every variable of ``envs.py`` of vLLM `release` (default the pinned one, and a few
    others), classified."""
    out = {}
    for name, rest in _table(_release(release), "env_vars.txt").items():
        kind, _, text = rest.partition("\t")
        out[name] = Entry(kind, text)
    return out


@functools.cache
def tool_parsers(release: str | None = None) -> frozenset[str]:
    """The names ``--tool-call-parser`` of vLLM `release` (default the pinned one) accepts."""
    text = resources.files("inferplane").joinpath(
        "facts", "vllm", _release(release), "tool_parsers.txt"
    )
    return frozenset(
        line for line in text.read_text().splitlines() if line and not line.startswith("#")
    )


@functools.cache
def engine_defaults(release: str | None = None) -> dict[str, float]:
    """The defaults of vLLM `release` the fit models (``gpu_memory_utilization``: 0.9 in
    v0.10.2, 0.92 in v0.33.0, read from ``CacheConfig`` of each wheel)."""
    return {k: float(v) for k, v in _table(_release(release), "defaults.txt").items()}


@functools.cache
def metric_families(release: str | None = None) -> dict[str, str]:
    """Every Prometheus metric family of vLLM `release`'s v1 engine -> its kind (counter,
    gauge or histogram), read from the wheel into ``metrics.txt``."""
    return {
        name: rest.split("\t")[0] for name, rest in _table(_release(release), "metrics.txt").items()
    }


def metric_series(release: str | None = None) -> frozenset[str]:
    """The series names vLLM `release` exposes: prometheus_client adds ``_total`` to a
    counter (stripping a ``_total`` it already has) and ``_bucket``/``_sum``/``_count`` to a
    histogram (prometheus_client ``metrics.py``, Counter and Histogram)."""
    out: set[str] = set()
    for name, kind in metric_families(release).items():
        if kind == "counter":
            out.add(name.removesuffix("_total") + "_total")
        elif kind == "histogram":
            out.update(f"{name}{suffix}" for suffix in ("_bucket", "_sum", "_count"))
        else:
            out.add(name)
    return frozenset(out)


@functools.cache
def serve_flags(release: str | None = None) -> frozenset[str]:
    """Every long option of ``vllm serve`` of vLLM `release` (default the pinned one)."""
    return frozenset(flag_table(release))


@functools.cache
def deprecations(release: str | None = None) -> dict[str, tuple[str, str]]:
    """Option or variable -> (what vLLM `release`'s own deprecation notice names instead,
    where the notice is), read from the wheel into ``deprecations.txt``."""
    path = resources.files("inferplane").joinpath(
        "facts", "vllm", _release(release), "deprecations.txt"
    )
    if not path.is_file():
        return {}
    out = {}
    for name, rest in _table(_release(release), "deprecations.txt").items():
        new, _, where = rest.partition("\t")
        out[name] = (new, where)
    return out


def _version(release: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", release))


def _removed(name: str, release: str, env: bool) -> tuple[str, str] | None:
    """(what is wrong, how to fix) for an option (or, `env`, a variable) of another
    supported release that `release` no longer has, naming what that release's own
    deprecation notice names instead, or that only a newer release has; None for a name no
    supported release has."""
    for other in releases.engine_releases("vllm"):
        had = env_table(other.release) if env else flag_table(other.release)
        if other.release == release or not has_facts(other.release) or name not in had:
            continue
        what = "a variable" if env else "an option"
        if _version(other.release) > _version(release):
            return (
                f"`{name}` is {what} of vLLM {other.release}, newer than {release}",
                f"run {other.release} (versions.vllm, or the model's image) to use it, or "
                "remove it",
            )
        message = f"`{name}` is {what} of vLLM {other.release} that {release} no longer has"
        notice = deprecations(other.release).get(name)
        if notice is None:
            return message, f"remove it: vLLM {other.release} names no replacement in its source"
        new, where = notice
        message += f" ({other.release} deprecated it for `{new}`: {where})"
        entry = flag_table(release).get(new.split()[0])
        if entry is None:
            return message, f"remove it: `{new}` is not an option of {release} either"
        if entry.kind == "refused":
            return message, f"remove it: `{new}` is refused too ({entry.text})"
        if entry.kind == "owned":
            return message, f"remove it: `{new}` is set by the blueprint ({entry.text})"
        return message, f"write `{new}` instead"
    return None


def owned_flags(release: str | None = None) -> dict[str, str]:
    """Owned option -> the field that sets it."""
    return {f: e.text for f, e in flag_table(release).items() if e.kind == "owned"}


SECRET_NAME: Final = re.compile(
    r"(TOKEN|_KEY|^KEY|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE
)
"""Environment variable names that hold secrets by convention (HF_TOKEN, OPENAI_API_KEY)."""

SECRET_VALUE: Final = re.compile(
    r"hf_[A-Za-z0-9]{30,}"  # Hugging Face access token
    r"|sk-[A-Za-z0-9_-]{20,}"  # OpenAI-style API key
    r"|(AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id
    r"|gh[pousr]_[A-Za-z0-9]{36,}"  # GitHub token
    r"|xox[abpr]-[A-Za-z0-9-]{10,}"  # Slack token
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
)
"""Values shaped like well-known credentials."""


_NO_SECRETS = "never put secrets in a blueprint: reference them under `secrets`"


# argparse treats these as values, not options, when no option looks like a negative number
# (CPython Lib/argparse.py, ``_negative_number_matcher``); vllm serve has none.
_NEGATIVE_NUMBER: Final = re.compile(r"^-\d+$|^-\d*\.\d+$")


def flag_name(arg: str) -> str | None:
    """The option an argument names as vLLM rewrites it before argparse reads it
    (``--max_loras.x=3`` -> ``--max-loras``, ``-O3`` -> ``-O``, ``-tp=2`` -> ``-tp``); None for
    a value (no leading ``-``, or a negative number)."""
    if not arg.startswith("-") or arg == "-" or _NEGATIVE_NUMBER.match(arg):
        return None
    key = arg.split("=", 1)[0]
    if not arg.startswith("--"):
        return key.split(".", 1)[0]
    return "--" + key[2:].split(".", 1)[0].replace("_", "-")


def resolve(flag: str, release: str | None = None) -> tuple[str | None, list[str]]:
    """(the long option argparse reads `flag` as, or None; every option it could match).

    A long option is itself or, abbreviated, the one option it is a prefix of (several:
    argparse refuses it as ambiguous). A short argument matches every short option that it
    is a prefix of, and the one it starts with (``-tp4``, ``-O3``)."""
    table = flag_table(release)
    if flag.startswith("--"):
        if flag in table:
            return flag, [flag]
        matches = sorted(f for f in table if f.startswith(flag))
        return (matches[0] if len(matches) == 1 else None), matches
    shorts = short_options(release)
    matches = sorted({shorts[s] for s in shorts if s.startswith(flag) or flag.startswith(s)})
    return (matches[0] if len(matches) == 1 else None), matches


def _entry_problem(shown: str, full: str, model: str, release: str) -> tuple[str, str] | None:
    entry = flag_table(release)[full]
    if entry.kind == "owned":
        return f"{shown} is set by the blueprint", entry.text.replace("<m>", model)
    if entry.kind == "refused":
        return f"{shown} is refused: {entry.text}".replace("<m>", model), "remove it"
    return None


def flag_problem(flag: str, model: str, version: str) -> tuple[str, str] | None:
    """(what is wrong, how to fix) when `flag` (as `flag_name` returns it) may not be
    passed to vllm serve of release `version`, else None."""
    if flag == "--":
        return "`--` ends the options of vllm serve", "remove it"
    full, matches = resolve(flag, version)
    if full is not None and full == flag:
        return _entry_problem(f"`{flag}`", full, model.replace("<m>", model), version)
    if not matches:
        removed = _removed(flag, version, env=False)
        if removed is not None:
            return removed
        return (
            f"`{flag}` is not an option of vllm serve {version}",
            "check the spelling against `vllm serve --help` of that version",
        )
    if len(matches) > 1:
        shown = ", ".join(f"`{m}`" for m in matches[:4]) + (", ..." if len(matches) > 4 else "")
        return (
            f"`{flag}` matches several options ({shown})",
            "write the option in full",
        )
    assert full is not None
    problem = _entry_problem(f"`{flag}` (read as `{full}`)", full, model, version)
    if problem is not None:
        return problem
    return f"`{flag}` is read as `{full}`", f"write `{full}` in full"


def extra_args_problems(
    args: Sequence[str], model: str, version: str, pinned: bool = True
) -> Iterator[tuple[int, str, str]]:
    """(index, what is wrong, how to fix) for each refused item of `vllm.extra_args` of
    `model`. Only options the tables allow pass; `version` is the vLLM release whose tables
    apply, and `pinned` says whether that is the release that runs (a custom image is
    checked against the pinned release's tables)."""
    for i, arg in enumerate(args):
        if SECRET_VALUE.search(arg):
            yield i, "this argument looks like a credential", _NO_SECRETS
            continue
        flag = flag_name(arg)
        if flag is None:
            if i == 0:
                yield (
                    i,
                    "extra_args must start with a flag",
                    'write the flag before its value, e.g. ["--block-size", "32"]',
                )
            continue
        if " " in arg.strip() and "=" not in arg.split(" ", 1)[0]:
            # The container runtime passes each item as one argument and no shell splits
            # it; argparse takes an argument with a space for a positional value (CPython
            # Lib/argparse.py, ``_parse_optional``: "it was meant to be a positional").
            parts = arg.split()
            yield (
                i,
                f"`{arg}` is an option and its value in one item; vLLM receives it as one "
                "argument, and argparse reads an argument with a space as a value, not an "
                "option",
                "write each as an item of its own: [" + ", ".join(f'"{p}"' for p in parts) + "]",
            )
            continue
        problem = flag_problem(flag, model, version)
        if problem is None:
            # An allowed option: the key it names (``--x.key``), then its value, the rest of
            # `arg` or the next argument.
            key = vllm_values.key_problem(arg, flag, version)
            if key is not None:
                yield i, key[0].replace("<m>", model), key[1]
                continue
            at, value = i, arg.split("=", 1)[1] if "=" in arg else None
            if value is None and i + 1 < len(args) and flag_name(args[i + 1]) is None:
                at, value = i + 1, args[i + 1]
            found = vllm_values.value_problem(arg, flag, value, version)
            if found is not None:
                yield at, found[0].replace("<m>", model), found[1]
            continue
        message, hint = problem
        if not pinned and "is not an option" in message:
            message = (
                f"`{flag}` is not an option inferplane has classified (those of vllm serve "
                f"{version}, the pinned release)"
            )
            hint = "use an option of that release, or run a release of the release table"
        yield i, message, hint.replace("<m>", model)


def env_problems(
    env: Mapping[str, str], model: str, secrets: Sequence[str], version: str
) -> Iterator[tuple[str, str, str]]:
    """(variable, what is wrong, how to fix) for each refused entry of `vllm.env` of `model`;
    `secrets` are the model's secret names (each becomes an upper-case variable)."""
    secret_vars = {secret_refs.env_var_name(key): key for key in secrets}
    table = env_table(version)
    for var, value in env.items():
        entry = table.get(var)
        if var in secret_vars:
            yield (
                var,
                f"`{var}` is set from secret {secret_vars[var]!r}",
                "remove it here; the secret reference provides it",
            )
        elif entry is not None and entry.kind == "owned":
            yield (
                var,
                f"`{var}` is set by inferplane",
                "remove it: " + entry.text.replace("<m>", model),
            )
        elif SECRET_NAME.search(var) and (entry is None or entry.kind != "refused"):
            yield (
                var,
                f"`{var}` looks like a secret, and env values are stored in plain text",
                "reference it under `secrets` instead, e.g. "
                f"secrets: {{{var.lower()}: {{from_env: {var}}}}}",
            )
        elif SECRET_VALUE.search(value):
            yield var, "this value looks like a credential", _NO_SECRETS
        elif entry is not None and entry.kind == "refused":
            yield var, f"`{var}` is refused: {entry.text}".replace("<m>", model), "remove it"
        elif entry is not None and entry.kind == "values":
            # vLLM upper-cases the values it reads this way (envs.py, VLLM_LOGGING_LEVEL).
            allowed, _, why = entry.text.partition("\t")
            if value.upper() not in allowed.split():
                yield (
                    var,
                    f"`{var}` {value} is refused: {why}",
                    f"use one of {', '.join(allowed.split())}, or remove it",
                )
        elif entry is None and (removed := _removed(var, version, env=True)) is not None:
            yield var, *removed
        elif entry is None:
            yield (
                var,
                f"`{var}` is not a variable inferplane passes to vLLM {version}",
                "use a variable of vllm/envs.py that inferplane allows (see "
                f"{facts_path(version, 'env_vars.txt')}), or a blueprint field",
            )
