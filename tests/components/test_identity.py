"""Model-store identities: read-only on the store's bucket and prefix, engine writes only
under the engine prefix, trusted only by their Kubernetes ServiceAccounts."""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from typing import Any

import pytest
from cloud_fixtures import cloud_recording, parsed
from test_gcs_conditions import allowed, obj

from inferplane.app.offline import Recording
from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment
from inferplane.blueprint.resolution.resolve_model import parse_source
from inferplane.components import identity
from inferplane.components.cloud import gcp_account_id
from inferplane.components.gcs_conditions import gcs_write_condition
from inferplane.components.identity import gcs_read_condition

NAMESPACE = "support-assistant"


def restored(env: Environment, store: str, sources: dict[str, str]) -> Environment:
    """`env` with another model store; models keep their relative sources (now under the
    new store) unless `sources` gives one."""
    models = {}
    for name, model in env.models.items():
        relative = model.source.key.removeprefix(env.store_prefix) if model.source.key else ""
        source = parse_source(sources.get(name, relative), store)
        models[name] = dataclasses.replace(model, source=source)
    return dataclasses.replace(env, model_store=store, models=models)


HUB_CHAT = "hf://Qwen/Qwen2.5-7B-Instruct@a09a35458c702b33eeacc393d103063234e8bc28"
"""An hf:// source for the chat model: the environment then stages weights, and has a
weights-stager (the reference serves chat from the store)."""


@pytest.fixture(scope="session")
def staging_prefixed(staging: Environment) -> Environment:
    """The store under a prefix, one model in another bucket, and chat from the hub."""
    return restored(
        staging,
        "s3://acme-models-use1/team/models/",
        {"toxicity": "s3://shared-models/toxicity/v3/model.onnx", "chat": HUB_CHAT},
    )


@pytest.fixture(scope="session")
def prod_prefixed(prod: Environment) -> Environment:
    return restored(prod, "gs://acme-models-usc1/team/models/", {"chat": HUB_CHAT})


@pytest.fixture(scope="session")
def staging_hub(staging: Environment) -> Environment:
    """The reference staging environment with chat from the hub: every role is used."""
    return restored(staging, staging.model_store, {"chat": HUB_CHAT})


@pytest.fixture(scope="session")
def prod_hub(prod: Environment) -> Environment:
    return restored(prod, prod.model_store, {"chat": HUB_CHAT})


def role_policies(rec: Recording) -> dict[str, dict[str, Any]]:
    return {r.name: parsed(r) for r in rec.of_type("aws:iam/rolePolicy:RolePolicy")}


def service_accounts(rec: Recording) -> dict[str, dict[str, Any]]:
    return {
        r.inputs["metadata"]["name"]: r.inputs
        for r in rec.of_type("kubernetes:core/v1:ServiceAccount")
    }


# --- AWS ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "sa",
    [
        naming.MODEL_READER_SA,
        naming.ENGINE_BUILDER_SA,
        naming.WEIGHTS_STAGER_SA,
        naming.VLLM_COMPILER_SA,
    ],
)
def test_irsa_trust_is_limited_to_the_service_account(staging_hub: Environment, sa: str) -> None:
    rec = cloud_recording(staging_hub)
    roles = {r.name: r for r in rec.of_type("aws:iam/role:Role")}
    (statement,) = parsed(roles[f"support-assistant-staging-{sa}"], "assumeRolePolicy")["Statement"]
    issuer = rec.outputs["oidc_issuer"]
    assert statement == {
        "Effect": "Allow",
        "Principal": {"Federated": rec.outputs["oidc_provider_arn"]},
        "Action": "sts:AssumeRoleWithWebIdentity",
        "Condition": {
            "StringEquals": {
                f"{issuer}:sub": f"system:serviceaccount:{NAMESPACE}:{sa}",
                f"{issuer}:aud": "sts.amazonaws.com",
            }
        },
    }


AREAS = (".inferplane/engines/", ".inferplane/hub/", ".inferplane/vllm-compile/")
"""The blueprint's own areas of the store, which its serving pods read (`store_area`)."""


def test_reader_reads_its_models_and_its_own_areas_never_the_whole_store(
    staging: Environment,
) -> None:
    """A store another blueprint shares holds that blueprint's weights and `.inferplane`
    areas: the reader gets each source and this blueprint's areas, not ``bucket/*``."""
    policy = role_policies(cloud_recording(staging))[
        "support-assistant-staging-model-reader-policy"
    ]
    keys = [
        *(f"{area}support-assistant/*" for area in AREAS),
        "llama-3.1-8b-instruct/*",
        "reranker/*",
        "toxicity/*",
        "embedder/*",
    ]
    assert policy["Statement"] == [
        {
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": [f"arn:aws:s3:::acme-models-use1/{k}" for k in keys],
        },
        {
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": "arn:aws:s3:::acme-models-use1",
            "Condition": {"StringLike": {"s3:prefix": keys}},
        },
    ]


def test_a_source_without_its_slash_is_granted_as_its_folder(staging: Environment) -> None:
    """``llama`` as a bare prefix (``llama*``) would also read ``llama-finance/``: the grant
    names the folder the replicas copy, ``llama/``."""
    env = restored(staging, staging.model_store, {"chat": "llama"})
    policy = role_policies(cloud_recording(env))["support-assistant-staging-model-reader-policy"]
    gets, listing = policy["Statement"]
    assert "arn:aws:s3:::acme-models-use1/llama/*" in gets["Resource"]
    assert "llama/*" in listing["Condition"]["StringLike"]["s3:prefix"]
    sibling = "arn:aws:s3:::acme-models-use1/llama-finance/weights.bin"
    assert not [r for r in gets["Resource"] if fnmatch.fnmatchcase(sibling, r)]
    assert not [p for p in listing["Condition"]["StringLike"]["s3:prefix"] if p[:-1] == "llama"]


@pytest.mark.parametrize("key", ["llama", ".inferplane", "t"])
def test_a_bare_prefix_is_never_granted(key: str) -> None:
    message = (
        f"a storage grant names a folder ending in '/' (or '' for a whole bucket), not {key!r}, "
        "which as a prefix would also match its siblings"
    )
    with pytest.raises(ValueError) as read:
        identity.s3_read_statements([("models", "team/"), ("models", key)])
    with pytest.raises(ValueError) as write:
        identity.s3_write_statement("models", key)
    assert str(read.value) == str(write.value) == message


def test_reader_is_scoped_to_the_sources_under_the_store_prefix_and_outside_it(
    staging_prefixed: Environment,
) -> None:
    policies = role_policies(cloud_recording(staging_prefixed))
    reader = policies["support-assistant-staging-model-reader-policy"]["Statement"]
    keys = [
        *(f"team/models/{area}support-assistant/*" for area in AREAS),  # chat: its staged copy
        "team/models/reranker/*",
        "team/models/embedder/*",
    ]
    assert reader == [
        {
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": [
                *(f"arn:aws:s3:::acme-models-use1/{k}" for k in keys),
                "arn:aws:s3:::shared-models/toxicity/v3/*",
            ],
        },
        {
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": "arn:aws:s3:::acme-models-use1",
            "Condition": {"StringLike": {"s3:prefix": keys}},
        },
        {
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": "arn:aws:s3:::shared-models",
            "Condition": {"StringLike": {"s3:prefix": ["toxicity/v3/*"]}},
        },
    ]
    actions = {
        a for s in reader for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    }
    assert actions == {"s3:GetObject", "s3:ListBucket"}


def test_builder_writes_only_under_the_engine_prefix(staging_prefixed: Environment) -> None:
    policies = role_policies(cloud_recording(staging_prefixed))
    builder = policies["support-assistant-staging-engine-builder-policy"]["Statement"]
    reader = policies["support-assistant-staging-model-reader-policy"]["Statement"]
    writes = [s for s in builder if s not in reader]
    assert writes == [
        {
            "Effect": "Allow",
            "Action": ["s3:PutObject", "s3:AbortMultipartUpload"],
            "Resource": "arn:aws:s3:::acme-models-use1/team/models/.inferplane/engines/"
            "support-assistant/*",
        }
    ]
    assert [s for s in builder if s in reader] == reader


def test_compiler_writes_only_under_the_compile_prefix(staging_prefixed: Environment) -> None:
    """The compile-cache Jobs' role: the reader's reads (weights, the cache's marker) and
    writes under ``.inferplane/vllm-compile/`` only."""
    policies = role_policies(cloud_recording(staging_prefixed))
    compiler = policies["support-assistant-staging-vllm-compiler-policy"]["Statement"]
    reader = policies["support-assistant-staging-model-reader-policy"]["Statement"]
    assert [s for s in compiler if s not in reader] == [
        {
            "Effect": "Allow",
            "Action": ["s3:PutObject", "s3:AbortMultipartUpload"],
            "Resource": "arn:aws:s3:::acme-models-use1/team/models/.inferplane/vllm-compile/"
            "support-assistant/*",
        }
    ]
    assert [s for s in compiler if s in reader] == reader


def test_gcp_compiler_creates_objects_under_the_compile_prefix_only(prod: Environment) -> None:
    members = bucket_members(cloud_recording(prod))
    mine = {n: m for n, m in members.items() if "-vllm-compiler-" in n}
    write = mine["support-assistant-prod-vllm-compiler-write-compile"]
    assert write["role"] == "roles/storage.objectCreator"
    assert write["condition"]["expression"] == (
        "resource.name.startsWith("
        '"projects/_/buckets/acme-models-usc1/objects/.inferplane/vllm-compile/support-assistant/")'
    )
    others = [m["role"] for m in mine.values() if m is not write]
    assert others and set(others) == {"roles/storage.objectViewer"}


def test_stager_reads_and_writes_only_the_hub_prefix(staging_prefixed: Environment) -> None:
    """The staging Jobs' role: nothing of the store beyond ``.inferplane/hub/`` (the marker
    is read there, ``aws s3 sync`` lists it, the copy is written there)."""
    policies = role_policies(cloud_recording(staging_prefixed))
    stager = policies["support-assistant-staging-weights-stager-policy"]["Statement"]
    hub = "team/models/.inferplane/hub/support-assistant/"
    assert stager == [
        {
            "Effect": "Allow",
            "Action": "s3:GetObject",
            "Resource": f"arn:aws:s3:::acme-models-use1/{hub}*",
        },
        {
            "Effect": "Allow",
            "Action": "s3:ListBucket",
            "Resource": "arn:aws:s3:::acme-models-use1",
            "Condition": {"StringLike": {"s3:prefix": [f"{hub}*"]}},
        },
        {
            "Effect": "Allow",
            "Action": ["s3:PutObject", "s3:AbortMultipartUpload"],
            "Resource": f"arn:aws:s3:::acme-models-use1/{hub}*",
        },
    ]


@pytest.mark.parametrize(
    "sa",
    [
        naming.MODEL_READER_SA,
        naming.ENGINE_BUILDER_SA,
        naming.WEIGHTS_STAGER_SA,
        naming.VLLM_COMPILER_SA,
    ],
)
def test_aws_service_accounts_carry_their_role(staging_hub: Environment, sa: str) -> None:
    rec = cloud_recording(staging_hub)
    account = service_accounts(rec)[sa]
    assert account["metadata"]["namespace"] == NAMESPACE
    arn = account["metadata"]["annotations"]["eks.amazonaws.com/role-arn"]
    # The role Pulumi named after the resource (name plus a random suffix).
    assert re.fullmatch(rf"arn:aws:iam::\d{{12}}:role/support-assistant-staging-{sa}-\w+", arn)
    assert account["automountServiceAccountToken"] is False
    (k8s_provider,) = rec.of_type("pulumi:providers:kubernetes")
    sa_resource = next(
        r for r in rec.of_type("kubernetes:core/v1:ServiceAccount") if r.inputs is account
    )
    assert sa_resource.provider == k8s_provider.urn


# --- GCP ---------------------------------------------------------------------------------------
def bucket_members(rec: Recording) -> dict[str, dict[str, Any]]:
    return {r.name: r.inputs for r in rec.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")}


def test_gcp_reader_views_its_sources_and_areas_only(prod_prefixed: Environment) -> None:
    members = bucket_members(cloud_recording(prod_prefixed))
    readers = {
        n: m
        for n, m in members.items()
        if n.startswith("support-assistant-prod-model-reader-read-")
    }
    member = "serviceAccount:support-assistant-prod-reader@acme-ml-prod.iam.gserviceaccount.com"
    prefixes = [f"team/models/{area}support-assistant/" for area in AREAS] + [
        naming.source_folder(m.source.key, file=m.backend is not None)
        for m in prod_prefixed.models.values()
        if m.source.key is not None
    ]
    got = []
    for reader in readers.values():
        assert reader["bucket"] == "acme-models-usc1"
        assert reader["role"] == "roles/storage.objectViewer"
        assert reader["member"] == member
        expression = reader["condition"]["expression"]
        prefix = next(
            p for p in prefixes if expression == gcs_read_condition("acme-models-usc1", p)
        )
        assert f'objectListPrefix", "").startsWith("{prefix}")' in expression
        got.append(prefix)
    assert sorted(got) == sorted(dict.fromkeys(prefixes))
    assert "team/models/" not in got  # never the whole store
    assert not [
        m
        for m in members.values()
        if m["role"] != "roles/storage.objectViewer" and m["member"] == member
    ]


def test_gcp_builder_creates_objects_only_under_the_engine_prefix(
    prod_prefixed: Environment,
) -> None:
    members = bucket_members(cloud_recording(prod_prefixed))
    write = members["support-assistant-prod-engine-builder-write-engines"]
    assert write["role"] == "roles/storage.objectCreator"
    assert write["condition"]["expression"] == (
        "resource.name.startsWith("
        '"projects/_/buckets/acme-models-usc1/objects/team/models/.inferplane/engines/support-assistant/")'
    )
    assert members["support-assistant-prod-engine-builder-read-0"]["role"] == (
        "roles/storage.objectViewer"
    )


def test_gcp_stager_reads_and_creates_only_under_the_hub_prefix(
    prod_prefixed: Environment,
) -> None:
    members = bucket_members(cloud_recording(prod_prefixed))
    prefix = (
        "projects/_/buckets/acme-models-usc1/objects/team/models/.inferplane/hub/support-assistant/"
    )
    write = members["support-assistant-prod-weights-stager-write-hub"]
    assert write["role"] == "roles/storage.objectCreator"
    assert write["condition"]["expression"] == f'resource.name.startsWith("{prefix}")'
    read = members["support-assistant-prod-weights-stager-read-0"]
    assert read["role"] == "roles/storage.objectViewer"
    assert read["condition"]["expression"].startswith(f'resource.name.startsWith("{prefix}")')
    stager = [m for n, m in members.items() if n.startswith("support-assistant-prod-weights")]
    assert len(stager) == 2  # one read, one write: nothing else of the store


def test_gcp_store_without_prefix_is_still_read_per_source(prod: Environment) -> None:
    """A store at the bucket's root is not read bucket-wide either: every read grant has
    its condition."""
    members = bucket_members(cloud_recording(prod))
    reads = [m for n, m in members.items() if "-model-reader-read-" in n]
    assert reads and all("condition" in m for m in reads)
    assert (
        members["support-assistant-prod-engine-builder-write-engines"]["condition"]["expression"]
        == "resource.name.startsWith("
        '"projects/_/buckets/acme-models-usc1/objects/.inferplane/engines/support-assistant/")'
    )


@pytest.mark.parametrize(
    ("sa", "account"),
    [
        (naming.MODEL_READER_SA, "reader"),
        (naming.ENGINE_BUILDER_SA, "builder"),
        (naming.WEIGHTS_STAGER_SA, "stager"),
        (naming.VLLM_COMPILER_SA, "compiler"),
    ],
)
def test_workload_identity_binds_each_service_account(
    prod_hub: Environment, sa: str, account: str
) -> None:
    rec = cloud_recording(prod_hub)
    # Longer than 30 characters, an id is shortened with a hash (`gcp_account_id`).
    account_id = gcp_account_id("support-assistant-prod", account)
    email = f"{account_id}@acme-ml-prod.iam.gserviceaccount.com"
    bindings = {r.name: r.inputs for r in rec.of_type("gcp:serviceaccount/iAMMember:IAMMember")}
    binding = bindings[f"support-assistant-prod-{sa}-workload-identity"]
    assert binding["role"] == "roles/iam.workloadIdentityUser"
    assert binding["member"] == f"serviceAccount:acme-ml-prod.svc.id.goog[{NAMESPACE}/{sa}]"
    assert binding["serviceAccountId"].endswith(f"/serviceAccounts/{email}")
    annotations = service_accounts(rec)[sa]["metadata"]["annotations"]
    assert annotations == {"iam.gke.io/gcp-service-account": email}


@pytest.mark.parametrize(
    "location", [identity.engine_location, identity.hub_location, identity.compile_location]
)
def test_blueprints_sharing_a_store_write_disjoint_prefixes(location: Any) -> None:
    """Writers are scoped to their own blueprint: `team-a` may write nothing of `team-a2`
    (whose name it prefixes) and nothing outside its area, on S3 and on GCS alike."""
    bucket, mine = location("models", "team/", "team-a")
    _, theirs = location("models", "team/", "team-a2")
    assert mine.endswith("/team-a/") and theirs.endswith("/team-a2/")
    assert not theirs.startswith(mine) and not mine.startswith(theirs)
    statement = identity.s3_write_statement(bucket, mine)
    assert statement["Resource"] == f"arn:aws:s3:::models/{mine}*"
    assert not fnmatch.fnmatchcase(f"models/{theirs}x", statement["Resource"].split(":::")[1])
    condition = gcs_write_condition(bucket, mine)
    assert allowed(condition, name=obj("models", f"{mine}chat/key/file"))
    assert not allowed(condition, name=obj("models", f"{theirs}chat/key/file"))


# --- only the identities a blueprint uses ---------------------------------------------------------
def only(env: Environment, *models: str) -> Environment:
    return dataclasses.replace(env, models={m: env.models[m] for m in models})


@pytest.mark.parametrize(
    ("models", "roles"),
    [
        # The reference: TensorRT builds and vLLM compile caches, no hf:// source.
        (
            ("chat", "ranker", "toxicity", "nightly-embed"),
            {naming.MODEL_READER_SA, naming.ENGINE_BUILDER_SA, naming.VLLM_COMPILER_SA},
        ),
        # Triton with TensorRT engines only: the builder may write, nothing else.
        (("ranker", "toxicity"), {naming.MODEL_READER_SA, naming.ENGINE_BUILDER_SA}),
        # vLLM from the store: its compile cache, no engine builder.
        (("chat",), {naming.MODEL_READER_SA, naming.VLLM_COMPILER_SA}),
    ],
    ids=["reference", "triton-only", "vllm-only"],
)
def test_a_blueprint_gets_only_the_identities_it_uses(
    staging: Environment, prod: Environment, models: tuple[str, ...], roles: set[str]
) -> None:
    aws = cloud_recording(only(staging, *models))
    names = {r.name for r in aws.of_type("aws:iam/role:Role")}
    stores = {
        f"support-assistant-staging-{sa}" for sa in (*identity.WRITERS, naming.MODEL_READER_SA)
    }
    assert names & stores == {f"support-assistant-staging-{sa}" for sa in roles}
    assert set(service_accounts(aws)) == roles
    gcp = cloud_recording(only(prod, *models))
    accounts = {r.name for r in gcp.of_type("gcp:serviceaccount/account:Account")}
    accounts.discard("support-assistant-prod-nodes")  # the GPU nodes' own account
    assert accounts == {f"support-assistant-prod-{sa}" for sa in roles}
    assert set(service_accounts(gcp)) == roles
