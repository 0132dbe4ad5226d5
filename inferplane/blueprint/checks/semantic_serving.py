"""Semantic checks that see the blueprint as `resolve` and the components will: defaults
applied, the catalog consulted, the environment's cloud known.

Each check here stands for one that would otherwise fail later: in `plan` (a component
refusing its input), in `check`, or in the cloud's API on the first `pulumi up`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from inferplane.blueprint import catalog, defaults
from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.resolve_triton import backend_of, builds_onnx_engine

if TYPE_CHECKING:
    from inferplane.blueprint.checks.semantic_env import EnvView

VLLM_QUANTIZED = ("int8", "int4")
"""Precisions vLLM cannot apply to fp16/bf16 weights on load: it serves them only from a
checkpoint quantized ahead of time, with the checkpoint's method (``--quantization``,
https://docs.vllm.ai/en/stable/features/quantization/index.html). fp8 is different: vLLM
quantizes fp16/bf16 weights to fp8 on load (``--quantization fp8``)."""


def check_defaulted_ranges(env: EnvView) -> None:
    """min <= max after defaults: an explicit bound against the other bound's default."""
    for name, pool in (env.data.get("gpu_pools") or {}).items():
        nodes = pool.get("nodes") or {}
        path: YamlPath = ("gpu_pools", name, "nodes")
        if "min" in nodes and "max" not in nodes and nodes["min"] > defaults.POOL_NODES_MAX:
            env.error(
                (*path, "min"),
                f"nodes.min ({nodes['min']}) is greater than the default nodes.max "
                f"({defaults.POOL_NODES_MAX})",
                f"set nodes.max too, at least {nodes['min']}",
            )
        if "max" in nodes and "min" not in nodes and nodes["max"] < defaults.POOL_NODES_MIN:
            env.error(
                (*path, "max"),
                f"nodes.max ({nodes['max']}) is less than the default nodes.min "
                f"({defaults.POOL_NODES_MIN})",
                f"set nodes.min too, e.g. nodes: {{min: {nodes['max']}, max: {nodes['max']}}}",
            )
    pools = env.data.get("gpu_pools") or {}
    for name, model in (env.data.get("models") or {}).items():
        replicas = model.get("replicas") or {}
        pool = pools.get(model["pool"])
        if pool is None or "max" not in replicas or "min" in replicas:
            continue
        zones = len(pool.get("zones") or env.spec["zones"])
        low, _ = defaults.model_replicas(model, zones)  # min is not given: its default
        if replicas["max"] < low:
            env.error(
                ("models", name, "replicas", "max"),
                f"replicas.max ({replicas['max']}) is less than the default replicas.min "
                f"({low}: one warm replica per zone of pool {model['pool']!r})",
                f"set replicas.min too, e.g. replicas: {{min: {replicas['max']}, "
                f"max: {replicas['max']}}}, or raise max to {low}",
            )


def check_warmup_inputs(env: EnvView) -> None:
    """Triton warm-up requests are built from the engine's input shapes
    (`components.serving.triton.triton_config`), so warm-up needs ``tensorrt.inputs``; an ONNX
    Runtime or TorchScript model's come from its declared ``inputs``."""
    for name, model in (env.data.get("models") or {}).items():
        if model["server"] != "triton" or "warmup" not in model or "pipeline" in model:
            continue  # a pipeline's: semantic_triton
        if backend_of(model) in ("onnxruntime", "pytorch"):
            if "inputs" not in model:
                env.error(
                    ("models", name, "warmup"),
                    "warm-up requests need the model's input names, types and shapes",
                    "declare them under inputs (name: {data_type, dims}), or remove warmup",
                )
            continue
        if not ((model.get("tensorrt") or {}).get("inputs")):
            env.error(
                ("models", name, "warmup"),
                "warm-up requests need the model's input names and shapes",
                "declare them under tensorrt.inputs (name: {min, opt, max}), or remove warmup",
            )


def warmup_type_guesses(env: EnvView) -> Iterator[tuple[YamlPath, str, str]]:
    """Advisories: a warm-up request whose input type is guessed from the input's name
    (`components.serving.triton.triton_config`). A warm-up sample is an inference request, and
    Triton refuses one whose input type differs from the model's ("inference input '<name>'
    data-type is 'INT64', but model '<m>' expects 'INT32'": triton-inference-server/core
    ``src/infer_request.cc``, ``InferenceRequest::Normalize``); a failed warm-up fails the
    model's load. So the guess must be right, or the type declared."""
    for name, model in (env.data.get("models") or {}).items():
        if model["server"] != "triton" or not (model.get("warmup") or {}).get("batch_sizes"):
            continue
        for tensor, shapes in ((model.get("tensorrt") or {}).get("inputs") or {}).items():
            if "data_type" in shapes:
                continue
            guess = "int64" if _TOKEN_LIKE.search(tensor) else "fp32"
            yield (
                ("models", name, "tensorrt", "inputs", tensor),
                f"warm-up sends {guess} data for input {tensor!r}, a type guessed from its "
                "name; Triton does not load the model if the ONNX input has another type",
                f"declare it: {tensor}: {{..., data_type: {guess}}} (or the type the ONNX "
                "model's input has)",
            )


_TOKEN_LIKE = re.compile(r"(_ids$|mask|^ids$)")
"""Input names taken as token ids or masks (int64) when no type is declared; the same rule
as `components.serving.triton.triton_config`."""


def check_response_cache_applies(env: EnvView) -> None:
    """Triton's response cache "does not currently support decoupled models" (server r25.08
    ``docs/user_guide/response_cache.md``, Known Limitations), and the TensorRT-LLM
    backend's model is decoupled when it streams; nor are sampled generations answers to
    replay. So no cache, local or Redis, for a TensorRT-LLM model."""
    for name, model in (env.data.get("models") or {}).items():
        if model["server"] == "triton" and "tensorrt_llm" in model and "response_cache" in model:
            env.error(
                ("models", name, "response_cache"),
                "Triton's response cache does not apply to a TensorRT-LLM model",
                "remove it: generations are sampled, and a streaming (decoupled) model "
                "cannot be cached; tensorrt_llm.enable_kv_cache_reuse reuses shared prompt "
                "prefixes instead",
            )


def check_instance_types(env: EnvView) -> None:
    """An explicit `instance_type` must carry the pool's GPU (and as many as
    `gpus_per_node` when the catalog knows the exact type); on GCP the GPU must exist there
    at all, since GKE attaches it as an accelerator of that type."""
    cloud = env.spec["cloud"]
    if cloud == "kubernetes":
        return  # refused outright there (`semantic_kubernetes`)
    for name, pool in (env.data.get("gpu_pools") or {}).items():
        if "instance_type" not in pool:
            continue
        path: YamlPath = ("gpu_pools", name, "instance_type")
        gpu = catalog.gpu(pool["gpu"])
        itype = pool["instance_type"]
        per_node = pool.get("gpus_per_node", defaults.POOL_GPUS_PER_NODE)
        table = gpu.aws_instances if cloud == "aws" else gpu.gcp_machines
        known = ", ".join(table.values())
        if not table:
            env.error(
                (*path[:-1], "gpu"),
                f"{gpu.id} is not offered on {cloud} (environment {env.name})",
                "choose a GPU available there (see `inferplane catalog`)",
            )
            continue
        carried = catalog.instance_gpus(cloud, itype)
        if carried is None or carried[0].id != gpu.id:
            what = f"carries {carried[0].id}" if carried else "carries no catalog GPU"
            env.error(
                path,
                f"{itype} {what}, not the pool's {gpu.id} (environment {env.name}, {cloud})",
                f"use a type with {gpu.id} on {cloud}, such as {known}, or remove instance_type",
            )
        elif carried[1] is not None and carried[1] != per_node:
            env.error(
                path,
                f"{itype} has {carried[1]} x {gpu.id}, but gpus_per_node is {per_node} "
                f"(environment {env.name})",
                f"set gpus_per_node: {carried[1]}, or use "
                + (table.get(per_node) or f"one of {known}"),
            )


def check_alert_routing(env: EnvView) -> None:
    """Alertmanager refuses a config whose receiver names repeat or whose route names a
    receiver that does not exist (it would crash-loop on the config); say so here."""
    alerts = (env.data.get("observability") or {}).get("alerts") or {}
    receivers = alerts.get("receivers") or []
    first: dict[str, int] = {}
    for i, receiver in enumerate(receivers):
        name = receiver["name"]
        if name == "null":
            env.error(
                ("observability", "alerts", "receivers", i, "name"),
                "receiver name 'null' is kube-prometheus-stack's own (its Watchdog alert "
                "goes there)",
                "choose another name",
            )
        elif name in first:
            env.error(
                ("observability", "alerts", "receivers", i, "name"),
                f"receiver name {name!r} is already used by receivers[{first[name]}]",
                "give each receiver its own name",
            )
        first.setdefault(name, i)
    route = (alerts.get("route") or {}).get("receiver")
    if route is not None and route not in first:
        known = ", ".join(first)
        env.error(
            ("observability", "alerts", "route", "receiver"),
            f"no receiver is named {route!r}",
            f"use one of {known}" if known else "add it under observability.alerts.receivers",
        )


VLLM_FP8_MIN_CC: tuple[int, int] = (8, 0)
"""vLLM v0.10.2 runs fp8 with FP8 tensor cores from compute capability 8.9 (W8A8), and as
weight-only W8A16 with its FP8 Marlin kernel from Ampere (8.0): "FP8 models will run on
compute capability > 8.0 (Ampere) as weight-only W8A16, utilizing FP8 Marlin"
(https://docs.vllm.ai/en/v0.10.2/features/quantization/fp8.html; the kernel:
https://github.com/vllm-project/vllm/pull/5975). Below that, it refuses the method
("The quantization method fp8 is not supported for the current GPU")."""


def check_precision_applies(env: EnvView) -> None:
    """int8/int4 on vLLM need a pre-quantized checkpoint and its method; fp8 needs a GPU
    vLLM can run it on."""
    pools = env.data.get("gpu_pools") or {}
    for name, model in (env.data.get("models") or {}).items():
        precision = model.get("precision", defaults.MODEL_PRECISION)
        settings: dict[str, Any] = model.get("vllm") or {}
        if model["server"] == "vllm" and model["pool"] in pools:
            _vllm_fp8(env, name, precision, settings, model["pool"], pools[model["pool"]])
        if model["server"] != "vllm" or precision not in VLLM_QUANTIZED:
            continue
        if settings.get("quantization"):
            continue
        env.error(
            ("models", name, "precision"),
            f"vLLM cannot quantize weights to {precision} on load",
            f"serve a checkpoint quantized to {precision} and name its method in "
            "vllm.quantization (e.g. gptq, awq or compressed-tensors), or use precision "
            "fp16, bf16 or fp8",
        )


def _vllm_fp8(
    env: EnvView,
    name: str,
    precision: str,
    settings: Mapping[str, Any],
    pool_name: str,
    pool: Mapping[str, Any],
) -> None:
    quantization = settings.get("quantization")
    if quantization == "fp8":
        where: YamlPath = ("models", name, "vllm", "quantization")
    elif precision == "fp8" and not quantization:
        where = ("models", name, "precision")
    else:
        return
    gpu = catalog.gpu(pool["gpu"])
    if gpu.cc_major_minor >= VLLM_FP8_MIN_CC:
        return
    env.error(
        where,
        f"vLLM runs fp8 from compute capability 8.0 (Ampere, weight-only; 8.9+ with FP8 "
        f"tensor cores); {gpu.id} of pool {pool_name!r} is "
        f"{gpu.compute_capability}",
        "use fp16 on this GPU (or a checkpoint quantized to int8/int4 with its method in "
        "vllm.quantization), or an A10G/A100/L4-class GPU",
    )


def batching_consistent(env: EnvView, path: YamlPath, model: Mapping[str, Any]) -> None:
    """Batch sizes, warm-up sizes and engine shapes agree with each other."""
    batching = model.get("batching")
    max_batch = batching.get("max_batch_size") if batching else None
    if batching and max_batch is not None:
        for i, size in enumerate(batching.get("preferred_batch_sizes") or []):
            if size > max_batch:
                env.error(
                    (*path, "batching", "preferred_batch_sizes", i),
                    f"preferred batch size {size} exceeds max_batch_size {max_batch}",
                    f"use sizes <= {max_batch}",
                )
    for i, size in enumerate((model.get("warmup") or {}).get("batch_sizes") or []):
        limit = max_batch if max_batch else 1
        if size > limit:
            env.error(
                (*path, "warmup", "batch_sizes", i),
                f"warm-up batch size {size} exceeds the model's max batch size {limit}",
                f"use sizes <= {limit}",
            )
    inputs = ((model.get("tensorrt") or {}).get("inputs")) or {}
    for name, shapes in inputs.items():
        ipath = (*path, "tensorrt", "inputs", name)
        lo, opt, hi = shapes["min"], shapes["opt"], shapes["max"]
        if not (len(lo) == len(opt) == len(hi)):
            env.error(
                ipath,
                "min, opt and max shapes have different ranks",
                "give every shape the same number of dimensions",
            )
            continue
        if any(not (a <= b <= c) for a, b, c in zip(lo, opt, hi, strict=True)):
            env.error(
                ipath,
                f"shapes must satisfy min <= opt <= max in every dimension "
                f"(min {lo}, opt {opt}, max {hi})",
                "fix the offending dimension",
            )
            continue
        if max_batch and hi and hi[0] > max_batch:
            env.error(
                (*ipath, "max"),
                f"the engine's max batch ({hi[0]}) exceeds batching.max_batch_size ({max_batch})",
                "make them equal, or lower the engine's max batch",
            )
        elif max_batch and hi and hi[0] < max_batch:
            # Triton's TensorRT backend refuses such a model at load ("configuration
            # specified max-batch N but TensorRT engine only supports max-batch M":
            # triton-inference-server/tensorrt_backend src/tensorrt.cc,
            # ModelState::AutoCompleteConfigHelper).
            env.error(
                (*ipath, "max"),
                f"the engine's max batch ({hi[0]}) is below batching.max_batch_size "
                f"({max_batch}): Triton refuses to load the model, as its batches could "
                "not run on the engine",
                f"make the first dimension of max {max_batch}, or lower "
                f"batching.max_batch_size to {hi[0]}",
            )


__all__ = [
    "batching_consistent",
    "check_defaulted_ranges",
    "check_instance_types",
    "check_precision_applies",
    "check_warmup_inputs",
]


_SERVERS = {"triton": "Triton", "vllm": "vLLM"}

OTHER_STACKS = ("-trtllm-python-py3", "-vllm-python-py3")
"""The variants of an NGC Triton image (`catalog.NGC_TRITON_IMAGE` group 2) of the TensorRT-LLM
and vLLM stacks, whose TensorRT and CUDA are their own
(triton-inference-server/server ``docs/introduction/compatibility.md``: e.g. 26.07's
``-trtllm-python-py3`` runs TensorRT 10.14.1.48 on CUDA 13.1, while its TensorRT image is 11.1
on CUDA 13.3)."""


def check_triton_release(env: EnvView) -> None:
    """The NGC release of a model's own Triton image, which its TensorRT engine is built with
    (`components.serving.tensorrt.engine_build`): an NGC Triton image's tag names it; any other
    image must declare ``base_release``, or the engine would be built with ``versions.triton``'s
    TensorRT and might not load in the image's."""
    for name, model in (env.data.get("models") or {}).items():
        image, base = model.get("image"), model.get("base_release")
        where = ("models", name, "base_release")
        server = str(model["server"])
        if base is not None and image is None:
            env.error(
                where,
                "base_release names the release a model's own image is built from, and this "
                "model names no image",
                f"remove base_release (the model runs the {_SERVERS[server]} of versions.{server})",
            )
            continue
        if base is not None and server == "triton" and not catalog.NGC_RELEASE.match(str(base)):
            env.error(
                where,
                f"{base} is no NGC release: base_release of a Triton image is the YY.MM of the "
                "nvcr.io/nvidia/tritonserver image it is built from",
                'write it as "YY.MM", such as "26.02"',
            )
            continue
        if model["server"] != "triton" or image is None:
            continue
        tagged = catalog.ngc_triton_release(image)
        ngc = catalog.NGC_TRITON_IMAGE.match(image)
        if tagged is not None and base is not None and base != tagged:
            env.error(
                where,
                f"image {image} is NGC release {tagged}, not {base}",
                f'remove base_release, or set it to "{tagged}"',
            )
        elif ngc is not None and ngc[2] in OTHER_STACKS and builds_onnx_engine(model):
            env.error(
                ("models", name, "image"),
                f"{image} is NGC {tagged}'s image of another serving stack, which brings "
                f"its own TensorRT, if any, not the one nvcr.io/nvidia/tensorrt:{tagged}-py3 "
                "builds the model's engine with (26.07's trtllm image runs TensorRT 10.14, its "
                "TensorRT image 11.1), so the engine would not load",
                f"serve it with nvcr.io/nvidia/tritonserver:{tagged}-py3, or remove image",
            )
        elif (
            tagged is None
            and base is None
            and ("tensorrt_llm" in model or builds_onnx_engine(model))
        ):
            env.error(
                ("models", name, "image"),
                f"{image} is not an NGC Triton image, so the TensorRT it runs (which must build "
                "the model's engine) is unknown",
                'add base_release: "YY.MM", the NGC release of the nvcr.io/nvidia/tritonserver '
                "image it is built from (the engine is then built with "
                "nvcr.io/nvidia/tensorrt:<base_release>-py3)",
            )
