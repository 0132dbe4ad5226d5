"""Triton Python model ``preprocessing`` of a TensorRT-LLM model's text pipeline: prompt text
in, token ids for the ``tensorrtllm`` model out.

inferplane ships this file in the model's ConfigMap; the serving pod runs it in the Python
backend of the ``-trtllm-python-py3`` image, whose TensorRT-LLM depends on ``transformers``.
It plays the role of the release's ``all_models/inflight_batcher_llm/preprocessing`` model,
with the same tensor names for what it covers (no multimodal inputs, no word lists), and
reads the tokenizer the engine build stored next to the engine: ``local_files_only``, so
the pod never reaches the Hugging Face Hub.

Parameters (config.pbtxt): ``tokenizer_dir``, ``add_special_tokens`` (``true``: the BOS
token the model was trained with), ``max_input_len`` (the engine's limit, checked here so a
long prompt gets a clear error instead of the backend's).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import triton_python_backend_utils as pb_utils
from transformers import AutoTokenizer


def _params(args: dict[str, str]) -> dict[str, str]:
    config = json.loads(args["model_config"])
    return {k: v["string_value"] for k, v in config.get("parameters", {}).items()}


class TritonPythonModel:
    def initialize(self, args: dict[str, str]) -> None:
        params = _params(args)
        self.tokenizer = AutoTokenizer.from_pretrained(
            params["tokenizer_dir"], local_files_only=True, trust_remote_code=False
        )
        self.add_special_tokens = params.get("add_special_tokens", "true") == "true"
        self.max_input_len = int(params["max_input_len"])
        eos = self.tokenizer.eos_token_id
        if eos is None:
            raise ValueError(f"the tokenizer in {params['tokenizer_dir']} has no EOS token")
        self.end_id = int(eos)
        pad = self.tokenizer.pad_token_id
        self.pad_id = self.end_id if pad is None else int(pad)

    def _encode(self, query: Any) -> list[int]:
        text = query.decode("utf-8") if isinstance(query, bytes) else str(query)
        if not text:
            raise ValueError("text_input is empty")
        ids: list[int] = self.tokenizer.encode(text, add_special_tokens=self.add_special_tokens)
        if len(ids) > self.max_input_len:
            raise ValueError(
                f"the prompt is {len(ids)} tokens, more than the model's max_input_len "
                f"{self.max_input_len}"
            )
        return ids

    def _respond(self, request: Any) -> Any:
        queries = pb_utils.get_input_tensor_by_name(request, "QUERY").as_numpy()
        output_len = pb_utils.get_input_tensor_by_name(request, "REQUEST_OUTPUT_LEN").as_numpy()
        batch = [self._encode(row[0]) for row in queries]
        longest = max(len(ids) for ids in batch)
        # One row per prompt, padded to the longest; the lengths tell the backend where
        # each prompt ends (the input is a ragged batch there).
        input_ids = np.full((len(batch), longest), self.pad_id, dtype=np.int32)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = ids
        lengths = np.array([[len(ids)] for ids in batch], dtype=np.int32)
        ones = np.ones((len(batch), 1), dtype=np.int32)
        return pb_utils.InferenceResponse(
            output_tensors=[
                pb_utils.Tensor("INPUT_ID", input_ids),
                pb_utils.Tensor("REQUEST_INPUT_LEN", lengths),
                pb_utils.Tensor("REQUEST_OUTPUT_LEN", output_len.astype(np.int32)),
                pb_utils.Tensor("OUT_END_ID", ones * self.end_id),
                pb_utils.Tensor("OUT_PAD_ID", ones * self.pad_id),
            ]
        )

    def execute(self, requests: list[Any]) -> list[Any]:
        responses = []
        for request in requests:
            try:
                responses.append(self._respond(request))
            except (ValueError, UnicodeDecodeError) as err:
                responses.append(pb_utils.InferenceResponse(error=pb_utils.TritonError(str(err))))
        return responses
