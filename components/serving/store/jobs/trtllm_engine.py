"""Builds a TensorRT-LLM engine from a checkpoint; run in the Triton TensorRT-LLM image.

    python3 trtllm_engine.py '<build spec JSON>'

The spec (`inferplane.components.serving.trtllm_build.build_spec`) names the checkpoint and
engine directories, the tensor-parallel size, dtype, quantization and the engine's limits.
The engine is built with TensorRT-LLM's LLM API (``LLM(model=, tensor_parallel_size=,
quant_config=, build_config=)`` then ``llm.save(dir)``). ``_tensorrt_engine.LLM`` is the
TensorRT-engine LLM from TensorRT-LLM 1.0 on, where plain ``LLM`` became the PyTorch flow;
before 1.0 (0.21 in Triton 25.08) plain ``LLM`` builds TensorRT engines.

With the engine it stores what serving needs from the checkpoint: the tokenizer
(``AutoTokenizer.save_pretrained``) and the warm-up request's inputs, little-endian int32.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from collections.abc import Mapping, Sequence
from typing import Any


class WarmupError(Exception):
    """The warm-up prompt is shorter, in the checkpoint's tokenizer, than the request."""


def warmup_records(ids: Sequence[int], spec: Mapping[str, Any]) -> dict[str, bytes]:
    """The warm-up input files (name -> little-endian int32 bytes) for prompt token `ids`:
    the first ``warmup_tokens`` ids, their length and the output length."""
    wanted = int(spec["warmup_tokens"])
    kept = list(ids)[:wanted]
    if len(kept) < wanted:
        raise WarmupError(f"the warm-up prompt is only {len(kept)} tokens, {wanted} needed")
    values = {
        "input_ids": kept,
        "input_lengths": [len(kept)],
        "request_output_len": [int(spec["warmup_output_tokens"])],
    }
    return {name: struct.pack(f"<{len(v)}i", *v) for name, v in values.items()}


def build_engine(spec: Mapping[str, Any]) -> None:
    """Builds every rank into ``engine_dir`` with the LLM API."""
    try:
        from tensorrt_llm._tensorrt_engine import LLM
    except ImportError:
        from tensorrt_llm import LLM
    from tensorrt_llm.llmapi import BuildConfig, QuantAlgo, QuantConfig

    def algo(name: str | None) -> Any:
        return getattr(QuantAlgo, name) if name else None

    quant = QuantConfig(
        quant_algo=algo(spec["quant_algo"]),
        kv_cache_quant_algo=algo(spec["kv_cache_quant_algo"]),
    )
    build = BuildConfig(
        max_batch_size=spec["max_batch_size"],
        max_input_len=spec["max_input_len"],
        max_seq_len=spec["max_seq_len"],
    )
    build.plugin_config.use_paged_context_fmha = spec["paged_context_fmha"]
    llm = LLM(
        model=spec["checkpoint"],
        tensor_parallel_size=spec["tensor_parallel_size"],
        dtype=spec["dtype"],
        quant_config=quant,
        build_config=build,
    )
    llm.save(spec["engine_dir"])


def store_serving_inputs(spec: Mapping[str, Any]) -> None:
    """The checkpoint's tokenizer and the warm-up request, beside the engine."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(spec["checkpoint"])
    tokenizer.save_pretrained(os.path.join(spec["engine_dir"], spec["tokenizer_subdir"]))
    ids = tokenizer.encode(spec["warmup_prompt"], add_special_tokens=True)
    records = warmup_records(ids, spec)
    warmup = os.path.join(spec["engine_dir"], spec["warmup_dir"])
    os.makedirs(warmup)
    for name, data in records.items():
        with open(os.path.join(warmup, name), "wb") as out:
            out.write(data)


def main(argv: Sequence[str]) -> int:
    if len(argv) != 1:
        sys.exit("usage: trtllm_engine.py '<build spec JSON>'")
    spec = json.loads(argv[0])
    build_engine(spec)
    try:
        store_serving_inputs(spec)
    except WarmupError as error:
        sys.exit(str(error))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
