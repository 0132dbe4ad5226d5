"""A blueprint waiver names a rule of the pack: validate refuses any other name, with the
closest id, before `check` would report the waiver as matching nothing."""

from __future__ import annotations

from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.loading.schema import schema, validate_document
from inferplane.policies.rules import rule_ids

WAIVED = """\
apiVersion: inferplane/v1
kind: Blueprint
name: demo
environments:
  prod:
    cloud: aws
    region: us-east-1
    zones: [us-east-1a]
    model_store: s3://models-use1/
    cluster: {create: true}
gpu_pools:
  l4: {gpu: nvidia-l4}
models:
  chat: {server: vllm, source: llama/, pool: l4}
policies:
  waivers:
    - rule: {rule}
      target: models.chat
      reason: Staging has no customer traffic; a cold start there is acceptable.
      expires: 2026-12-30
"""


def test_the_schema_lists_exactly_the_rules_of_the_pack() -> None:
    assert schema()["$defs"]["waiver"]["properties"]["rule"]["enum"] == list(rule_ids())


def test_an_unknown_rule_is_refused_with_the_closest_id() -> None:
    doc = load_text(WAIVED.replace("{rule}", "warm-replica"), "bp.yaml")
    assert [d.format() for d in validate_document(doc)] == [
        'bp.yaml:17:13: error: policies.waivers[0].rule: "warm-replica" is not one of '
        + ", ".join(rule_ids())
        + "; did you mean `warm-replicas`?"
    ]


def test_a_rule_of_the_pack_is_accepted() -> None:
    doc = load_text(WAIVED.replace("{rule}", "scale-out-budget"), "bp.yaml")
    assert validate_document(doc) == []
