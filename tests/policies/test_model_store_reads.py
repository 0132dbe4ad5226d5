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


def _store_results(tmp_path: Path, store: str, listed: str) -> list[str]:
    """model-store-reads' messages for chat-minimal's prod with `store`, the platform listing
    `listed` for it and ``s3://example-models-euw1/bge-search/`` for bge-search."""
    import datetime as dt

    from inferplane.app.check import check_files

    text = Path("blueprints/chat-minimal.yaml").read_text()
    old = "    model_store: s3://example-models-euw1/chat-minimal/"
    assert old in text
    blueprint = tmp_path / "chat-minimal.yaml"
    blueprint.write_text(text.replace(old, f"    model_store: {store}", 1))
    config = tmp_path / "platform.yaml"
    config.write_text(
        "model-store-reads:\n"
        "  allowed_model_stores:\n"
        '    "*": ["s3://models/{blueprint}/"]\n'
        f"    chat-minimal: [{listed}]\n"
        "    bge-search: [s3://example-models-euw1/bge-search/]\n"
    )
    report = check_files([str(blueprint)], ["prod"], str(config), today=dt.date(2026, 12, 1))
    assert report.invalid == []
    return [
        f"{r.location.line}: {r.target}: {r.message}"
        for r in report.results
        if r.rule == "model-store-reads" and r.location is not None
    ]


def test_a_store_holding_another_blueprint_s_listed_store_is_refused(tmp_path: Path) -> None:
    """The platform lists the bucket's root for chat-minimal and a folder of it for
    bge-search: chat-minimal's store there would read bge-search's models and areas."""
    root = "s3://example-models-euw1/"
    assert _store_results(tmp_path, root, root) == [
        "14: environments.prod: model_store s3://example-models-euw1/ holds "
        "s3://example-models-euw1/bge-search/, the model store "
        "model-store-reads.allowed_model_stores lists for 'bge-search': one blueprint would "
        "read the other's models and .inferplane areas; use a store of this blueprint's own, "
        "beside the other's, or ask the platform team to list one prefix for both blueprints "
        "if they share it"
    ]
    # Inside it, as well: bge-search's grants would read this blueprint's models.
    inner = "s3://example-models-euw1/bge-search/chat/"
    assert _store_results(tmp_path, inner, root) == [
        "14: environments.prod: model_store s3://example-models-euw1/bge-search/chat/ is inside "
        "s3://example-models-euw1/bge-search/, the model store "
        "model-store-reads.allowed_model_stores lists for 'bge-search': one blueprint would "
        "read the other's models and .inferplane areas; use a store of this blueprint's own, "
        "beside the other's, or ask the platform team to list one prefix for both blueprints "
        "if they share it"
    ]


def test_a_grant_reaching_other_blueprints_areas_is_refused() -> None:
    """Reads inside the store are the store's, except inferplane's areas of other blueprints
    (or a prefix covering them all): a grant there is reported even though validation keeps
    sources out of them."""
    from inferplane.blueprint.resolution.resolve import resolve_file
    from inferplane.policies.rules.model_store_reads import AWS_ROLE_POLICY, check
    from inferplane.policies.stack import Stack

    env = resolve_file("blueprints/chat-minimal.yaml", "prod")
    keys = [
        ".inferplane/hub/chat-minimal/",  # its own area: fine
        ".inferplane/hub/bge-search/",
        ".inferplane*",
        "",
    ]
    resources = [
        Resource(
            urn=f"urn:{i}",
            name=f"grant-{i}",
            type=AWS_ROLE_POLICY,
            props={
                "policy": {
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Action": "s3:GetObject",
                            "Resource": f"arn:aws:s3:::example-models-euw1/chat-minimal/{k}*"
                            if k
                            else "arn:aws:s3:::example-models-euw1/chat-minimal/*",
                        }
                    ]
                }
            },
        )
        for i, k in enumerate(keys)
    ]
    config = {"allowed_model_stores": {"*": ["s3://"]}}
    found = [f.message for f in check(Stack.of(resources, env), config)]
    tail = (
        "which reaches the .inferplane/ areas of other blueprints that share the model store "
        "s3://example-models-euw1/chat-minimal/; read only this blueprint's own areas and its "
        "models' folders"
    )
    assert found == [
        "grant-1 grants reads of example-models-euw1/chat-minimal/.inferplane/hub/bge-search/, "
        + tail,
        f"grant-2 grants reads of example-models-euw1/chat-minimal/.inferplane, {tail}",
        f"grant-3 grants reads of example-models-euw1/chat-minimal/, {tail}",
    ]


def test_endpoint_matching() -> None:
    from inferplane.policies.rules.model_store_reads import endpoint_allowed

    url = "http://store.inferplane-system.svc:9000"
    assert endpoint_allowed(url, ["http://"])
    assert endpoint_allowed(url, ["http://STORE.inferplane-system.svc:9000"])
    assert not endpoint_allowed(url, ["https://"])
    assert not endpoint_allowed(url, ["http://store.inferplane-system.svc:900"])
    assert not endpoint_allowed(url, ["http://store.inferplane-system.svc"])  # port 80
    assert endpoint_allowed("https://192.0.2.10", ["https://192.0.2.10:443"])


def test_a_store_endpoint_the_platform_does_not_list(tmp_path: Path) -> None:
    """A kubernetes environment's store endpoint receives the store's keys, writer keys
    among them, and the NetworkPolicies open egress to it: the platform lists where it may
    be, per blueprint, and another endpoint is a mandatory violation at the endpoint."""
    import datetime as dt

    from inferplane.app.check import check_files

    config = tmp_path / "platform.yaml"
    config.write_text(
        "model-store-reads:\n"
        "  allowed_model_stores:\n"
        '    "*": ["s3://models/{blueprint}/", "s3://example-models-euw1/"]\n'
        "  allowed_store_endpoints:\n"
        '    "*": ["http://store.platform-store.svc:9000"]\n'
        '    chat-minimal/prod: ["http://store.inferplane-system.svc:9000"]\n'
    )
    report = check_files(
        ["blueprints/chat-minimal.yaml"], None, str(config), today=dt.date(2026, 12, 1)
    )
    assert not report.invalid
    found = [
        (r.environment, r.target, str(r.location), r.message)
        for r in report.results
        if r.rule == "model-store-reads" and r.status == "violation"
    ]
    assert found == [
        (
            "local",
            "environments.local",
            "blueprints/chat-minimal.yaml:23:27",
            "model_store_endpoint http://store.inferplane-system.svc:9000 is not a store "
            "endpoint the platform allows (listed: http://store.platform-store.svc:9000); the "
            "store's pods would send it their keys and reach it through the NetworkPolicies; "
            "use a listed endpoint, or ask the platform team to add it to "
            "model-store-reads.allowed_store_endpoints in its policy config",
        )
    ]
    listed = tmp_path / "listed.yaml"
    listed.write_text(
        config.read_text().replace("store.platform-store.svc", "store.inferplane-system.svc")
    )
    report = check_files(
        ["blueprints/chat-minimal.yaml"], None, str(listed), today=dt.date(2026, 12, 1)
    )
    assert [
        r for r in report.results if r.rule == "model-store-reads" and r.status == "violation"
    ] == []
