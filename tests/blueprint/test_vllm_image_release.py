"""A vLLM model's own image runs a release of the release table, and that release's
allowlists judge its pass-throughs: vLLM's image by its tag, any other by `base_release`."""

from __future__ import annotations

import pytest
from test_semantic_vllm import chat, errors

DIGEST = "@sha256:" + "a" * 64


def test_vllm_image_of_an_unlisted_release_is_refused_at_the_image() -> None:
    assert errors(chat("    image: vllm/vllm-openai:v0.5.4\n")) == [
        "bp.yaml:27:12: error: models.chat.image: vllm/vllm-openai:v0.5.4 runs vLLM v0.5.4, "
        "which is not a release of the release table (v0.10.2, v0.33.0): no allowlist says "
        "what its options and variables do; use vllm/vllm-openai:<release> of one of them, or "
        "remove image for versions.vllm's release"
    ]


@pytest.mark.parametrize(
    "image",
    [
        "vllm/vllm-openai:v0.10.2",
        "docker.io/vllm/vllm-openai:v0.33.0",
        f"vllm/vllm-openai:v0.33.0{DIGEST}",
    ],
)
def test_vllm_image_of_a_listed_release_passes(image: str) -> None:
    assert errors(chat(f"    image: {image}\n")) == []


def test_vllm_image_is_judged_by_its_own_release() -> None:
    """`--all2all-backend` is an option of v0.33.0 only; the v0.10.2 image refuses it."""
    args = '    vllm: {extra_args: ["--all2all-backend", "naive"]}\n'
    assert errors(chat("    image: vllm/vllm-openai:v0.33.0\n" + args)) == []
    assert errors(chat("    image: vllm/vllm-openai:v0.10.2\n" + args)) == [
        "bp.yaml:28:25: error: models.chat.vllm.extra_args[0]: `--all2all-backend` is an option "
        "of vLLM v0.33.0, newer than v0.10.2; run v0.33.0 (versions.vllm, or the model's image) "
        "to use it, or remove it"
    ]


def test_another_image_is_judged_by_its_declared_release() -> None:
    image = "    image: registry.example.com/ml/vllm:custom\n    base_release: v0.10.2\n"
    args = '    vllm: {extra_args: ["--all2all-backend", "naive"]}\n'
    assert errors(chat(image + args)) == [
        "bp.yaml:29:25: error: models.chat.vllm.extra_args[0]: `--all2all-backend` is an option "
        "of vLLM v0.33.0, newer than v0.10.2; run v0.33.0 (versions.vllm, or the model's image) "
        "to use it, or remove it"
    ]


def test_another_image_must_declare_its_release() -> None:
    assert errors(chat("    image: registry.example.com/ml/vllm:custom\n")) == [
        "bp.yaml:27:12: error: models.chat.image: registry.example.com/ml/vllm:custom is not "
        "vLLM's own image (vllm/vllm-openai:<release>), so the vLLM release it runs, whose "
        "allowlists judge vllm.extra_args and vllm.env, is unknown; add base_release: "
        '"<release>", the vLLM release the image is (v0.10.2, v0.33.0), or use vLLM\'s image '
        "by its release tag"
    ]


def test_vllm_image_by_digest_alone_must_declare_its_release() -> None:
    image = f"vllm/vllm-openai{DIGEST}"
    assert errors(chat(f"    image: {image}\n")) == [
        f"bp.yaml:27:12: error: models.chat.image: {image} names vLLM's image by digest "
        "alone, so the vLLM release it runs, whose allowlists judge vllm.extra_args and "
        'vllm.env, is unknown; add base_release: "<release>", the vLLM release the image is '
        "(v0.10.2, v0.33.0), or use vLLM's image by its release tag"
    ]
    assert errors(chat(f"    image: {image}\n    base_release: v0.10.2\n")) == []


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        pytest.param(
            "    image: registry.example.com/ml/vllm:custom\n    base_release: v0.5.4\n",
            "vLLM v0.5.4 is not a release of the release table (v0.10.2, v0.33.0); build the "
            "image from one of them and name it here",
            id="unlisted",
        ),
        pytest.param(
            "    image: vllm/vllm-openai:v0.10.2\n    base_release: v0.33.0\n",
            "image vllm/vllm-openai:v0.10.2 is vLLM v0.10.2, not v0.33.0; remove base_release, "
            'or set it to "v0.10.2"',
            id="contradicts-the-tag",
        ),
        pytest.param(
            '    image: registry.example.com/ml/vllm:custom\n    base_release: "26.02"\n',
            "vLLM 26.02 is not a release of the release table (v0.10.2, v0.33.0); build the "
            "image from one of them and name it here",
            id="an-ngc-release",
        ),
    ],
)
def test_declared_release_must_be_a_listed_one(lines: str, message: str) -> None:
    assert errors(chat(lines)) == [f"bp.yaml:28:19: error: models.chat.base_release: {message}"]


def test_base_release_without_an_image_is_refused() -> None:
    assert errors(chat("    base_release: v0.33.0\n")) == [
        "bp.yaml:27:19: error: models.chat.base_release: base_release names the release a "
        "model's own image is built from, and this model names no image; remove base_release "
        "(the model runs the vLLM of versions.vllm)"
    ]
