"""A checkpoint's ``config.json`` read into the facts the fit check and the planner use.

Hugging Face ``transformers`` names the shape of a decoder the same way in every family:
``num_hidden_layers``, ``hidden_size``, ``num_attention_heads``, ``num_key_value_heads``,
``head_dim`` (else ``hidden_size / num_attention_heads``), ``vocab_size``,
``intermediate_size`` and ``tie_word_embeddings``. Mixture-of-experts families add the
experts under family names, read here as:

- routed experts: ``num_experts`` (Qwen3-MoE), ``num_local_experts`` (Mixtral, gpt-oss),
  ``n_routed_experts`` (DeepSeek-V3);
- experts per token: ``num_experts_per_tok`` (all four);
- an expert's intermediate size: ``moe_intermediate_size`` (Qwen3-MoE, DeepSeek-V3), else
  ``intermediate_size`` (Mixtral, gpt-oss, whose dense MLP is replaced by the experts);
- shared experts, which every token runs: ``n_shared_experts`` (DeepSeek-V3), of the routed
  experts' size;
- dense layers before the first MoE layer: ``first_k_dense_replace`` (DeepSeek-V3), with the
  dense ``intermediate_size``; ``mlp_only_layers`` (Qwen3-MoE) lists dense layers.

DeepSeek-V3's multi-head latent attention (``kv_lora_rank``, ``q_lora_rank``,
``qk_nope_head_dim``, ``qk_rope_head_dim``, ``v_head_dim``) caches one latent of
``kv_lora_rank + qk_rope_head_dim`` values per token and layer for all heads: vLLM v0.33.0
``vllm/transformers_utils/model_arch_config_convertor.py`` ``get_head_size`` ("return
self.hf_text_config.kv_lora_rank + qk_rope_head_dim") and ``vllm/config/model.py``
``ModelConfig.get_num_kv_heads`` (``if self.use_mla: ... return 1``): one KV head, held
whole on every tensor-parallel GPU. A multimodal config (Gemma 3, Llama 4) keeps the decoder in
``text_config``.

The parameter count is computed from these shapes (every projection, norm and router;
biases where the family has them): it is what vLLM loads, without a multi-token-prediction
layer that only speculative decoding loads (DeepSeek-V3's ``num_nextn_predict_layers``).
`tests/blueprint/test_llm_config.py` holds the counts against the model cards' figures.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_UNREAD: tuple[tuple[str, tuple[Any, ...]], ...] = (
    # MoE on every n-th layer only (Llama 4, DeepSeek-V2-Lite variants, Qwen2-MoE) and
    # hybrid Mamba/attention stacks (Nemotron-H, Qwen3.5): their layer counts differ from
    # num_hidden_layers × one shape.
    ("interleave_moe_layer_step", (1,)),
    ("moe_layer_freq", (1,)),
    ("decoder_sparse_step", (1,)),
    ("hybrid_override_pattern", ()),
    ("layers_block_type", ()),
)


class ConfigError(ValueError):
    """A config.json that does not describe a decoder this module can read; the message
    names the key."""


@dataclass(frozen=True)
class Shape:
    """What a config.json says of a decoder, with its parameter counts."""

    architecture: str
    layers: int
    hidden_size: int
    heads: int
    kv_heads: int
    """KV heads as the engine caches them (1 for multi-head latent attention)."""
    head_dim: int
    """Size of one cached KV head (the latent's size for multi-head latent attention)."""
    kv_per_head: int
    """Cached vectors per KV head and token: 2 (K and V), 1 for one latent."""
    vocab_size: int
    intermediate_size: int
    context: int | None
    parameters: float
    """Every weight vLLM loads."""
    routed_parameters: float = 0.0
    """The routed experts' weights over all MoE layers (0 for a dense model)."""
    experts: int = 0
    experts_per_token: int = 0
    shared_experts: int = 0
    moe_intermediate_size: int = 0
    moe_layers: int = 0
    encoder_parameters: float = 0.0
    """An encoder-decoder model's encoder weights (part of `parameters`); 0 for a decoder."""
    encoder_layers: int = 0
    encoder_frames: int = 0
    """Positions the encoder computes per audio clip (Whisper's ``max_source_positions``);
    the decoder's cross-attention caches as many per sequence."""

    @property
    def active_parameters(self) -> float:
        """Weights one token computes with: all but the routed experts it does not choose."""
        if not self.experts:
            return self.parameters
        return self.parameters - self.routed_parameters * (
            1 - self.experts_per_token / self.experts
        )


def _int(cfg: Mapping[str, Any], *keys: str, default: int | None = None) -> int:
    """The first of `keys` that `cfg` has, as a count; `default` when it has none. A key
    that is there with another value (``8.5``, ``"128"``, ``true``, ``-1``) is an error, not
    absent: a mixture of experts whose ``num_experts`` is written ``"128"`` would otherwise be
    read as a dense model. ``None`` counts as absent, and ``128.0`` as 128."""
    for key in keys:
        if key not in cfg or cfg[key] is None:
            continue
        value = cfg[key]
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
        raise ConfigError(
            f"config.json's {key} is {json.dumps(value)}, not a count (a non-negative "
            "integer); copy the released config.json unchanged"
        )
    if default is not None:
        return default
    raise ConfigError(f"config.json has no {' or '.join(keys)} (a non-negative integer)")


def read(config: Mapping[str, Any]) -> Shape:
    """The shape of the decoder `config` (a parsed config.json) describes."""
    cfg: Mapping[str, Any] = config
    if isinstance(config.get("text_config"), Mapping):
        cfg = config["text_config"]
    if config.get("is_encoder_decoder") or cfg.get("is_encoder_decoder"):
        if cfg.get("model_type") == "whisper":
            return read_whisper(cfg)
        raise ConfigError(
            "config.json describes an encoder-decoder model other than Whisper, which is not "
            "read here"
        )
    for key, plain in _UNREAD:
        if key in cfg and cfg[key] not in plain:
            raise ConfigError(
                f"config.json sets {key} ({cfg[key]!r}): layers that are not all attention and "
                "the same MLP are not read here"
            )
    archs = config.get("architectures") or [cfg.get("model_type") or "unknown"]
    arch = str(archs[0])
    model_type = str(cfg.get("model_type") or "")
    layers = _int(cfg, "num_hidden_layers")
    hidden = _int(cfg, "hidden_size")
    heads = _int(cfg, "num_attention_heads")
    if layers < 1 or hidden < 1 or heads < 1:
        raise ConfigError("config.json has a zero num_hidden_layers, hidden_size or heads")
    kv_heads = _int(cfg, "num_key_value_heads", default=heads)
    if kv_heads < 1:
        raise ConfigError(
            f"config.json's num_key_value_heads ({kv_heads}) is not a positive number of "
            "attention heads"
        )
    head_dim = cfg.get("head_dim")
    if not isinstance(head_dim, int) or head_dim <= 0:
        head_dim = hidden // heads
    vocab = _int(cfg, "vocab_size")
    inter = _int(cfg, "intermediate_size")
    experts = _int(cfg, "num_experts", "num_local_experts", "n_routed_experts", default=0)
    per_token = _int(cfg, "num_experts_per_tok", "experts_per_token", default=0) if experts else 0
    if experts and not 0 < per_token <= experts:
        raise ConfigError(
            f"config.json has {experts} experts and {per_token} experts per token "
            "(num_experts_per_tok must be 1 to the number of experts)"
        )
    moe_inter = _int(cfg, "moe_intermediate_size", default=inter) if experts else 0
    shared = _int(cfg, "n_shared_experts", default=0) if experts else 0
    context = cfg.get("max_position_embeddings")
    context = context if isinstance(context, int) and context > 0 else None

    # Attention, per layer.
    kv_per_head = 2
    if cfg.get("kv_lora_rank"):
        # Multi-head latent attention (DeepSeek-V2/V3).
        kv_rank = _int(cfg, "kv_lora_rank")
        q_rank = cfg.get("q_lora_rank") or 0
        nope, rope = _int(cfg, "qk_nope_head_dim"), _int(cfg, "qk_rope_head_dim")
        v_dim = _int(cfg, "v_head_dim")
        q_dim = heads * (nope + rope)
        q = hidden * q_rank + q_rank + q_rank * q_dim if q_rank else hidden * q_dim
        attn = q + hidden * (kv_rank + rope) + kv_rank + kv_rank * heads * (nope + v_dim)
        attn += heads * v_dim * hidden
        kv_heads, head_dim, kv_per_head = 1, kv_rank + rope, 1
    else:
        q_out, kv_out = heads * head_dim, kv_heads * head_dim
        attn = hidden * (q_out + 2 * kv_out) + q_out * hidden
        if cfg.get("attention_bias") or model_type == "qwen2":
            attn += q_out + 2 * kv_out + (hidden if model_type == "gpt_oss" else 0)
        if model_type in ("qwen3", "qwen3_moe") or cfg.get("use_qk_norm"):
            attn += 2 * head_dim
        if model_type == "gpt_oss":
            attn += heads  # attention sinks
    norms = 2 * hidden

    def mlp(size: int) -> int:
        return 3 * hidden * size

    dense_layers = layers
    moe_layers = 0
    if experts:
        dense_ids = set(cfg.get("mlp_only_layers") or [])
        first_dense = _int(cfg, "first_k_dense_replace", default=0)
        dense_ids |= set(range(first_dense))
        moe_layers = layers - len([i for i in dense_ids if 0 <= i < layers])
        dense_layers = layers - moe_layers
    expert = mlp(moe_inter)
    if model_type == "gpt_oss":
        expert += 2 * moe_inter + hidden  # gate/up and down biases
    router = hidden * experts + (experts if model_type in ("gpt_oss", "deepseek_v3") else 0)
    moe_layer = experts * expert + shared * mlp(moe_inter) + router
    embed = vocab * hidden * (1 if cfg.get("tie_word_embeddings") else 2)
    total = (
        layers * (attn + norms)
        + dense_layers * mlp(inter)
        + moe_layers * moe_layer
        + embed
        + hidden
    )
    return Shape(
        architecture=arch,
        layers=layers,
        hidden_size=hidden,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        kv_per_head=kv_per_head,
        vocab_size=vocab,
        intermediate_size=inter,
        context=context,
        parameters=float(total),
        routed_parameters=float(moe_layers * experts * expert),
        experts=experts,
        experts_per_token=per_token,
        shared_experts=shared,
        moe_intermediate_size=moe_inter,
        moe_layers=moe_layers,
    )


WHISPER_CLIP_SECONDS = 30
"""Seconds of audio one Whisper encoder pass reads: the feature extractor's
``chunk_length`` (30, ``"nb_max_frames": 3000`` mel frames at ``hop_length`` 160 and 16 kHz:
openai/whisper-large-v3's preprocessor_config.json as printed in Xianchao-Wu/distil-whisper
``training/run_pseudo_labelling.py``), which vLLM v0.33.0 takes as the longest clip
(``vllm/model_executor/models/whisper.py`` ``get_speech_to_text_config``:
``max_audio_clip_s=processor.feature_extractor.chunk_length``)."""


def read_whisper(cfg: Mapping[str, Any]) -> Shape:
    """Whisper (``model_type`` ``whisper``): an audio encoder of ``encoder_layers`` over
    ``max_source_positions`` frames per 30 s clip (two convolutions over ``num_mel_bins``,
    learned positions) and a text decoder of ``decoder_layers`` with self- and
    cross-attention over ``max_target_positions`` tokens, ``d_model`` wide. Every attention
    has biases on q, v and out but not k; LayerNorms have weight and bias; the output
    projection shares the token embedding (transformers ``WhisperForConditionalGeneration``,
    the module tree printed with the config in Xianchao-Wu/distil-whisper
    ``training/run_pseudo_labelling.py``). The shape's `layers`, heads and context are the
    decoder's, which vLLM schedules and caches; `encoder_frames` per sequence are cached
    for cross-attention (vLLM v0.33.0 ``vllm/v1/kv_cache_interface.py``
    ``CrossAttentionSpec``: "we need to cache encoder states ... e.g., 1500 for Whisper")."""
    d = _int(cfg, "d_model")
    enc_layers, dec_layers = _int(cfg, "encoder_layers"), _int(cfg, "decoder_layers")
    enc_heads = _int(cfg, "encoder_attention_heads")
    dec_heads = _int(cfg, "decoder_attention_heads")
    enc_ffn, dec_ffn = _int(cfg, "encoder_ffn_dim"), _int(cfg, "decoder_ffn_dim")
    vocab, mels = _int(cfg, "vocab_size"), _int(cfg, "num_mel_bins")
    frames, context = _int(cfg, "max_source_positions"), _int(cfg, "max_target_positions")
    if min(d, enc_layers, dec_layers, enc_heads, dec_heads, frames, context) < 1:
        raise ConfigError("config.json has a zero Whisper dimension")
    if d % dec_heads:
        raise ConfigError(
            f"config.json: d_model ({d}) is not divisible by decoder_attention_heads ({dec_heads})"
        )
    attention = 4 * d * d + 3 * d
    norm = 2 * d
    ffn_enc = 2 * d * enc_ffn + enc_ffn + d
    ffn_dec = 2 * d * dec_ffn + dec_ffn + d
    encoder = (
        mels * d * 3
        + d
        + d * d * 3
        + d
        + frames * d
        + enc_layers * (attention + ffn_enc + 2 * norm)
        + norm
    )
    decoder = vocab * d + context * d + dec_layers * (2 * attention + ffn_dec + 3 * norm) + norm
    return Shape(
        architecture="WhisperForConditionalGeneration",
        layers=dec_layers,
        hidden_size=d,
        heads=dec_heads,
        kv_heads=dec_heads,
        head_dim=d // dec_heads,
        kv_per_head=2,
        vocab_size=vocab,
        intermediate_size=dec_ffn,
        context=context,
        parameters=float(encoder + decoder),
        encoder_parameters=float(encoder),
        encoder_layers=enc_layers,
        encoder_frames=frames,
    )


def clips(audio_seconds: float) -> int:
    """Clips vLLM v0.33.0 cuts `audio_seconds` of audio into: one up to
    `WHISPER_CLIP_SECONDS`, else each clip ends at the quietest point of the last second
    before 30 s (``vllm/multimodal/audio.py`` ``split_audio``, ``overlap_chunk_second`` 1 of
    ``vllm/config/speech_to_text.py``), so holds 29 s at least: at most
    ``1 + ceil((s - 30) / 29)``."""
    if audio_seconds <= WHISPER_CLIP_SECONDS:
        return 1
    step = WHISPER_CLIP_SECONDS - 1
    return 1 + math.ceil((audio_seconds - WHISPER_CLIP_SECONDS) / step - 1e-9)


def distinct_experts(experts: int, per_token: int, tokens: float) -> float:
    """Expected distinct experts of `experts` that `tokens` tokens choose in one layer, each
    choosing `per_token`: ``E × (1 − (1 − k/E)^tokens)`` (each expert is missed by one token
    with probability ``1 − k/E``; routing taken as uniform and independent)."""
    if experts <= 0:
        return 0.0
    if tokens <= 0:
        return 0.0
    return experts * (1 - (1 - per_token / experts) ** tokens)
