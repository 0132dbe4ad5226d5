"""Semantic checks of a model's `traffic`, `profile`, `budget` and `slo.itl_p95_ms`, and
the capacity plan's verdicts.

Two stages. `check_model` runs with the other semantic checks on each environment's merged
view: fields that make no sense together (token counts on a model that has no tokens, a
prompt longer than the engine accepts, a profile for an LLM or without an SLO, a profile
file that cannot be read). `diagnostics` runs once those pass, on each resolved
environment: the capacity plan (`inferplane.blueprint.capacity.planner`) and its errors
(the peak cannot be carried within ``replicas.max`` or ``nodes.max`` even at the optimistic
end of the estimate's band; a batching window that uses up the latency budget), which
`load_blueprint` refuses, and its advisories, which `validate` prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inferplane.blueprint.checks.semantic_env import EnvView
from inferplane.blueprint.errors import Diagnostic, YamlPath
from inferplane.blueprint.model import Environment
from inferplane.blueprint.source import Document

if TYPE_CHECKING:
    from inferplane.blueprint.capacity.plans import EnvPlan


def _is_llm(model: Mapping[str, Any]) -> bool:
    return model["server"] == "vllm" or "tensorrt_llm" in model


def check_model(env: EnvView, path: YamlPath, model: Mapping[str, Any]) -> None:
    """The traffic, profile and SLO fields of one schema-valid model."""
    llm = _is_llm(model)
    traffic = model.get("traffic")
    slo = model.get("slo") or {}
    if not llm and "itl_p95_ms" in slo:
        env.error(
            (*path, "slo", "itl_p95_ms"),
            "inter-token latency applies to LLMs (vLLM, TensorRT-LLM), which stream tokens",
            "use slo.p95_ms for this Triton model",
        )
    if traffic is not None:
        _traffic(env, path, model, traffic, llm)
    elif "budget" in model:
        env.error(
            (*path, "budget"),
            "the budget is compared with the cost of the capacity estimate, which needs the "
            "model's traffic",
            "add `traffic` (peak_rps, and the tokens per request of an LLM), or remove budget",
        )
    spec = model.get("profile")
    if spec is not None:
        _profile(env, (*path, "profile"), model, spec, llm)


def _traffic(
    env: EnvView, path: YamlPath, model: Mapping[str, Any], traffic: Mapping[str, Any], llm: bool
) -> None:
    where: YamlPath = (*path, "traffic")
    if not llm:
        for key in ("input_tokens", "output_tokens", "shared_prefix"):
            if key in traffic:
                env.error(
                    (*where, key),
                    f"`{key}` applies to LLMs; this Triton model takes whole requests",
                    "remove it: a measured profile sets what one replica carries",
                )
        _items_within_max(env, where, model, traffic.get("items_per_request", 1))
        if "profile" not in model:
            env.error(
                where,
                "a Triton model's capacity comes from its measured latency per batch size, "
                "and the model gives none",
                "add `profile: {points: [{batch_size: 1, p95_ms: 2.1}, ...]}` (e.g. from "
                "perf_analyzer) or `profile: {file: profiles/<model>.csv}`",
            )
        return
    if "items_per_request" in traffic:
        env.error(
            (*where, "items_per_request"),
            "`items_per_request` counts the batch items of a Triton model's request; an "
            "LLM's request is its tokens",
            "remove it and state input_tokens and output_tokens per request",
        )
    from inferplane.blueprint.checks import semantic_vllm

    facts, _ = semantic_vllm.facts_of(model, Path(env.doc.source.file).parent)
    if facts is not None and facts.encoder_decoder:
        _speech_traffic(env, where, model, traffic, facts.encoder_frames)
        return
    if "audio_seconds" in traffic and facts is not None:
        env.error(
            (*where, "audio_seconds"),
            "`audio_seconds` is what a speech model's encoder reads (Whisper); this model is a "
            "decoder-only LLM, whose request is its tokens",
            "remove it and state input_tokens and output_tokens per request",
        )
    missing = [k for k in ("input_tokens", "output_tokens") if k not in traffic]
    if missing:
        env.error(
            where,
            f"an LLM's traffic needs {' and '.join(f'`{k}`' for k in missing)} per request",
            "add the average prompt and output lengths, e.g. input_tokens: 1500, "
            "output_tokens: 300",
        )
        return
    tokens = traffic["input_tokens"] + traffic["output_tokens"]
    settings = model.get("vllm") or {}
    trt = model.get("tensorrt_llm") or {}
    limit = settings.get("max_model_len") or trt.get("max_seq_len")
    name = "vllm.max_model_len" if settings.get("max_model_len") else "tensorrt_llm.max_seq_len"
    if limit and tokens > limit:
        env.error(
            (*where, "input_tokens"),
            f"a request of {traffic['input_tokens']} + {traffic['output_tokens']} tokens is "
            f"longer than {name} ({limit})",
            f"raise {name} to {tokens} or more, or state the traffic's real lengths",
        )
    if trt.get("max_input_len") and traffic["input_tokens"] > trt["max_input_len"]:
        env.error(
            (*where, "input_tokens"),
            f"a prompt of {traffic['input_tokens']} tokens is longer than the engine's "
            f"tensorrt_llm.max_input_len ({trt['max_input_len']})",
            f"raise max_input_len to {traffic['input_tokens']} or more",
        )


def _speech_traffic(
    env: EnvView,
    where: YamlPath,
    model: Mapping[str, Any],
    traffic: Mapping[str, Any],
    frames: int,
) -> None:
    """A speech model's traffic (Whisper on vLLM): the audio per request, and the decoder's
    tokens of one clip within max_model_len (the encoder's frames are not counted there)."""
    from inferplane.blueprint.capacity import load
    from inferplane.blueprint.llm_config import clips

    missing = [k for k in ("audio_seconds", "output_tokens") if k not in traffic]
    if missing:
        env.error(
            where,
            f"a speech model's traffic needs {' and '.join(f'`{k}`' for k in missing)} per "
            f"request: its encoder computes {frames} frames per 30 s of audio, which are not "
            "prompt tokens",
            "add the average audio length and transcript, e.g. audio_seconds: 20, "
            "output_tokens: 60 (input_tokens is the decoder's prompt, 4 tokens unless stated)",
        )
        return
    limit = (model.get("vllm") or {}).get("max_model_len")
    n = clips(float(traffic["audio_seconds"]))
    prompt = traffic.get("input_tokens", load.DECODER_PROMPT_TOKENS)
    per_clip = -(-traffic["output_tokens"] // n)
    if limit and prompt + per_clip > limit:
        key = "input_tokens" if "input_tokens" in traffic else "output_tokens"
        env.error(
            (*where, key),
            f"one clip of the request (of {n}) holds {prompt} prompt + {per_clip} output "
            f"tokens, more than vllm.max_model_len ({limit}), which counts the decoder's "
            f"tokens only (the encoder's {frames} frames per clip are apart)",
            "state the decoder prompt in input_tokens (4 for a plain transcription) and the "
            "transcript's tokens in output_tokens; put the audio in audio_seconds",
        )


def _profile(
    env: EnvView, where: YamlPath, model: Mapping[str, Any], spec: Mapping[str, Any], llm: bool
) -> None:
    if llm:
        env.error(
            where,
            "a profile describes a Triton model's batches; an LLM's capacity comes from its "
            "architecture and GPU (the roofline estimate)",
            "remove `profile`",
        )
        return
    if "p95_ms" not in (model.get("slo") or {}):
        env.error(
            where,
            "a profile sizes the batch that fits slo.p95_ms, and the model states none",
            "add slo: {p95_ms: <milliseconds>}",
        )
    if "points" in spec:
        seen: set[int] = set()
        for i, point in enumerate(spec["points"]):
            if point["batch_size"] in seen:
                env.error(
                    (*where, "points", i, "batch_size"),
                    f"batch size {point['batch_size']} is measured twice",
                    "keep one point per batch size",
                )
            seen.add(point["batch_size"])
        _batches_within_max(env, (*where, "points"), model, seen)
        _batches_hold_a_request(env, (*where, "points"), model, seen)
        return
    from inferplane.blueprint.capacity import profile

    try:
        rows = profile.read_csv(profile.read_file(Path(env.doc.source.file).parent, spec["file"]))
    except OSError as e:
        env.error(
            (*where, "file"),
            f"cannot read {spec['file']}: {e.strerror or e}",
            "give a CSV file beside the blueprint (relative to it)",
        )
    except profile.FileRefused as e:
        env.error(
            (*where, "file"),
            str(e),
            "give a regular CSV file in the blueprint's folder (relative to it)",
        )
    except ValueError as e:
        env.error(
            (*where, "file"),
            f"{spec['file']}: {e}",
            "write one `<batch size>,<p95 ms>` row per measured batch size under the header",
        )
    else:
        _batches_within_max(env, (*where, "file"), model, {b for b, _ in rows})
        _batches_hold_a_request(env, (*where, "file"), model, {b for b, _ in rows})


def _batches_within_max(
    env: EnvView, where: YamlPath, model: Mapping[str, Any], batches: set[int]
) -> None:
    """The plan sizes the batch among the measured ones Triton can form (at most
    ``batching.max_batch_size``; 1 without `batching`): a profile of larger ones only
    leaves it nothing to size, whatever the SLO."""
    batching = model.get("batching")
    limit = batching["max_batch_size"] if batching else 1
    if not batches or min(batches) <= limit:
        return
    measured = ", ".join(map(str, sorted(batches)))
    if batching:
        cap = f"batching.max_batch_size ({limit})"
        hint = (
            f"measure batch sizes up to {limit} (e.g. perf_analyzer at concurrency 1 to "
            f"{limit}), or raise batching.max_batch_size to {min(batches)} if the model "
            "takes such batches"
        )
    else:
        cap = "1, the batch of a model without `batching`"
        hint = (
            "measure batch size 1, or add `batching: {max_batch_size: "
            f"{min(batches)}}}` if the model takes batches"
        )
    env.error(
        where,
        f"the profile measures batch sizes {measured}, none at or below {cap}: "
        "there is no batch the model runs to size its capacity from",
        hint,
    )


def _items_within_max(env: EnvView, where: YamlPath, model: Mapping[str, Any], items: int) -> None:
    """A request's items are rows of its batch dimension: Triton refuses a request whose
    batch exceeds ``max_batch_size`` ("inference request batch-size must be <= ...",
    triton-inference-server/core r26.02 ``src/infer_request.cc``), and a model without
    `batching` has no batch dimension, so its profile's batch 1 is already one request."""
    if items <= 1:
        return
    batching = model.get("batching")
    if not batching:
        env.error(
            (*where, "items_per_request"),
            f"a request of {items} items needs a batch dimension, and the model has no "
            "`batching`: its profile's batch 1 is one whole request",
            "remove items_per_request, or add `batching: {max_batch_size: "
            f"{items}}}` (or more) if the model takes batches",
        )
        return
    limit = batching["max_batch_size"]
    if items > limit:
        env.error(
            (*where, "items_per_request"),
            f"a request of {items} items is larger than batching.max_batch_size ({limit}): "
            f'Triton refuses it ("inference request batch-size must be <= {limit}")',
            f"raise batching.max_batch_size to {items} or more, or send at most {limit} "
            "items per request",
        )


def _batches_hold_a_request(
    env: EnvView, where: YamlPath, model: Mapping[str, Any], batches: set[int]
) -> None:
    """With several items per request, the plan sizes the batch among the measured ones
    that hold at least one whole request (Triton does not split a request)."""
    items = (model.get("traffic") or {}).get("items_per_request", 1)
    batching = model.get("batching")
    if items <= 1 or not batching or items > batching["max_batch_size"]:
        return  # `_items_within_max` has said what is wrong
    limit = batching["max_batch_size"]
    if not batches or min(batches) > limit or any(items <= b <= limit for b in batches):
        return
    measured = ", ".join(map(str, sorted(batches)))
    env.error(
        where,
        f"the profile measures batch sizes {measured}, none from {items} (one request of "
        f"traffic.items_per_request {items} items) to batching.max_batch_size ({limit}): "
        "no measured batch holds a whole request",
        f"measure batch sizes from {items} up to {limit} (multiples of {items}: the batches "
        "whole requests form)",
    )


def has_traffic(doc: Document, env_name: str) -> bool:
    """Whether any model of `env_name` states `traffic` (else there is nothing to plan)."""
    models = (doc.data.get("models") or {}).values()
    spec = doc.data["environments"][env_name]
    overrides = (spec.get("overrides") or {}).get("models") or {}
    return any("traffic" in m for m in models) or any(
        "traffic" in (m or {}) for m in overrides.values()
    )


def diagnostics(planned: Iterable[tuple[Environment, EnvPlan | None]]) -> list[Diagnostic]:
    """The capacity plan's errors and advisories over resolved environments and the plans
    their resolution made (`resolve.resolve_planned`), once each, sorted."""
    seen: set[tuple[object, str]] = set()
    out: list[Diagnostic] = []
    for env, capacity in planned:
        for p in capacity.problems if capacity is not None else ():
            covered, written = env.source.written(p.path, env.override_origins)
            overridden = env.override_origins.get(p.path[:covered])
            shown = written + p.path[covered:] if overridden else p.path
            d = Diagnostic(env.locate(p.path), shown, p.message, p.hint, p.severity)
            if (d.location, d.message) not in seen:
                seen.add((d.location, d.message))
                out.append(d)
    return sorted(out, key=lambda d: d.location)
