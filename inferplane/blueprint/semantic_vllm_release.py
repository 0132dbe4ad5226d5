"""Checks of a vLLM model that depend on the vLLM release it runs (`versions.vllm`, or the
pin): `vllm.extra_args` and `vllm.env` against that release's allowlists, and
`vllm.tool_call_parser` against its parsers (`inferplane/facts/vllm/<release>/`, generated
from each release's wheel by scripts/vllm_serve_flags.py)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from inferplane.blueprint import defaults, releases, vllm_owned
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.semantic_env import EnvView

Problem = tuple[YamlPath, str, str]
"""(where, what is wrong, how to fix): an error."""


def problems(
    env: EnvView, path: YamlPath, model: Mapping[str, Any], settings: Mapping[str, Any]
) -> Iterator[Problem]:
    """Every release-dependent error of the vLLM model at `path`."""
    yield from _tool_parser(env, path, model, settings)
    yield from _extra_args(env, path, model, settings)
    yield from _env_vars(env, path, model, settings)


# --- pass-through arguments and variables --------------------------------------------------
def release_of(env: EnvView, model: Mapping[str, Any]) -> tuple[str, bool]:
    """(the vLLM release whose tables check the model's pass-throughs, whether that release
    is what runs): `versions.vllm` or the pin; a custom image (or a release without tables,
    which `versions` refuses) is checked against the pinned release's tables."""
    chosen = str((env.data.get("versions") or {}).get("vllm", defaults.VERSIONS["vllm"]))
    if "image" in model or not vllm_owned.has_facts(chosen):
        return defaults.VERSIONS["vllm"], False
    return chosen, True


def _tool_parser(
    env: EnvView, path: YamlPath, model: Mapping[str, Any], settings: Mapping[str, Any]
) -> Iterator[Problem]:
    """`tool_call_parser` names a parser of the release that runs (0.33.0 has no `minimax`,
    only `minimax_m2`/`minimax_m3`: vllm/tool_parsers/__init__.py)."""
    parser = settings.get("tool_call_parser")
    release, runs = release_of(env, model)
    if parser is None or not runs or parser in vllm_owned.tool_parsers(release):
        return
    others = [
        r.release
        for r in releases.engine_releases("vllm")
        if vllm_owned.has_facts(r.release) and parser in vllm_owned.tool_parsers(r.release)
    ]
    yield (
        (*path, "vllm", "tool_call_parser"),
        f"vLLM {release} has no tool-call parser {parser!r}",
        f"use a parser of {release} (see {vllm_owned.facts_path(release, 'tool_parsers.txt')})"
        + (f", or set versions.vllm to {', '.join(others)}" if others else ""),
    )


def _extra_args(
    env: EnvView, path: YamlPath, model: Mapping[str, Any], settings: Mapping[str, Any]
) -> Iterator[Problem]:
    release, runs = release_of(env, model)
    found = vllm_owned.extra_args_problems(
        settings.get("extra_args") or [], str(path[1]), release, runs
    )
    for i, message, hint in found:
        yield ((*path, "vllm", "extra_args", i), message, hint)


def _env_vars(
    env: EnvView, path: YamlPath, model: Mapping[str, Any], settings: Mapping[str, Any]
) -> Iterator[Problem]:
    found = vllm_owned.env_problems(
        settings.get("env") or {},
        str(path[1]),
        list(model.get("secrets") or {}),
        release_of(env, model)[0],
    )
    for var, message, hint in found:
        yield ((*path, "vllm", "env", var), message, hint)
