"""Secrets reach the server as environment variables; the Hugging Face token, read as a
file (HF_TOKEN_PATH), reaches only the Job that stages hf:// weights, never a server."""

from __future__ import annotations

import dataclasses

import pytest
from serving_fixtures import (
    DEPLOYMENT,
    SECRET,
    container,
    k8s_object,
    pod_spec,
    serve,
    with_model,
)
from test_weights import CASES, staging_jobs

from inferplane.blueprint.errors import BlueprintError
from inferplane.blueprint.model import SecretRef
from inferplane.blueprint.resolution.resolve import resolve_file
from inferplane.blueprint.secret_refs import TOKEN_NAMES, env_var_name
from inferplane.components.serving.store.weights_job import TOKEN_KEY, TOKEN_OF_ANNOTATION


def _secrets(env, *names: str):
    refs = tuple(
        SecretRef(name=n, path=("models", "chat", "secrets", n), from_pulumi_config=n)
        for n in names
    )
    return with_model(env, "chat", secrets=refs)


def test_token_never_reaches_the_server_and_other_secrets_stay_variables(staging):
    rec = serve(_secrets(staging, "hf_token", "vllm_api_key"), ["chat"])
    d = k8s_object(rec, DEPLOYMENT, "chat")
    env = container(d, "vllm")["env"]
    # vLLM reads its API key from the environment only
    assert {
        "name": "VLLM_API_KEY",
        "valueFrom": {"secretKeyRef": {"name": "chat-secrets", "key": "vllm_api_key"}},
    } in env
    assert not any(e["name"].startswith("HF_TOKEN") for e in env)
    assert all(v["name"] != "secrets" for v in pod_spec(d)["volumes"])


def test_no_volume_without_a_file_secret(staging):
    rec = serve(_secrets(staging, "vllm_api_key"), ["chat"])
    d = k8s_object(rec, DEPLOYMENT, "chat")
    assert all(v["name"] != "secrets" for v in pod_spec(d)["volumes"])
    assert all(m["name"] != "secrets" for m in container(d, "vllm")["volumeMounts"])


def test_two_secrets_for_one_variable_are_an_error(reference_blueprint, tmp_path, staging):
    text = reference_blueprint.read_text()
    line = "      hf_token: {from_env: HF_TOKEN}"
    assert line in text
    changed = tmp_path / "support-assistant.yaml"
    changed.write_text(
        text.replace(line, line + "\n      hugging_face_hub_token: {from_env: HF_TOKEN}")
    )
    # validate refuses it first ...
    with pytest.raises(BlueprintError) as err:
        resolve_file(changed, "staging")
    [diag] = err.value.diagnostics
    assert str(diag).endswith(
        "error: models.chat.secrets.hugging_face_hub_token: secrets 'hf_token' and "
        "'hugging_face_hub_token' both set environment variable HF_TOKEN_PATH in the model's "
        "container; keep one of them"
    )
    # ... and the component refuses it too, for arguments written by hand.
    chat = staging.models["chat"]
    second = dataclasses.replace(
        chat.secrets[0],
        name="hugging_face_hub_token",
        path=("models", "chat", "secrets", "hugging_face_hub_token"),
    )
    env = with_model(staging, "chat", secrets=(*chat.secrets, second))
    with pytest.raises(BlueprintError) as err:
        serve(env, ["chat"])
    [diag] = err.value.diagnostics
    # The added secret is not in the file: the diagnostic points at the nearest written value.
    assert diag.path == ("models", "chat", "secrets")
    assert str(diag).endswith(
        "error: models.chat.secrets: secrets 'hf_token' and 'hugging_face_hub_token' both set "
        "environment variable HF_TOKEN_PATH; keep one of them"
    )


@pytest.mark.parametrize(("path", "env_name"), CASES, ids=lambda v: getattr(v, "name", v))
def test_only_staging_job_secrets_hold_the_hub_token(path, env_name, served_whole):
    """Over every blueprint: a Secret holding a Hub token is a staging Job's own, one for
    each staging Job that reads one; a model's Secret holds only its other secrets."""
    env = resolve_file(path, env_name)
    rec = served_whole(env)
    tokens = {TOKEN_KEY} | {
        ref.name
        for model in env.models.values()
        for ref in model.secrets
        if env_var_name(ref.name) in TOKEN_NAMES
    }
    holders = []
    for secret in rec.of_type(SECRET):
        keys = {*(secret.get("stringData") or {}), *(secret.get("data") or {})}
        if keys & tokens:
            assert secret.get("metadata", "annotations", TOKEN_OF_ANNOTATION), secret.name
            holders.append(secret.get("metadata", "name"))
    reading = [
        job.get("metadata", "name")
        for job in staging_jobs(rec)
        if "secret" in str(pod_spec(job)["volumes"])
    ]
    assert sorted(holders) == sorted(f"{job}-hub-token" for job in reading)
    hf_with_token = [
        m
        for m in env.models.values()
        if m.source.scheme == "hf" and any(env_var_name(r.name) in TOKEN_NAMES for r in m.secrets)
    ]
    assert bool(holders) == bool(hf_with_token)
    for model in env.models.values():
        model_secret = f"{model.name}-secrets"
        assert model_secret not in holders
        served = [r.name for r in model.secrets if env_var_name(r.name) not in TOKEN_NAMES]
        found = [r for r in rec.of_type(SECRET) if r.get("metadata", "name") == model_secret]
        # A model's Secret exists only for the secrets its server reads.
        assert [sorted(r.get("stringData")) for r in found] == ([sorted(served)] if served else [])
