"""Runs one of inferplane's Triton Python models (components/serving/trtllm/trtllm_python/) on a
stand-in Python backend and tokenizer, for tests/components/serving/test_trtllm_text.py.

Needs numpy, so it runs in the Triton checker environment (scripts/dev/setup-triton-venv.sh):

    .venv-triton/bin/python trtllm_python_driver.py < case.json

The case: {"model": "preprocessing", "params": {...}, "requests": [{"NAME": [[...]], ...}]},
with strings as lists of str (sent as bytes). Prints {"loaded": [path, kwargs], "responses":
[{"error": str | null, "outputs": {"NAME": [[...]]}}]} with bytes decoded.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[3]


class Tokenizer:
    """One id per word (10 + its length), BOS 1, EOS 2, no pad token."""

    eos_token_id = 2
    pad_token_id = None
    loaded: tuple[str, dict[str, Any]] = ("", {})

    @classmethod
    def from_pretrained(cls, path: str, **kwargs: Any) -> Tokenizer:
        cls.loaded = (path, kwargs)
        return cls()

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        ids = [10 + len(w) for w in text.split()]
        return [1, *ids] if add_special_tokens else ids

    def decode(self, ids: list[int], skip_special_tokens: bool = False) -> str:
        kept = [i for i in ids if not (skip_special_tokens and i in (1, 2))]
        return " ".join("w" * (i - 10) for i in kept)


class Tensor:
    def __init__(self, name: str, array: Any) -> None:
        self.name, self.array = name, np.asarray(array)

    def as_numpy(self) -> Any:
        return self.array


class Response:
    def __init__(self, output_tensors: list[Tensor] | None = None, error: Any = None) -> None:
        self.outputs = {t.name: t.array for t in output_tensors or []}
        self.error = error


def _install() -> None:
    backend = types.ModuleType("triton_python_backend_utils")
    backend.Tensor = Tensor  # type: ignore[attr-defined]
    backend.InferenceResponse = Response  # type: ignore[attr-defined]
    backend.TritonError = str  # type: ignore[attr-defined]
    backend.get_input_tensor_by_name = lambda request, name: request.get(name)  # type: ignore[attr-defined]
    sys.modules["triton_python_backend_utils"] = backend
    transformers = types.ModuleType("transformers")
    transformers.AutoTokenizer = Tokenizer  # type: ignore[attr-defined]
    sys.modules["transformers"] = transformers


def _tensor(name: str, value: Any) -> Tensor:
    array = np.asarray(value)
    if array.dtype.kind == "U":
        return Tensor(name, np.vectorize(lambda s: s.encode("utf-8"), otypes=[object])(array))
    return Tensor(name, array.astype(np.int32))


def _plain(array: Any) -> Any:
    if array.dtype == object:
        return [_plain(np.asarray(row)) if np.ndim(row) else row.decode() for row in array]
    return {"dtype": str(array.dtype), "values": array.tolist()}


def main() -> None:
    case = json.load(sys.stdin)
    _install()
    path = ROOT / "components" / "serving" / "trtllm" / "trtllm_python" / f"{case['model']}.py"
    spec = importlib.util.spec_from_file_location(case["model"], path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.TritonPythonModel()
    config = {"parameters": {k: {"string_value": v} for k, v in case["params"].items()}}
    model.initialize({"model_config": json.dumps(config)})
    requests = [{n: _tensor(n, v) for n, v in r.items()} for r in case["requests"]]
    responses = model.execute(requests)
    out = [
        {"error": r.error, "outputs": {n: _plain(a) for n, a in r.outputs.items()}}
        for r in responses
    ]
    print(json.dumps({"loaded": list(Tokenizer.loaded), "responses": out}))


if __name__ == "__main__":
    main()
