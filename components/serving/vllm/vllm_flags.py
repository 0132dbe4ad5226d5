"""The `vllm serve` command line of a model, from plain values.

Every flag written here is an option of every supported vLLM release (listed in
``inferplane/facts/vllm/<release>/serve_flags.txt``, read from its wheel) and is classified
there as owned by the blueprint, so `extra_args` can never set it a second time; tests check
both.
`extra_args` come last, verbatim.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final


def speculative_config(
    method: str,
    num_speculative_tokens: int,
    *,
    draft_repo: str | None = None,
    draft_revision: str | None = None,
    prompt_lookup_max: int | None = None,
    prompt_lookup_min: int | None = None,
) -> dict[str, Any]:
    """The ``--speculative-config`` JSON of vLLM v0.10.2 (``vllm/config/__init__.py``,
    ``SpeculativeConfig``: ``method``, ``num_speculative_tokens``, ``model``, ``revision``,
    ``prompt_lookup_max``, ``prompt_lookup_min``). A generic small draft model is not offered:
    v0.10.2's ``SpeculativeConfig.__post_init__`` raises NotImplementedError ("Speculative
    decoding with draft model is not supported yet") for it; ngram and EAGLE heads work."""
    out: dict[str, Any] = {"method": method, "num_speculative_tokens": num_speculative_tokens}
    if draft_repo:
        out["model"] = draft_repo
        if draft_revision:
            out["revision"] = draft_revision
    if prompt_lookup_max is not None:
        out["prompt_lookup_max"] = prompt_lookup_max
    if prompt_lookup_min is not None:
        out["prompt_lookup_min"] = prompt_lookup_min
    return out


HISTOGRAM_FLAG: Final = "--custom-histogram-buckets"


def vllm_flags(
    *,
    weights: str,
    port: int,
    served_names: Sequence[str],
    tensor_parallel_size: int,
    revision: str | None = None,
    dtype: str | None = None,
    quantization: str | None = None,
    max_model_len: int | None = None,
    max_num_seqs: int | None = None,
    max_num_batched_tokens: int | None = None,
    gpu_memory_utilization: float | None = None,
    kv_cache_dtype: str | None = None,
    enable_prefix_caching: bool | None = None,
    enable_chunked_prefill: bool | None = None,
    enforce_eager: bool | None = None,
    speculative: Mapping[str, Any] | None = None,
    lora_modules: Sequence[tuple[str, str]] = (),
    max_loras: int | None = None,
    max_lora_rank: int | None = None,
    chat_template: str | None = None,
    tool_call_parser: str | None = None,
    histogram_buckets: Mapping[str, Sequence[float]] | None = None,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """Arguments of ``vllm serve``. None keeps vLLM's default; booleans become ``--x`` or
    ``--no-x`` (``argparse.BooleanOptionalAction``). `lora_modules` are (name, path) pairs;
    `speculative` is the `speculative_config` mapping."""
    args = [weights, "--port", str(port), "--served-model-name", *served_names]
    if revision:
        args += ["--revision", revision]
    args += ["--tensor-parallel-size", str(tensor_parallel_size)]
    for flag, value in (
        ("--dtype", dtype),
        ("--quantization", quantization),
        ("--max-model-len", max_model_len),
        ("--max-num-seqs", max_num_seqs),
        ("--max-num-batched-tokens", max_num_batched_tokens),
        ("--gpu-memory-utilization", gpu_memory_utilization),
        ("--kv-cache-dtype", kv_cache_dtype),
    ):
        if value is not None:
            args += [flag, str(value)]
    for name, on in (
        ("enable-prefix-caching", enable_prefix_caching),
        ("enable-chunked-prefill", enable_chunked_prefill),
        ("enforce-eager", enforce_eager),
    ):
        if on is not None:
            args.append(f"--{name}" if on else f"--no-{name}")
    if speculative:
        args += ["--speculative-config", json.dumps(dict(speculative), separators=(",", ":"))]
    if lora_modules:
        args.append("--enable-lora")
        if max_loras is not None:
            args += ["--max-loras", str(max_loras)]
        if max_lora_rank is not None:
            args += ["--max-lora-rank", str(max_lora_rank)]
        args += ["--lora-modules", *(f"{name}={path}" for name, path in lora_modules)]
    if chat_template is not None:
        args += ["--chat-template", chat_template]
    if tool_call_parser is not None:
        # vLLM requires the parser for auto tool choice (cli_args.validate_parsed_serve_args).
        args += ["--tool-call-parser", tool_call_parser, "--enable-auto-tool-choice"]
    if histogram_buckets:
        # ObservabilityConfig.custom_histogram_buckets (0.33.0 vllm/config/observability.py):
        # a JSON mapping of bucket family -> increasing bounds, each replacing that family's
        # defaults.
        bounds = {family: list(values) for family, values in sorted(histogram_buckets.items())}
        args += [HISTOGRAM_FLAG, json.dumps(bounds, separators=(",", ":"))]
    return [*args, *extra_args]
