"""How model-store-reads reads IAM grants (the fixtures cover the rule end to end)."""

from __future__ import annotations

import json
from pathlib import Path

from inferplane.components.gcs_conditions import gcs_read_condition
from inferplane.components.identity import s3_read_statements
from inferplane.policies.resources import Resource
from inferplane.policies.rules.model_store_reads import GCS_BUCKET_MEMBER, gcs_reads, s3_reads


def test_s3_reads_of_the_generated_policy() -> None:
    doc = {"Version": "2012-10-17", "Statement": s3_read_statements([("models", "team/")])}
    assert sorted(set(s3_reads(json.dumps(doc)))) == [("models", "team/")]
    whole = {"Statement": s3_read_statements([("models", "")])}
    assert set(s3_reads(whole)) == {("models", "")}


def test_s3_wildcards_count_up_to_the_first_one() -> None:
    doc = {
        "Statement": [
            {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": "arn:aws:s3:::m/a*/b"},
            {"Effect": "Allow", "Action": "s3:*", "Resource": "*"},
            {"Effect": "Deny", "Action": "s3:*", "Resource": "arn:aws:s3:::x/*"},
            {"Effect": "Allow", "Action": "ec2:Describe*", "Resource": "*"},
        ]
    }
    assert list(s3_reads(doc)) == [("m", "a"), ("*", "")]


def _member(bucket: str, expression: str | None) -> Resource:
    props = {"bucket": bucket, "role": "roles/storage.objectViewer"}
    if expression is not None:
        props["condition"] = {"title": "t", "expression": expression}
    return Resource(urn="urn:x", name="m", type=GCS_BUCKET_MEMBER, props=props)


def test_gcs_reads_of_the_generated_condition() -> None:
    assert list(gcs_reads(_member("models", gcs_read_condition("models", "team/")))) == [
        ("models", "team/")
    ]
    assert list(gcs_reads(_member("models", None))) == [("models", "")]
    # A condition about another bucket scopes nothing on this one.
    other = gcs_read_condition("other", "team/")
    assert list(gcs_reads(_member("models", other))) == [("models", "")]


def test_a_grant_keyed_by_an_environment_name_is_refused(tmp_path: Path) -> None:
    """Keys name blueprints: a config written for an environment `prod` would grant its
    buckets to a blueprint named `prod`, which a pull request can add."""
    import datetime as dt

    from inferplane.app.check import check_files

    config = tmp_path / "platform.yaml"
    config.write_text(
        "model-store-reads:\n"
        "  allowed_model_stores:\n"
        '    "*": ["s3://models/{blueprint}/"]\n'
        '    prod: ["s3://finance-exports/"]\n'
    )
    report = check_files(
        ["blueprints/chat-minimal.yaml"], None, str(config), today=dt.date(2026, 12, 1)
    )
    assert [d.format() for d in report.invalid] == [
        f"{config}:4:5: error: model-store-reads.allowed_model_stores.prod: key 'prod' is the "
        "name of an environment (of blueprint 'chat-minimal'), and keys of this list name "
        "blueprints: it would grant to a blueprint named 'prod', not to that environment; "
        "write chat-minimal/prod for that environment of 'chat-minimal', or the blueprint's "
        "name for all its environments"
    ]
