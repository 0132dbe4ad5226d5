"""hf:// sources are staged into the model store by one Job per repository and revision;
serving pods copy the staged copy and never talk to the hub or hold its token."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pod_security import ints, violations
from serving_fixtures import (
    DEPLOYMENT,
    JOB,
    NETWORK_POLICY,
    SECRET,
    container,
    job_program,
    k8s_object,
    pod_spec,
    serve,
    with_model,
)
from test_k8s_validate import core_objects, invalid

from inferplane.app.offline import SECRET as SECRET_VALUE
from inferplane.app.offline import Recording
from inferplane.blueprint import naming
from inferplane.blueprint.errors import BlueprintError
from inferplane.blueprint.loading.loader import load
from inferplane.blueprint.model import (
    Environment,
    Lora,
    LoraAdapter,
    ModelSource,
    Speculative,
    VllmSettings,
)
from inferplane.blueprint.resolution.resolve import resolve_file
from inferplane.components.serving.spec import ServingArgsError
from inferplane.components.serving.spec_parts import model_source
from inferplane.components.serving.store.store_cli import ATTEMPT_ENV, ATTEMPT_MARKER
from inferplane.components.serving.store.weights import HubSource, staged_uri
from inferplane.components.stack_serving import served_model, serving_environment

ROOT = Path(__file__).resolve().parents[3]
REPO, REVISION = "Qwen/Qwen2.5-7B-Instruct", "a09a35458c702b33eeacc393d103063234e8bc28"
HF = ModelSource(f"hf://{REPO}@{REVISION}", "hf", None, None, hf_repo=REPO, hf_revision=REVISION)
SOURCE = HubSource(REPO, REVISION)


def _twins(env: Environment) -> Environment:
    """`env` with chat on hf:// and a second vLLM model, chat-b, on the same repo@revision."""
    env = with_model(env, "chat", source=HF)
    chat = env.models["chat"]
    twin = dataclasses.replace(chat, name="chat-b")
    return dataclasses.replace(env, models={**env.models, "chat-b": twin})


@pytest.fixture(scope="session")
def twins(staging: Environment) -> Recording:
    return serve(_twins(staging), ["chat", "chat-b"])


def staging_jobs(rec: Recording) -> list[Any]:
    return [
        j
        for j in rec.of_type(JOB)
        if j.get("metadata", "labels", "app.kubernetes.io/component") == "weights-staging"
    ]


def test_one_job_for_two_models_with_the_same_repo_and_revision(twins: Recording) -> None:
    (job,) = staging_jobs(twins)
    assert job.get("metadata", "name") == SOURCE.job_name
    annotations = job.get("metadata", "annotations")
    assert annotations["inferplane.dev/hf-revision"] == REVISION
    assert annotations["inferplane.dev/used-by"] == "chat,chat-b"
    for model in ("chat", "chat-b"):
        deployment = k8s_object(twins, DEPLOYMENT, model)
        # Pods start only once the copy is complete.
        assert job.urn in deployment.depends_on


def test_distinct_revisions_get_distinct_jobs(staging: Environment) -> None:
    env = _twins(staging)
    other = dataclasses.replace(HF, uri=f"hf://{REPO}@v2", hf_revision="v2")
    env = with_model(env, "chat-b", source=other)
    names = {j.get("metadata", "name") for j in staging_jobs(serve(env, ["chat", "chat-b"]))}
    assert names == {SOURCE.job_name, HubSource(REPO, "v2").job_name}


def test_staging_job_alone_holds_the_token_and_downloads_the_pinned_revision(
    twins: Recording, staging: Environment
) -> None:
    (job,) = staging_jobs(twins)
    pod = pod_spec(job)
    assert pod["serviceAccountName"] == naming.WEIGHTS_STAGER_SA
    assert pod["restartPolicy"] == "Never"
    download = container(job, "download", init=True)
    assert download["image"] == "vllm/vllm-openai:v0.33.0"
    env = {e["name"]: e.get("value") for e in download["env"]}
    assert env["HF_REPO"] == REPO and env["HF_REVISION"] == REVISION
    assert env["HF_TOKEN_PATH"] == "/var/run/secrets/inferplane/hf_token"
    script = download["command"][2]
    assert "python3 /opt/inferplane/jobs/hub_download.py " in script
    assert "snapshot_download" in job_program(twins, job, "download", "hub_download")
    # Blueprint text only as quoted variables, never spliced into the script.
    assert '"$HF_REPO" "$HF_REVISION" "/build/snapshot"' in script and REPO not in script
    (volume,) = [v for v in pod["volumes"] if "secret" in v]
    assert volume["secret"]["secretName"] == f"{SOURCE.job_name}-hub-token"
    secret = k8s_object(twins, SECRET, f"{SOURCE.job_name}-hub-token")
    assert secret.get("stringData") == {"hf_token": SECRET_VALUE}
    assert secret.urn in job.depends_on
    # Only the download container mounts it.
    mounting = [
        c["name"]
        for c in [*pod["initContainers"], *pod["containers"]]
        if any(m["name"] == volume["name"] for m in c["volumeMounts"])
    ]
    assert mounting == ["download"]


def test_staging_is_skipped_when_the_marker_is_there_and_writes_it_last(
    twins: Recording, staging: Environment
) -> None:
    (job,) = staging_jobs(twins)
    staged = staged_uri(serving_environment(staging), SOURCE)
    assert staged == f"{staging.model_store}.inferplane/hub/support-assistant/{REPO}/{REVISION}/"
    check = container(job, "check-staged", init=True)
    assert {"name": "STAGED_URI", "value": staged} in check["env"]
    assert "aws s3api head-object" in check["command"][2]
    assert f'"${{STAGED_URI}}{ATTEMPT_MARKER}"' in check["command"][2]
    upload = container(job, "upload")
    assert ATTEMPT_ENV in upload["env"]
    # Into this attempt's own folder, then the marker naming it: a half-uploaded copy never
    # counts as staged, and a retry never overwrites (run in test_store_attempts).
    assert upload["command"][2].splitlines() == [
        "set -eu",
        "if [ -f /build/already-staged ]; then exit 0; fi",
        'attempt="attempt-$POD_UID"',
        'ATTEMPT_URI="${STAGED_URI}$attempt/"',
        'aws s3 sync --only-show-errors "/build/snapshot" "$ATTEMPT_URI"',
        'printf "%s\\n" "$attempt" > "/build/inferplane-complete-attempt"',
        'if ! aws s3 cp --only-show-errors "/build/inferplane-complete-attempt" '
        '"${STAGED_URI}inferplane-complete-attempt"; then',
        '  if ( u="${STAGED_URI}inferplane-complete-attempt"; u="${u#s3://}"; '
        'aws s3api head-object --bucket "${u%%/*}" --key "${u#*/}" >/dev/null 2>&1 ); then',
        '    echo "staged copy already published at $STAGED_URI by another attempt"',
        "    exit 0",
        "  fi",
        "  exit 1",
        "fi",
        'echo "staged copy published at $ATTEMPT_URI"',
    ]


def test_gcs_upload_never_overwrites(prod: Environment) -> None:
    rec = serve(with_model(prod, "chat", source=HF), ["chat"])
    (job,) = staging_jobs(rec)
    upload = container(job, "upload")
    lines = upload["command"][2].splitlines()
    # a folder no other attempt writes, and one marker (test_store_attempts runs this)
    assert 'gcloud storage rsync --recursive "/build/snapshot" "$ATTEMPT_URI"' in lines
    assert lines.index('ATTEMPT_URI="${STAGED_URI}$attempt/"') < lines.index(
        'gcloud storage rsync --recursive "/build/snapshot" "$ATTEMPT_URI"'
    )
    assert {"name": "POD_UID", "valueFrom": {"fieldRef": {"fieldPath": "metadata.uid"}}} in (
        upload["env"]
    )
    # parallel composite uploads delete their parts, which an object creator may not
    assert {"name": "CLOUDSDK_STORAGE_PARALLEL_COMPOSITE_UPLOAD_ENABLED", "value": "False"} in (
        upload["env"]
    )


def test_staging_pod_is_restricted_valid_and_isolated(twins: Recording) -> None:
    (job,) = staging_jobs(twins)
    assert violations(ints(pod_spec(job))) == []
    assert invalid([o for o in core_objects(twins) if o.type in (JOB, NETWORK_POLICY)]) == []
    policy = k8s_object(twins, NETWORK_POLICY, SOURCE.job_name).get("spec")
    assert policy["ingress"] == []
    assert policy["podSelector"]["matchLabels"] == job.get("spec", "template", "metadata")["labels"]
    # Never a model's selector: the model's Services and NetworkPolicies do not count it.
    assert job.get("spec", "template", "metadata")["labels"]["app.kubernetes.io/part-of"] != (
        "support-assistant"
    )


def test_a_revision_with_a_slash_is_one_path_segment() -> None:
    path = HubSource("org/name", "refs/pr/../../engines").path
    assert path.startswith("org/name/rev-") and path.count("/") == 2


def test_draft_and_adapters_are_staged_too(staging: Environment) -> None:
    adapter = LoraAdapter(
        "tone", ModelSource("hf://a/tone@v1", "hf", None, None, hf_repo="a/tone", hf_revision="v1")
    )
    settings = VllmSettings(
        speculative=Speculative("eagle3", 3, draft_repo="a/draft", draft_revision="main"),
        lora=Lora((adapter,), 1, None),
    )
    rec = serve(with_model(staging, "chat", source=HF, vllm=settings), ["chat"])
    names = {j.get("metadata", "name") for j in staging_jobs(rec)}
    expected = [SOURCE, HubSource("a/draft", "main"), HubSource("a/tone", "v1")]
    assert names == {s.job_name for s in expected}
    deployment = k8s_object(rec, DEPLOYMENT, "chat")
    for job in staging_jobs(rec):
        assert job.urn in deployment.depends_on


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"source": model_source("hf://Qwen/Qwen2.5-7B-Instruct")}, "source"),
        (
            {
                "vllm": VllmSettings(
                    speculative=Speculative("eagle3", 3, draft_repo="a/draft", draft_revision=None)
                )
            },
            "vllm.speculative.draft_model",
        ),
    ],
)
def test_unpinned_hf_is_refused_by_the_component_args(
    staging: Environment, changes: dict[str, Any], field: str
) -> None:
    chat = served_model(staging, staging.models["chat"])
    with pytest.raises(ServingArgsError) as err:
        dataclasses.replace(chat, **changes)  # the args written by hand, no blueprint
    shown = "hf://Qwen/Qwen2.5-7B-Instruct" if field == "source" else "hf://a/draft"
    assert str(err.value) == (
        f"model 'chat': {field}: {shown} has no revision; hf:// weights are staged into the "
        "model store keyed by repository and revision; pin it: hf://org/name@<commit SHA> "
        "(a tag or branch is staged once, never refreshed)"
    )


def test_unpinned_hf_from_a_blueprint_is_located(staging: Environment) -> None:
    env = with_model(staging, "chat", source=model_source("hf://Qwen/Qwen2.5-7B-Instruct"))
    with pytest.raises(BlueprintError) as err:
        serve(env, ["chat"])
    [diag] = err.value.diagnostics
    assert diag.path == ("models", "chat", "source")
    assert str(diag).endswith(
        "error: models.chat.source: hf://Qwen/Qwen2.5-7B-Instruct has no revision; hf:// "
        "weights are staged into the model store keyed by repository and revision; pin it: "
        "hf://org/name@<commit SHA> (a tag or branch is staged once, never refreshed)"
    )


# --- every blueprint: no serving pod of an hf:// model talks to the hub -----------------------
CASES = [
    (path, env)
    for path in [
        *sorted((ROOT / "blueprints").glob("*.yaml")),
        *sorted((ROOT / "tests" / "policies" / "fixtures").glob("golden*.yaml")),
    ]
    for env in load(path).data["environments"]
]


def _hub_free(manifest: Any) -> list[str]:
    """What in a serving pod's containers would reach the hub: a token, an hf:// value."""
    problems = []
    for c in [*manifest.get("initContainers", []), *manifest["containers"]]:
        text = json.dumps([c.get("args", []), c.get("command", []), c.get("env", [])])
        if "hf://" in text:
            problems.append(f"{c['name']}: an hf:// value")
        for e in c.get("env", []):
            if e["name"].startswith(("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")):
                problems.append(f"{c['name']}: {e['name']}")
    for v in manifest["volumes"]:
        if "secret" in v and "hf_token" in json.dumps(v):
            problems.append(f"volume {v['name']} holds the token")
    return problems


@pytest.mark.parametrize(("path", "env_name"), CASES, ids=lambda v: getattr(v, "name", v))
def test_no_serving_pod_of_any_blueprint_holds_the_token_or_names_the_hub(
    path: Path, env_name: str, served_whole: Callable[[Environment], Recording]
) -> None:
    env = resolve_file(path, env_name)
    rec = served_whole(env)
    hf_models = [m for m in env.models.values() if m.source.scheme == "hf"]
    for model in env.models.values():
        # An llm-aware model runs one Deployment per zone: each is checked.
        deployments = [
            d
            for d in rec.of_type(DEPLOYMENT)
            if d.get("metadata", "labels").get(naming.MODEL_LABEL) == model.name
        ]
        assert deployments, model.name
        for deployment in deployments:
            assert _hub_free(pod_spec(deployment)) == [], model.name
            if model.server == "vllm":
                server = container(deployment, "vllm")
                assert {"name": "HF_HUB_OFFLINE", "value": "1"} in server["env"]
    sources = {HubSource(m.source.hf_repo or "", m.source.hf_revision or "") for m in hf_models}
    jobs = staging_jobs(rec)
    assert {j.get("metadata", "name") for j in jobs} >= {s.job_name for s in sources}
    for job in jobs:
        download = container(job, "download", init=True)
        tokens = [e for e in download["env"] if e["name"] == "HF_TOKEN_PATH"]
        owners = [m for m in hf_models if any(s.name == "hf_token" for s in m.secrets)]
        if owners:
            assert tokens, job.get("metadata", "name")
