"""Architecture facts of common open LLMs, keyed by Hugging Face repository id.

The GPU memory fit check (`inferplane.blueprint.capacity.fit`) needs, per model: the parameter count
(weights), and the attention shape that sizes the KV cache (layers, KV heads, head size) and
bounds tensor parallelism (attention heads, KV heads).

Each row cites the model's ``config.json`` on the Hub (``num_hidden_layers``,
``num_attention_heads``, ``num_key_value_heads``, ``head_dim`` or ``hidden_size /
num_attention_heads``); multimodal Gemma 3 rows use its ``text_config``. Parameter counts are
the safetensors totals the model cards state, rounded to 10 million. ``verified`` says whether
the attention numbers were checked against a published copy of that config.json's values
(False: taken from the model card and the architecture's description, not re-checked). Base
and instruct variants share an architecture, so both ids map to the same row.

Two facts per repository tell `validate` what vLLM and the Hub will refuse:

- ``context``: ``max_position_embeddings`` of the repository's ``config.json``, the longest
  ``max_model_len`` vLLM accepts without ``VLLM_ALLOW_LONG_MAX_MODEL_LEN`` (vLLM v0.10.2
  ``vllm/config/__init__.py`` ``_get_and_verify_max_len``: "User-specified max_model_len
  ... is greater than the derived max_model_len"). Instruct variants of Qwen2.5 ship 32768
  (their cards enable longer contexts with YaRN by editing config.json); their base models
  131072, so those repositories carry their own value (`_CONTEXT_OF_REPO`).
- ``gated``: the model card asks each user to accept its licence before any file downloads
  ("You need to agree to share your contact information to access this model", e.g.
  https://huggingface.co/meta-llama/Meta-Llama-3.1-8B; "This repository is publicly
  accessible, but you have to accept the conditions to access its files and content" on
  https://huggingface.co/google/gemma-2-9b), so a download needs the token of an
  account that accepted it (https://huggingface.co/docs/hub/models-gated). ``card`` is that
  model card, where the licence is accepted.

A model not listed here gives its facts in the blueprint (`models.<m>.model_info`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
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
    context: int | None = None
    """``max_position_embeddings`` of the repository's config.json; None when unknown."""
    gated: bool = False
    """Whether the Hub serves the files only to accounts that accepted the model's licence."""
    card: str = ""
    """The model card on the Hub (where a gated licence is accepted)."""

    @property
    def parameters(self) -> float:
        return self.parameters_billions * 1e9


def _cfg(repo: str) -> str:
    return f"https://huggingface.co/{repo}/blob/main/config.json"


def _card(repo: str) -> str:
    return f"https://huggingface.co/{repo}"


# (repository ids, parameters in billions, layers, heads, KV heads, head dim, verified,
#  context (config.json max_position_embeddings), gated (the model card's licence gate))
# fmt: off
_Row = tuple[tuple[str, ...], float, int, int, int, int, bool, int, bool]
_ROWS: tuple[_Row, ...] = (
    # Llama 3.x: gated by the Llama community licences on every card
    (("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B",
      "meta-llama/Meta-Llama-3.1-8B-Instruct"), 8.03, 32, 32, 8, 128, True, 131072, True),
    (("meta-llama/Llama-3.1-70B-Instruct", "meta-llama/Llama-3.1-70B",
      "meta-llama/Meta-Llama-3.1-70B-Instruct"), 70.55, 80, 64, 8, 128, True, 131072, True),
    (("meta-llama/Llama-3.1-405B-Instruct", "meta-llama/Llama-3.1-405B",
      "meta-llama/Llama-3.1-405B-Instruct-FP8"), 405.85, 126, 128, 8, 128, False, 131072, True),
    (("meta-llama/Llama-3.2-1B-Instruct", "meta-llama/Llama-3.2-1B"),
     1.24, 16, 32, 8, 64, True, 131072, True),
    (("meta-llama/Llama-3.2-3B-Instruct", "meta-llama/Llama-3.2-3B"),
     3.21, 28, 24, 8, 128, True, 131072, True),
    (("meta-llama/Llama-3.3-70B-Instruct",), 70.55, 80, 64, 8, 128, True, 131072, True),
    # Qwen 2.5 and Qwen3: Apache 2.0, not gated
    (("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B"), 7.62, 28, 28, 4, 128, True, 32768, False),
    (("Qwen/Qwen2.5-14B-Instruct", "Qwen/Qwen2.5-14B"),
     14.77, 48, 40, 8, 128, True, 32768, False),
    (("Qwen/Qwen2.5-32B-Instruct", "Qwen/Qwen2.5-32B"),
     32.76, 64, 40, 8, 128, True, 32768, False),
    (("Qwen/Qwen2.5-72B-Instruct", "Qwen/Qwen2.5-72B"),
     72.71, 80, 64, 8, 128, True, 32768, False),
    (("Qwen/Qwen3-8B",), 8.19, 36, 32, 8, 128, True, 40960, False),
    (("Qwen/Qwen3-14B",), 14.77, 40, 40, 8, 128, True, 40960, False),
    (("Qwen/Qwen3-32B",), 32.76, 64, 64, 8, 128, True, 40960, False),
    # Mistral and Mixtral: gated (the cards ask to share contact information)
    (("mistralai/Mistral-7B-Instruct-v0.3", "mistralai/Mistral-7B-v0.3"),
     7.25, 32, 32, 8, 128, True, 32768, True),
    (("mistralai/Mixtral-8x7B-Instruct-v0.1", "mistralai/Mixtral-8x7B-v0.1"),
     46.70, 32, 32, 8, 128, True, 32768, True),
    (("mistralai/Mixtral-8x22B-Instruct-v0.1", "mistralai/Mixtral-8x22B-v0.1"),
     140.62, 56, 48, 8, 128, False, 65536, True),
    # Gemma 2 and Gemma 3 (sliding-window layers are counted as full ones: an upper bound);
    # gated by Google's Gemma terms of use
    (("google/gemma-2-9b-it", "google/gemma-2-9b"), 9.24, 42, 16, 8, 256, True, 8192, True),
    (("google/gemma-2-27b-it", "google/gemma-2-27b"), 27.23, 46, 32, 16, 128, False, 8192, True),
    (("google/gemma-3-1b-it",), 1.00, 26, 4, 1, 256, True, 32768, True),
    (("google/gemma-3-4b-it",), 4.30, 34, 8, 4, 256, False, 131072, True),
    (("google/gemma-3-12b-it",), 12.19, 48, 16, 8, 256, False, 131072, True),
    (("google/gemma-3-27b-it",), 27.43, 62, 32, 16, 128, True, 131072, True),
    # Phi-3 and Phi-4: MIT, not gated; the 4k and 128k variants differ only in context
    (("microsoft/Phi-3-mini-4k-instruct",), 3.82, 32, 32, 32, 96, True, 4096, False),
    (("microsoft/Phi-3-mini-128k-instruct",), 3.82, 32, 32, 32, 96, True, 131072, False),
    (("microsoft/Phi-3-medium-4k-instruct",), 13.96, 40, 40, 10, 128, True, 4096, False),
    (("microsoft/Phi-3-medium-128k-instruct",), 13.96, 40, 40, 10, 128, True, 131072, False),
    (("microsoft/phi-4",), 14.66, 40, 40, 10, 128, True, 16384, False),
)
# fmt: on


_CONTEXT_OF_REPO: Final[Mapping[str, int]] = {
    # Qwen2.5 base models: 131072 in their config.json (the instruct ones: 32768)
    "Qwen/Qwen2.5-7B": 131072,
    "Qwen/Qwen2.5-14B": 131072,
    "Qwen/Qwen2.5-32B": 131072,
    "Qwen/Qwen2.5-72B": 131072,
}


def _table() -> dict[str, LlmFacts]:
    out = {}
    for repos, params_b, layers, heads, kv_heads, head_dim, verified, context, gated in _ROWS:
        for repo in repos:
            out[repo.lower()] = LlmFacts(
                params_b,
                layers,
                heads,
                kv_heads,
                head_dim,
                _cfg(repos[0]),
                verified,
                context=_CONTEXT_OF_REPO.get(repo, context),
                gated=gated,
                card=_card(repo),
            )
    return out


MODELS: Final[Mapping[str, LlmFacts]] = MappingProxyType(_table())
"""Lower-cased Hugging Face repository id -> facts."""


def lookup(repo: str) -> LlmFacts | None:
    """The facts of `repo` (``org/name``, any case), or None when the table has no row."""
    return MODELS.get(repo.lower())


_NOT_DECODER_ONLY: tuple[tuple[str, str], ...] = (
    # (repository pattern, what the model is): each family's config.json says
    # "is_encoder_decoder": true (architectures WhisperForConditionalGeneration,
    # T5ForConditionalGeneration, MT5ForConditionalGeneration, BartForConditionalGeneration,
    # MBartForConditionalGeneration, M2M100ForConditionalGeneration,
    # PegasusForConditionalGeneration)
    ("openai/whisper-*", "speech"),
    ("distil-whisper/*", "speech"),
    ("google-t5/*", "encoder-decoder"),
    ("google/flan-t5-*", "encoder-decoder"),
    ("google/t5-*", "encoder-decoder"),
    ("google/mt5-*", "encoder-decoder"),
    ("facebook/bart-*", "encoder-decoder"),
    ("facebook/mbart-*", "encoder-decoder"),
    ("facebook/nllb-*", "encoder-decoder"),
    ("google/pegasus-*", "encoder-decoder"),
)


def not_decoder_only(repo: str) -> str | None:
    """``speech`` or ``encoder-decoder`` when `repo` is a known model of that kind (not a
    decoder-only LLM); None when it is not known to be one."""
    low = repo.lower()
    for pattern, kind in _NOT_DECODER_ONLY:
        if fnmatchcase(low, pattern):
            return kind
    return None


def hf_repo_of(source: str) -> str | None:
    """``hf://org/name@rev`` -> ``org/name``; None for any other source."""
    if not source.startswith("hf://"):
        return None
    return source[len("hf://") :].split("@", 1)[0]
