"""The GCS IAM conditions, EVALUATED with a CEL implementation (cel-python): the right
objects are allowed, everything else denied, and a crafted bucket or prefix cannot widen
the condition (it can only fail to compile, which denies)."""

from __future__ import annotations

from typing import Any

import celpy
import pytest
from celpy import celtypes

from inferplane.components.gcs_conditions import (
    cel_string,
    gcs_read_condition,
    gcs_write_condition,
)

OBJECT = "storage.googleapis.com/Object"
BUCKET = "storage.googleapis.com/Bucket"


def allowed(expression: str, *, name: str, type_: str = OBJECT, list_prefix: str = "") -> bool:
    """Whether IAM would grant a request on `name` under `expression` (an expression that
    does not compile grants nothing)."""
    env = celpy.Environment()
    try:
        ast = env.compile(expression)
    except celpy.CELParseError:
        return False

    def get_attribute(_api: Any, key: Any, default: Any) -> Any:
        if str(key) == "storage.googleapis.com/objectListPrefix" and list_prefix:
            return celtypes.StringType(list_prefix)
        return default

    program = env.program(ast, functions={"getAttribute": get_attribute})
    resource = celtypes.MapType(
        {
            celtypes.StringType("name"): celtypes.StringType(name),
            celtypes.StringType("type"): celtypes.StringType(type_),
        }
    )
    result = program.evaluate({"resource": resource, "api": celtypes.MapType({})})
    return result is True or result == celtypes.BoolType(True)


def obj(bucket: str, key: str) -> str:
    return f"projects/_/buckets/{bucket}/objects/{key}"


def test_read_allows_the_prefix_only() -> None:
    cond = gcs_read_condition("models", "team/")
    assert allowed(cond, name=obj("models", "team/llama/config.json"))
    assert not allowed(cond, name=obj("models", "other/llama/config.json"))
    assert not allowed(cond, name=obj("models-2", "team/x"))
    assert not allowed(cond, name=obj("other", "team/x"))
    # Listing: only with a list prefix inside the store.
    assert allowed(cond, name="projects/_/buckets/models", type_=BUCKET, list_prefix="team/a")
    assert not allowed(cond, name="projects/_/buckets/models", type_=BUCKET, list_prefix="x/")
    assert not allowed(cond, name="projects/_/buckets/models", type_=BUCKET)


def test_write_allows_the_prefix_only() -> None:
    cond = gcs_write_condition("models", "team/.inferplane/engines/")
    assert allowed(cond, name=obj("models", "team/.inferplane/engines/chat/plan"))
    assert not allowed(cond, name=obj("models", "team/llama/config.json"))


@pytest.mark.parametrize(
    ("bucket", "prefix"),
    [
        ("models", 'team/") || true || ("/'),
        ("models", 'team/\\") || true || (\\"/'),
        ('models/objects/") || true || ("', "team/"),
        ("models", 'team/\n") || true || ("/'),
        ("models", 'team/\u2028") || true || ("/'),
        ("models", "team/\\/"),
        ("models", "team/\U0001f600/"),
    ],
)
def test_crafted_values_do_not_widen(bucket: str, prefix: str) -> None:
    for cond in (gcs_read_condition(bucket, prefix), gcs_write_condition(bucket, prefix)):
        assert not allowed(cond, name=obj("models", "secret/key.pem"))
        assert not allowed(cond, name=obj("other-bucket", "x"))
        assert not allowed(
            cond, name="projects/_/buckets/models", type_=BUCKET, list_prefix="secret/"
        )
    # ... and the literal still means exactly the crafted text.
    assert allowed(gcs_write_condition(bucket, prefix), name=obj(bucket, prefix + "x"))


@pytest.mark.parametrize("prefix", ["llama", ".inferplane", "l", "team/model.onnx"])
def test_a_bare_prefix_is_refused(prefix: str) -> None:
    """``startsWith`` of ``llama`` would match ``llama-finance/`` too, ``.inferplane`` every
    blueprint's areas, ``l`` most of a bucket: a grant names a folder."""
    message = (
        f"a Cloud Storage condition names a folder ending in '/', not {prefix!r}, which as a "
        "prefix would also match its siblings"
    )
    for condition in (gcs_read_condition, gcs_write_condition):
        with pytest.raises(ValueError) as exc:
            condition("models", prefix)
        assert str(exc.value) == message


@pytest.mark.parametrize("text", ['a"b', "a\\b", "a\nb", "\x00", "\u0085", "é", "\U0001f600", ""])
def test_cel_string_round_trips(text: str) -> None:
    program = celpy.Environment().program(celpy.Environment().compile(f"{cel_string(text)} == x"))
    assert program.evaluate({"x": celtypes.StringType(text)}) == celtypes.BoolType(True)
