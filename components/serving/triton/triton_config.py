"""Triton for one model: its ``config.pbtxt``, the ``tritonserver`` command line, the container.

`render_config_pbtxt(model, env)` writes a ModelConfig in protobuf text format (checked in
the tests against Triton's own ``model_config.proto``). What it sets, and why:

- ``platform``: ``tensorrt_plan`` when the model has a ``tensorrt`` section (the engine
  built by `inferplane.components.serving.tensorrt.engine_build`), ``onnxruntime_onnx`` for
  plain ONNX (with the GPU execution provider ``accelerator`` chooses, `triton_tensors`),
  ``pytorch_libtorch`` for TorchScript. Inputs and outputs are written only when declared
  (TorchScript needs them); otherwise Triton reads them from the engine or the ONNX model
  (auto-complete), so the config can never disagree with the model.
- A pipeline is an ensemble: `triton_pipeline` writes its configs.
- ``max_batch_size``: ``batching.max_batch_size``, 0 (no batch dimension) without batching.
- ``dynamic_batching``: the batching window is ``max_queue_delay_microseconds``.
- ``instance_group``: one instance on the pod's GPU(s) (``KIND_GPU``).
- ``model_warmup``: one sample per ``warmup.batch_sizes`` entry, run before the model
  reports ready. ONNX Runtime and TorchScript models: the declared ``inputs``
  (`triton_tensors.warmup_lines`), no engine build needed. TensorRT engines: shapes are the
  ``tensorrt.inputs`` *opt* shapes, with the batch
  dimension taken by ``batch_size`` (batching) or set to the warm-up size (no batching).
  Data types: each input's declared ``data_type``; without one, inputs named ``ids``,
  ``*_ids`` or ``*mask*`` are taken as INT64 and every other input as FP32 (validate warns
  that the type was guessed: a warm-up whose type differs from the model's input keeps
  the model from loading). Integer inputs get zeros (random bytes would be out-of-range
  token ids, and an out-of-range gather can crash the engine), floating-point ones random
  data.
- ``response_cache { enable: true }`` when enabled, for either backend; the server-side
  cache (local size, or the Redis server) comes with ``--cache-config`` (`cache_args`):
  both are needed.
"""

from __future__ import annotations

import re
from typing import Final

from inferplane.blueprint import naming
from inferplane.blueprint.model import TensorRtInput
from inferplane.blueprint.triton_model import Tensor, TritonBackend
from inferplane.components.serving.containers import (
    CONFIG_DIR,
    HOME,
    MODELS_DIR,
    PORTS,
    Manifest,
    container_security_context,
    mount,
    probes,
    serving_resources,
    shell,
    source_location,
)
from inferplane.components.serving.observability import promql
from inferplane.components.serving.spec import ServedModel, ServingArgsError, ServingEnvironment
from inferplane.components.serving.store import pip_requirements
from inferplane.components.serving.store.store_cli import (
    resolve_attempt,
    store_container,
    store_copy,
    store_sync,
)
from inferplane.components.serving.tensorrt.engine_keys import ENGINE_FILE
from inferplane.components.serving.triton import response_cache, triton_pipeline, triton_tensors

CONFIG_FILE = "config.pbtxt"
GRPC_MAX_CONNECTION_AGE_MS = 60_000
"""How long a client's gRPC connection lives: a replica the autoscaler adds gets calls from
connected clients within about a minute (clients reconnect and re-resolve). gRPC servers
add +/-10 % jitter so reconnections spread out (gRPC proposal A9, "Server-side Connection
Management": https://github.com/grpc/proposal/blob/master/A9-server-side-conn-mgt.md)."""
GRPC_MAX_CONNECTION_AGE_SINCE = (24, 1)
"""``--grpc-max-connection-age`` and ``-grace`` first shipped in Triton 2.42 (NGC 24.01):
triton-inference-server/server #6639 (commit 23ba7a0), src/command_line_parser.cc."""


def catalog_release_key(release: str) -> tuple[int, int]:
    """``"25.08"`` -> (25, 8)."""
    year, month = release.split(".")[:2]
    return int(year), int(month)


_TOKEN_LIKE = re.compile(r"(_ids$|mask|^ids$)")


ONNX_FILE = "model.onnx"


MODEL_FILES: Final = {"tensorrt": "model.plan", "onnxruntime": ONNX_FILE, "pytorch": "model.pt"}
"""Each backend's default file name in ``<model>/1/`` (server r25.08
``docs/user_guide/model_repository.md``: "model.plan", "model.onnx", TorchScript "model.pt")."""
PLATFORMS: Final = {
    "tensorrt": "tensorrt_plan",
    "onnxruntime": "onnxruntime_onnx",
    "pytorch": "pytorch_libtorch",  # core r25.08 src/constants.h kPyTorchLibTorchPlatform
}


def backend(model: ServedModel) -> TritonBackend:
    """The model's backend: ``tensorrt`` with `ServedModel.tensorrt` (validation refuses a
    ``tensorrt`` section with another backend), else the one given, else ``onnxruntime``."""
    if model.tensorrt is not None:
        return "tensorrt"
    return model.backend if model.backend in ("onnxruntime", "pytorch") else "onnxruntime"


def model_file(model: ServedModel) -> str:
    """File name of the model inside ``<repository>/<model>/1/``."""
    return MODEL_FILES[backend(model)]


def platform(model: ServedModel) -> str:
    return PLATFORMS[backend(model)]


def input_data_type(name: str, declared: str | None = None) -> str:
    """The Triton data type (``model_config.proto`` DataType) of an input: the declared one
    (``tensorrt.inputs.<name>.data_type``), else guessed from the name."""
    if declared is not None:
        return "TYPE_" + declared.upper()
    return "TYPE_INT64" if _TOKEN_LIKE.search(name) else "TYPE_FP32"


_FLOAT_TYPES: Final = frozenset({"TYPE_FP16", "TYPE_BF16", "TYPE_FP32", "TYPE_FP64"})


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _ints(values: tuple[int, ...] | list[int]) -> str:
    return "[ " + ", ".join(str(v) for v in values) + " ]"


def _warmup_inputs(env: ServingEnvironment, model: ServedModel) -> tuple[TensorRtInput, ...]:
    inputs = model.tensorrt.inputs if model.tensorrt else ()
    if not inputs:
        raise ServingArgsError(
            model.name,
            ("warmup",),
            "warm-up requests need the model's input names and shapes",
            "declare them under tensorrt.inputs (name: {min, opt, max}), or remove warmup",
        )
    return inputs


def _warmup_sample(tensors: tuple[TensorRtInput, ...], size: int, batching: bool) -> list[str]:
    lines = [
        "  {",
        f"    name: {_quote(f'warmup_batch_{size}')}",
        f"    batch_size: {size if batching else 1}",
    ]
    for tensor in tensors:
        dims = list(tensor.opt[1:]) if batching else [size, *tensor.opt[1:]]
        dtype = input_data_type(tensor.name, tensor.data_type)
        # Integers are ids, masks or indices: zeros stay in range, random bytes may not.
        data = "random_data: true" if dtype in _FLOAT_TYPES else "zero_data: true"
        lines += [
            "    inputs {",
            f"      key: {_quote(tensor.name)}",
            "      value {",
            f"        data_type: {dtype}",
            f"        dims: {_ints(dims)}",
            f"        {data}",
            "      }",
            "    }",
        ]
    return [*lines, "  }"]


def _declared_inputs(model: ServedModel) -> tuple[Tensor, ...]:
    if not model.inputs:
        raise ServingArgsError(
            model.name,
            ("warmup",),
            "warm-up requests need the model's input names, types and shapes",
            "declare them under inputs (name: {data_type, dims}), or remove warmup",
        )
    return model.inputs


def _warmup(env: ServingEnvironment, model: ServedModel, batching: bool) -> list[str]:
    assert model.warmup is not None
    tensors = _warmup_inputs(env, model)
    samples = [_warmup_sample(tensors, size, batching) for size in model.warmup.batch_sizes]
    lines = ["model_warmup ["]
    for i, sample in enumerate(samples):
        if i < len(samples) - 1:
            sample[-1] += ","
        lines += sample
    return [*lines, "]"]


def render_config_pbtxt(model: ServedModel, env: ServingEnvironment) -> str:
    """The model's ``config.pbtxt`` (see the module docstring for each field)."""
    if model.server != "triton":
        raise ValueError(f"model {model.name!r} is served by {model.server}, not triton")
    if model.pipeline is not None:
        return triton_pipeline.ensemble_config(model)
    batching = model.batching is not None and model.batching.max_batch_size > 0
    lines = [
        f"name: {_quote(model.name)}",
        f"platform: {_quote(platform(model))}",
        f"max_batch_size: {model.batching.max_batch_size if model.batching and batching else 0}",
    ]
    if model.batching is not None and batching:
        lines.append("dynamic_batching {")
        if model.batching.preferred_batch_sizes:
            lines.append(f"  preferred_batch_size: {_ints(model.batching.preferred_batch_sizes)}")
        lines.append(f"  max_queue_delay_microseconds: {model.batching.max_queue_delay_us}")
        lines.append("}")
    lines += triton_tensors.io_lines("input", model.inputs)
    lines += triton_tensors.io_lines("output", model.outputs)
    lines += triton_tensors.instance_lines(1, "KIND_GPU")
    if backend(model) == "onnxruntime":
        lines += triton_tensors.accelerator_lines(model.accelerator, model.precision, model.shapes)
    if model.warmup is not None and model.warmup.batch_sizes and backend(model) != "tensorrt":
        sizes = model.warmup.batch_sizes
        inputs = _declared_inputs(model)
        lines += triton_tensors.warmup_lines(inputs, sizes, batching, model.shapes)
    elif model.warmup is not None and model.warmup.batch_sizes:
        lines += _warmup(env, model, batching)
    if model.response_cache is not None and model.response_cache.enabled:
        lines += ["response_cache {", "  enable: true", "}"]
    return "\n".join(lines) + "\n"


# --- the server ---------------------------------------------------------------------------
LIVE_PATH: Final = "/v2/health/live"
TRITON_SERVER: Final = "tritonserver"
"""The server binary, on the image's PATH, as the first of the container's ``args``."""


def triton_args(model: ServedModel, release: str) -> list[str]:
    """``tritonserver`` arguments: exactly this model, strict readiness, fixed ports.

    ``--exit-timeout-secs`` lets in-flight requests finish after SIGTERM (the default is
    30 s); the pod's grace period covers it (`containers.termination_grace_s`).
    ``--grpc-max-connection-age`` (NGC `release` 24.01 / Triton 2.42 and later): the server
    ends each gRPC connection after `GRPC_MAX_CONNECTION_AGE_MS` with a GOAWAY (and lets
    its calls finish for the model's longest request), so clients reconnect, re-resolve
    and reach replicas added since (gRPC A9 MAX_CONNECTION_AGE).
    """
    args = [
        f"--model-repository={MODELS_DIR}",
        "--model-control-mode=explicit",
        *(f"--load-model={name}" for name in triton_pipeline.model_names(model)),
        "--strict-readiness=true",
        "--exit-on-error=true",
        f"--http-port={PORTS['http']}",
        f"--grpc-port={PORTS['grpc']}",
        f"--metrics-port={PORTS['metrics']}",
        f"--exit-timeout-secs={model.max_request_s}",
        *promql.triton_metrics_args(model),
    ]
    if catalog_release_key(release) >= GRPC_MAX_CONNECTION_AGE_SINCE:
        args += [
            f"--grpc-max-connection-age={GRPC_MAX_CONNECTION_AGE_MS}",
            f"--grpc-max-connection-age-grace={model.max_request_s * 1000}",
        ]
    return args + cache_args(model)


REDIS_CONNECT_TIMEOUT_MS = 1000
"""Connecting to the zone's Valkey; redis_cache's default 0 waits forever."""
REDIS_SOCKET_TIMEOUT_MS = 100
"""One cache command; redis_cache's default 0 waits forever, which would hang a request
on a stalled server instead of computing the answer."""
REDIS_WAIT_TIMEOUT_MS = 50
"""Waiting for a pooled connection (default 1000 ms, redis_cache `RedisCache::Create`)."""
REDIS_POOL_SIZE = 8
"""Connections per Triton process (default 1): concurrent requests share them."""


def cache_args(model: ServedModel) -> list[str]:
    """``--cache-config`` flags: one setting per flag, as ``<cache>,<key>=<value>`` (server
    r25.08 ``docs/user_guide/response_cache.md``; a second ``,key=value`` in the same flag
    would become part of the first value).

    ``local``: ``size`` in bytes of CPU memory. ``redis``: the zone-local Valkey Service
    (`response_cache`); keys from triton-inference-server/redis_cache ``README.md`` and
    ``src/redis_cache.cc`` (branch r25.08). No ``password`` flag: the cache reads
    ``TRITONCACHE_REDIS_PASSWORD`` from the environment (`response_cache.password_env`), so
    the password is in neither the pod spec nor the process list. The NGC
    ``tritonserver:<release>-py3`` images ship the library
    (``/opt/tritonserver/caches/redis/libtritoncache_redis.so``: server r25.08
    ``docs/user_guide/response_cache.md``; ``build.py`` builds ``all_caches = ["local",
    "redis"]`` for the release containers).
    """
    cache = model.response_cache
    if cache is None or not cache.enabled:
        return []
    if not cache.redis:
        return [f"--cache-config=local,size={cache.size_mb * 1024 * 1024}"]
    settings = {
        "host": response_cache.service_name(model),
        "port": response_cache.PORT,
        "connect_timeout": REDIS_CONNECT_TIMEOUT_MS,
        "socket_timeout": REDIS_SOCKET_TIMEOUT_MS,
        "wait_timeout": REDIS_WAIT_TIMEOUT_MS,
        "pool_size": REDIS_POOL_SIZE,
    }
    return [f"--cache-config=redis,{key}={value}" for key, value in settings.items()]


def cache_env(model: ServedModel) -> list[Manifest]:
    cache = model.response_cache
    return [response_cache.password_env(model)] if cache is not None and cache.redis else []


def _python_path(model: ServedModel) -> list[Manifest]:
    """Python steps' installed requirements (`pip_requirements`), for their stubs."""
    path = pip_requirements.python_path(model)
    return [{"name": "PYTHONPATH", "value": path}] if path else []


def triton_container(env: ServingEnvironment, model: ServedModel, image: str) -> Manifest:
    return {
        "name": "triton",
        "image": image,
        # No `command`: the image's entrypoint (`containers.NGC_ENTRYPOINT`) runs first
        # and then execs these arguments, so its CUDA forward compatibility still applies.
        "args": [TRITON_SERVER, *triton_args(model, model.release(env))],
        "env": [{"name": "HOME", "value": HOME}, *cache_env(model), *_python_path(model)],
        "ports": [
            {"name": name, "containerPort": port, "protocol": "TCP"} for name, port in PORTS.items()
        ],
        "resources": serving_resources(model),
        "securityContext": container_security_context(),
        "volumeMounts": [
            mount("home", HOME),
            mount("tmp", "/tmp"),
            mount("dshm", "/dev/shm"),
            mount("models", MODELS_DIR, read_only=True),
        ],
        **probes(model, ready_path=f"/v2/models/{model.name}/ready", live_path=LIVE_PATH),
    }


def triton_fetch_container(env: ServingEnvironment, model: ServedModel, model_uri: str) -> Manifest:
    """Lays out the one-model repository: ``/models/<m>/config.pbtxt`` from the ConfigMap
    and ``/models/<m>/1/model.plan|model.onnx`` from the store (`model_uri`: the engine's
    keyed prefix, or the ONNX file).

    An engine is one file, in the attempt folder its marker names
    (`store_cli.resolve_attempt`). An ONNX model is fetched with its directory, so its external data
    files sit beside it as ONNX Runtime looks for them ("relative to the directory the ONNX
    model is stored in", https://onnx.ai/onnx/repo-docs/ExternalData.html), then named
    ``model.onnx`` as Triton expects (a TorchScript file ``model.pt``); the file name reaches
    the script only as ``$ONNX_FILE``. A pipeline: `triton_pipeline.fetch_container`.
    """
    if model.pipeline is not None:
        return triton_pipeline.fetch_container(env, model)
    version_dir = f"{MODELS_DIR}/{model.name}/1"
    config = f'cp "{CONFIG_DIR}/{CONFIG_FILE}" "{MODELS_DIR}/{model.name}/{CONFIG_FILE}"'
    mounts = [mount("models", MODELS_DIR), mount("triton-config", CONFIG_DIR, read_only=True)]
    if model.tensorrt is not None:
        return store_container(
            env,
            naming.MODEL_READER_SA,
            "fetch-model",
            shell(
                f'mkdir -p "{version_dir}"',
                config,
                *resolve_attempt(env, "ENGINE_URI", "TensorRT engine"),
                store_copy(
                    env, f'"${{ATTEMPT_URI}}{ENGINE_FILE}"', f'"{version_dir}/{model_file(model)}"'
                ),
            ),
            [{"name": "ENGINE_URI", "value": model_uri}],
            mounts,
        )
    directory, file = source_location(model)
    return store_container(
        env,
        naming.MODEL_READER_SA,
        "fetch-model",
        shell(
            f'mkdir -p "{version_dir}"',
            config,
            store_sync(env, '"$MODEL_DIR"', f'"{version_dir}"'),
            f'if [ "$ONNX_FILE" != {model_file(model)} ]; then',
            f'  mv "{version_dir}/$ONNX_FILE" "{version_dir}/{model_file(model)}"',
            "fi",
        ),
        [{"name": "MODEL_DIR", "value": directory}, {"name": "ONNX_FILE", "value": file}],
        mounts,
    )
