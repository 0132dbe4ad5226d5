"""Triton Python model ``postprocessing`` of a TensorRT-LLM model's text pipeline: the
``tensorrtllm`` model's output token ids in, text out.

The counterpart of `preprocessing` (see there: shipped by inferplane, tokenizer read from the
engine directory, offline). It plays the role of the release's ``all_models/
inflight_batcher_llm/postprocessing`` model with its tensor names. The backend returns only
the generated tokens (``exclude_input_in_output``); each beam's tokens up to its sequence
length are decoded without special tokens. A streaming model sends one response per step,
each decoded on its own, as the release's model does.

Parameters (config.pbtxt): ``tokenizer_dir``.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import triton_python_backend_utils as pb_utils
from transformers import AutoTokenizer


class TritonPythonModel:
    def initialize(self, args: dict[str, str]) -> None:
        config = json.loads(args["model_config"])
        tokenizer_dir = config["parameters"]["tokenizer_dir"]["string_value"]
        self.tokenizer = AutoTokenizer.from_pretrained(
            tokenizer_dir, local_files_only=True, trust_remote_code=False
        )

    def _respond(self, request: Any) -> Any:
        # [batch, beams, tokens] and [batch, beams]
        tokens = pb_utils.get_input_tensor_by_name(request, "TOKENS_BATCH").as_numpy()
        lengths = pb_utils.get_input_tensor_by_name(request, "SEQUENCE_LENGTH").as_numpy()
        texts = [
            [
                self.tokenizer.decode(
                    beam[: int(length)].tolist(), skip_special_tokens=True
                ).encode("utf-8")
                for beam, length in zip(row, row_lengths, strict=True)
            ]
            for row, row_lengths in zip(tokens, lengths, strict=True)
        ]
        return pb_utils.InferenceResponse(
            output_tensors=[pb_utils.Tensor("OUTPUT", np.array(texts, dtype=object))]
        )

    def execute(self, requests: list[Any]) -> list[Any]:
        return [self._respond(request) for request in requests]
