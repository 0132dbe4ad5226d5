"""Hub advisories (`inferplane.blueprint.checks.semantic_hub`), with their exact text and line: an
hf:// revision that is not a commit is staged once and never refreshed; a Hub token that no
hf:// reference uses is read by nothing."""

from __future__ import annotations

import pytest
from test_semantic import BASE, edit

from inferplane.blueprint.checks.semantic import check
from inferplane.blueprint.checks.semantic_vllm import advisories
from inferplane.blueprint.loading.loader import load_text

SHA = "0e9e39f249a16976918f6564b8830bc894c89659"
LLAMA = f"hf://meta-llama/Llama-3.1-8B-Instruct@{SHA}"
TOKEN = "    secrets:\n      hf_token: {from_env: HF_TOKEN}\n"


def hub_warnings(text: str) -> list[str]:
    """The hub advisories `validate` prints for `text` (a valid blueprint)."""
    doc = load_text(text, "bp.yaml")
    assert [d.format() for d in check(doc)] == []
    return [
        d.format()
        for d in advisories(doc)
        if "hf://" in d.message or "Hugging Face token" in d.message
    ]


def chat(source: str, extra: str = "") -> str:
    return edit("    source: llama/\n", f"    source: {source}\n{extra}", BASE)


NOT_A_COMMIT = (
    "warning: {path}: revision {rev!r} of hf://{repo} is not a commit: it is staged into the "
    "model store once and never refreshed, whatever the hub's {rev!r} names later; pin a "
    "commit: hf://{repo}@<40-hex commit SHA>"
)


@pytest.mark.parametrize(
    ("revision", "column"),
    [("main", 13), ("v1.0", 13), (SHA.upper(), 13)],
    ids=["branch", "tag", "upper-case"],
)
def test_a_source_revision_that_is_not_a_commit_is_a_warning(revision: str, column: int) -> None:
    text = chat(f"hf://meta-llama/Llama-3.1-8B-Instruct@{revision}", TOKEN)
    assert hub_warnings(text) == [
        f"bp.yaml:26:{column}: "
        + NOT_A_COMMIT.format(
            path="models.chat.source", rev=revision, repo="meta-llama/Llama-3.1-8B-Instruct"
        )
    ]


def test_a_short_commit_sha_is_counted() -> None:
    text = chat("hf://meta-llama/Llama-3.1-8B-Instruct@0e9e39f", TOKEN)
    assert hub_warnings(text) == [
        "bp.yaml:26:13: warning: models.chat.source: revision '0e9e39f' of "
        "hf://meta-llama/Llama-3.1-8B-Instruct is a commit SHA cut short: a commit SHA is 40 "
        "hex characters; this one has 7, and the hub resolves a short one like a branch name, "
        "staged into the model store once and never refreshed; pin the whole commit: "
        "hf://meta-llama/Llama-3.1-8B-Instruct@<40-hex commit SHA> (the repository's commit "
        "history on huggingface.co shows it)"
    ]


def test_a_commit_pin_gives_no_warning() -> None:
    assert hub_warnings(chat(LLAMA, TOKEN)) == []


def test_a_draft_model_and_a_lora_adapter_on_a_branch_are_warnings() -> None:
    text = chat(
        LLAMA,
        "    vllm:\n"
        "      speculative: {method: eagle3, draft_model: 'hf://yuhuili/EAGLE3-8B@main'}\n"
        "      lora:\n"
        f"        adapters: {{tone: 'hf://acme/tone-lora@v2', legal: 'hf://acme/legal@{SHA}'}}\n"
        + TOKEN,
    )
    assert hub_warnings(text) == [
        "bp.yaml:28:50: "
        + NOT_A_COMMIT.format(
            path="models.chat.vllm.speculative.draft_model", rev="main", repo="yuhuili/EAGLE3-8B"
        ),
        "bp.yaml:30:26: "
        + NOT_A_COMMIT.format(
            path="models.chat.vllm.lora.adapters.tone", rev="v2", repo="acme/tone-lora"
        ),
    ]


def test_an_override_revision_is_blamed_in_the_override() -> None:
    text = chat(LLAMA, TOKEN).replace(
        "    cluster: {existing: prod-gke}\n",
        "    cluster: {existing: prod-gke}\n"
        "    overrides:\n"
        "      models:\n"
        "        chat: {source: 'hf://meta-llama/Llama-3.1-8B-Instruct@main'}\n",
    )
    [warning] = hub_warnings(text)
    assert warning.startswith(
        "bp.yaml:21:24: warning: environments.prod.overrides.models.chat.source: revision 'main'"
    )


UNUSED_TOKEN = (
    "bp.yaml:{line}:{column}: warning: models.chat.secrets.{name}: nothing uses this Hugging "
    "Face token: the model has no hf:// source, draft model or LoRA adapter, and no serving "
    "pod ever gets the token; remove it, or reference the weights as "
    "hf://org/name@<commit SHA>"
)


@pytest.mark.parametrize("name", ["hf_token", "hugging_face_hub_token"])
def test_a_token_without_an_hf_reference_is_a_warning_at_the_secret(name: str) -> None:
    text = chat("llama/", f"    secrets:\n      {name}: {{from_env: HF_TOKEN}}\n")
    assert hub_warnings(text) == [UNUSED_TOKEN.format(line=28, column=7 + len(name) + 2, name=name)]


def test_a_token_used_only_by_a_draft_model_or_an_adapter_is_no_warning() -> None:
    draft_model = f"hf://yuhuili/EAGLE3-8B@{SHA}"
    draft = f"      speculative: {{method: eagle3, draft_model: '{draft_model}'}}\n"
    adapter = f"      lora:\n        adapters: {{tone: 'hf://acme/tone-lora@{SHA}'}}\n"
    for settings in (draft, adapter):
        assert hub_warnings(chat("llama/", f"    vllm:\n{settings}{TOKEN}")) == []


def test_other_secrets_without_an_hf_reference_are_no_warning() -> None:
    text = chat("llama/", "    secrets:\n      openai_api_key: {from_env: OPENAI_API_KEY}\n")
    assert hub_warnings(text) == []
