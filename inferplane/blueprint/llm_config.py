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

    @property
    def active_parameters(self) -> float:
        """Weights one token computes with: all but the routed experts it does not choose."""
        if not self.experts:
            return self.parameters
        return self.parameters - self.routed_parameters * (
            1 - self.experts_per_token / self.experts
        )


def _int(cfg: Mapping[str, Any], *keys: str, default: int | None = None) -> int:
    for key in keys:
        value = cfg.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and value >= 0:
            return value
    if default is not None:
        return default
    raise ConfigError(f"config.json has no {' or '.join(keys)} (a non-negative integer)")


def read(config: Mapping[str, Any]) -> Shape:
    """The shape of the decoder `config` (a parsed config.json) describes."""
    cfg: Mapping[str, Any] = config
    if isinstance(config.get("text_config"), Mapping):
        cfg = config["text_config"]
    if config.get("is_encoder_decoder") or cfg.get("is_encoder_decoder"):
        raise ConfigError("config.json describes an encoder-decoder model, not a decoder")
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


def distinct_experts(experts: int, per_token: int, tokens: float) -> float:
    """Expected distinct experts of `experts` that `tokens` tokens choose in one layer, each
    choosing `per_token`: ``E × (1 − (1 − k/E)^tokens)`` (each expert is missed by one token
    with probability ``1 − k/E``; routing taken as uniform and independent)."""
    if experts <= 0:
        return 0.0
    if tokens <= 0:
        return 0.0
    return experts * (1 - (1 - per_token / experts) ** tokens)
