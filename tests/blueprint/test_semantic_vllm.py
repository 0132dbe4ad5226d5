"""LLM checks: GPU memory fit, tensor parallelism, vLLM settings and pass-through.

Each error and advisory is asserted with its exact text. The numbers behind the fit messages
are worked out in tests/blueprint/test_fit.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_semantic import BASE, edit

from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.checks.semantic_vllm import advisories
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.loading.schema import validate_document
from inferplane.blueprint.resolution.resolve import load_blueprint

ROOT = Path(__file__).resolve().parents[2]


def errors(text: str) -> list[str]:
    return [d.format() for d in check(load_text(text, "bp.yaml"))]


def validated(text: str) -> list[str]:
    """Every diagnostic `validate` gives, the schema's included."""
    return [d.format() for d in validate_document(load_text(text, "bp.yaml"))]


def warnings(text: str) -> list[str]:
    return [d.format() for d in advisories(load_text(text, "bp.yaml"))]


def chat(extra: str, source: str = "llama/") -> str:
    """BASE with the chat model's source replaced and `extra` lines added under it (and a
    Hugging Face token after them when the source is on the hub: Llama is gated)."""
    token = "    secrets: {hf_token: {from_env: HF_TOKEN}}\n" if source.startswith("hf://") else ""
    return edit("    source: llama/\n", f"    source: {source}\n{extra}{token}")


LLAMA_8B = "    model_info: {hf_repo: meta-llama/Llama-3.1-8B-Instruct}\n"


# --- fit -------------------------------------------------------------------------------------
def test_70b_in_bf16_on_one_l4_is_refused_with_the_numbers() -> None:
    text = chat(
        "    precision: bf16\n    vllm: {max_model_len: 8192}\n",
        source="hf://meta-llama/Llama-3.1-70B-Instruct@main",
    )
    assert errors(text) == [
        "bp.yaml:26:13: error: models.chat.source: "
        "the model (70.55B parameters in bf16) does not fit "
        "in GPU memory: needs 135.4 GiB (weights 131.4 + KV cache 2.5 for 1 × 8192 tokens + "
        "overhead 1.5) but 1 × nvidia-l4 gives 22.1 GiB at gpu_memory_utilization 0.92; use "
        "more GPUs (tensor parallel), a quantization (fp8, int4), or a shorter max_model_len"
    ]


def test_the_fit_budgets_the_default_of_the_release_that_runs() -> None:
    """vLLM's gpu_memory_utilization default is 0.9 in v0.10.2 and 0.92 in v0.33.0
    (CacheConfig of each wheel: inferplane/facts/vllm/<release>/defaults.txt)."""
    text = chat("    precision: bf16\n", source="hf://meta-llama/Llama-3.1-70B-Instruct@main")
    (old,) = errors(text + "versions: {vllm: v0.10.2}\n")
    assert "1 × nvidia-l4 gives 21.6 GiB at gpu_memory_utilization 0.90;" in old
    (new,) = errors(text)
    assert "1 × nvidia-l4 gives 22.1 GiB at gpu_memory_utilization 0.92;" in new


def test_without_max_model_len_the_weights_alone_are_refused() -> None:
    text = chat("    precision: bf16\n", source="hf://meta-llama/Llama-3.1-70B-Instruct@main")
    assert errors(text) == [
        "bp.yaml:26:13: error: models.chat.source: "
        "the model (70.55B parameters in bf16) does not fit "
        "in GPU memory: needs 132.9 GiB (weights 131.4 + overhead 1.5) but 1 × nvidia-l4 "
        "gives 22.1 GiB at gpu_memory_utilization 0.92; use more GPUs (tensor parallel) or a "
        "quantization (fp8, int4)"
    ]


def test_a_quantization_names_itself_in_the_refusal() -> None:
    text = chat(
        "    vllm: {quantization: awq, max_model_len: 4096}\n",
        source="hf://meta-llama/Llama-3.1-405B-Instruct@main",
    )
    assert errors(text) == [
        "bp.yaml:26:13: error: models.chat.source: "
        "the model (405.85B parameters, awq) does not fit in "
        "GPU memory: needs 192.5 GiB (weights 189.0 + KV cache 2.0 for 1 × 4096 tokens + "
        "overhead 1.5) but 1 × nvidia-l4 gives 22.1 GiB at gpu_memory_utilization 0.92; use "
        "more GPUs (tensor parallel), a quantization (fp8, int4), or a shorter max_model_len"
    ]


def test_tensor_parallel_size_that_does_not_split_the_heads_is_refused() -> None:
    text = edit("    gpu: nvidia-l4\n", "    gpu: nvidia-l4\n    gpus_per_node: 8\n")
    text = edit("    source: llama/\n", "    source: llama/\n    gpus: 3\n" + LLAMA_8B, text)
    assert errors(text) == [
        "bp.yaml:28:11: error: models.chat.gpus: gpus: 3 cannot split the model across GPUs: "
        "32 attention heads are not divisible by tensor parallel size 3; use gpus: one of 1, "
        "2, 4, 8, 16"
    ]


def test_tensor_parallel_size_must_divide_the_kv_heads_too() -> None:
    text = edit("    gpu: nvidia-l4\n", "    gpu: nvidia-l4\n    gpus_per_node: 8\n")
    info = (
        "    model_info: {parameters_billions: 7, layers: 28, heads: 28, kv_heads: 4, "
        "head_dim: 128}\n"
    )
    text = edit("    source: llama/\n", "    source: llama/\n    gpus: 7\n" + info, text)
    assert errors(text) == [
        "bp.yaml:28:11: error: models.chat.gpus: gpus: 7 cannot split the model across GPUs: "
        "tensor parallel size 7 is not a multiple of the 4 KV heads; use gpus: one of 1, 2, 4"
    ]


def test_an_override_that_breaks_the_fit_is_blamed_in_the_override() -> None:
    text = chat(LLAMA_8B + "    vllm: {max_model_len: 8192}\n")
    text = edit(
        "    cluster: {existing: prod-gke}\n",
        "    cluster: {existing: prod-gke}\n    overrides:\n      models:\n        chat:\n"
        "          precision: fp32\n",
        text,
    )
    assert errors(text) == [
        "bp.yaml:22:22: error: environments.prod.overrides.models.chat.precision: the model "
        "(8.03B parameters in fp32) does not fit in GPU memory: needs 33.4 GiB (weights 29.9 "
        "+ KV cache 2.0 for 1 × 8192 tokens + overhead 1.5) but 1 × nvidia-l4 gives 22.1 GiB "
        "at gpu_memory_utilization 0.92; use more GPUs (tensor parallel), a quantization "
        "(fp8, int4), or a shorter max_model_len"
    ]


def test_reference_blueprint_still_validates() -> None:
    doc, envs = load_blueprint(ROOT / "blueprints" / "support-assistant.yaml")
    assert envs == ("staging", "prod", "local")
    # Its chat model comes from the model store, so its fit is an advisory, not an error,
    # and its Hub token is read by nothing (only a staging Job of an hf:// source reads one).
    assert [(d.severity, d.message) for d in advisories(doc)] == [
        (
            "warning",
            "GPU memory fit not checked: a model-store source does not say which model it is",
        ),
        (
            "warning",
            "nothing uses this Hugging Face token: the model has no hf:// source, draft model "
            "or LoRA adapter, and no serving pod ever gets the token",
        ),
    ]


# --- advisories ------------------------------------------------------------------------------
def test_an_unknown_model_is_an_advisory_not_an_error() -> None:
    assert errors(BASE) == []
    assert warnings(BASE) == [
        "bp.yaml:26:13: warning: models.chat.source: GPU memory fit not checked: a "
        "model-store source does not say which model it is; add model_info: hf_repo "
        "(org/name, when it is a common open model inferplane knows) or its numbers "
        "(parameters_billions, layers, heads, kv_heads, head_dim)"
    ]


def test_an_hf_model_outside_the_table_is_an_advisory() -> None:
    text = chat("", source="hf://acme/house-model@0123456789abcdef0123456789abcdef01234567")
    assert errors(text) == []
    assert [w.split(": warning: ")[1] for w in warnings(text)] == [
        "models.chat.source: GPU memory fit not checked: acme/house-model is not in the "
        "built-in model table; add model_info: hf_repo (org/name, when it is a common open "
        "model inferplane knows) or its numbers (parameters_billions, layers, heads, kv_heads, "
        "head_dim)"
    ]


def test_no_max_model_len_is_an_advisory() -> None:
    text = chat(LLAMA_8B)
    assert warnings(text) == [
        "bp.yaml:25:5: warning: models.chat.vllm: max_model_len is not set, so the KV cache was "
        "not checked: vLLM sizes it for the model's full context and refuses to start when one "
        "sequence does not fit; set vllm.max_model_len to the longest prompt plus output you "
        "serve"
    ]


def test_fewer_full_length_sequences_than_max_num_seqs_is_an_advisory() -> None:
    text = chat(LLAMA_8B + "    vllm: {max_model_len: 8192, max_num_seqs: 64}\n")
    assert errors(text) == []
    assert warnings(text) == [
        "bp.yaml:28:47: warning: models.chat.vllm.max_num_seqs: the KV cache holds 5 "
        "sequences of 8192 tokens at once (5.6 GiB after weights and overhead, 1.00 GiB each), "
        "fewer than max_num_seqs 64; vLLM queues the rest when requests are that long; if long "
        "requests are common, lower max_num_seqs or max_model_len, set kv_cache_dtype: fp8, or "
        "use more GPUs"
    ]


def test_an_fp8_kv_cache_is_not_suggested_again() -> None:
    text = chat(
        LLAMA_8B + "    vllm: {max_model_len: 8192, max_num_seqs: 64, kv_cache_dtype: fp8}\n"
    )
    assert errors(text) == []
    assert warnings(text) == [
        "bp.yaml:28:47: warning: models.chat.vllm.max_num_seqs: the KV cache holds 11 "
        "sequences of 8192 tokens at once (5.6 GiB after weights and overhead, 0.50 GiB each), "
        "fewer than max_num_seqs 64; vLLM queues the rest when requests are that long; if long "
        "requests are common, lower max_num_seqs or max_model_len, or use more GPUs"
    ]


def test_enough_room_for_max_num_seqs_is_silent() -> None:
    text = chat(
        LLAMA_8B + "    vllm: {max_model_len: 4096, max_num_seqs: 8, kv_cache_dtype: fp8}\n"
    )
    assert errors(text) == []
    assert warnings(text) == []


# --- model_info ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("info", "expected"),
    [
        pytest.param(
            "{hf_repo: acme/unknown}",
            "bp.yaml:27:27: error: models.chat.model_info.hf_repo: 'acme/unknown' is not in the "
            "built-in model table; give its config.json instead (model_info.config, a copy "
            "beside the blueprint), or its numbers: parameters_billions, layers, heads, "
            "kv_heads and head_dim",
            id="unknown-repo",
        ),
        pytest.param(
            "{hf_repo: meta-llama/Llama-3.2-1B-Instruct, layers: 16}",
            "bp.yaml:27:17: error: models.chat.model_info: give one of `hf_repo`, `config` or "
            "the model's numbers, not `hf_repo` and `layers`; keep hf_repo for a model of the "
            "built-in table, config for the checkpoint's own config.json, or the numbers",
            id="both",
        ),
        pytest.param(
            "{parameters_billions: 7, layers: 32}",
            "bp.yaml:27:17: error: models.chat.model_info: model_info is missing heads, "
            "kv_heads, head_dim; give all of parameters_billions, layers, heads, kv_heads and "
            "head_dim, or only hf_repo",
            id="incomplete",
        ),
        pytest.param(
            "{parameters_billions: 7, layers: 32, heads: 32, kv_heads: 6, head_dim: 128}",
            "bp.yaml:27:75: error: models.chat.model_info.kv_heads: heads (32) is not a "
            "multiple of kv_heads (6); copy num_attention_heads and num_key_value_heads from "
            "the model's config.json",
            id="kv-heads",
        ),
    ],
)
def test_model_info_errors(info: str, expected: str) -> None:
    assert errors(chat(f"    model_info: {info}\n")) == [expected]


def test_model_info_on_a_triton_model_is_refused() -> None:
    text = edit(
        "    source: rank/model.onnx\n",
        "    source: rank/model.onnx\n    model_info: {hf_repo: microsoft/phi-4}\n",
    )
    assert errors(text) == [
        "bp.yaml:32:17: error: models.rank.model_info: `model_info` only applies to LLM "
        "servers; remove it, or serve the model with server: vllm"
    ]


# --- speculative decoding, LoRA, aliases ------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        pytest.param(
            "{method: eagle3}",
            "bp.yaml:27:25: error: models.chat.vllm.speculative: method eagle3 needs a "
            "`draft_model`; add draft_model: hf://org/name@revision of a draft head trained "
            "for this model",
            id="eagle-without-draft",
        ),
        pytest.param(
            "{method: ngram, draft_model: 'hf://a/b@main'}",
            "bp.yaml:27:54: error: models.chat.vllm.speculative.draft_model: `draft_model` "
            "only applies to methods eagle and eagle3; remove it: ngram proposes tokens from "
            "the prompt",
            id="ngram-with-draft",
        ),
        pytest.param(
            "{method: eagle, draft_model: 'hf://a/b@main', prompt_lookup_max: 4}",
            "bp.yaml:27:90: error: models.chat.vllm.speculative.prompt_lookup_max: "
            "`prompt_lookup_max` only applies to method ngram; remove it",
            id="lookup-without-ngram",
        ),
        pytest.param(
            "{method: ngram, prompt_lookup_min: 5, prompt_lookup_max: 3}",
            "bp.yaml:27:60: error: models.chat.vllm.speculative.prompt_lookup_min: "
            "prompt_lookup_min (5) is greater than prompt_lookup_max (3); make min <= max",
            id="min-above-max",
        ),
    ],
)
def test_speculative_errors(spec: str, expected: str) -> None:
    assert errors(chat(f"    vllm: {{speculative: {spec}}}\n")) == [expected]


def test_lora_and_alias_names_must_be_unique_and_sources_readable() -> None:
    text = chat(
        "    vllm:\n"
        "      served_model_aliases: [gpt-small, gpt-small]\n"
        "      lora:\n"
        "        adapters: {chat: tone/, gpt-small: 'gs://other-bucket/x/'}\n"
    )
    assert errors(text) == [
        "bp.yaml:28:41: error: models.chat.vllm.served_model_aliases[1]: the name 'gpt-small' "
        "is already served; use another alias",
        "bp.yaml:30:26: error: models.chat.vllm.lora.adapters.chat: adapter name 'chat' is "
        "already a served model name; rename the adapter: clients select it by this name",
        "bp.yaml:30:44: error: models.chat.vllm.lora.adapters.gpt-small: adapter name "
        "'gpt-small' is already a served model name; rename the adapter: clients select it by "
        "this name",
        "bp.yaml:30:44: error: models.chat.vllm.lora.adapters.gpt-small: a aws environment "
        "(stg) cannot read gs:// sources; copy the adapter into s3://models-use1/ and use a "
        "relative path",
    ]


# --- extra_args --------------------------------------------------------------------------------
PORT_HINT = "remove it: inferplane serves on its fixed port, behind the model's Service"


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(
            '["--block-size", "8", "--port", "8001"]',
            "bp.yaml:27:46: error: models.chat.vllm.extra_args[2]: `--port` is set by the "
            f"blueprint; {PORT_HINT}",
            id="port",
        ),
        pytest.param(
            '["--port=8001"]',
            "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: `--port` is set by the "
            f"blueprint; {PORT_HINT}",
            id="port-equals",
        ),
        pytest.param(
            '["--tensor_parallel_size", "2"]',
            "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: `--tensor-parallel-size` is "
            "set by the blueprint; set models.chat.gpus instead",
            id="underscores",
        ),
        pytest.param(
            '["-tp4"]',
            "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: `-tp4` (read as "
            "`--tensor-parallel-size`) is set by the blueprint; set models.chat.gpus instead",
            id="short-attached",
        ),
        pytest.param(
            '["--tensor-parallel", "2"]',
            "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: `--tensor-parallel` (read as "
            "`--tensor-parallel-size`) is set by the blueprint; set models.chat.gpus instead",
            id="abbreviation",
        ),
        pytest.param(
            '["--no-enable-prefix-caching"]',
            "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: `--no-enable-prefix-caching` "
            "is set by the blueprint; set "
            "models.chat.vllm.enable_prefix_caching instead",
            id="negated-boolean",
        ),
        pytest.param(
            '["--speculative-config.method", "ngram"]',
            "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: `--speculative-config` is "
            "set by the blueprint; set models.chat.vllm.speculative instead",
            id="json-key",
        ),
        pytest.param(
            '["--dtype", "half"]',
            "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: `--dtype` is set by the "
            "blueprint; set models.chat.precision instead",
            id="dtype",
        ),
        pytest.param(
            '["--api-key", "abc"]',
            "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: `--api-key` is set by the "
            "blueprint; remove it: an API key is a secret, and arguments are stored in plain "
            "text",
            id="api-key",
        ),
        pytest.param(
            '["--enable-offline-docs"]',
            "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: `--enable-offline-docs` is "
            "refused: adds the routes of the API's documentation (/docs, /static), which the "
            "API key does not guard; remove it",
            id="offline-docs",
        ),
        pytest.param(
            '["--blcok-size", "8"]',
            "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: `--blcok-size` is not an "
            "option of vllm serve v0.33.0; check the spelling against `vllm serve --help` of "
            "that version",
            id="unknown-flag",
        ),
        pytest.param(
            '["8", "--block-size"]',
            "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: extra_args must start with a "
            'flag; write the flag before its value, e.g. ["--block-size", "32"]',
            id="value-first",
        ),
        pytest.param(
            '["--block-size", "hf_abcdefghijklmnopqrstuvwxyz0123456789"]',
            "bp.yaml:27:41: error: models.chat.vllm.extra_args[1]: this argument looks like a "
            "credential; never put secrets in a blueprint: reference them under `secrets`",
            id="credential",
        ),
    ],
)
def test_extra_args_refused_at_their_line(args: str, expected: str) -> None:
    assert errors(chat(f"    vllm: {{extra_args: {args}}}\n")) == [expected]


def test_extra_args_that_the_blueprint_does_not_own_pass() -> None:
    text = chat(
        '    vllm: {extra_args: ["--block-size", "32", "--max-num-queued-reqs", "256", '
        '"--enable-log-deltas", "--max_cpu_loras=2", "--limit-mm-per-prompt.image", "2", '
        '"--no-trust-remote-code"]}\n'
    )
    assert errors(text) == []


def test_extra_args_are_checked_against_the_release_that_runs() -> None:
    """`--swap-space` is an option of v0.10.2 only, `--max-num-queued-reqs` of v0.33.0 only
    (inferplane/facts/vllm/<release>/serve_flags.txt)."""
    old = "versions: {vllm: v0.10.2}\n"
    text = chat('    vllm: {extra_args: ["--swap-space", "8", "--disable-log-requests"]}\n')
    assert errors(text + old) == []
    assert errors(text) == [
        "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: `--swap-space` is an option of "
        "vLLM v0.10.2 that v0.33.0 no longer has; remove it: vLLM v0.10.2 names no "
        "replacement in its source",
        "bp.yaml:27:46: error: models.chat.vllm.extra_args[2]: `--disable-log-requests` is an "
        "option of vLLM v0.10.2 that v0.33.0 no longer has (v0.10.2 deprecated it for "
        "`--enable-log-requests`: vllm/utils/__init__.py:1759); remove it: "
        "`--enable-log-requests` is refused too (writes prompts or completions to the logs)",
    ]
    text = chat('    vllm: {extra_args: ["--max-num-queued-reqs", "256"]}\n')
    assert errors(text) == []
    assert errors(text + old) == [
        "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: `--max-num-queued-reqs` is an "
        "option of vLLM v0.33.0, newer than v0.10.2; run v0.33.0 (versions.vllm, or the model's "
        "image) to use it, or remove it"
    ]


def test_a_removed_option_names_what_its_deprecation_notice_names() -> None:
    """v0.10.2 deprecated --disable-mm-preprocessor-cache for `--mm-processor-cache-gb 0`
    (vllm/engine/arg_utils.py, read into inferplane/facts/vllm/v0.10.2/deprecations.txt)."""
    text = chat('    vllm: {extra_args: ["--disable-mm-preprocessor-cache"]}\n')
    assert errors(text) == [
        "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: "
        "`--disable-mm-preprocessor-cache` is an option of vLLM v0.10.2 that v0.33.0 no longer "
        "has (v0.10.2 deprecated it for `--mm-processor-cache-gb 0`: "
        "vllm/engine/arg_utils.py:940); write `--mm-processor-cache-gb 0` instead"
    ]


def test_a_removed_variable_is_named_as_removed_not_misspelled() -> None:
    text = chat("    vllm: {env: {VLLM_ATTENTION_BACKEND: FLASH_ATTN}}\n")
    assert errors(text) == [
        "bp.yaml:27:42: error: models.chat.vllm.env.VLLM_ATTENTION_BACKEND: "
        "`VLLM_ATTENTION_BACKEND` is a variable of vLLM v0.10.2 that v0.33.0 no longer has; "
        "remove it: vLLM v0.10.2 names no replacement in its source"
    ]


def test_an_option_and_its_value_in_one_item_are_refused() -> None:
    text = chat('    vllm: {extra_args: ["--block-size 32"]}\n')
    assert errors(text) == [
        "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: `--block-size 32` is an option "
        "and its value in one item; vLLM receives it as one argument, and argparse reads an "
        "argument with a space as a value, not an option; write each as an item of its own: "
        '["--block-size", "32"]'
    ]


def test_a_token_budget_below_the_model_length_without_chunked_prefill_is_refused() -> None:
    """vLLM v0.33.0 vllm/config/scheduler.py, SchedulerConfig.verify_max_model_len; v0.10.2
    turns chunked prefill on for generative models whatever the flag says."""
    text = chat(
        "    vllm: {max_model_len: 8192, max_num_batched_tokens: 4096,"
        " enable_chunked_prefill: false}\n"
    )
    assert errors(text) == [
        "bp.yaml:27:57: error: models.chat.vllm.max_num_batched_tokens: max_num_batched_tokens "
        "(4096) is smaller than max_model_len (8192) with enable_chunked_prefill: false; vLLM "
        "v0.33.0 refuses to start (vllm/config/scheduler.py: a prompt must fit one step when "
        "it is not split); raise max_num_batched_tokens to 8192 or more, lower max_model_len "
        "to 4096, or remove enable_chunked_prefill: false"
    ]
    assert errors(text + "versions: {vllm: v0.10.2}\n") == []
    assert errors(edit("false}", "true}", text)) == []


def test_a_tool_call_parser_the_release_lacks_is_refused() -> None:
    """vLLM 0.33.0 registers minimax_m2 and minimax_m3 but no longer minimax
    (vllm/tool_parsers/__init__.py, _TOOL_PARSERS_TO_REGISTER)."""
    text = chat("    vllm: {tool_call_parser: minimax}\n")
    assert errors(text) == [
        "bp.yaml:27:30: error: models.chat.vllm.tool_call_parser: vLLM v0.33.0 has no tool-call "
        "parser 'minimax'; use a parser of v0.33.0 (see "
        "inferplane/facts/vllm/v0.33.0/tool_parsers.txt), or set versions.vllm to v0.10.2"
    ]
    assert errors(text + "versions: {vllm: v0.10.2}\n") == []
    assert errors(chat("    vllm: {tool_call_parser: hermes}\n")) == []
    newer = chat("    vllm: {tool_call_parser: qwen3_xml}\n")
    assert errors(newer) == []
    assert errors(newer + "versions: {vllm: v0.10.2}\n") == [
        "bp.yaml:27:30: error: models.chat.vllm.tool_call_parser: vLLM v0.10.2 has no tool-call "
        "parser 'qwen3_xml'; use a parser of v0.10.2 (see "
        "inferplane/facts/vllm/v0.10.2/tool_parsers.txt), or set versions.vllm to v0.33.0"
    ]


# The attacks of issue #17: each refused at its own item, with the reason and the fix.
REFUSED = "; remove it"
CODE = "loads and runs Python code named by the blueprint or a model repository"


@pytest.mark.parametrize(
    ("args", "column", "index", "message"),
    [
        pytest.param(
            '["--trust-remote-code"]', 25, 0,
            f"`--trust-remote-code` is refused: {CODE} (the model repository's .py files)",
            id="trust-remote-code",
        ),
        pytest.param(
            '["--trust_remote_code=true"]', 25, 0,
            f"`--trust-remote-code` is refused: {CODE} (the model repository's .py files)",
            id="trust-remote-code-underscores",
        ),
        pytest.param(
            '["--trust-remote"]', 25, 0,
            "`--trust-remote` (read as `--trust-remote-code`) is refused: "
            f"{CODE} (the model repository's .py files)",
            id="trust-remote-code-abbreviated",
        ),
        pytest.param(
            '["--tool-parser-plugin", "/models/chat/parser.py"]', 25, 0,
            f"`--tool-parser-plugin` is refused: {CODE}",
            id="tool-parser-plugin",
        ),
        pytest.param(
            '["--block-size", "4", "--allowed-local-media-path", "/"]', 46, 2,
            "`--allowed-local-media-path` is refused: lets clients read files of the serving pod",
            id="local-media",
        ),
        pytest.param(
            '["-t", "4"]', 25, 0,
            "`-t` (read as `--tensor-parallel-size`) is set by the blueprint; set "
            "models.chat.gpus instead",
            id="short-prefix-tp",
        ),
        pytest.param(
            '["-as", "3"]', 25, 0,
            "`-as` (read as `--api-server-count`) is refused: inferplane sizes each pod for one "
            "API server process",
            id="short-prefix-asc",
        ),
        pytest.param(
            '["-a", "3"]', 25, 0,
            "`-a` matches several options (`--api-server-count`, `--attention-config`); write "
            "the option in full",
            id="short-prefix-asc-or-ac",
        ),
        pytest.param(
            '["-d", "2"]', 25, 0,
            "`-d` matches several options (`--data-parallel-address`, "
            "`--data-parallel-backend`, `--data-parallel-external-lb`, "
            "`--data-parallel-hybrid-lb`, ...); write the option in full",
            id="short-prefix-ambiguous",
        ),
        pytest.param(
            '["-cc", "{}"]', 25, 0,
            "`-cc` (read as `--compilation-config`) is refused: "
            f"{CODE} (inductor passes), and moves the staged compile cache "
            "(models.chat.vllm.enforce_eager turns compilation off)",
            id="short-cc",
        ),
        pytest.param(
            '["-O3"]', 25, 0,
            "`-O3` is read as `--optimization-level`; write `--optimization-level` in full",
            id="short-O",
        ),
        pytest.param(
            '["--disable-log-stats"]', 25, 0,
            "`--disable-log-stats` is refused: turns off the queue and latency metrics the "
            "autoscaler reads",
            id="disable-log-stats",
        ),
        pytest.param(
            '["--enable-log-requests"]', 25, 0,
            "`--enable-log-requests` is refused: writes prompts or completions to the logs",
            id="log-prompts",
        ),
        pytest.param(
            '["--middleware", "evil.App"]', 25, 0,
            "`--middleware` is set by the blueprint; remove it: inferplane sets it to its route "
            "guard, and any other middleware loads and runs Python code named by the blueprint",
            id="middleware",
        ),
        pytest.param(
            '["--block", "4"]', 25, 0,
            "`--block` is read as `--block-size`; write `--block-size` in full",
            id="abbreviation",
        ),
        pytest.param(
            '["--", "x"]', 25, 0, "`--` ends the options of vllm serve; remove it", id="dashdash"
        ),
    ],
)  # fmt: skip
def test_extra_args_attacks_are_refused(args: str, column: int, index: int, message: str) -> None:
    got = errors(chat(f"    vllm: {{extra_args: {args}}}\n"))
    hint = "" if ";" in message else REFUSED
    hint = hint if "refused" in message else ""
    assert got == [
        f"bp.yaml:27:{column}: error: models.chat.vllm.extra_args[{index}]: {message}{hint}"
    ]


def test_extra_args_of_another_vllm_are_still_only_the_classified_ones() -> None:
    text = chat(
        '    image: registry.example.com/ml/vllm:custom\n    vllm: {extra_args: ["--new"]}\n'
    )
    assert [e for e in errors(text) if "extra_args[" in e] == [
        "bp.yaml:28:25: error: models.chat.vllm.extra_args[0]: `--new` is not an option "
        "inferplane has classified (those of vllm serve v0.33.0, the pinned release); use an "
        "option of that release, or run a release of the release table"
    ]


def test_extra_args_refused_inside_an_override() -> None:
    text = edit(
        "    cluster: {existing: prod-gke}\n",
        "    cluster: {existing: prod-gke}\n    overrides:\n      models:\n        chat:\n"
        '          vllm: {extra_args: ["--host", "0.0.0.0"]}\n',
    )
    assert errors(text) == [
        "bp.yaml:22:31: error: environments.prod.overrides.models.chat.vllm.extra_args[0]: "
        "`--host` is set by the blueprint; remove it: inferplane listens on every interface "
        "of the pod"
    ]


# --- env -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param(
            "{HF_HOME: /models/hf}",
            "bp.yaml:27:27: error: models.chat.vllm.env.HF_HOME: `HF_HOME` is set by "
            "inferplane; remove it: Hugging Face files live on the models volume",
            id="owned",
        ),
        pytest.param(
            "{OPENAI_API_KEY: abc}",
            "bp.yaml:27:34: error: models.chat.vllm.env.OPENAI_API_KEY: `OPENAI_API_KEY` looks "
            "like a secret, and env values are stored in plain text; reference it under "
            "`secrets` instead, e.g. secrets: {openai_api_key: {from_env: OPENAI_API_KEY}}",
            id="secret-name",
        ),
        pytest.param(
            "{DB_PASSWORD: x}",
            "bp.yaml:27:31: error: models.chat.vllm.env.DB_PASSWORD: `DB_PASSWORD` looks like a "
            "secret, and env values are stored in plain text; reference it under `secrets` "
            "instead, e.g. secrets: {db_password: {from_env: DB_PASSWORD}}",
            id="password",
        ),
        pytest.param(
            "{LOG_HEADER: 'sk-abcdefghijklmnopqrstuvwxyz'}",
            "bp.yaml:27:30: error: models.chat.vllm.env.LOG_HEADER: this value looks like a "
            "credential; never put secrets in a blueprint: reference them under `secrets`",
            id="secret-value",
        ),
    ],
)
def test_env_refusals(env: str, expected: str) -> None:
    assert errors(chat(f"    vllm: {{env: {env}}}\n")) == [expected]


def test_env_may_not_shadow_a_secret_reference() -> None:
    text = chat("    secrets: {hf_token: {from_env: HF_TOKEN}}\n    vllm: {env: {HF_TOKEN: x}}\n")
    assert errors(text) == [
        "bp.yaml:28:28: error: models.chat.vllm.env.HF_TOKEN: `HF_TOKEN` is set from secret "
        "'hf_token'; remove it here; the secret reference provides it"
    ]


def test_plain_env_passes() -> None:
    text = chat(
        "    vllm: {env: {VLLM_LOG_MODEL_INSPECTION: '1', NCCL_DEBUG: WARN, "
        "VLLM_LOGGING_LEVEL: WARNING}}\n"
    )
    assert errors(text) == []


ELSEWHERE = "reads from or sends to a place other than the model store"
ENDPOINT = "opens an endpoint no NetworkPolicy or API key guards"


@pytest.mark.parametrize(
    ("var", "message"),
    [
        ("LD_PRELOAD", f"is refused: {CODE} (a shared library preloaded into every process); "
         "remove it"),
        ("PYTHONPATH", f"is refused: {CODE} (modules shadowing vLLM's); remove it"),
        ("HTTPS_PROXY", f"is refused: {ELSEWHERE} (every outgoing request goes through a proxy)"
         "; remove it"),
        ("VLLM_SERVER_DEV_MODE", f"is refused: {ENDPOINT} (development routes, /collective_rpc "
         "among them); remove it"),
        ("VLLM_ALLOW_RUNTIME_LORA_UPDATING", f"is refused: {ENDPOINT} (/v1/load_lora_adapter "
         "loads any path); remove it"),
        ("VLLM_USE_MODELSCOPE", f"is refused: {ELSEWHERE} (ModelScope instead of the staged "
         "weights); remove it"),
        ("VLLM_CACHE_ROOT", "is set by inferplane; remove it: the compile cache lives where "
         "inferplane stages it"),
        ("SOME_RANDOM_VAR", "is not a variable inferplane passes to vLLM v0.33.0; use a variable "
         "of vllm/envs.py that inferplane allows (see inferplane/facts/vllm/v0.33.0/env_vars.txt), "
         "or a blueprint field"),
    ],
)  # fmt: skip
def test_env_attacks_are_refused(var: str, message: str) -> None:
    got = errors(chat(f"    vllm: {{env: {{{var}: '1'}}}}\n"))
    assert got == [f"bp.yaml:27:{18 + len(var) + 2}: error: models.chat.vllm.env.{var}: `{var}` "
                   f"{message}"]  # fmt: skip


# --- hf:// adapters: staged like weights, so pinned ------------------------------------------
def test_an_hf_adapter_pinned_to_a_revision_is_accepted() -> None:
    text = chat("    vllm:\n      lora:\n        adapters: {tone: 'hf://acme/tone-lora@v3'}\n")
    assert validated(text) == []


def test_an_unpinned_hf_adapter_is_refused_at_its_line() -> None:
    text = chat("    vllm:\n      lora:\n        adapters: {tone: 'hf://acme/tone-lora'}\n")
    assert validated(text) == [
        'bp.yaml:29:26: error: models.chat.vllm.lora.adapters.tone: "hf://acme/tone-lora" '
        "is not a pinned Hugging Face adapter; an hf:// adapter needs a revision: "
        "hf://org/name@<revision>, best a commit SHA; it is staged into the model store keyed "
        "by it (a tag or branch is staged once and never refreshed)"
    ]


def test_an_adapter_source_takes_no_dollar_or_wildcard() -> None:
    """The kubelet would expand ``$(...)`` in the fetch container's variable, and the storage
    CLI reads ``*`` as a wildcard."""
    for bad in ("adapters/$(AWS_SECRET_ACCESS_KEY)/", "adapters/*/"):
        text = chat(f"    vllm:\n      lora:\n        adapters: {{tone: '{bad}'}}\n")
        assert validated(text) == [
            "bp.yaml:29:26: error: models.chat.vllm.lora.adapters.tone: an adapter source must "
            'not contain `"`, `\\`, `*`, `?`, `$`, whitespace or control characters; use '
            "letters, digits, `-`, `_`, `.` and `/`: the storage CLI reads `*` and `?` as "
            "wildcards, and the kubelet expands `$(...)` in the container's variables"
        ], bad


# --- hf:// revisions that cannot be staged safely ------------------------------------------
def test_a_hub_pull_request_ref_is_refused() -> None:
    assert errors(chat("", source="hf://acme/chat@refs/pr/7")) == [
        "bp.yaml:26:13: error: models.chat.source: revision 'refs/pr/7' of hf://acme/chat is a "
        "Hub pull request: its files are whatever the pull request's author pushed, not the "
        "repository's; pin a commit of the repository itself: hf://acme/chat@<40-hex commit "
        "SHA>"
    ]


def test_two_revisions_cannot_share_a_staged_folder() -> None:
    from inferplane.blueprint import naming

    folder = naming.staged_revision_dir("release/1")
    assert folder.startswith("rev-")
    text = chat(
        f"    vllm:\n      lora:\n        adapters: {{tone: 'hf://acme/chat@{folder}'}}\n",
        source="hf://acme/chat@release/1",
    )
    assert errors(text) == [
        f"bp.yaml:29:26: error: models.chat.vllm.lora.adapters.tone: revision {folder!r} of "
        "hf://acme/chat starts with 'rev-', how staged folders of other revisions are named; "
        "pin a commit: hf://acme/chat@<40-hex commit SHA>"
    ]
