"""Where a blueprint reads in storage (`inferplane.blueprint.checks.semantic_store`), with exact
text and line: nothing under inferplane's own `.inferplane/` areas, wherever the segment
sits; a Triton model's folder (fetched whole) never the model store or a bucket's root; an
absolute source never a folder holding the model store."""

from __future__ import annotations

import pytest
from test_semantic import diagnostics, edit

RESERVED = (
    "is inside a .inferplane/ folder, where inferplane keeps the engines, staged weights and "
    "compile caches of every blueprint that shares a store; upload the files under a folder "
    "of your own and name that folder, without a .inferplane segment"
)


@pytest.mark.parametrize(
    "source",
    [
        ".inferplane/hub/search/Qwen/Qwen2.5-7B-Instruct/main/",
        ".inferplane",  # as a bare prefix it would have matched every area
        "team/.inferplane/engines/search/",  # the areas of a store nested in this one
        "s3://models-use1/.inferplane/vllm-compile/search/",
    ],
    ids=["areas", "bare-prefix", "nested-store", "absolute"],
)
def test_a_source_in_the_store_areas_is_refused(source: str) -> None:
    text = edit("    source: llama/\n", f"    source: {source}\n")
    found = [d for d in diagnostics(text) if "cannot read s3://" not in d]
    assert found == [f"bp.yaml:26:13: error: models.chat.source: {source} {RESERVED}"]


def test_a_lora_adapter_in_the_store_areas_is_refused() -> None:
    text = edit(
        "    source: llama/\n",
        "    source: llama/\n    vllm:\n      lora:\n"
        "        adapters: {tone: tones/.inferplane, legal: legal/}\n",
    )
    assert diagnostics(text) == [
        f"bp.yaml:29:26: error: models.chat.vllm.lora.adapters.tone: tones/.inferplane {RESERVED}"
    ]


def test_a_model_store_in_the_store_areas_is_refused() -> None:
    text = edit(
        "    model_store: s3://models-use1/\n",
        "    model_store: s3://models-use1/.inferplane/hub/search/\n",
    )
    assert diagnostics(text) == [
        "bp.yaml:10:18: error: environments.stg.model_store: model_store "
        "s3://models-use1/.inferplane/hub/search/ is inside a .inferplane/ folder, where "
        "inferplane keeps the engines, staged weights and compile caches of the blueprints "
        "that share a store; use a prefix of your own, without a .inferplane segment"
    ]


def test_a_triton_file_in_the_bucket_root_is_refused() -> None:
    text = edit("    source: rank/model.onnx\n", "    source: s3://models-use1/model.onnx\n")
    found = [d for d in diagnostics(text) if "cannot read s3://" not in d]
    assert found == [
        "bp.yaml:31:13: error: models.rank.source: s3://models-use1/model.onnx is fetched with "
        "its whole folder (an ONNX model's external data files are read relative to it: "
        "https://onnx.ai/onnx/repo-docs/ExternalData.html), and its folder is the root of "
        "bucket models-use1; keep each model file in a folder of its own: "
        "<store>/<model dir>/model.onnx"
    ]


def test_a_triton_file_directly_in_a_store_with_a_prefix_is_refused() -> None:
    """Under ``s3://models-use1/team/`` the file's folder is the store itself (not a bucket's
    root): the grant would read every blueprint's areas there."""
    text = edit("    model_store: s3://models-use1/\n", "    model_store: s3://models-use1/team/\n")
    text = edit("    source: rank/model.onnx\n", "    source: model.onnx\n", text)
    assert diagnostics(text) == [
        "bp.yaml:31:13: error: models.rank.source: model.onnx is fetched with its whole folder "
        "(an ONNX model's external data files are read relative to it: "
        "https://onnx.ai/onnx/repo-docs/ExternalData.html), and its folder is the model store "
        "s3://models-use1/team/; keep each model file in a folder of its own: "
        "<store>/<model dir>/model.onnx",
        "bp.yaml:31:13: error: models.rank.source: model.onnx is fetched with its whole folder "
        "(an ONNX model's external data files are read relative to it: "
        "https://onnx.ai/onnx/repo-docs/ExternalData.html), and its folder is the model store "
        "gs://models-usc1/; keep each model file in a folder of its own: "
        "<store>/<model dir>/model.onnx",
    ]


def test_an_absolute_source_holding_the_model_store_is_refused() -> None:
    text = edit(
        "    model_store: s3://models-use1/\n", "    model_store: s3://models-use1/team/stg/\n"
    )
    text = edit("    source: llama/\n", "    source: s3://models-use1/team\n", text)
    found = [d for d in diagnostics(text) if "cannot read s3://" not in d]
    assert found == [
        "bp.yaml:26:13: error: models.chat.source: s3://models-use1/team is read as the folder "
        "s3://models-use1/team/, which holds the model store s3://models-use1/team/stg/ and "
        "the engines, staged weights and compile caches of every blueprint that shares it; "
        "name the model's own folder, or give its path relative to model_store"
    ]


def test_only_the_whole_segment_is_reserved() -> None:
    """Folders whose names merely start or end like it stay the blueprint's to name."""
    for source in ("team-inferplane/", ".inferplane-notes/llama/", "a.inferplane/"):
        assert diagnostics(edit("    source: llama/\n", f"    source: {source}\n")) == []
    text = edit("    source: llama/\n", "    source: notes/.inferplane/\n")
    assert diagnostics(text) == [
        f"bp.yaml:26:13: error: models.chat.source: notes/.inferplane/ {RESERVED}"
    ]
