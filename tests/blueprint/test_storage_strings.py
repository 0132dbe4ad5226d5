"""Bucket names, prefixes and model sources reach IAM policies and CEL conditions: the
characters that could widen them are refused by the schema, with exact messages."""

from __future__ import annotations

import pytest
from test_schema import problems

WHY = (
    'must not contain `"`, `\\`, `*`, `?`, `$`, whitespace or control characters; use '
    "letters, digits, `-`, `_`, `.` and `/`: these characters end up in IAM policies and "
    "conditions, where they could widen the access granted"
)


@pytest.mark.parametrize(
    "bad",
    [
        r"s3://demo-models/a\"b/",
        "s3://demo-models/a*b/",
        "s3://demo-models/$x/",
        r"s3://demo-models/a\\b/",
        r"s3://demo-models/a\tb/",
        r"s3://demo-models/a\u0085b/",
        r"s3://demo-models/a\u0001b/",
    ],
)
def test_model_store_characters(bad: str) -> None:
    assert problems("model_store: s3://demo-models/", f'model_store: "{bad}"') == [
        f"bp.yaml:9:18: error: environments.staging.model_store: a bucket URI {WHY}"
    ]


@pytest.mark.parametrize(
    "bad", ["reranker/*", "reranker/$HOME", r"reranker/a\\b", r"rer\"anker/", "rer anker/"]
)
def test_model_source_characters(bad: str) -> None:
    assert problems("source: reranker/model.onnx", f'source: "{bad}"') == [
        f"bp.yaml:40:13: error: models.ranker.source: a model source {WHY}"
    ]


def test_model_source_characters_in_a_bucket_uri() -> None:
    assert problems("source: reranker/model.onnx", 'source: "s3://other-bucket/x*"') == [
        f"bp.yaml:40:13: error: models.ranker.source: a model source {WHY}"
    ]
