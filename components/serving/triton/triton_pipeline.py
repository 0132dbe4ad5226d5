"""A Triton pipeline: the ensemble's ``config.pbtxt``, one per step, and the init container
that lays them out with each step's files.

The repository of a pipeline model ``m`` (server r25.08 ``docs/user_guide/architecture.md``,
"Ensemble Models")::

    /models/m/config.pbtxt          platform "ensemble", ensemble_scheduling.step[]
    /models/m/1/                    (an ensemble has no files, but needs its version)
    /models/m-<step>/config.pbtxt   the step: its backend, tensors, batching, instances
    /models/m-<step>/1/...          the step's directory from the store (model.onnx,
                                    model.pt, or model.py and what it reads), or, for a
                                    ``tensorrt`` step, the engine built from its model.onnx
                                    as model.plan (`pipeline_engines`)

Ensemble tensors are named after what produces them: a pipeline input by its name, a step
output by ``<step>.<output>``, or, when it is a pipeline output, by that output's name (an
ensemble output is the tensor a step's ``output_map`` writes under the output's name).

The ensemble itself carries no ``instance_group``, ``optimization`` or ``model_warmup``:
Triton refuses each on an ensemble (core r25.08 ``src/model_config_utils.cc``,
``ValidateEnsembleSchedulingConfig``). Warm-up runs per step instead: every ONNX and
TorchScript step gets samples of its declared inputs at batch 1 and at its largest batch,
before the ensemble (and so the replica) reports ready; a ``tensorrt`` step's samples take its
profiles' ``opt`` shapes, which its engine is built for. A sample of zeros is no valid input
for a tokenizer or a decoder, so a Python step warms only with the blueprint's text
(``warmup_sample``): one request at batch 1 whose inputs Triton reads from files in the
step's ``warmup/`` folder, written by the init container in Triton's layout for strings, "a
4-byte unsigned integer giving the length followed by the actual bytes" (common r25.08
``protobuf/model_config.proto``, ``ModelWarmup.Input.input_data_file``), the integer
little-endian as Triton's own clients write it (client r25.08 ``src/python/library/
tritonclient/utils/__init__.py``, `serialize_byte_tensor`: ``struct.pack("<I", ...)``).
"""

from __future__ import annotations

import struct
from typing import Final

from inferplane.blueprint import naming
from inferplane.blueprint.triton_model import Pipeline, PipelineStep, step_model_name
from inferplane.components.serving.containers import (
    CONFIG_DIR,
    MODELS_DIR,
    Manifest,
    literal,
    mount,
    shell,
)
from inferplane.components.serving.spec import ServedModel, ServingEnvironment
from inferplane.components.serving.store import pip_requirements
from inferplane.components.serving.store.store_cli import store_container, store_sync
from inferplane.components.serving.tensorrt import pipeline_engines
from inferplane.components.serving.triton.triton_tensors import (
    accelerator_lines,
    instance_lines,
    ints,
    io_lines,
    quote,
    warmup_lines,
)

ENSEMBLE_CONFIG: Final = "config.pbtxt"
STEP_PLATFORMS: Final = {
    "onnxruntime": "onnxruntime_onnx",
    "pytorch": "pytorch_libtorch",
    # core r25.08 src/constants.h kTensorRTPlanPlatform; server r25.08
    # docs/user_guide/model_configuration.md: platform: "tensorrt_plan"
    "tensorrt": "tensorrt_plan",
}


def step_config_key(step: PipelineStep) -> str:
    """The step's config in the model's ConfigMap (a valid ConfigMap key)."""
    return f"step-{step.name}.pbtxt"


def model_names(model: ServedModel) -> tuple[str, ...]:
    """Every model Triton loads for `model`: the steps, then the ensemble."""
    if model.pipeline is None:
        return (model.name,)
    return (*(step_model_name(model.name, s.name) for s in model.pipeline.steps), model.name)


def tensor_names(pipeline: Pipeline) -> dict[str, str]:
    """``<step>.<output>`` -> its ensemble tensor name (a pipeline output's own name)."""
    names = {
        f"{step.name}.{out.name}": f"{step.name}.{out.name}"
        for step in pipeline.steps
        for out in step.outputs
    }
    for output in pipeline.outputs:
        names[output.source] = output.tensor.name
    return names


def _batch(model: ServedModel) -> int:
    return model.batching.max_batch_size if model.batching is not None else 0


def ensemble_config(model: ServedModel) -> str:
    """The ensemble's ``config.pbtxt``."""
    pipeline = model.pipeline
    assert pipeline is not None
    names = tensor_names(pipeline)
    lines = [
        f"name: {quote(model.name)}",
        'platform: "ensemble"',
        f"max_batch_size: {_batch(model)}",
        *io_lines("input", pipeline.inputs),
        *io_lines("output", tuple(o.tensor for o in pipeline.outputs)),
        "ensemble_scheduling {",
        "  step [",
    ]
    for i, step in enumerate(pipeline.steps):
        lines += [
            "    {",
            f"      model_name: {quote(step_model_name(model.name, step.name))}",
            "      model_version: -1",
        ]
        for wired in step.inputs:
            value = names.get(wired.source, wired.source)
            lines.append(
                f"      input_map {{ key: {quote(wired.tensor.name)} value: {quote(value)} }}"
            )
        for out in step.outputs:
            value = names[f"{step.name}.{out.name}"]
            lines.append(f"      output_map {{ key: {quote(out.name)} value: {quote(value)} }}")
        lines.append("    }" + ("," if i < len(pipeline.steps) - 1 else ""))
    lines += ["  ]", "}"]
    if model.response_cache is not None and model.response_cache.enabled:
        lines += ["response_cache {", "  enable: true", "}"]
    return "\n".join(lines) + "\n"


def step_config(model: ServedModel, step: PipelineStep) -> str:
    """One step's ``config.pbtxt``: a model of its own, named ``<model>-<step>``."""
    batch = step.batching.max_batch_size if step.batching is not None else 0
    kind = "python" if step.backend == "python" else "platform"
    engine = "python" if step.backend == "python" else STEP_PLATFORMS[step.backend]
    lines = [
        f"name: {quote(step_model_name(model.name, step.name))}",
        f"{'backend' if kind == 'python' else 'platform'}: {quote(engine)}",
        f"max_batch_size: {batch}",
    ]
    if step.batching is not None:
        lines += [
            "dynamic_batching {",
            f"  max_queue_delay_microseconds: {step.batching.max_queue_delay_us}",
            "}",
        ]
    lines += io_lines("input", tuple(i.tensor for i in step.inputs))
    lines += io_lines("output", step.outputs)
    gpu = step.device == "gpu"
    lines += instance_lines(step.instances, "KIND_GPU" if gpu else "KIND_CPU")
    if step.backend == "onnxruntime" and gpu:
        lines += accelerator_lines(step.accelerator, model.precision, step.shapes)
    if step.warmup_sample:
        lines += sample_warmup_lines(step, batch > 0)
    elif step.warmup:
        sizes = (1, batch) if batch > 1 else (1,)
        inputs = tuple(i.tensor for i in step.inputs)
        lines += warmup_lines(inputs, sizes, batch > 0, step.shapes)
    return "\n".join(lines) + "\n"


def sample_file(index: int) -> str:
    """The file of the step's `index`-th sample, in its ``warmup/`` folder."""
    return f"sample_{index}"


def sample_warmup_lines(step: PipelineStep, batching: bool) -> list[str]:
    """``model_warmup``: one request at batch 1, each input read from its sample file."""
    dims = {i.tensor.name: i.tensor.dims for i in step.inputs}
    lines = ["model_warmup [", "  {", '    name: "warmup_sample"', "    batch_size: 1"]
    for index, (name, _) in enumerate(step.warmup_sample):
        shape = [1 for _ in dims[name]]
        lines += [
            "    inputs {",
            f"      key: {quote(name)}",
            "      value {",
            "        data_type: TYPE_STRING",
            f"        dims: {ints(shape)}",
            f"        input_data_file: {quote(sample_file(index))}",
            "      }",
            "    }",
        ]
    return [*lines, "  }", "]"]


def sample_lines(target: str, step_index: int, step: PipelineStep) -> list[str]:
    """Shell that writes the step's sample files; each text reaches the script only as
    ``$STEP_<i>_SAMPLE_<j>``, and its length prefix as octal escapes computed here."""
    if not step.warmup_sample:
        return []
    lines = [f'mkdir -p "{target}/warmup"']
    for index, (_, text) in enumerate(step.warmup_sample):
        size = struct.pack("<I", len(text.encode()))
        prefix = "".join(f"\\{b:03o}" for b in size)
        lines.append(
            f"{{ printf '{prefix}'; printf '%s' \"$STEP_{step_index}_SAMPLE_{index}\"; }} "
            f'> "{target}/warmup/{sample_file(index)}"'
        )
    return lines


def sample_env(model: ServedModel) -> list[Manifest]:
    assert model.pipeline is not None
    return [
        {"name": f"STEP_{i}_SAMPLE_{j}", "value": literal(text)}
        for i, step in enumerate(model.pipeline.steps)
        for j, (_, text) in enumerate(step.warmup_sample)
    ]


def config_files(model: ServedModel) -> dict[str, str]:
    """The model's ConfigMap: the ensemble's config and each step's."""
    assert model.pipeline is not None
    files = {ENSEMBLE_CONFIG: ensemble_config(model)}
    for step in model.pipeline.steps:
        files[step_config_key(step)] = step_config(model, step)
    return files


def fetch_container(env: ServingEnvironment, model: ServedModel) -> Manifest:
    """Lays out the repository (module docstring): each config from the ConfigMap, each
    step's directory from ``<source>/<step path>/`` (a ``tensorrt`` step: its engine,
    `pipeline_engines.fetch_lines`). The source, the step paths and the engine prefixes
    reach the script only as ``$PIPELINE_DIR``, ``$STEP_<i>_PATH`` and
    ``$STEP_<i>_ENGINE_URI``."""
    assert model.pipeline is not None
    lines = [
        f'mkdir -p "{MODELS_DIR}/{model.name}/1"',
        f'cp "{CONFIG_DIR}/{ENSEMBLE_CONFIG}" "{MODELS_DIR}/{model.name}/config.pbtxt"',
    ]
    variables = [{"name": "PIPELINE_DIR", "value": model.source.uri.rstrip("/") + "/"}]
    for i, step in enumerate(model.pipeline.steps):
        target = f"{MODELS_DIR}/{step_model_name(model.name, step.name)}"
        lines += [
            f'mkdir -p "{target}/1"',
            f'cp "{CONFIG_DIR}/{step_config_key(step)}" "{target}/config.pbtxt"',
        ]
        if step.backend == "tensorrt":
            lines += pipeline_engines.fetch_lines(env, i, target)
            engine = pipeline_engines.step_build(model, step, env).engine_uri
            variables.append({"name": pipeline_engines.engine_variable(i), "value": engine})
            continue
        lines += [
            store_sync(env, f'"${{PIPELINE_DIR}}${{STEP_{i}_PATH}}/"', f'"{target}/1"'),
            *sample_lines(target, i, step),
        ]
        variables.append({"name": f"STEP_{i}_PATH", "value": step.path})
    lines += pip_requirements.fetch_lines(env, model)
    variables += pip_requirements.fetch_env(env, model)
    variables += sample_env(model)
    return store_container(
        env,
        naming.MODEL_READER_SA,
        "fetch-model",
        shell(*lines),
        variables,
        [mount("models", MODELS_DIR), mount("triton-config", CONFIG_DIR, read_only=True)],
    )
