"""Secrets reach the server as environment variables; the Hugging Face token, read as a
file (HF_TOKEN_PATH), reaches only the Job that stages hf:// weights, never a server."""

from __future__ import annotations

import dataclasses

import pytest
from serving_fixtures import DEPLOYMENT, container, k8s_object, pod_spec, serve, with_model

from inferplane.blueprint.errors import BlueprintError
from inferplane.blueprint.model import SecretRef
from inferplane.blueprint.resolve import resolve_file


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
