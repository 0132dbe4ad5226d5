"""Python steps' requirements: staged once per key by a Job into the hub area of the store,
installed by the serving pod from the store copy alone, on the stub's PYTHONPATH."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from serving_fixtures import DEPLOYMENT, JOB, args_of, container, k8s_object, pod_spec, serve

from inferplane.blueprint import naming
from inferplane.blueprint.loading.loader import load
from inferplane.blueprint.model import Environment
from inferplane.blueprint.resolution.resolve import resolve
from inferplane.components.serving.serving_pod import server_image
from inferplane.components.serving.store import pip_requirements, requirements_job
from inferplane.components.stack_args import store_writers

ROOT = Path(__file__).resolve().parents[3]
TOKENIZERS = (
    "tokenizers==0.21.1 "
    "--hash=sha256:2dd9a0061e403546f7377df940e866c3e678d7d4e9643d0461ea442b4f89e61a"
)


@pytest.fixture(scope="session")
def speech() -> Environment:
    return resolve(load(ROOT / "blueprints" / "whisper-triton.yaml"), "prod")


def test_the_key_follows_the_image_and_the_list(speech: Environment) -> None:
    env, model = args_of(speech, "speech")
    assert pip_requirements.triton_image(env, model) == server_image(env, model)
    features, decode = pip_requirements.staged_steps(model)
    image = server_image(env, model)
    key = pip_requirements.requirements_key(image, decode)
    assert key == naming.short_hash("pip", image, TOKENIZERS, length=16)
    assert pip_requirements.requirements_key("other:image", decode) != key
    assert pip_requirements.requirements_key(image, features) != key
    assert pip_requirements.staged_uri(env, model, key) == (
        f"gs://example-speech-models/.inferplane/hub/whisper-triton/.pip/{key}/"
    )
    assert pip_requirements.python_path(model) == (
        "/home/inferplane/python/features:/home/inferplane/python/decode"
    )


def test_a_staging_job_per_key_writes_only_its_prefix(speech: Environment) -> None:
    rec = serve(speech, ["speech"])
    env, model = args_of(speech, "speech")
    image = server_image(env, model)
    keys = [
        pip_requirements.requirements_key(image, s) for s in pip_requirements.staged_steps(model)
    ]
    jobs = {r.get("metadata", "name") for r in rec.of_type(JOB)}
    assert jobs == {f"speech-pip-{k[:10]}" for k in keys}
    job = k8s_object(rec, JOB, f"speech-pip-{keys[1][:10]}")
    spec = pod_spec(job)
    assert spec["serviceAccountName"] == naming.WEIGHTS_STAGER_SA
    download = container(job, "download", init=True)
    assert download["image"] == "nvcr.io/nvidia/tritonserver:26.02-py3"
    assert {e["name"]: e.get("value") for e in download["env"]}["REQUIREMENTS"] == TOKENIZERS
    assert download["command"][2].endswith(
        'python3 /opt/inferplane/jobs/pip_stage.py download "/build/wheels"'
    )
    upload = container(job, "upload")
    staged = {e["name"]: e.get("value") for e in upload["env"]}["STAGED_URI"]
    assert staged == pip_requirements.staged_uri(env, model, keys[1])
    assert "aws" not in upload["command"][2]  # GCS: gcloud
    assert 'gcloud storage rsync --recursive "/build/wheels" "$ATTEMPT_URI"' in upload["command"][2]


def test_the_serving_pod_installs_from_the_store_copy(speech: Environment) -> None:
    rec = serve(speech, ["speech"])
    deployment = k8s_object(rec, DEPLOYMENT, "speech")
    names = [c["name"] for c in pod_spec(deployment)["initContainers"]]
    assert names == ["fetch-model", "install-requirements"]
    fetch = container(deployment, "fetch-model", init=True)["command"][2]
    assert fetch.endswith(
        'gcloud storage rsync --recursive "$ATTEMPT_URI" "/home/inferplane/wheels/decode"'
    )
    install = container(deployment, "install-requirements", init=True)
    assert install["command"][2] == (
        "set -eu\n"
        'REQUIREMENTS="$STEP_0_REQUIREMENTS" python3 /opt/inferplane/jobs/pip_stage.py install '
        '"/home/inferplane/wheels/features" "/home/inferplane/python/features"\n'
        'REQUIREMENTS="$STEP_1_REQUIREMENTS" python3 /opt/inferplane/jobs/pip_stage.py install '
        '"/home/inferplane/wheels/decode" "/home/inferplane/python/decode"'
    )
    triton = container(deployment, "triton")
    assert {"name": "PYTHONPATH", "value": pip_requirements.python_path(
        args_of(speech, "speech")[1])} in triton["env"]  # fmt: skip


def test_the_serving_pod_installs_the_blueprints_lines_not_the_stores(
    speech: Environment,
) -> None:
    """The lines the install reads are the blueprint's, the same that key the staged
    folder, set in the pod spec: a line added to the store's ``requirements.txt`` reaches
    nothing."""
    env, model = args_of(speech, "speech")
    features, decode = pip_requirements.staged_steps(model)
    install = pip_requirements.install_container(env, model)
    values = {e["name"]: e.get("value") for e in install["env"]}
    assert values["STEP_0_REQUIREMENTS"] == "\n".join(features.requirements)
    assert values["STEP_1_REQUIREMENTS"] == TOKENIZERS
    assert "requirements.txt" not in install["command"][2]
    key = pip_requirements.requirements_key(pip_requirements.staging_image(env), decode)
    assert key == naming.short_hash(
        "pip", pip_requirements.staging_image(env), *values["STEP_1_REQUIREMENTS"].split("\n"),
        length=16,
    )  # fmt: skip


def test_requirements_need_the_weights_stager(speech: Environment) -> None:
    assert naming.WEIGHTS_STAGER_SA in store_writers(speech)


def test_a_model_without_requirements_stages_nothing(speech: Environment) -> None:
    env, model = args_of(speech, "speech")
    assert requirements_job.unique_steps(env, model)
    assert model.pipeline is not None
    bare = dataclasses.replace(
        model,
        pipeline=dataclasses.replace(
            model.pipeline,
            steps=tuple(dataclasses.replace(s, requirements=()) for s in model.pipeline.steps),
        ),
    )
    assert pip_requirements.staged_steps(bare) == ()
    assert pip_requirements.python_path(bare) == ""


def test_the_write_identity_runs_only_the_pinned_image(speech: Environment) -> None:
    """A model's own image never runs in the staging pod, which holds the store's write
    identity: the wheels are downloaded in the pinned Triton image of the release (validate
    refuses requirements on a model with its own image)."""
    env, model = args_of(speech, "speech")
    pinned = pip_requirements.staging_image(env)
    assert pinned == server_image(env, model)
    own = dataclasses.replace(model, image="registry.example/own/triton:1")
    step = pip_requirements.staged_steps(own)[0]
    spec = requirements_job.pod_spec(env, own, step)
    images = {c["name"]: c["image"] for c in spec["initContainers"] + spec["containers"]}
    assert own.image not in images.values()
    assert pinned in images.values()
    key = pip_requirements.requirements_key(pinned, step)
    assert pip_requirements.fetch_env(env, own)[0]["value"].endswith(f"/.pip/{key}/")
