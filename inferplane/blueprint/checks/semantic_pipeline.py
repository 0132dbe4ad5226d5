"""Semantic checks of a Triton pipeline's wiring: what Triton's ensemble scheduler would
refuse when it loads the ensemble (core r25.08 ``src/model_config_utils.cc``,
``ValidateEnsembleSchedulingConfig``, and ``src/ensemble_scheduler/ensemble_utils.cc``,
``ValidateEnsembleConfig`` / ``ValidateTensorMapping``):

- every step input is fed by a pipeline input or a step output; steps are declared in the
  order they run, so a feed from a later step (or the step itself) is a cycle or a typo;
- the feeding tensor has the same data type, and the same shape where both are fixed
  (``-1`` matches any size; a batching and a non-batching model agree when the non-batching
  one's first dimension is the batch: ``ValidateTensorConsistency``);
- every pipeline output is produced by a step output and every pipeline input is used
  ("ensemble input ... is not used"), every step output feeds something ("ensemble tensor
  ... is unused");
- a batching ensemble has no step that batches less ("ensemble ... allows maximum batch
  size N, but it contains model ... which only allows maximum batch size to be M");
- a Python step runs on the CPU or the GPU, an ONNX step's ``accelerator`` is ONNX
  Runtime's and applies on the GPU only;
- a ``tensorrt`` step runs on the GPU ("TensorRT backend does not support KIND_CPU at
  all": tensorrt_backend r25.08 ``src/model_state.cc``, ``InstanceHasKindGPU``), and its
  engine is built for the step's `shapes` (trtexec ``--minShapes``/``--optShapes``/
  ``--maxShapes``): every input with a ``-1`` dimension needs one, except the batch
  dimension of a batching step, which the build takes as 1 to ``max_batch_size``
  (`components.serving.tensorrt.pipeline_engines`). Without a profile trtexec builds the input at
  size 1 ("Dynamic dimensions required for input ... Automatically overriding shape to
  1x...") and Triton refuses every larger request. Only such a step has an engine build, so
  only it takes ``workspace_mib`` and ``builder_optimization_level``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from inferplane.blueprint.checks.semantic_triton import check_data_type, check_shapes
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.resolve_triton import step_device

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView

Feed = tuple[str, Sequence[int], bool]
"""A tensor a step input may read: data type, dims, whether its model batches."""


def _full(dims: Sequence[int], batching: bool) -> list[int]:
    return [-1, *dims] if batching else list(dims)


def _dims_match(a: Sequence[int], b: Sequence[int]) -> bool:
    return len(a) == len(b) and all(x == y or -1 in (x, y) for x, y in zip(a, b, strict=True))


def shapes_agree(a: Sequence[int], a_batch: bool, b: Sequence[int], b_batch: bool) -> bool:
    """Triton's ``ValidateTensorConsistency``: the dims agree (wildcards match anything), or
    the dims with the batch dimension in front do."""
    return _dims_match(a, b) or _dims_match(_full(a, a_batch), _full(b, b_batch))


def check_pipelines(env: EnvView) -> None:
    for name, model in (env.data.get("models") or {}).items():
        spec = model.get("pipeline")
        if model["server"] == "triton" and spec:
            _check(env, ("models", name, "pipeline"), model, spec)


def _check(env: EnvView, path: YamlPath, model: Mapping[str, Any], spec: Mapping[str, Any]) -> None:
    batch = ((model.get("batching") or {}).get("max_batch_size")) or 0
    ensemble_batches = batch > 0
    tensors: dict[str, Feed] = {
        n: (t["data_type"], t["dims"], ensemble_batches) for n, t in spec["inputs"].items()
    }
    used: set[str] = set()
    pins: dict[str, tuple[str, str]] = {}
    steps: Mapping[str, Any] = spec["steps"]
    names = list(steps)
    for index, (step_name, step) in enumerate(steps.items()):
        spath = (*path, "steps", step_name)
        step_batch = (step.get("batching") or {}).get("max_batch_size", 0)
        if ensemble_batches and 0 < step_batch < batch:
            env.error(
                (*spath, "batching", "max_batch_size"),
                f"the pipeline takes batches of up to {batch} (batching.max_batch_size), and "
                f"step {step_name} up to {step_batch}: Triton refuses to load such an ensemble",
                f"raise it to at least {batch}, or lower the model's batching.max_batch_size",
            )
        _step_kind(env, spath, step)
        _engine_shapes(env, spath, step, step_batch)
        _requirements(env, spath, step, pins)
        _warmup_sample(env, spath, step)
        check_shapes(env, spath, step, step["inputs"], step_batch, "step")
        for key in ("inputs", "outputs"):
            for tensor_name, tensor in step[key].items():
                check_data_type(env, (*spath, key, tensor_name), step["backend"], tensor)
        for input_name, tensor in step["inputs"].items():
            ipath = (*spath, "inputs", input_name)
            source = tensor["from"]
            feed = tensors.get(source)
            if feed is None:
                env.error((*ipath, "from"), *_unknown(source, names, index, spec["inputs"]))
                continue
            used.add(source)
            _agree(env, ipath, source, feed, tensor, step_batch > 0)
        for output_name, tensor in step["outputs"].items():
            tensors[f"{step_name}.{output_name}"] = (
                tensor["data_type"],
                tensor["dims"],
                step_batch > 0,
            )
    produced: dict[str, str] = {}
    for output_name, tensor in spec["outputs"].items():
        opath = (*path, "outputs", output_name)
        source = tensor["from"]
        if source in produced:
            env.error(
                (*opath, "from"),
                f"{source!r} is already pipeline output {produced[source]!r}: an ensemble maps "
                "a step output to one tensor",
                "remove one of the two outputs",
            )
            continue
        produced[source] = output_name
        if source not in tensors or source in spec["inputs"]:
            env.error(
                (*opath, "from"),
                f"{source!r} is no step output"
                + (" (a pipeline input is not an output)" if source in spec["inputs"] else ""),
                "name a step's output as <step>.<output>: "
                + ", ".join(k for k in tensors if k not in spec["inputs"]),
            )
            continue
        used.add(source)
        _agree(env, opath, source, tensors[source], tensor, ensemble_batches)
    for tensor_name in tensors:
        if tensor_name in used:
            continue
        if tensor_name in spec["inputs"]:
            where: YamlPath = (*path, "inputs", tensor_name)
            what = f"pipeline input {tensor_name!r} feeds no step"
        else:
            step_name, _, out = tensor_name.partition(".")
            where = (*path, "steps", step_name, "outputs", out)
            what = f"output {out!r} of step {step_name} feeds no step and no pipeline output"
        env.error(
            where,
            f"{what}: Triton refuses an ensemble with an unused tensor",
            "use it (a step input's or an output's `from`), or remove it",
        )


def _unknown(
    source: str, names: list[str], index: int, inputs: Mapping[str, Any]
) -> tuple[str, str]:
    step, dot, _ = source.partition(".")
    if dot and step in names and names.index(step) >= index:
        return (
            f"{source!r} is an output of step {step}, which runs "
            + ("as this step (a cycle)" if names.index(step) == index else "after this one"),
            "declare the steps in the order they run, each after the steps that feed it",
        )
    if dot and step in names:
        return (
            f"step {step} has no output {source.partition('.')[2]!r}",
            "name one of its outputs",
        )
    return (
        f"{source!r} is neither a pipeline input nor a step output",
        "use a pipeline input (" + ", ".join(inputs) + ") or <step>.<output> of an earlier step",
    )


def _agree(
    env: EnvView, path: YamlPath, source: str, feed: Feed, tensor: Mapping[str, Any], batches: bool
) -> None:
    dtype, dims, feed_batches = feed
    if dtype != tensor["data_type"]:
        env.error(
            (*path, "data_type"),
            f"{source!r} is {dtype}, not {tensor['data_type']}: Triton refuses an ensemble "
            "whose tensors disagree on their type",
            f"declare data_type: {dtype}, or convert it in the step that produces {source!r}",
        )
    elif not shapes_agree(dims, feed_batches, tensor["dims"], batches):
        env.error(
            (*path, "dims"),
            f"{source!r} has dims {list(dims)}"
            + (" (batch first)" if feed_batches and not batches else "")
            + f", which do not fit {list(tensor['dims'])}",
            "give both the same shape (-1 for a dimension of any size), the batch dimension "
            "left out where the model batches",
        )


def _step_kind(env: EnvView, path: YamlPath, step: Mapping[str, Any]) -> None:
    backend = step["backend"]
    if backend == "tensorrt":
        if "accelerator" in step:
            env.error(
                (*path, "accelerator"),
                "accelerator chooses ONNX Runtime's execution provider, and this step's "
                "backend is tensorrt: TensorRT runs the engine a Job builds from its model.onnx",
                "remove accelerator (or set backend: onnxruntime with accelerator: tensorrt "
                "to build the engine in the replica as it loads)",
            )
        if step.get("device") == "cpu":
            env.error(
                (*path, "device"),
                "a TensorRT engine runs on the GPU only (Triton's TensorRT backend has no "
                "KIND_CPU instances)",
                "remove device, or set backend: onnxruntime to run the ONNX model on the CPU",
            )
        return
    for key in ("workspace_mib", "builder_optimization_level"):
        if key in step:
            env.error(
                (*path, key),
                f"{key} sets the engine build of a backend: tensorrt step, and this step's "
                f"backend is {backend}: nothing builds an engine for it",
                f"remove {key}",
            )
    if "accelerator" in step and backend != "onnxruntime":
        env.error(
            (*path, "accelerator"),
            f"accelerator chooses ONNX Runtime's execution provider, and this step's backend "
            f"is {backend}",
            "remove accelerator",
        )
    elif "accelerator" in step and step_device(step) == "cpu":
        env.error(
            (*path, "accelerator"),
            "accelerator chooses a GPU execution provider, and this step runs on the CPU",
            "remove accelerator, or set device: gpu",
        )


def _engine_shapes(env: EnvView, path: YamlPath, step: Mapping[str, Any], batch: int) -> None:
    """Every dynamic input of a ``tensorrt`` step has a profile (module docstring)."""
    if step["backend"] != "tensorrt":
        return
    shapes: Mapping[str, Any] = step.get("shapes") or {}
    for name, tensor in step["inputs"].items():
        dims = list(tensor["dims"])
        if -1 not in dims or name in shapes:
            continue
        full = ([-1] if batch > 0 else []) + dims
        env.error(
            (*path, "inputs", name, "dims"),
            f"input {name!r} has dims {dims}, and the TensorRT engine of this step is built "
            "for a range of shapes: each -1 dimension needs its min, opt and max",
            f"give the step shapes.{name}: {{min, opt, max}}, each a shape of {len(full)} "
            "dimensions" + (" (the batch first)" if batch > 0 else ""),
        )


def _warmup_sample(env: EnvView, path: YamlPath, step: Mapping[str, Any]) -> None:
    """A sample is a Python step's, and it fills every input: Triton writes each sample
    file into one input of one request (``model_config.proto`` r25.08, ``ModelWarmup.Input``
    ``input_data_file``), and a warm-up request lacking a required input fails the load."""
    samples: Mapping[str, Any] = step.get("warmup_sample") or {}
    if not samples:
        return
    spath: YamlPath = (*path, "warmup_sample")
    if step["backend"] != "python":
        env.error(
            spath,
            f"warmup_sample warms a Python step, and this step's backend is {step['backend']}, "
            "which is warmed with generated samples",
            "remove warmup_sample",
        )
        return
    inputs: Mapping[str, Any] = step["inputs"]
    for name in samples:
        tensor = inputs.get(name)
        if tensor is None:
            env.error(
                (*spath, name),
                f"the step has no input {name!r}",
                f"name one of its inputs: {', '.join(sorted(inputs))}",
            )
        elif tensor["data_type"] != "string":
            env.error(
                (*spath, name),
                f"a sample is text, and input {name!r} is {tensor['data_type']}",
                "give samples for string inputs only (or remove warmup_sample)",
            )
        elif any(d not in (1, -1) for d in tensor["dims"]):
            env.error(
                (*spath, name),
                f"a sample is one text, and input {name!r} has dims {list(tensor['dims'])}",
                "give samples for inputs of one element (dims [1] or [-1])",
            )
    missing = sorted(set(inputs) - set(samples))
    if missing:
        env.error(
            spath,
            f"a warm-up request carries every input of the step, and {', '.join(missing)} "
            f"{'has' if len(missing) == 1 else 'have'} no sample",
            "give each input a sample, or remove warmup_sample",
        )


def _requirements(
    env: EnvView, path: YamlPath, step: Mapping[str, Any], pins: dict[str, tuple[str, str]]
) -> None:
    """Requirements are a Python step's; every step of a model shares one ``PYTHONPATH``
    (`components.serving.store.pip_requirements`), so one package has one version per model."""
    lines = step.get("requirements") or []
    if lines and step["backend"] != "python":
        env.error(
            (*path, "requirements"),
            f"requirements are installed for Python steps, and this step's backend is "
            f"{step['backend']}",
            "remove them (its runtime is the image's backend library)",
        )
        return
    model = (env.data.get("models") or {}).get(path[1]) or {}
    if lines and "image" in model:
        env.error(
            (*path, "requirements"),
            "requirements are downloaded in the pinned Triton image, for its Python, and "
            "this model runs its own image",
            "remove the model's image, or build the packages into that image",
        )
        return
    for i, line in enumerate(lines):
        name, _, rest = str(line).partition("==")
        version = rest.split(" ", 1)[0]
        # One project however it is written: extras stripped, then PEP 503's normal form
        # (https://peps.python.org/pep-0503/#normalized-names).
        key = re.sub(r"[-_.]+", "-", name.split("[", 1)[0]).lower()
        if key in pins and pins[key][0] != version:
            env.error(
                (*path, "requirements", i),
                f"{name} {version} here, and {pins[key][0]} in step {pins[key][1]}: every "
                "step of a model imports from one shared PYTHONPATH",
                f"pin one version of {name} in both steps",
            )
        pins.setdefault(key, (version, str(path[-1])))
