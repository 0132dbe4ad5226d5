"""Checks of a vLLM model that depend on the vLLM release it runs (`versions.vllm`, or the
pin, or the release of the model's own `image`): `vllm.extra_args` and `vllm.env` against
that release's allowlists, and `vllm.tool_call_parser` against its parsers
(`inferplane/facts/vllm/<release>/`, generated from each release's wheel by
scripts/facts/vllm_serve_flags.py).

A model's own image runs a release of the release table, or nothing: vLLM's own image
(``vllm/vllm-openai``) by its release tag, any other image by the release it declares in
`base_release` (an image the platform trusts: `trusted-registries` refuses any other
registry). An image of an unlisted release (``vllm/vllm-openai:v0.5.4``) is refused at its
line, since no table says what its options and variables do."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from inferplane.blueprint import defaults, releases
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.upstream import vllm_owned

Problem = tuple[YamlPath, str, str]
"""(where, what is wrong, how to fix): an error."""


def problems(
    env: EnvView, path: YamlPath, model: Mapping[str, Any], settings: Mapping[str, Any]
) -> Iterator[Problem]:
    """Every release-dependent error of the vLLM model at `path`."""
    yield from _image(path, model)
    yield from _scheduler(path, settings, release_of(env, model)[0])
    yield from _tool_parser(env, path, model, settings)
    yield from _extra_args(env, path, model, settings)
    yield from _env_vars(env, path, model, settings)


# --- pass-through arguments and variables --------------------------------------------------
def image_release(model: Mapping[str, Any]) -> str | None:
    """The vLLM release a model's own image runs, as it says: the tag of vLLM's own image,
    else `base_release`; None without an image or when it says none."""
    if model.get("image") is None:
        return None
    tag = releases.vllm_image_tag(str(model["image"]))
    base = model.get("base_release")
    return tag if tag is not None else (None if base is None else str(base))


def release_of(env: EnvView, model: Mapping[str, Any]) -> tuple[str, bool]:
    """(the vLLM release whose tables check the model's pass-throughs, whether that release
    is what runs): the release of the model's own image, else `versions.vllm` or the pin.
    An image of no supported release (refused by `_image`), or a release without tables
    (which `versions` refuses), is checked against the pinned release's tables."""
    if "image" in model:
        chosen = image_release(model) or ""
    else:
        chosen = str((env.data.get("versions") or {}).get("vllm", defaults.VERSIONS["vllm"]))
    if releases.engine_release("vllm", chosen) is None or not vllm_owned.has_facts(chosen):
        return defaults.VERSIONS["vllm"], False
    return chosen, True


def _image(path: YamlPath, model: Mapping[str, Any]) -> Iterator[Problem]:
    """A model's own image runs a release of the table, which it names (see the module)."""
    if model.get("image") is None:
        return
    image, base = str(model["image"]), model.get("base_release")
    listed = ", ".join(r.release for r in releases.engine_releases("vllm"))
    tag = releases.vllm_image_tag(image)
    if releases.is_vllm_image(image) and tag is not None:
        if releases.engine_release("vllm", tag) is None:
            yield (
                (*path, "image"),
                f"{image} runs vLLM {tag}, which is not a release of the release table "
                f"({listed}): no allowlist says what its options and variables do",
                "use vllm/vllm-openai:<release> of one of them, or remove image for "
                "versions.vllm's release",
            )
        elif base is not None and str(base) != tag:
            yield (
                (*path, "base_release"),
                f"image {image} is vLLM {tag}, not {base}",
                f'remove base_release, or set it to "{tag}"',
            )
        return
    if base is None:
        what = (
            "names vLLM's image by digest alone"
            if releases.is_vllm_image(image)
            else "is not vLLM's own image (vllm/vllm-openai:<release>)"
        )
        yield (
            (*path, "image"),
            f"{image} {what}, so the vLLM release it runs, whose allowlists judge "
            "vllm.extra_args and vllm.env, is unknown",
            f'add base_release: "<release>", the vLLM release the image is ({listed}), or use '
            "vLLM's image by its release tag",
        )
    elif releases.engine_release("vllm", str(base)) is None:
        yield (
            (*path, "base_release"),
            f"vLLM {base} is not a release of the release table ({listed})",
            "build the image from one of them and name it here",
        )


# Releases whose V1 engine turns chunked prefill on for every generative model whatever
# the flag says (v0.10.2 ``vllm/engine/arg_utils.py``, ``_set_default_args_v1``).
_CHUNKED_PREFILL_FORCED = frozenset({"v0.10.2"})


def _scheduler(path: YamlPath, settings: Mapping[str, Any], release: str) -> Iterator[Problem]:
    """vLLM refuses to start when one step's token budget is shorter than a sequence and
    prompts may not be split: ``SchedulerConfig.verify_max_model_len`` raises
    "max_num_batched_tokens (...) is smaller than max_model_len (...)" unless chunked
    prefill is on (v0.33.0 ``vllm/config/scheduler.py``). Unset, it is on for generative
    models (``model_config.is_chunked_prefill_supported``, ``vllm/engine/arg_utils.py``
    ``_set_default_chunked_prefill_and_prefix_caching_args``), so only an explicit
    ``enable_chunked_prefill: false`` makes it fail."""
    budget, length = settings.get("max_num_batched_tokens"), settings.get("max_model_len")
    if settings.get("enable_chunked_prefill") is not False or not budget or not length:
        return
    if release in _CHUNKED_PREFILL_FORCED:
        return
    if budget < length:
        yield (
            (*path, "vllm", "max_num_batched_tokens"),
            f"max_num_batched_tokens ({budget}) is smaller than max_model_len ({length}) "
            f"with enable_chunked_prefill: false; vLLM {release} refuses to start "
            "(vllm/config/scheduler.py: a prompt must fit one step when it is not split)",
            f"raise max_num_batched_tokens to {length} or more, lower max_model_len to "
            f"{budget}, or remove enable_chunked_prefill: false",
        )


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
