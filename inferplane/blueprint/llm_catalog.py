"""Architecture facts of common open LLMs, keyed by Hugging Face repository id.

The GPU memory fit check (`inferplane.blueprint.fit`) needs, per model: the parameter count
(weights), and the attention shape that sizes the KV cache (layers, KV heads, head size) and
bounds tensor parallelism (attention heads, KV heads).

Each row cites the model's ``config.json`` on the Hub (``num_hidden_layers``,
``num_attention_heads``, ``num_key_value_heads``, ``head_dim`` or ``hidden_size /
num_attention_heads``); multimodal Gemma 3 rows use its ``text_config``. Parameter counts are
the safetensors totals the model cards state, rounded to 10 million. ``verified`` says whether
the attention numbers were checked against a published copy of that config.json's values
(False: taken from the model card and the architecture's description, not re-checked). Base
and instruct variants share an architecture, so both ids map to the same row.

A model not listed here gives its facts in the blueprint (`models.<m>.model_info`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final


@dataclass(frozen=True)
class LlmFacts:
    """What the fit check needs to know about one model architecture."""

    parameters_billions: float
    layers: int
    heads: int
    """Attention (query) heads."""
    kv_heads: int
    """Key/value heads (grouped-query attention); equal to `heads` without GQA."""
    head_dim: int
    source: str
    """Where the numbers come from."""
    verified: bool = True

    @property
    def parameters(self) -> float:
        return self.parameters_billions * 1e9


def _cfg(repo: str) -> str:
    return f"https://huggingface.co/{repo}/blob/main/config.json"


# (repository ids, parameters in billions, layers, heads, KV heads, head dim, verified)
# fmt: off
_ROWS: tuple[tuple[tuple[str, ...], float, int, int, int, int, bool], ...] = (
    # Llama 3.x
    (("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B",
      "meta-llama/Meta-Llama-3.1-8B-Instruct"), 8.03, 32, 32, 8, 128, True),
    (("meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B",
      "meta-llama/Meta-Llama-3.1-70B-Instruct"), 70.55, 80, 64, 8, 128, True),
    (("meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Llama-3.1-405B",
      "meta-llama/Llama-3.1-405B-Instruct-FP8"), 405.85, 126, 128, 8, 128, False),
    (("meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-1B"), 1.24, 16, 32, 8, 64, True),
    (("meta-llama/Llama-3.2-3B-Instruct", "meta-llama/Llama-3.2-3B"), 3.21, 28, 24, 8, 128, True),
    (("meta-llama/Llama-3.3-70B-Instruct",), 70.55, 80, 64, 8, 128, True),
    # Qwen 2.5 and Qwen3
    (("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B"), 7.62, 28, 28, 4, 128, True),
    (("Qwen/Qwen2.5-14B-Instruct", "Qwen/Qwen2.5-14B"), 14.77, 48, 40, 8, 128, True),
    (("Qwen/Qwen2.5-32B-Instruct", "Qwen/Qwen2.5-32B"), 32.76, 64, 40, 8, 128, True),
    (("Qwen/Qwen2.5-72B-Instruct", "Qwen/Qwen2.5-72B"), 72.71, 80, 64, 8, 128, True),
    (("Qwen/Qwen3-8B",), 8.19, 36, 32, 8, 128, True),
    (("Qwen/Qwen3-14B",), 14.77, 40, 40, 8, 128, True),
    (("Qwen/Qwen3-32B",), 32.76, 64, 64, 8, 128, True),
    # Mistral and Mixtral
    (("mistralai/Mistral-7B-Instruct-v0.3", "mistralai/Mistral-7B-v0.3"),
     7.25, 32, 32, 8, 128, True),
    (("mistralai/Mixtral-8x7B-Instruct-v0.1", "mistralai/Mixtral-8x7B-v0.1"),
     46.70, 32, 32, 8, 128, True),
    (("mistralai/Mixtral-8x22B-Instruct-v0.1", "mistralai/Mixtral-8x22B-v0.1"),
     140.62, 56, 48, 8, 128, False),
    # Gemma 2 and Gemma 3 (sliding-window layers are counted as full ones: an upper bound)
    (("google/gemma-2-9b-it", "google/gemma-2-9b"), 9.24, 42, 16, 8, 256, True),
    (("google/gemma-2-27b-it", "google/gemma-2-27b"), 27.23, 46, 32, 16, 128, False),
    (("google/gemma-3-1b-it",), 1.00, 26, 4, 1, 256, True),
    (("google/gemma-3-4b-it",), 4.30, 34, 8, 4, 256, False),
    (("google/gemma-3-12b-it",), 12.19, 48, 16, 8, 256, False),
    (("google/gemma-3-27b-it",), 27.43, 62, 32, 16, 128, True),
    # Phi-3 and Phi-4
    (("microsoft/Phi-3-mini-4k-instruct", "microsoft/Phi-3-mini-128k-instruct"),
     3.82, 32, 32, 32, 96, True),
    (("microsoft/Phi-3-medium-4k-instruct", "microsoft/Phi-3-medium-128k-instruct"),
     13.96, 40, 40, 10, 128, True),
    (("microsoft/phi-4",), 14.66, 40, 40, 10, 128, True),
)
# fmt: on


def _table() -> dict[str, LlmFacts]:
    out = {}
    for repos, params_b, layers, heads, kv_heads, head_dim, verified in _ROWS:
        facts = LlmFacts(params_b, layers, heads, kv_heads, head_dim, _cfg(repos[0]), verified)
        out.update({repo.lower(): facts for repo in repos})
    return out


MODELS: Final[Mapping[str, LlmFacts]] = MappingProxyType(_table())
"""Lower-cased Hugging Face repository id -> facts."""


def lookup(repo: str) -> LlmFacts | None:
    """The facts of `repo` (``org/name``, any case), or None when the table has no row."""
    return MODELS.get(repo.lower())


def hf_repo_of(source: str) -> str | None:
    """``hf://org/name@rev`` -> ``org/name``; None for any other source."""
    if not source.startswith("hf://"):
        return None
    return source[len("hf://") :].split("@", 1)[0]
