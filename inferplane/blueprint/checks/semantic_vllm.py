"""Semantic checks of LLM models: GPU memory fit, tensor parallelism, and the vLLM settings.

TensorRT-LLM models get the same model-facts lookup and report format; their fit arithmetic
is `inferplane.blueprint.checks.semantic_trtllm_fit`.

Errors (`check_env`, run by `inferplane.blueprint.checks.semantic.check`) stop validation: a model
whose weights and one full-length sequence cannot fit its GPUs, a tensor-parallel size that
does not split its attention heads, inconsistent `model_info`, `speculative` or `lora`
settings, and pass-through arguments or variables that the blueprint owns or that look like
secrets.

Advisories (`advisories`, printed by ``inferplane validate`` as warnings, exit 0) say what
could not be checked or may disappoint: a model whose architecture is unknown (no table row,
no `model_info`), no `max_model_len` (so no KV cache estimate), and fewer full-length
sequences in the KV cache than `max_num_seqs` (vLLM starts and queues the rest; see
`inferplane.blueprint.capacity.fit`); and, for every model, the hub advisories of
`inferplane.blueprint.checks.semantic_hub` (a revision that is not a commit, a Hub token nothing
uses) and the latency-class advisory of `inferplane.blueprint.checks.semantic_latency` (a model
marked batch that users wait on), and the strongly typed TensorRT advisory of
`inferplane.blueprint.checks.semantic_releases` (a reduced-precision engine on TensorRT 11), the
engine-build advisory of `inferplane.blueprint.checks.semantic_ort_engines`, and those of
`semantic_scaling` (a schedule without a time zone) and `semantic_routing` (priorities
that flow control is off to honour).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inferplane.blueprint import catalog, defaults, llm_catalog, llm_config, semantic_trtllm
from inferplane.blueprint.capacity import fit
from inferplane.blueprint.checks import (
    semantic_hub,
    semantic_latency,
    semantic_ort_engines,
    semantic_releases,
    semantic_routing,
    semantic_scaling,
    semantic_serving,
    semantic_trtllm_fit,
    semantic_vllm_release,
)
from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.errors import Diagnostic, YamlPath, counted
from inferplane.blueprint.source import Document
from inferplane.blueprint.upstream import vllm_owned

_NUMBERS = ("parameters_billions", "layers", "heads", "kv_heads", "head_dim")
_MOE = ("experts", "experts_per_token", "active_parameters_billions")
_MIG_MEMORY = re.compile(r"(\d+)gb$")
_TP_SIZES = 16


@dataclass(frozen=True)
class Finding:
    severity: str  # "error" | "warning"
    path: YamlPath
    message: str
    hint: str


def check_env(env: EnvView) -> None:
    """Report every error of this environment's LLM models through `env.error`."""
    for f in findings(env):
        if f.severity == "error":
            env.error(f.path, f.message, f.hint)
    for where, message, hint in semantic_hub.errors(env):
        env.error(where, message, hint)


def advisories(doc: Document) -> list[Diagnostic]:
    """The warnings of a valid blueprint, once each across environments."""
    seen: set[tuple[object, str]] = set()
    out: list[Diagnostic] = []
    for name in doc.data["environments"]:
        env = EnvView(doc, name)
        hub = [Finding("warning", *advisory) for advisory in semantic_hub.findings(env)]
        latency = [Finding("warning", *advisory) for advisory in semantic_latency.findings(env)]
        guessed = [
            Finding("warning", *advisory) for advisory in semantic_serving.warmup_type_guesses(env)
        ]
        typed = [
            Finding("warning", *advisory)
            for advisory in semantic_releases.strongly_typed_findings(env)
        ]
        ort = [Finding("warning", *advisory) for advisory in semantic_ort_engines.findings(env)]
        scaling = [*semantic_scaling.findings(env), *semantic_routing.findings(env)]
        ort += [Finding("warning", *advisory) for advisory in scaling]
        for f in [*findings(env), *hub, *latency, *guessed, *typed, *ort]:
            if f.severity != "warning":
                continue
            d = Diagnostic(env.where(f.path), env.shown_path(f.path), f.message, f.hint, "warning")
            if (d.location, d.message) not in seen:
                seen.add((d.location, d.message))
                out.append(d)
    return sorted(out, key=lambda d: d.location)


def _here(env: EnvView) -> Path:
    """The blueprint's directory (where `model_info.config` is read)."""
    return Path(env.doc.source.file).parent


def findings(env: EnvView) -> Iterator[Finding]:
    pools = env.data.get("gpu_pools") or {}
    for name, model in (env.data.get("models") or {}).items():
        path: YamlPath = ("models", name)
        llm = model["server"] == "vllm" or "tensorrt_llm" in model
        if "model_info" in model and not llm:
            yield Finding(
                "error",
                (*path, "model_info"),
                "`model_info` only applies to LLM servers",
                "remove it, or serve the model with server: vllm",
            )
            continue
        if model["server"] == "triton" and "tensorrt_llm" in model:
            yield from _model_info_problems(path, model, _here(env))
            if model["pool"] in pools:
                yield from _trtllm_fit(env, path, model, pools[model["pool"]])
            continue
        if model["server"] != "vllm":
            continue
        yield from _model_info_problems(path, model, _here(env))
        settings = model.get("vllm") or {}
        yield from _speculative(path, settings)
        yield from _lora(env, path, name, model, settings)
        for problem in semantic_vllm_release.problems(env, path, model, settings):
            yield Finding("error", *problem)
        if model["pool"] in pools:
            yield from _fit(env, path, model, settings, pools[model["pool"]])


# --- model facts and the fit -------------------------------------------------------------
def _model_info_problems(
    path: YamlPath, model: Mapping[str, Any], here: Path | None = None
) -> Iterator[Finding]:
    info = model.get("model_info")
    if not info:
        yield from _active_in_the_name(path, model)
        return
    ipath = (*path, "model_info")
    numbers = [k for k in (*_NUMBERS, *_MOE) if k in info]
    given = [k for k in ("hf_repo", "config") if k in info]
    if len(given) > 1 or (given and numbers):
        yield Finding(
            "error",
            ipath,
            "give one of `hf_repo`, `config` or the model's numbers, not "
            + " and ".join(f"`{k}`" for k in [*given, *numbers[:1]]),
            "keep hf_repo for a model of the built-in table, config for the checkpoint's own "
            "config.json, or the numbers",
        )
        return
    if "hf_repo" in info:
        if llm_catalog.lookup(info["hf_repo"]) is None:
            yield Finding(
                "error",
                (*ipath, "hf_repo"),
                f"{info['hf_repo']!r} is not in the built-in model table",
                "give its config.json instead (model_info.config, a copy beside the "
                "blueprint), or its numbers: parameters_billions, layers, heads, kv_heads and "
                "head_dim",
            )
        return
    if "config" in info:
        if here is not None:
            _facts, why = _facts_of_config(info["config"], here)
            if why:
                yield Finding(
                    "error",
                    (*ipath, "config"),
                    why,
                    "copy the checkpoint's config.json beside the blueprint and name it "
                    "relative to the blueprint, or give the numbers instead",
                )
        return
    missing = [k for k in _NUMBERS if k not in info]
    if missing:
        yield Finding(
            "error",
            ipath,
            "model_info is missing " + ", ".join(missing),
            "give all of parameters_billions, layers, heads, kv_heads and head_dim, or only "
            "hf_repo",
        )
        return
    if info["heads"] % info["kv_heads"]:
        yield Finding(
            "error",
            (*ipath, "kv_heads"),
            f"heads ({info['heads']}) is not a multiple of kv_heads ({info['kv_heads']})",
            "copy num_attention_heads and num_key_value_heads from the model's config.json",
        )
        return
    moe = [k for k in _MOE if k in info]
    if moe and len(moe) < len(_MOE):
        yield Finding(
            "error",
            ipath,
            "a mixture-of-experts model_info is missing "
            + ", ".join(k for k in _MOE if k not in info),
            "give experts, experts_per_token and active_parameters_billions together (from "
            "config.json and the model card), or none of them for a dense model",
        )
        return
    if moe:
        yield from _moe_problems(ipath, info)
    else:
        yield from _active_in_the_name(path, model)


def _moe_problems(ipath: YamlPath, info: Mapping[str, Any]) -> Iterator[Finding]:
    """Plausibility of a mixture of experts given by its numbers."""
    experts, per_token = info["experts"], info["experts_per_token"]
    total, active = float(info["parameters_billions"]), float(info["active_parameters_billions"])
    if per_token >= experts:
        yield Finding(
            "error",
            (*ipath, "experts_per_token"),
            f"experts_per_token ({per_token}) is not below experts ({experts}): every token "
            "would run every expert",
            "copy num_experts_per_tok and the number of routed experts (num_experts, "
            "num_local_experts or n_routed_experts) from the model's config.json",
        )
    elif active >= total:
        yield Finding(
            "error",
            (*ipath, "active_parameters_billions"),
            f"active_parameters_billions ({active:g}) is not below parameters_billions "
            f"({total:g}): a mixture of experts holds more weights than a token uses",
            "parameters_billions counts all experts (the card's total), "
            "active_parameters_billions those one token runs (its activated figure)",
        )
    elif active < total * per_token / experts:
        yield Finding(
            "error",
            (*ipath, "active_parameters_billions"),
            f"active_parameters_billions ({active:g}) is below what {per_token} of "
            f"{experts} experts of a {total:g}B model use at least "
            f"({total * per_token / experts:.2f}B, were every weight an expert)",
            "check the three numbers against the model card: the total, the activated "
            "figure and the experts per token",
        )


_ACTIVE_IN_NAME = re.compile(
    r"(?<![0-9A-Za-z])(\d+(?:\.\d+)?)[Bb]-A(\d+(?:\.\d+)?)[Bb](?![0-9A-Za-z])"
)
"""``30B-A3B``: a mixture of experts' total and active sizes in a Qwen-style name."""


def _active_in_the_name(path: YamlPath, model: Mapping[str, Any]) -> Iterator[Finding]:
    """A name that says mixture of experts, on a model described as dense."""
    facts, _ = facts_of(model)
    if facts is None or facts.moe:
        return
    found = _ACTIVE_IN_NAME.search(str(model.get("source") or ""))
    if not found:
        return
    yield Finding(
        "warning",
        (*path, "model_info") if model.get("model_info") else (*path, "source"),
        f"the source's name ({found.group(0)}) says a mixture of experts with "
        f"{found.group(2)}B active parameters, but the model is described as dense "
        f"({facts.parameters_billions:g}B, every weight used by every token): memory is "
        "right, the capacity plan is not",
        "give model_info: experts, experts_per_token and active_parameters_billions (or "
        "model_info.config, the checkpoint's config.json)",
    )


def _facts_of_config(name: str, here: Path) -> tuple[llm_catalog.LlmFacts | None, str]:
    """The facts read from the config.json `name` beside the blueprint, or None and what is
    wrong with it (a located message's text)."""
    from inferplane.blueprint.capacity import profile

    try:
        text = profile.read_file(here, name)
    except OSError as e:
        return None, f"cannot read {name}: {e.strerror or e}"
    except profile.FileRefused as e:
        return None, str(e)
    except UnicodeDecodeError:
        return None, f"{name} is not UTF-8 text (a config.json is JSON)"
    try:
        config = json.loads(text)
    except ValueError as e:
        return None, f"{name} is not JSON: {e}"
    if not isinstance(config, dict):
        return None, f"{name} is not a JSON object (a config.json holds one)"
    try:
        shape = llm_config.read(config)
    except llm_config.ConfigError as e:
        return None, f"{name}: {e}"
    if shape.heads % shape.kv_heads:
        return None, (
            f"{name}: num_attention_heads ({shape.heads}) is not a multiple of "
            f"num_key_value_heads ({shape.kv_heads})"
        )
    if not 0.01 <= shape.parameters / 1e9 <= 10000:
        return None, f"{name}: its shapes make {shape.parameters / 1e9:.3g}B parameters"
    return llm_catalog.facts_from_shape(shape, f"models.<m>.model_info.config ({name})"), ""


def facts_of(
    model: Mapping[str, Any], here: Path | None = None
) -> tuple[llm_catalog.LlmFacts | None, str]:
    """The model's facts, or None and why they are unknown; `here` is the blueprint's
    directory (where `model_info.config` is read)."""
    info = model.get("model_info") or {}
    if "config" in info:
        if here is None:
            return None, "model_info.config is read beside the blueprint"
        return _facts_of_config(info["config"], here)
    if all(k in info for k in _NUMBERS):
        total = float(info["parameters_billions"])
        moe: dict[str, Any] = {}
        if all(k in info for k in _MOE) and info["experts_per_token"] < info["experts"]:
            share = 1 - info["experts_per_token"] / info["experts"]
            routed = (total - float(info["active_parameters_billions"])) / share
            moe = {
                "experts": info["experts"],
                "experts_per_token": info["experts_per_token"],
                "routed_parameters_billions": max(0.0, min(total, routed)),
            }
        return llm_catalog.LlmFacts(
            total,
            info["layers"],
            info["heads"],
            info["kv_heads"],
            info["head_dim"],
            "models.<m>.model_info",
            **moe,
        ), ""
    repo = info.get("hf_repo") or llm_catalog.hf_repo_of(model["source"])
    if repo is None:
        return None, "a model-store source does not say which model it is"
    found = llm_catalog.lookup(repo)
    if found is None:
        return None, f"{repo} is not in the built-in model table"
    return found, ""


def expert_parallel(settings: Mapping[str, Any]) -> bool:
    """Whether `vllm.extra_args` turns on expert parallelism (``--enable-expert-parallel``,
    short ``-ep``: ``inferplane/facts/vllm/v0.33.0/serve_flags.txt``); the last of it and
    ``--no-enable-expert-parallel`` wins, as argparse reads them."""
    on = False
    for arg in settings.get("extra_args") or ():
        flag = str(arg).split("=", 1)[0]
        if flag in ("--enable-expert-parallel", "-ep"):
            on = True
        elif flag == "--no-enable-expert-parallel":
            on = False
    return on


def gpu_memory_gib(pool: Mapping[str, Any]) -> float:
    """Memory of the GPU unit a replica gets: the MIG slice on a MIG pool, else the GPU."""
    gpu = catalog.gpu(pool["gpu"])
    profile = pool.get("mig_profile")
    if pool.get("sharing") == "mig" and profile and (m := _MIG_MEMORY.search(profile)):
        return float(m.group(1))
    return float(gpu.memory_gib)


# What the fit depends on, in the order an error blames them when an override set them.
_FIT_INPUTS: tuple[YamlPath, ...] = (
    ("precision",),
    ("gpus",),
    ("pool",),
    ("vllm", "max_model_len"),
    ("vllm", "quantization"),
    ("vllm", "kv_cache_dtype"),
    ("vllm", "gpu_memory_utilization"),
    ("source",),
    ("model_info",),
)


def _blame(
    env: EnvView, path: YamlPath, inputs: tuple[YamlPath, ...], default: YamlPath
) -> YamlPath:
    """The first input an environment's override set (so the error points into the
    override), else `default`."""
    for key in inputs:
        full = (*path, *key)
        if full in env.origins:
            return full
    return (*path, *default)


def _fit(
    env: EnvView,
    path: YamlPath,
    model: Mapping[str, Any],
    settings: Mapping[str, Any],
    pool: Mapping[str, Any],
) -> Iterator[Finding]:
    facts, why = facts_of(model, _here(env))
    if facts is None:
        yield _unknown_facts(path, why)
        return
    gpus = model.get("gpus", defaults.MODEL_GPUS)
    tp = fit.tensor_parallel_problem(facts.heads, facts.kv_heads, gpus)
    if tp:
        sizes = ", ".join(map(str, fit.divisors(facts.heads, facts.kv_heads, _TP_SIZES)))
        yield Finding(
            "error",
            _blame(env, path, (("gpus",), ("source",), ("model_info",)), ("gpus",)),
            f"gpus: {gpus} cannot split the model across GPUs: {tp}",
            f"use gpus: one of {sizes}",
        )
        return
    split = fit.expert_split_problem(
        facts.moe_intermediate_size, facts.experts, gpus, expert_parallel(settings)
    )
    if split:
        yield Finding(
            "error",
            _blame(env, path, (("gpus",), ("source",), ("model_info",)), ("gpus",)),
            f"gpus: {gpus} cannot split the model's experts by tensor parallelism: {split} "
            "(vLLM asserts it at start)",
            "add --enable-expert-parallel to vllm.extra_args (each GPU then holds whole "
            "experts), or use a number of GPUs that divides it",
        )
        return
    precision = model.get("precision", defaults.MODEL_PRECISION)
    # vLLM's default of the release that runs (inferplane/facts/vllm/<release>/defaults.txt).
    release = semantic_vllm_release.release_of(env, model)[0]
    util = settings.get(
        "gpu_memory_utilization",
        vllm_owned.engine_defaults(release)["gpu_memory_utilization"],
    )
    max_len = settings.get("max_model_len")
    if max_len and facts.context and max_len > facts.context:
        yield _beyond_context(env, path, model, facts, max_len)
        return
    est = fit.estimate(
        parameters=facts.parameters,
        bytes_per_weight=fit.weight_bytes(precision, settings.get("quantization")),
        layers=facts.layers,
        kv_heads=facts.kv_heads,
        head_dim=facts.head_dim,
        kv_bytes=fit.kv_cache_bytes(precision, settings.get("kv_cache_dtype")),
        # An encoder-decoder's sequence also caches its encoder frames for cross-attention.
        max_model_len=max_len + facts.encoder_frames if max_len else None,
        max_num_seqs=settings.get("max_num_seqs"),
        gpus=gpus,
        gpu_memory_gib=gpu_memory_gib(pool),
        gpu_memory_utilization=util,
        kv_per_head=facts.kv_per_head,
    )
    held = f"{facts.parameters_billions:g}B parameters"
    if facts.moe:
        held += f" (all {facts.experts} experts)"
    what = f"{held} in {precision}"
    if settings.get("quantization"):
        what = f"{held}, {settings['quantization']}"
    if not est.fits:
        tokens = f"{max_len} tokens"
        if facts.encoder_decoder:
            tokens += f" and {facts.encoder_frames} encoder frames"
        kv = f" + KV cache {est.kv_one_gib:.1f} for 1 × {tokens}" if max_len else ""
        fix = (
            "use more GPUs (tensor parallel), a quantization (fp8, int4), or a shorter "
            "max_model_len"
            if max_len
            else "use more GPUs (tensor parallel) or a quantization (fp8, int4)"
        )
        yield Finding(
            "error",
            _blame(env, path, _FIT_INPUTS, ("source",)),
            f"the model ({what}) does not fit in GPU memory: needs {est.need_gib:.1f} GiB "
            f"(weights {est.weights_gib:.1f}{kv} + overhead {est.overhead_gib:.1f}) but "
            f"{gpus} × {pool['gpu']} gives {est.budget_gib:.1f} GiB at "
            f"gpu_memory_utilization {util:.2f}",
            fix,
        )
        return
    if not max_len:
        yield Finding(
            "warning",
            (*path, "vllm"),
            "max_model_len is not set, so the KV cache was not checked: vLLM sizes it for "
            "the model's full context and refuses to start when one sequence does not fit",
            "set vllm.max_model_len to the longest prompt plus output you serve",
        )
    elif not est.fits_max_num_seqs:
        # An fp8 KV cache already halves it: the remaining levers are the sizes and GPUs.
        kv_fp8 = str(settings.get("kv_cache_dtype") or "").startswith("fp8")
        yield Finding(
            "warning",
            (*path, "vllm", "max_num_seqs"),
            f"the KV cache holds {counted(est.full_length_sequences, 'sequence')} of {max_len} "
            f"tokens at once ({est.kv_room_gib:.1f} GiB after weights and overhead, "
            f"{est.kv_one_gib:.2f} GiB each), fewer than max_num_seqs {est.max_num_seqs}; "
            "vLLM queues the rest when requests are that long",
            "if long requests are common, lower max_num_seqs or max_model_len, "
            + ("" if kv_fp8 else "set kv_cache_dtype: fp8, ")
            + "or use more GPUs",
        )


def _beyond_context(
    env: EnvView,
    path: YamlPath,
    model: Mapping[str, Any],
    facts: llm_catalog.LlmFacts,
    max_len: int,
) -> Finding:
    """vLLM refuses a max_model_len beyond the model's max_position_embeddings (v0.10.2
    ``vllm/config/__init__.py`` ``_get_and_verify_max_len``) unless told to ignore it."""
    repo = (model.get("model_info") or {}).get("hf_repo") or llm_catalog.hf_repo_of(model["source"])
    return Finding(
        "error",
        _blame(env, path, (("vllm", "max_model_len"), ("source",)), ("vllm", "max_model_len")),
        f"max_model_len {max_len} is longer than {repo}'s context of {facts.context} tokens "
        f"(max_position_embeddings in its config.json); vLLM refuses to start",
        f"use max_model_len <= {facts.context}",
    )


def _trtllm_fit(
    env: EnvView, path: YamlPath, model: Mapping[str, Any], pool: Mapping[str, Any]
) -> Iterator[Finding]:
    """The fit of a TensorRT-LLM model (`semantic_trtllm_fit`)."""
    facts, why = facts_of(model, _here(env))
    numbers = semantic_trtllm.fit_numbers(model, pool)
    if numbers is None:
        return
    if facts is None:
        yield _unknown_facts(path, why)
        return
    llm = model["tensorrt_llm"]
    precision = model.get("precision", defaults.MODEL_PRECISION)
    what = f"{facts.parameters_billions:g}B parameters, {llm.get('quantization') or precision}"
    for severity, where, message, hint in semantic_trtllm_fit.findings(
        facts,
        numbers,
        what,
        pool["gpu"],
        lambda inputs, default: _blame(env, path, inputs, default),
    ):
        yield Finding(severity, where, message, hint)


def _unknown_facts(path: YamlPath, why: str) -> Finding:
    return Finding(
        "warning",
        (*path, "source"),
        f"GPU memory fit not checked: {why}",
        "add model_info: hf_repo (org/name, when it is a common open model inferplane "
        "knows) or its numbers (parameters_billions, layers, heads, kv_heads, head_dim)",
    )


# --- speculative decoding and LoRA ---------------------------------------------------------
def _speculative(path: YamlPath, settings: Mapping[str, Any]) -> Iterator[Finding]:
    spec = settings.get("speculative")
    if not spec:
        return
    spath = (*path, "vllm", "speculative")
    method = spec["method"]
    if method != "ngram" and "draft_model" not in spec:
        yield Finding(
            "error",
            spath,
            f"method {method} needs a `draft_model`",
            "add draft_model: hf://org/name@revision of a draft head trained for this model",
        )
    if method == "ngram" and "draft_model" in spec:
        yield Finding(
            "error",
            (*spath, "draft_model"),
            "`draft_model` only applies to methods eagle and eagle3",
            "remove it: ngram proposes tokens from the prompt",
        )
    for key in ("prompt_lookup_max", "prompt_lookup_min"):
        if key in spec and method != "ngram":
            yield Finding(
                "error",
                (*spath, key),
                f"`{key}` only applies to method ngram",
                "remove it",
            )
    lo, hi = spec.get("prompt_lookup_min"), spec.get("prompt_lookup_max")
    if lo is not None and hi is not None and lo > hi:
        yield Finding(
            "error",
            (*spath, "prompt_lookup_min"),
            f"prompt_lookup_min ({lo}) is greater than prompt_lookup_max ({hi})",
            "make min <= max",
        )


def _lora(
    env: EnvView,
    path: YamlPath,
    name: str,
    model: Mapping[str, Any],
    settings: Mapping[str, Any],
) -> Iterator[Finding]:
    names: dict[str, YamlPath] = {name: ("models", name)}
    for i, alias in enumerate(settings.get("served_model_aliases") or []):
        apath = (*path, "vllm", "served_model_aliases", i)
        if alias in names:
            yield Finding(
                "error", apath, f"the name {alias!r} is already served", "use another alias"
            )
        names[alias] = apath
    lora = settings.get("lora")
    if not lora:
        return
    other = "s3" if env.spec["cloud"] == "gcp" else "gs"
    for adapter, source in lora["adapters"].items():
        apath = (*path, "vllm", "lora", "adapters", adapter)
        if adapter in names:
            yield Finding(
                "error",
                apath,
                f"adapter name {adapter!r} is already a served model name",
                "rename the adapter: clients select it by this name",
            )
        if source.startswith(f"{other}://"):
            yield Finding(
                "error",
                apath,
                f"a {env.spec['cloud']} environment ({env.name}) cannot read {other}:// sources",
                f"copy the adapter into {env.spec['model_store']} and use a relative path",
            )


__all__ = ["EnvView", "Finding", "advisories", "check_env", "facts_of", "findings"]
