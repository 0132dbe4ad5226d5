"""Bucket names, prefixes and model sources reach IAM policies and CEL conditions: the
characters that could widen them are refused by the schema, with exact messages."""

from __future__ import annotations

import pytest
from test_schema import problems

from inferplane.blueprint.errors import BlueprintError

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
    ],
)
def test_model_store_characters(bad: str) -> None:
    assert problems("model_store: s3://demo-models/", f'model_store: "{bad}"') == [
        f"bp.yaml:9:18: error: environments.staging.model_store: a bucket URI {WHY}"
    ]


@pytest.mark.parametrize(
    ("bad", "what"),
    [
        (r"s3://demo-models/a\tb/", "tab in the value is not allowed; write a space instead"),
        (
            r"s3://demo-models/a\u0085b/",
            "control character U+0085 in the value is not allowed; remove it: only tab, line "
            'feed and carriage return may appear (escapes in double quotes, such as "\\x07", '
            "count too)",
        ),
    ],
)
def test_model_store_control_characters_are_refused_when_loading(bad: str, what: str) -> None:
    # The loader refuses them in every value, before the schema sees the bucket URI.
    with pytest.raises(BlueprintError) as err:
        problems("model_store: s3://demo-models/", f'model_store: "{bad}"')
    assert [d.format() for d in err.value.diagnostics] == [
        f"bp.yaml:9:18: error: environments.staging.model_store: {what}"
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
