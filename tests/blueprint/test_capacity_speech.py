"""A speech model (Whisper) on vLLM: the encoder's work per request apart from the decoder's
max_model_len, and the plan read from the audio seconds per request."""

from __future__ import annotations

import pytest
from test_capacity import BASE, edit, problems

from inferplane.blueprint import llm_catalog, llm_config
from inferplane.blueprint.capacity import load, planner
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.resolution.resolve import resolve

LLAMA = "hf://meta-llama/Llama-3.1-8B-Instruct@0e9e39f249a16976918f6564b8830bc894c89659"
WHISPER = "hf://openai/whisper-large-v3@06f233fe06e710322aca913c1bc4249a0d71fce1"


def whisper(traffic: str, text: str = BASE) -> str:
    text = edit(LLAMA, WHISPER, text)
    text = edit(
        "vllm: {max_model_len: 8192, quantization: fp8, kv_cache_dtype: fp8}",
        "vllm: {max_model_len: 448}",
        text,
    )
    text = edit(
        "traffic: {peak_rps: 4, input_tokens: 1200, output_tokens: 70, shared_prefix: 0.5}",
        f"traffic: {traffic}",
        text,
    )
    text = edit(
        "slo: {p95_ms: 4000, ttft_p95_ms: 500, itl_p95_ms: 60}", "slo: {p95_ms: 4000}", text
    )
    return text.replace("    secrets: {hf_token: {from_env: HF_TOKEN}}\n", "", 1)


@pytest.mark.parametrize(
    ("repo", "millions"),
    # The model card's table (https://huggingface.co/openai/whisper-large-v3, as copied on
    # https://chat-gpt-5.ai/?p=849: "large-v3 1550 M", "large-v3-turbo 809 M").
    [("openai/whisper-large-v3", 1550), ("openai/whisper-large-v3-turbo", 809)],
)
def test_whisper_counts_match_the_card(repo: str, millions: float) -> None:
    facts = llm_catalog.lookup(repo)
    assert facts is not None and facts.encoder_decoder
    assert facts.parameters_billions * 1000 == pytest.approx(millions, rel=0.01)
    assert (facts.context, facts.encoder_frames, facts.layers) == (
        448,
        1500,
        32 if repo.endswith("v3") else 4,
    )


def test_the_real_max_model_len_is_accepted_with_audio_seconds() -> None:
    assert problems(whisper("{peak_rps: 4, audio_seconds: 20, output_tokens: 60}")) == []


def test_frames_stated_as_prompt_tokens_are_refused_with_the_fix() -> None:
    found = problems(whisper("{peak_rps: 4, input_tokens: 1500, output_tokens: 60}"))
    assert found == [
        "bp.yaml:23:14: error: models.chat.traffic: a speech model's traffic needs "
        "`audio_seconds` per request: its encoder computes 1500 frames per 30 s of audio, which "
        "are not prompt tokens; add the average audio length and transcript, e.g. "
        "audio_seconds: 20, output_tokens: 60 (input_tokens is the decoder's prompt, 4 tokens "
        "unless stated)"
    ]


def test_a_clip_longer_than_max_model_len_names_the_decoder() -> None:
    found = problems(whisper("{peak_rps: 4, audio_seconds: 20, output_tokens: 500}"))
    assert len(found) == 1, found
    assert (
        "models.chat.traffic.output_tokens: one clip of the request (of 1) holds 4 prompt + 500 "
        "output tokens, more than vllm.max_model_len (448), which counts the decoder's tokens "
        "only (the encoder's 1500 frames per clip are apart)"
    ) in found[0]


def test_audio_seconds_on_a_text_model_is_refused() -> None:
    text = edit(
        "traffic: {peak_rps: 4, input_tokens: 1200, output_tokens: 70, shared_prefix: 0.5}",
        "traffic: {peak_rps: 4, input_tokens: 1200, output_tokens: 70, audio_seconds: 20}",
    )
    found = problems(text)
    assert any(
        "models.chat.traffic.audio_seconds: `audio_seconds` is what a speech" in p for p in found
    ), found


def test_clips_follow_vllms_split() -> None:
    assert [llm_config.clips(s) for s in (5, 30, 31, 59, 75)] == [1, 1, 2, 2, 3]


def test_the_plan_reads_audio_seconds() -> None:
    def plan(seconds: int, output: int) -> planner.Plan:
        text = whisper(f"{{peak_rps: 4, audio_seconds: {seconds}, output_tokens: {output}}}")
        env = resolve(load_text(text, "bp.yaml"), "stg")
        got = planner.plan_env(env).plans["chat"]
        assert got.source == "roofline"
        return got

    short, long = plan(20, 60), plan(75, 200)
    assert "a request of 20 s of audio is 1 clip(s)" in short.latency
    assert (
        "a request of 75 s of audio is 3 clip(s) of 30 s at most, each an engine sequence "
        "of 4 prompt + 67 output tokens" in long.latency
    )
    # Three clips a request: about a third of the requests per second.
    assert long.rps[1] < short.rps[1] / 2.5
    assert short.model_basis.startswith(
        "encoder-decoder: a 0.64B encoder computes 1500 frames per 30 s of audio, a 0.90B "
        "decoder generates the text"
    )


def test_the_encoder_is_computed_once_per_clip_and_cached_for_cross_attention() -> None:
    text = whisper("{peak_rps: 4, audio_seconds: 20, output_tokens: 60}")
    env = resolve(load_text(text, "bp.yaml"), "stg")
    model = env.models["chat"]
    got, _ = load.llm_load(model, env.pool_of(model))
    assert got is not None
    assert (got.input_tokens, got.output_tokens, got.encoder_tokens) == (4, 60, 1500)
    # The decoder's weights: 1.54B in all, 0.637B of them the encoder's.
    assert got.parameters / 1e9 == pytest.approx(1.54 - 0.637, abs=0.001)


def test_the_fit_counts_the_encoder_frames_each_sequence_caches() -> None:
    # 1.54B fp16 weights (2.9 GiB) fit an L4; max_model_len 448 and Whisper's 1,500 frames
    # of cross-attention make a sequence of 1,948 cached positions.
    from inferplane.blueprint.checks.semantic_vllm import advisories

    text = whisper("{peak_rps: 4, audio_seconds: 20, output_tokens: 60}")
    text = edit(
        "vllm: {max_model_len: 448}", "vllm: {max_model_len: 448, max_num_seqs: 4096}", text
    )
    found = [d.format() for d in advisories(load_text(text, "bp.yaml"))]
    # 1,948 x 32 layers x 20 heads x 64 x 2 (K, V) x 2 bytes = 0.30 GiB (448 alone: 0.07).
    assert any(
        "the KV cache holds 59 sequences of 448 tokens at once (17.7 GiB after weights and "
        "overhead, 0.30 GiB each)" in f
        for f in found
    ), found
