"""Where a pipeline's Python-step requirements live, and how a serving pod installs them.

A Python step (`triton_model.PipelineStep`) runs ``model.py`` on Triton's Python backend
with the image's own Python (python_backend r25.08 ``README.md``: a model without
``EXECUTION_ENV_PATH`` runs in the stub's interpreter, the image's ``python3``; server
r25.08 ``build.py`` installs it, with pip and ``numpy<2``, on the ``ubuntu:24.04`` base).
Its ``requirements`` (each ``name==version --hash=sha256:...``) are:

1. downloaded once per *requirements key* — the serving image and the requirements, so
   the wheels are the ones that image's Python takes — by the staging Job of
   `requirements_job`, into

       <model_store>/.inferplane/hub/<blueprint>/.pip/<key>/attempt-<uid>/

   (the hub area, which only the ``weights-stager`` identity may write, as it writes
   ``hf://`` weights; ``.pip`` cannot be a Hugging Face organisation, whose names start
   with a letter or digit), published by attempt (`store_cli.publish_attempt`);
2. copied by the serving pod's ``fetch-model`` container into ``$HOME/wheels/<step>/``
   (`fetch_lines`), then installed by ``install-requirements`` (the Triton image,
   `jobs.pip_stage` ``install``: the blueprint's own lines, ``--no-index``, hashes
   required; never the ``requirements.txt`` of the store copy) into
   ``$HOME/python/<step>/``, which ``PYTHONPATH`` puts on the stub's path: without
   ``EXECUTION_ENV_PATH`` the backend starts the stub with ``execv``, which keeps the
   server's environment (python_backend r25.08 ``src/stub_launcher.cc``).

Validation refuses two steps of one model that pin one package at different versions:
every step reads the same ``PYTHONPATH``.
"""

from __future__ import annotations

from typing import Final

from inferplane.blueprint import defaults, naming
from inferplane.blueprint.triton_model import PipelineStep
from inferplane.components.serving.containers import (
    HOME,
    NO_GPU,
    Manifest,
    container_security_context,
    mount,
    shell,
)
from inferplane.components.serving.spec import ServedModel, ServingArgsError, ServingEnvironment
from inferplane.components.serving.store.store_cli import sync_published
from inferplane.components.serving.store.store_job import program, scripts_mount, scripts_volume

PIP_AREA: Final = ".pip"
WHEELS_DIR: Final = f"{HOME}/wheels"
PYTHON_DIR: Final = f"{HOME}/python"
PROGRAM: Final = "pip_stage"
"""The job program that downloads and installs them (`jobs.pip_stage`)."""


def staged_steps(model: ServedModel) -> tuple[PipelineStep, ...]:
    """The Python steps of `model` that have requirements, in pipeline order."""
    if model.pipeline is None:
        return ()
    return tuple(s for s in model.pipeline.steps if s.backend == "python" and s.requirements)


def triton_image(env: ServingEnvironment, model: ServedModel) -> str:
    """The image a pipeline's Triton runs (`serving_pod.server_image` of a Triton model
    that is no TensorRT-LLM engine): its Python installs the wheels."""
    return model.image or defaults.TRITON_IMAGE.format(release=env.triton_release)


def staging_image(env: ServingEnvironment) -> str:
    """The image the staging Job downloads the wheels in: the pinned Triton image of the
    environment's release, never a blueprint's own `image` (the Job holds the store's
    write identity; validate refuses requirements on a model with its own image, whose
    Python the wheels would not be chosen for)."""
    return defaults.TRITON_IMAGE.format(release=env.triton_release)


def install_container(env: ServingEnvironment, model: ServedModel) -> Manifest:
    """``install-requirements``: each staged step's wheels into ``$HOME/python/<step>``,
    with the serving image's Python and nothing but the copied wheels (`jobs.pip_stage`).

    What it installs is the step's own lines of the blueprint — the ones whose hash keys
    the staged folder — in ``$STEP_<i>_REQUIREMENTS`` of the pod spec, never the
    ``requirements.txt`` of the store copy: whoever can write the store could add a line
    there, and its wheel with it. The lines reach the program as a variable, never as
    script text."""
    steps = staged_steps(model)
    lines = [
        f'REQUIREMENTS="${requirements_variable(i)}" python3 {program(PROGRAM)} install '
        f'"{WHEELS_DIR}/{s.name}" "{PYTHON_DIR}/{s.name}"'
        for i, s in enumerate(steps)
    ]
    requirements = [
        {"name": requirements_variable(i), "value": "\n".join(s.requirements)}
        for i, s in enumerate(steps)
    ]
    return {
        "name": "install-requirements",
        "image": triton_image(env, model),
        "command": shell(*lines),
        "env": [NO_GPU, {"name": "HOME", "value": HOME}, *requirements],
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
        "securityContext": container_security_context(),
        "volumeMounts": [mount("home", HOME), mount("tmp", "/tmp"), scripts_mount()],
    }


def requirements_variable(index: int) -> str:
    """The variable of the install container holding the `index`-th staged step's lines."""
    return f"STEP_{index}_REQUIREMENTS"


def scripts(env: ServingEnvironment, model: ServedModel) -> Manifest:
    """The program's volume in the serving pod: the ConfigMap of the first staging Job."""
    first = requirements_key(staging_image(env), staged_steps(model)[0])
    return scripts_volume(job_name(model, first), [PROGRAM])


def requirements_key(image: str, step: PipelineStep) -> str:
    """The content key of `step`'s staged wheels: the staging image and its requirements."""
    return naming.short_hash("pip", image, *step.requirements, length=16)


def staged_uri(env: ServingEnvironment, model: ServedModel, key: str) -> str:
    """The store prefix of the wheels of requirements `key`, ending in ``/``."""
    if not env.model_store_uri:
        raise ServingArgsError(
            model.name,
            ("pipeline",),
            "Python steps' requirements are staged into the model store, and none is given",
            "set ServingEnvironment.model_store_uri (s3:// or gs://)",
        )
    area = naming.store_area(naming.HUB_PREFIX, env.part_of)
    return f"{env.model_store_uri.rstrip('/')}/{area}/{PIP_AREA}/{key}/"


def job_name(model: ServedModel, key: str) -> str:
    """``<model>-pip-<key[:10]>``: one Job per model and key (two models with the same
    requirements publish the same prefix; the marker makes the second a no-op)."""
    return f"{model.name}-pip-{key[:10]}"


def fetch_lines(env: ServingEnvironment, model: ServedModel) -> list[str]:
    """Lines of the fetch script copying each step's published wheels into
    ``$HOME/wheels/<step>``; the prefixes reach the script as ``$REQUIREMENTS_<i>_URI``
    (`fetch_env`)."""
    lines = []
    for i, step in enumerate(staged_steps(model)):
        target = f'"{WHEELS_DIR}/{step.name}"'
        lines += sync_published(env, f"REQUIREMENTS_{i}_URI", target, "wheels", True)
    return lines


def fetch_env(env: ServingEnvironment, model: ServedModel) -> list[Manifest]:
    image = staging_image(env)
    return [
        {
            "name": f"REQUIREMENTS_{i}_URI",
            "value": staged_uri(env, model, requirements_key(image, s)),
        }
        for i, s in enumerate(staged_steps(model))
    ]


def python_path(model: ServedModel) -> str:
    """``PYTHONPATH`` of the Triton container: each staged step's target, in step order."""
    return ":".join(f"{PYTHON_DIR}/{s.name}" for s in staged_steps(model))
