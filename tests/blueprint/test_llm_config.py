"""Models described from their own config.json: the shapes and parameter counts read from the
released configs (`inferplane/facts/models/configs.json`) against the model cards' figures,
and the vendored file against its source."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from inferplane.blueprint import llm_catalog, llm_config

ROOT = Path(__file__).resolve().parents[2]


def _facts(repo: str) -> llm_catalog.LlmFacts:
    found = llm_catalog.lookup(repo)
    assert found is not None, repo
    return found


# (repository, total parameters in billions, active in billions, relative tolerance). The
# figures are the publishers', as read:
# - Qwen/Qwen3-30B-A3B, https://huggingface.co/Qwen/Qwen3-30B-A3B, read on
#   https://apxml.com/models/qwen3-30b-a3b: "30.5 billion parameters in total, with an active
#   subset of approximately 3.3 billion"; Qwen3-235B-A22B: its name (235B, 22B activated);
# - Mixtral-8x7B, https://mistral.ai/news/mixtral-of-experts, read on
#   https://golden.com/wiki/Mixtral_8x7B-K3K664J: "46.7 billion total parameters but only
#   uses 12.9 billion parameters per token";
# - DeepSeek-V3, technical report (arXiv 2412.19437) abstract, read on
#   https://app.daily.dev/posts/2412-19437-deepseek-v3-technical-report-zkckcct9i: "671
#   billion total parameters with 37 billion activated for each token", without the 14B
#   multi-token-prediction module (https://heatdrop.ai/repo/deepseek-ai/DeepSeek-V3) that
#   vLLM loads only for speculative decoding.
CARDS = [
    ("Qwen/Qwen3-30B-A3B", 30.5, 3.3, 0.02),
    ("Qwen/Qwen3-235B-A22B", 235, 22, 0.02),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", 46.7, 12.9, 0.01),
    ("deepseek-ai/DeepSeek-V3", 671, 37, 0.02),
]


@pytest.mark.parametrize(("repo", "total", "active", "tol"), CARDS)
def test_counts_read_from_config_match_the_model_cards(
    repo: str, total: float, active: float, tol: float
) -> None:
    facts = _facts(repo)
    assert facts.moe
    assert facts.parameters_billions == pytest.approx(total, rel=tol)
    assert facts.active_parameters / 1e9 == pytest.approx(active, rel=tol)


@pytest.mark.parametrize(
    ("repo", "total", "active"),
    # OpenAI's gpt-oss model card (arXiv 2508.10925, as read on
    # https://lephongphu.site/?p=726: "gpt-oss-120b: 116.8B total parameters (5.1B active)",
    # "gpt-oss-20b: 20.9B total parameters (3.6B active)") counts the unembedding but not the
    # embedding table as active; the table counts both (vocab 201,088 x hidden 2,880).
    [("openai/gpt-oss-120b", 116.8, 5.1), ("openai/gpt-oss-20b", 20.9, 3.6)],
)
def test_gpt_oss_counts_match_its_card_plus_the_embedding(
    repo: str, total: float, active: float
) -> None:
    facts = _facts(repo)
    embedding = 201088 * 2880 / 1e9
    assert facts.parameters_billions == pytest.approx(total, rel=0.005)
    assert facts.active_parameters / 1e9 - embedding == pytest.approx(active, rel=0.02)


@pytest.mark.parametrize(
    ("repo", "billions"),
    # The hand-entered rows' safetensors totals (model cards) the config replaces.
    [
        ("meta-llama/Llama-3.1-8B-Instruct", 8.03),
        ("meta-llama/Llama-3.3-70B-Instruct", 70.55),
        ("meta-llama/Llama-3.1-405B-Instruct", 405.85),
        ("Qwen/Qwen3-8B", 8.19),
        ("Qwen/Qwen3-32B", 32.76),
        ("mistralai/Mixtral-8x22B-Instruct-v0.1", 140.62),
    ],
)
def test_dense_counts_read_from_config_match_the_hand_entered_rows(
    repo: str, billions: float
) -> None:
    assert _facts(repo).parameters_billions == pytest.approx(billions, rel=0.002)


def test_a_config_row_keeps_the_gate_and_context_of_the_hand_row() -> None:
    llama = _facts("meta-llama/Llama-3.3-70B-Instruct")
    assert (llama.gated, llama.context, llama.copy.split()[0]) == (
        True,
        131072,
        "aiconfigurator-core==0.12.0",
    )
    assert not _facts("Qwen/Qwen3-30B-A3B").gated


def test_mla_caches_one_latent_per_layer() -> None:
    ds = _facts("deepseek-ai/DeepSeek-V3")
    # kv_lora_rank 512 + qk_rope_head_dim 64, one vector (vLLM v0.33.0 get_head_size)
    assert (ds.kv_heads, ds.head_dim, ds.kv_per_head, ds.shared_experts) == (1, 576, 1, 1)


def test_every_vendored_config_names_its_source_and_hash() -> None:
    doc = json.loads(llm_catalog.CONFIGS_FILE.read_text(encoding="utf-8"))
    for repo, row in doc["models"].items():
        assert row["source"].startswith(
            ("aiconfigurator-core==0.12.0 aiconfigurator_core/", "transcribed from https://")
        ), repo
        assert len(row["sha256"]) == 64, repo
        llm_config.read(row["config"])


@pytest.mark.needs_tools
def test_vendored_configs_are_the_packages() -> None:
    if os.environ.get("CI") != "true":  # CI installs the `capacity` extra (.ci/run)
        pytest.importorskip("aiconfigurator_core", reason="the optional `capacity` extra")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "facts" / "llm_configs.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_distinct_experts() -> None:
    assert llm_config.distinct_experts(128, 8, 1) == pytest.approx(8)
    assert llm_config.distinct_experts(128, 8, 32) == pytest.approx(111.8, abs=0.1)
    assert llm_config.distinct_experts(128, 8, 4096) == pytest.approx(128)
    assert llm_config.distinct_experts(0, 0, 8) == 0


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"num_hidden_layers": 2}, "config.json has no hidden_size"),
        (
            {
                "num_hidden_layers": 2,
                "hidden_size": 8,
                "num_attention_heads": 2,
                "vocab_size": 10,
                "intermediate_size": 16,
                "num_experts": 4,
                "num_experts_per_tok": 9,
            },
            "4 experts and 9 experts per token",
        ),
        (
            {
                "num_hidden_layers": 2,
                "hidden_size": 8,
                "num_attention_heads": 2,
                "num_key_value_heads": 0,
                "vocab_size": 10,
                "intermediate_size": 16,
            },
            "num_key_value_heads (0) is not a positive number of attention heads",
        ),
        ({"is_encoder_decoder": True}, "encoder-decoder"),
        ({"interleave_moe_layer_step": 2}, "interleave_moe_layer_step (2)"),
    ],
)
def test_a_config_it_cannot_read_says_which_key(config: dict[str, object], message: str) -> None:
    with pytest.raises(
        llm_config.ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")
    ):
        llm_config.read(config)


SMALL_MOE = {
    "num_hidden_layers": 2,
    "hidden_size": 8,
    "num_attention_heads": 2,
    "vocab_size": 10,
    "intermediate_size": 16,
    "num_experts_per_tok": 2,
}


@pytest.mark.parametrize("written", ["128", 8.5, True, -4])
def test_experts_written_as_anything_but_a_count_are_refused_not_read_as_dense(
    written: object,
) -> None:
    with pytest.raises(llm_config.ConfigError) as raised:
        llm_config.read({**SMALL_MOE, "num_experts": written})
    assert str(raised.value) == (
        f"config.json's num_experts is {json.dumps(written)}, not a count (a non-negative "
        "integer); copy the released config.json unchanged"
    )


def test_a_whole_float_count_reads_as_the_count() -> None:
    as_float = llm_config.read({**SMALL_MOE, "num_experts": 8.0})
    assert as_float == llm_config.read({**SMALL_MOE, "num_experts": 8})
    assert as_float.experts == 8
