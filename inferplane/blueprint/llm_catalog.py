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

Rows of released ``config.json`` files (``inferplane/facts/models/configs.json``, written by
``scripts/facts/llm_configs.py`` from the copies aiconfigurator-core 0.12.0 ships, each with
its sha256) replace the hand-entered shape of a repository they cover and add the current
families (Qwen3 dense and MoE, Mixtral, gpt-oss, DeepSeek-V3/R1) with their experts: a
mixture-of-experts row holds all experts' weights (`LlmFacts.parameters`) and says which of
them a token computes with (`LlmFacts.active_parameters`); `llm_config` reads the shapes.

A model not listed here gives its facts in the blueprint (`models.<m>.model_info`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from inferplane.blueprint import llm_config


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
    kv_per_head: int = 2
    """Cached vectors per KV head and token: 2 (K and V); 1 for multi-head latent attention,
    whose one latent `kv_heads` 1 × `head_dim` holds (`llm_config`)."""
    experts: int = 0
    """Routed experts per MoE layer (0: a dense model)."""
    experts_per_token: int = 0
    shared_experts: int = 0
    """Experts every token runs beside the routed ones (counted in the shared weights)."""
    routed_parameters_billions: float = 0.0
    """The routed experts' weights over all MoE layers, in billions (part of
    `parameters_billions`)."""
    moe_intermediate_size: int = 0
    """One expert's intermediate size (tensor parallelism splits it: `fit`)."""
    copy: str = ""
    """The vendored copy of `source` the numbers were read from, with its sha256; empty for
    a hand-entered row."""
    encoder_parameters_billions: float = 0.0
    """An encoder-decoder model (Whisper): its encoder's weights, in billions (part of
    `parameters_billions`); the other fields describe its decoder."""
    encoder_layers: int = 0
    encoder_frames: int = 0
    """Positions the encoder computes per 30 s audio clip, cached per sequence for the
    decoder's cross-attention (`llm_config.read_whisper`)."""

    @property
    def encoder_decoder(self) -> bool:
        return self.encoder_frames > 0

    @property
    def parameters(self) -> float:
        return self.parameters_billions * 1e9

    @property
    def moe(self) -> bool:
        return self.experts > 0 and self.experts_per_token > 0

    @property
    def routed_parameters(self) -> float:
        return self.routed_parameters_billions * 1e9 if self.moe else 0.0

    @property
    def active_parameters(self) -> float:
        """Weights one token computes with: all but the routed experts it does not choose."""
        if not self.moe:
            return self.parameters
        return self.parameters - self.routed_parameters * (
            1 - self.experts_per_token / self.experts
        )

    def basis(self) -> str:
        """How the planner counts this model, for `inferplane plan`."""
        if self.encoder_decoder:
            decoder = self.parameters_billions - self.encoder_parameters_billions
            return (
                f"encoder-decoder: a {self.encoder_parameters_billions:.2f}B encoder computes "
                f"{self.encoder_frames} frames per 30 s of audio, a {decoder:.2f}B decoder "
                f"generates the text (max_model_len counts its tokens; its cross-attention "
                f"caches the {self.encoder_frames} frames per sequence)"
            )
        if not self.moe:
            return f"dense, {self.parameters_billions:.2f}B parameters"
        return (
            f"mixture of experts: {self.parameters_billions:.2f}B parameters held (all "
            f"{self.experts} experts), {self.active_parameters / 1e9:.2f}B active per token "
            f"({self.experts_per_token} of {self.experts} experts"
            + (f" + {self.shared_experts} shared" if self.shared_experts else "")
            + ")"
        )


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


CONFIGS_FILE: Final = Path(__file__).resolve().parents[1] / "facts" / "models" / "configs.json"
"""Released checkpoints' config.json (`scripts/facts/llm_configs.py`): each with its source
and sha256."""

_GATED_ORGS: Final = ("meta-llama/", "mistralai/", "google/gemma")
"""Organisations whose cards gate the files (the rows above cite the gates)."""


def facts_from_shape(shape: llm_config.Shape, source: str, **kw: Any) -> LlmFacts:
    """The table's facts of a config.json's `shape`."""
    return LlmFacts(
        round(shape.parameters / 1e9, 2),
        shape.layers,
        shape.heads,
        shape.kv_heads,
        shape.head_dim,
        source,
        True,
        context=shape.context,
        kv_per_head=shape.kv_per_head,
        experts=shape.experts,
        experts_per_token=shape.experts_per_token,
        shared_experts=shape.shared_experts,
        routed_parameters_billions=round(shape.routed_parameters / 1e9, 2),
        moe_intermediate_size=shape.moe_intermediate_size,
        encoder_parameters_billions=round(shape.encoder_parameters / 1e9, 3),
        encoder_layers=shape.encoder_layers,
        encoder_frames=shape.encoder_frames,
        **kw,
    )


def _from_configs() -> dict[str, LlmFacts]:
    """Rows read from the vendored config.json files, keyed like `MODELS`."""
    doc = json.loads(CONFIGS_FILE.read_text(encoding="utf-8"))
    out = {}
    for row in doc["models"].values():
        shape = llm_config.read(row["config"])
        copy = f"{row['source']} (sha256 {row['sha256']})"
        for repo in row["repos"]:
            out[repo.lower()] = facts_from_shape(
                shape,
                _cfg(row["repos"][0]),
                gated=repo.startswith(_GATED_ORGS),
                card=_card(repo),
                copy=copy,
            )
    return out


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
    # A released config.json replaces a row's shape; the row keeps its gate and its
    # context where a repository ships its own (`_CONTEXT_OF_REPO`).
    for repo, facts in _from_configs().items():
        old = out.get(repo)
        if old is not None:
            facts = replace(
                facts, source=old.source, gated=old.gated, context=old.context or facts.context
            )
        out[repo] = facts
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
