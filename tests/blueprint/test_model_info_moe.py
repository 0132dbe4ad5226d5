"""A model the table does not know, described in the blueprint: by its own config.json
(`model_info.config`) or by its numbers with its experts; located errors for what cannot be,
and a warning where a name says mixture of experts and the description says dense."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_capacity import edit, problems

from inferplane.blueprint import llm_catalog
from inferplane.blueprint.capacity import load, planner
from inferplane.blueprint.checks.semantic_vllm import advisories
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.resolution.resolve import load_blueprint, resolve

LLAMA = "hf://meta-llama/Llama-3.1-8B-Instruct@0e9e39f249a16976918f6564b8830bc894c89659"
STORE = "house/moe-chat/"
QWEN_MOE_CONFIG = json.loads(llm_catalog.CONFIGS_FILE.read_text(encoding="utf-8"))["models"][
    "Qwen/Qwen3-30B-A3B"
]["config"]

H100 = edit(
    "vllm: {max_model_len: 8192, quantization: fp8, kv_cache_dtype: fp8}",
    "vllm: {max_model_len: 8192}",
    edit("gpu: nvidia-l4", "gpu: nvidia-h100-80gb"),
)


def _with_info(info: str, source: str = STORE, text: str = H100) -> str:
    return edit(
        f"    source: {LLAMA}\n",
        f"    source: {source}\n    model_info: {info}\n",
        text,
    ).replace("    secrets: {hf_token: {from_env: HF_TOKEN}}\n", "", 1)


MOE_NUMBERS = (
    "{parameters_billions: 30.53, layers: 48, heads: 32, kv_heads: 4, head_dim: 128, "
    "experts: 128, experts_per_token: 8, active_parameters_billions: 3.35}"
)


def test_the_numbers_with_experts_plan_as_the_table_row() -> None:
    env = resolve(load_text(_with_info(MOE_NUMBERS), "bp.yaml"), "stg")
    facts = env.models["chat"].llm
    assert facts is not None and facts.moe
    assert facts.active_parameters / 1e9 == pytest.approx(3.35)
    row = llm_catalog.lookup("Qwen/Qwen3-30B-A3B")
    assert row is not None
    assert facts.routed_parameters == pytest.approx(row.routed_parameters, rel=0.01)
    assert load.model_basis(env.models["chat"]).startswith(
        "mixture of experts: 30.53B parameters held (all 128 experts), 3.35B active per token "
        "(8 of 128 experts); from models.<m>.model_info"
    )


def test_config_json_beside_the_blueprint_is_read(tmp_path: Path) -> None:
    (tmp_path / "moe").mkdir()
    (tmp_path / "moe" / "config.json").write_text(json.dumps(QWEN_MOE_CONFIG))
    (tmp_path / "bp.yaml").write_text(_with_info("{config: moe/config.json}"))
    doc, _ = load_blueprint(tmp_path / "bp.yaml")
    env = resolve(doc, "stg")
    facts = env.models["chat"].llm
    assert facts is not None
    assert (facts.parameters_billions, facts.experts, facts.experts_per_token) == (30.53, 128, 8)
    assert facts.source == "models.<m>.model_info.config (moe/config.json)"
    plan = planner.plan_env(env).plans["chat"]
    assert plan.model_basis.startswith("mixture of experts: 30.53B parameters held")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read moe/config.json: No such file or directory"),
        ("{not json", "moe/config.json is not JSON: "),
        ("[1, 2]", "moe/config.json is not a JSON object"),
        ('{"num_hidden_layers": 2}', "moe/config.json: config.json has no hidden_size"),
        (
            json.dumps({**QWEN_MOE_CONFIG, "num_key_value_heads": 5}),
            "moe/config.json: num_attention_heads (32) is not a multiple of "
            "num_key_value_heads (5)",
        ),
    ],
)
def test_a_config_that_cannot_be_read_is_a_located_error(
    tmp_path: Path, content: str | None, message: str
) -> None:
    (tmp_path / "moe").mkdir()
    if content is not None:
        (tmp_path / "moe" / "config.json").write_text(content)
    (tmp_path / "bp.yaml").write_text(_with_info("{config: moe/config.json}"))
    with pytest.raises(Exception) as got:
        load_blueprint(tmp_path / "bp.yaml")
    text = str(got.value)
    assert "models.chat.model_info.config: " + message in text, text
    assert "bp.yaml:19:" in text, text


def test_a_config_outside_the_blueprint_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(QWEN_MOE_CONFIG))
    (tmp_path / "bp").mkdir()
    (tmp_path / "bp" / "bp.yaml").write_text(_with_info("{config: ../config.json}"))
    with pytest.raises(Exception, match=r"\.\./config\.json is outside the blueprint's directory"):
        load_blueprint(tmp_path / "bp" / "bp.yaml")


@pytest.mark.parametrize(
    ("info", "message"),
    [
        (
            "{config: c.json, hf_repo: Qwen/Qwen3-8B}",
            "models.chat.model_info: give one of `hf_repo`, `config` or the model's numbers, "
            "not `hf_repo` and `config`",
        ),
        (
            "{parameters_billions: 30.53, layers: 48, heads: 32, kv_heads: 4, head_dim: 128, "
            "experts: 128}",
            "models.chat.model_info: a mixture-of-experts model_info is missing "
            "experts_per_token, active_parameters_billions",
        ),
        (
            MOE_NUMBERS.replace("experts_per_token: 8", "experts_per_token: 128"),
            "models.chat.model_info.experts_per_token: experts_per_token (128) is not below "
            "experts (128)",
        ),
        (
            MOE_NUMBERS.replace(
                "active_parameters_billions: 3.35", "active_parameters_billions: 30.53"
            ),
            "models.chat.model_info.active_parameters_billions: active_parameters_billions "
            "(30.53) is not below parameters_billions (30.53)",
        ),
        (
            MOE_NUMBERS.replace(
                "active_parameters_billions: 3.35", "active_parameters_billions: 1"
            ),
            "models.chat.model_info.active_parameters_billions: active_parameters_billions (1) "
            "is below what 8 of 128 experts of a 30.53B model use at least (1.91B",
        ),
    ],
)
def test_implausible_moe_numbers_are_located_errors(info: str, message: str) -> None:
    found = problems(_with_info(info))
    assert any(message in p and ": error: " in p for p in found), found


def test_a_name_that_says_moe_on_a_dense_description_is_a_warning() -> None:
    dense = "{parameters_billions: 30.5, layers: 48, heads: 32, kv_heads: 4, head_dim: 128}"
    found = warnings(_with_info(dense, source="house/Qwen3-30B-A3B-tuned/"))
    assert any(
        "models.chat.model_info: the source's name (30B-A3B) says a mixture of experts with 3B "
        "active parameters, but the model is described as dense (30.5B" in p
        for p in found
    ), found
    assert not any("says a mixture of experts" in p for p in warnings(_with_info(MOE_NUMBERS)))


def warnings(text: str) -> list[str]:
    return [d.format() for d in advisories(load_text(text, "bp.yaml"))]
