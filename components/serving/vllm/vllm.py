"""The vLLM container of a model: `vllm serve` with the model's settings.

One model per server (vLLM's design); the OpenAI-compatible API and ``/metrics`` share port
``http``. Every weight a replica loads — the model, an EAGLE draft model, LoRA adapters —
is copied from the model store into the ``models`` volume by an init container and served
with the Hugging Face hub offline (``HF_HUB_OFFLINE=1``): an ``hf://org/name@revision``
source is read from its staged copy (`weights.staged_uri`, written once per repository and
revision by the staging Job), so the serving pod holds no Hub token and passes vLLM no
``hf://`` name; ``--served-model-name`` keeps the name clients use. A model whose scale-out
levers choose ``stream_weights`` reads its own weights from the store instead
(`weight_streaming`, built on this module).

The image runs as root by default; here it runs as uid 10001 with ``HOME`` (and so every
cache: Triton kernels, FlashInfer JIT, HF) on a writable emptyDir, so the root filesystem
stays read-only. ``VLLM_CACHE_ROOT`` is its own emptyDir (`CACHE_ROOT`): vLLM keeps its
``torch.compile`` artifacts under ``$VLLM_CACHE_ROOT/torch_compile_cache/<hash>/``
(vllm v0.10.2 ``vllm/compilation/backends.py``), and the fetch init container copies the
model's staged cache there when the store has one (`vllm_compile`), so a new replica loads
the compiled graphs instead of compiling them. Usage statistics and hub telemetry are
turned off.

Only the routes a client, the kubelet and Prometheus need answer: inferplane's route guard
(`route_guard`, ``--middleware``, read-only ConfigMap ``<model>-route-guard`` at
`ROUTE_GUARD_DIR`, the only folder ``PYTHONPATH`` names) answers 404 for every path the
release's ``routes.txt`` does not classify client, probe or metrics, before vLLM's API key
is checked.
"""

from __future__ import annotations

import hashlib
from typing import Final, NamedTuple

from inferplane.blueprint import naming
from inferplane.blueprint.model import VllmSettings
from inferplane.blueprint.upstream.vllm_routes import served_routes
from inferplane.components.serving.containers import (
    HOME,
    MODELS_DIR,
    PORTS,
    Manifest,
    container_security_context,
    literal,
    literal_env,
    mount,
    probes,
    serving_resources,
    shell,
)
from inferplane.components.serving.spec import ServedModel, ServingEnvironment
from inferplane.components.serving.store.store_cli import (
    published,
    resolve_attempt,
    store_container,
    store_sync,
    sync_published,
)
from inferplane.components.serving.store.weights import (
    DRAFT_DIR,
    hub_source,
    is_staged,
    source_uri,
    staged_uri,
)
from inferplane.components.serving.vllm.route_guard import shipped_source
from inferplane.components.serving.vllm.vllm_flags import speculative_config, vllm_flags

VLLM_DTYPE: Final = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32"}
CACHE_ROOT: Final = "/vllm-cache"
"""``VLLM_CACHE_ROOT`` of serving pods and compile-cache Jobs (an emptyDir, volume
``vllm-cache``); v0.10.2 and v0.33.0 read it in ``vllm/envs.py`` (default
``$XDG_CACHE_HOME/vllm``)."""
COMPILE_CACHE_DIR: Final = f"{CACHE_ROOT}/torch_compile_cache"
"""Where vLLM v0.10.2 writes and looks up its ``torch.compile`` artifacts:
``os.path.join(envs.VLLM_CACHE_ROOT, "torch_compile_cache", hash_key)`` in
``VllmBackend.__call__`` (``vllm/compilation/backends.py``); Inductor's and Triton's caches
are redirected inside it (``InductorAdaptor.initialize_cache`` in
``vllm/compilation/compiler_interface.py``: "users only need to copy the cache_dir to
another machine to reuse the cache"). v0.33.0 builds the same path in
``vllm/compilation/backends.py`` and keeps its AOT artifacts under it too
(``VLLM_CACHE_ROOT/torch_compile_cache/torch_aot_compile/{hash}``,
``vllm/compilation/decorators.py``)."""
CHAT_TEMPLATE_DIR: Final = "/etc/inferplane/chat-template"
"""Where ConfigMap ``<model>-chat-template`` is mounted, read-only (volume
``chat-template``): the only file ``--chat-template`` names. vLLM opens any
``--chat-template`` value as a path first and serves what it read, at ``/tokenizer_info``
among others (v0.33.0 ``_load_chat_template``, vllm/renderers/chat_utils/chat_template.py),
so the blueprint's template is only ever text inferplane writes here, never a value vLLM
could resolve to another file of the pod."""
CHAT_TEMPLATE_VOLUME: Final = "chat-template"
CACHE_VOLUME: Final = "vllm-cache"
CACHE_SUBDIR: Final = "torch_compile_cache"
"""The staged cache's folder inside the attempt folder its marker names."""
ROUTE_GUARD_DIR: Final = "/etc/inferplane/route-guard"
"""Where ConfigMap ``<model>-route-guard`` is mounted, read-only (volume ``route-guard``),
and the only folder ``PYTHONPATH`` adds: it holds `ROUTE_GUARD_MODULE` alone."""
ROUTE_GUARD_VOLUME: Final = "route-guard"
ROUTE_GUARD_MODULE: Final = "inferplane_route_guard"
"""The module name of inferplane's route guard in the serving container
(`inferplane.components.serving.vllm.route_guard`, with the release's served routes filled in):
``--middleware inferplane_route_guard.RouteGuard``. vLLM imports it with
``importlib.import_module`` and adds the class with ``app.add_middleware`` (v0.10.2
vllm/entrypoints/openai/api_server.py ``build_app``; v0.33.0
vllm/entrypoints/serve/middleware/register.py ``init_entrypoints_middleware``)."""


def vllm_weights(model: ServedModel) -> str:
    """What `vllm serve` loads: the local copy of the weights, whatever their source."""
    return f"{MODELS_DIR}/{model.name}"


def lora_dir(name: str) -> str:
    """Where an adapter's files are copied in the models volume: under a dot directory,
    which no model's own directory (a DNS-1123 label) can be, as for `weights.DRAFT_DIR`."""
    return f"{MODELS_DIR}/.lora/{name}"


def chat_template_config_map(model: ServedModel) -> str:
    """The ConfigMap holding the model's `vllm.chat_template`."""
    return f"{model.name}-chat-template"


def chat_template_file(model: ServedModel) -> str | None:
    """The file name of the model's chat template in its ConfigMap, named by its content
    (``chat-template-<12 hex>.jinja``), so a changed template is a changed argument: the
    pods roll and the compile key changes; None without a template."""
    text = model.vllm.chat_template if model.vllm else None
    if text is None:
        return None
    return f"chat-template-{hashlib.sha256(text.encode()).hexdigest()[:12]}.jinja"


def chat_template_volume(model: ServedModel) -> Manifest | None:
    """The ``chat-template`` volume of a model with a template (its ConfigMap), else None."""
    if chat_template_file(model) is None:
        return None
    return {"name": CHAT_TEMPLATE_VOLUME, "configMap": {"name": chat_template_config_map(model)}}


def chat_template_mounts(model: ServedModel) -> list[Manifest]:
    """The read-only mount of the template's ConfigMap, when the model has a template."""
    if chat_template_file(model) is None:
        return []
    return [mount(CHAT_TEMPLATE_VOLUME, CHAT_TEMPLATE_DIR, read_only=True)]


def route_guard_config_map(model: ServedModel) -> str:
    """The ConfigMap holding the model's route guard module."""
    return f"{model.name}-route-guard"


def route_guard_data(env: ServingEnvironment) -> dict[str, str]:
    """The route guard's ConfigMap data: the module, answering only the routes of the
    environment's vLLM release classified client, probe or metrics."""
    return {f"{ROUTE_GUARD_MODULE}.py": shipped_source(served_routes(env.vllm_version))}


def route_guard_volume(model: ServedModel) -> Manifest:
    """The ``route-guard`` volume (the model's route guard ConfigMap)."""
    return {"name": ROUTE_GUARD_VOLUME, "configMap": {"name": route_guard_config_map(model)}}


def route_guard_mount() -> Manifest:
    return mount(ROUTE_GUARD_VOLUME, ROUTE_GUARD_DIR, read_only=True)


def vllm_args(model: ServedModel) -> list[str]:
    """Arguments of ``vllm serve``: one model, its precision, and every blueprint setting.

    Precision: fp16/bf16/fp32 set ``--dtype``; fp8 quantizes on load (``--quantization
    fp8``); int8/int4 checkpoints carry their quantization config, which vLLM detects.
    ``vllm.quantization`` overrides all of that. ``--middleware`` is inferplane's route
    guard (`ROUTE_GUARD_MODULE`); `extra_args` cannot set it (``serve_flags.txt``: owned).
    """
    s = model.vllm or VllmSettings()
    quantization = s.quantization or ("fp8" if model.precision == "fp8" else None)
    spec = s.speculative
    flags = vllm_flags(
        weights=vllm_weights(model),
        port=PORTS["http"],
        served_names=[model.name, *s.served_model_aliases],
        tensor_parallel_size=model.gpus,
        dtype=VLLM_DTYPE.get(model.precision),
        quantization=quantization,
        max_model_len=s.max_model_len,
        max_num_seqs=s.max_num_seqs,
        max_num_batched_tokens=s.max_num_batched_tokens,
        gpu_memory_utilization=s.gpu_memory_utilization,
        kv_cache_dtype=s.kv_cache_dtype,
        enable_prefix_caching=s.enable_prefix_caching,
        enable_chunked_prefill=s.enable_chunked_prefill,
        enforce_eager=s.enforce_eager,
        speculative=speculative_config(
            spec.method,
            spec.num_speculative_tokens,
            # The staged draft's local copy: no revision, the directory is that revision.
            draft_repo=DRAFT_DIR if spec.draft_repo else None,
            prompt_lookup_max=spec.prompt_lookup_max,
            prompt_lookup_min=spec.prompt_lookup_min,
        )
        if spec
        else None,
        lora_modules=[(a.name, lora_dir(a.name)) for a in s.lora.adapters] if s.lora else (),
        max_loras=s.lora.max_loras if s.lora else None,
        max_lora_rank=s.lora.max_lora_rank if s.lora else None,
        chat_template=f"{CHAT_TEMPLATE_DIR}/{name}"
        if (name := chat_template_file(model))
        else None,
        tool_call_parser=s.tool_call_parser,
        histogram_buckets=dict(model.histogram_buckets),
    )
    return [*flags, "--middleware", f"{ROUTE_GUARD_MODULE}.RouteGuard", *s.extra_args]


def vllm_env(model: ServedModel) -> list[Manifest]:
    out = [
        {"name": "HOME", "value": HOME},
        # torch.compile and Triton kernels look the user up; uid 10001 has no passwd entry.
        {"name": "USER", "value": "inferplane"},
        {"name": "XDG_CACHE_HOME", "value": f"{HOME}/.cache"},
        {"name": "VLLM_CACHE_ROOT", "value": CACHE_ROOT},
        {"name": "HF_HOME", "value": f"{MODELS_DIR}/.huggingface"},
        {"name": "VLLM_NO_USAGE_STATS", "value": "1"},
        {"name": "DO_NOT_TRACK", "value": "1"},
        {"name": "HF_HUB_DISABLE_TELEMETRY", "value": "1"},
        # Every file is local: the hub is never asked, not even for a revision check.
        {"name": "HF_HUB_OFFLINE", "value": "1"},
        {"name": "TRANSFORMERS_OFFLINE", "value": "1"},
        # The route guard's folder only (`ROUTE_GUARD_DIR`): vllm.env may not set PYTHONPATH.
        {"name": "PYTHONPATH", "value": ROUTE_GUARD_DIR},
    ]
    # vllm.env, verbatim (validation refused owned and secret-looking names).
    out += [{"name": k, "value": v} for k, v in (model.vllm.env if model.vllm else ())]
    return out


def vllm_container(env: ServingEnvironment, model: ServedModel, image: str) -> Manifest:
    return {
        "name": "vllm",
        "image": image,
        "command": ["vllm", "serve"],
        "args": [literal(a) for a in vllm_args(model)],
        "env": literal_env(vllm_env(model)),
        "ports": [{"name": "http", "containerPort": PORTS["http"], "protocol": "TCP"}],
        "resources": serving_resources(model),
        "securityContext": container_security_context(),
        "volumeMounts": [
            mount("home", HOME),
            mount("tmp", "/tmp"),
            mount("dshm", "/dev/shm"),
            mount("models", MODELS_DIR, read_only=True),
            mount(CACHE_VOLUME, CACHE_ROOT),
            route_guard_mount(),
            *chat_template_mounts(model),
        ],
        **probes(model, ready_path="/health", live_path="/health"),
    }


class WeightCopy(NamedTuple):
    """One directory a replica copies from the store."""

    variable: str
    """The container variable holding `uri`."""
    uri: str
    """The store prefix: the blueprint's URI, or an hf:// source's staged prefix."""
    target: str
    """The local directory."""
    staged: bool
    """`uri` is a staged prefix, published by attempt: the copy reads the folder its
    marker names (`store_cli.sync_published`)."""


def weight_copies(env: ServingEnvironment, model: ServedModel) -> list[WeightCopy]:
    """Every weight a replica copies: the model (an hf:// source from its staged copy), an
    EAGLE draft model (always staged), LoRA adapters."""
    copies = [
        WeightCopy(
            "MODEL_URI",
            source_uri(env, model, model.source),
            f"{MODELS_DIR}/{model.name}",
            is_staged(model.source),
        )
    ]
    spec = model.vllm.speculative if model.vllm else None
    if spec and spec.draft_repo:
        draft = hub_source(
            model.name, ("vllm", "speculative", "draft_model"), spec.draft_repo, spec.draft_revision
        )
        copies.append(WeightCopy("DRAFT_URI", staged_uri(env, draft, model.name), DRAFT_DIR, True))
    adapters = model.vllm.lora.adapters if model.vllm and model.vllm.lora else ()
    for i, adapter in enumerate(adapters):
        copies.append(
            WeightCopy(
                f"LORA_URI_{i}",
                source_uri(env, model, adapter.source),
                lora_dir(adapter.name),
                is_staged(adapter.source),
            )
        )
    return copies


def vllm_fetch_container(
    env: ServingEnvironment,
    model: ServedModel,
    compile_cache_uri: str | None = None,
    skip_file: str | None = None,
) -> Manifest:
    """Copies the weights, an EAGLE draft model and LoRA adapters from the model store
    (an hf:// source from its staged copy) into the models volume, and the staged
    ``torch.compile`` cache at `compile_cache_uri` (a directory URI ending in ``/``) into
    `COMPILE_CACHE_DIR` when its completion marker is there (a miss compiles as before).
    With `skip_file`, nothing is copied once that file exists (a compile-cache Job whose
    cache is already staged)."""
    return fetch_container(env, model, weight_copies(env, model), compile_cache_uri, skip_file)


def fetch_container(
    env: ServingEnvironment,
    model: ServedModel,
    copies: list[WeightCopy],
    compile_cache_uri: str | None = None,
    skip_file: str | None = None,
    more: tuple[list[str], list[Manifest], list[Manifest]] = ([], [], []),
) -> Manifest:
    """`vllm_fetch_container` copying `copies` only, then running `more`: (shell lines,
    variables, mounts) of a caller (`weight_streaming` resolves a staged copy's folder)."""
    lines: list[str] = [f'if [ -f "{skip_file}" ]; then exit 0; fi'] if skip_file else []
    for copy in copies:
        # URIs go through the environment, never into the shell text.
        lines += [
            f'mkdir -p "{copy.target}"',
            *sync_published(env, copy.variable, f'"{copy.target}"', "staged copy", copy.staged),
        ]
    more_lines, more_env, more_mounts = more
    lines += more_lines
    uris = [{"name": copy.variable, "value": literal(copy.uri)} for copy in copies]
    uris += more_env
    mounts = [mount("models", MODELS_DIR), *more_mounts]
    if compile_cache_uri is not None:
        lines += [
            f"if {published(env, 'COMPILE_CACHE_URI')}; then",
            *(f"  {line}" for line in resolve_attempt(env, "COMPILE_CACHE_URI", "compile cache")),
            f'  mkdir -p "{COMPILE_CACHE_DIR}"',
            "  " + store_sync(env, f'"${{ATTEMPT_URI}}{CACHE_SUBDIR}"', f'"{COMPILE_CACHE_DIR}"'),
            "else",
            '  echo "no staged torch.compile cache at $COMPILE_CACHE_URI: vLLM compiles"',
            "fi",
        ]
        uris.append({"name": "COMPILE_CACHE_URI", "value": compile_cache_uri})
        mounts.append(mount(CACHE_VOLUME, CACHE_ROOT))
    return store_container(
        env, naming.MODEL_READER_SA, "fetch-weights", shell(*lines), uris, mounts
    )
