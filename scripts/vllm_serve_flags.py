"""Classifies every option of `vllm serve` and every variable of `vllm/envs.py`, read from the
source of the pinned vLLM wheel, into the allowlists that `vllm.extra_args` and `vllm.env`
are checked against.

    pip download vllm==0.10.2 --no-deps -d ~/.cache/inferplane/vllm     # outside the repo
    unzip -q ~/.cache/inferplane/vllm/vllm-0.10.2-*.whl 'vllm/*' -d ~/.cache/inferplane/vllm/x
    python scripts/vllm_serve_flags.py ~/.cache/inferplane/vllm/vllm-0.10.2-*.whl \
        ~/.cache/inferplane/vllm/x/vllm

writes `inferplane/blueprint/vllm_serve_flags.txt` and `inferplane/blueprint/vllm_env_vars.txt`
(`--check` compares instead of writing). Every name the wheel defines must be classified
here, and every name classified here must exist in the wheel: a new pin does not produce a
table until a person has decided about each new option and variable.

The parser of `vllm serve` is built by `vllm/entrypoints/openai/cli_args.py`
(`make_arg_parser`: its own options, then `FrontendArgs.add_cli_args`, one `--<field>` per
dataclass field) and `vllm/engine/arg_utils.py` (`EngineArgs.add_cli_args`: explicit
`add_argument` calls). A field typed ``bool`` (or ``Optional[bool]``) gets
``argparse.BooleanOptionalAction`` in `arg_utils._compute_kwargs`, i.e. also ``--no-<name>``.
argparse adds ``-h``/``--help`` to every parser (``add_help=True``, Lib/argparse.py).
The variables are the keys of ``environment_variables`` in `vllm/envs.py`.
Importing vLLM needs torch and a GPU stack, so the source is read as text (ast) instead.

`tests/blueprint/test_vllm_allowlists.py` regenerates both tables from the names they list
(no download) and fails when they differ from what this script's classification says.
"""

from __future__ import annotations

import ast
import hashlib
import re
import sys
from collections.abc import Iterable
from pathlib import Path

# --- reading the wheel ---------------------------------------------------------------------


def _annotations(root: Path) -> dict[tuple[str, str], str]:
    """(class, field) -> annotation source, over every class of the config and arg modules."""
    out: dict[tuple[str, str], str] = {}
    files = [
        *sorted((root / "config").glob("*.py")),
        root / "engine" / "arg_utils.py",
        root / "entrypoints" / "openai" / "cli_args.py",
    ]
    for path in files:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        out[(node.name, item.target.id)] = ast.unparse(item.annotation)
    return out


def _is_bool(annotation: str) -> bool:
    """`contains_type(type_hints, bool)`: bool among the top-level types (Optional, Union,
    Annotated/SkipValidation unwrapped); not bool nested in a container."""
    top = re.sub(r"\b(list|dict|set|tuple|Sequence|Mapping)\[[^\]]*\]", "", annotation)
    return re.search(r"\bbool\b", top) is not None


def _kwargs_classes(tree: ast.AST) -> dict[str, str]:
    """``x_kwargs = get_kwargs(XConfig)`` -> ``{"x_kwargs": "XConfig"}``."""
    out = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func) == "get_kwargs"
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            out[node.targets[0].id] = ast.unparse(node.value.args[0])
    return out


def _field_of(call: ast.Call) -> tuple[str, str] | None:
    """``**model_kwargs["dtype"]`` -> ("model_kwargs", "dtype")."""
    for k in call.keywords:
        v = k.value
        if (
            k.arg is None
            and isinstance(v, ast.Subscript)
            and isinstance(v.value, ast.Name)
            and isinstance(v.slice, ast.Constant)
        ):
            return v.value.id, str(v.slice.value)
    return None


def options(root: Path) -> tuple[set[str], dict[str, str]]:
    """(every long option, short option -> its long option) of `vllm serve`."""
    annotations = _annotations(root)
    found: set[str] = {"--help"}
    shorts: dict[str, str] = {"-h": "--help"}
    for rel in ("engine/arg_utils.py", "entrypoints/openai/cli_args.py"):
        tree = ast.parse((root / rel).read_text())
        classes = _kwargs_classes(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr != "add_argument":
                continue
            names = [
                a.value
                for a in node.args
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            ]
            longs = [n for n in names if n.startswith("--")]
            if not longs:
                continue
            found.update(longs)
            for n in names:
                if n.startswith("-") and not n.startswith("--"):
                    shorts[n] = longs[0]
            boolean = any(
                k.arg == "action" and "BooleanOptionalAction" in ast.unparse(k.value)
                for k in node.keywords
            )
            field = _field_of(node)
            annotation = ""
            if field is not None and field[0] in classes:
                annotation = annotations.get((classes[field[0]], field[1]), "")
            if boolean or _is_bool(annotation):
                found.update(f"--no-{n[2:]}" for n in longs)
    # FrontendArgs: one option per field, added in a loop (cli_args.add_cli_args).
    tree = ast.parse((root / "entrypoints/openai/cli_args.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "FrontendArgs":
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    name = item.target.id.replace("_", "-")
                    found.add(f"--{name}")
                    if _is_bool(ast.unparse(item.annotation)):
                        found.add(f"--no-{name}")
    return found, shorts


def env_vars(root: Path) -> set[str]:
    """The keys of ``environment_variables`` in `vllm/envs.py`."""
    tree = ast.parse((root / "envs.py").read_text())
    for node in ast.walk(tree):
        target = (
            node.targets[0]
            if isinstance(node, ast.Assign)
            else node.target
            if isinstance(node, ast.AnnAssign)
            else None
        )
        if (
            isinstance(target, ast.Name)
            and target.id == "environment_variables"
            and isinstance(node.value, ast.Dict)  # type: ignore[union-attr]
        ):
            return {
                k.value
                for k in node.value.keys  # type: ignore[union-attr]
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
    raise SystemExit("vllm/envs.py: no environment_variables dict")


# --- the classification ---------------------------------------------------------------------
def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Refusal classes (policies/README.md, threat model): whatever loads code, opens an
# unauthenticated endpoint, downloads from or sends to elsewhere, logs prompts, or turns off
# what the stack depends on. Reasons are shown to blueprint authors; sources in comments.

CODE = "loads and runs Python code named by the blueprint or a model repository"
ENDPOINT = "opens an endpoint no NetworkPolicy or API key guards"
ELSEWHERE = "reads from or sends to a place other than the model store"
PROMPTS = "writes prompts or completions to the logs"

# flag -> how to get the same from the blueprint (`<m>` is the model's key).
OWNED_FLAGS: dict[str, str] = {
    "--model": "set models.<m>.source instead",
    "--revision": "pin the revision in models.<m>.source instead (hf://org/name@revision)",
    "--port": "remove it: inferplane serves on its fixed port, behind the model's Service",
    "--host": "remove it: inferplane listens on every interface of the pod",
    "--uds": "remove it: inferplane serves on its fixed port, behind the model's Service",
    "--tensor-parallel-size": "set models.<m>.gpus instead",
    "--pipeline-parallel-size": "set models.<m>.gpus instead: inferplane splits a model over "
    "its GPUs by tensor parallelism",
    "--decode-context-parallel-size": "set models.<m>.gpus instead: inferplane splits a model "
    "over its GPUs by tensor parallelism",
    "--served-model-name": "the model's key is its name; add more with "
    "models.<m>.vllm.served_model_aliases",
    "--dtype": "set models.<m>.precision instead",
    "--quantization": "set models.<m>.vllm.quantization instead",
    "--max-model-len": "set models.<m>.vllm.max_model_len instead",
    "--max-num-seqs": "set models.<m>.vllm.max_num_seqs instead",
    "--max-num-batched-tokens": "set models.<m>.vllm.max_num_batched_tokens instead",
    "--gpu-memory-utilization": "set models.<m>.vllm.gpu_memory_utilization instead",
    # EngineArgs.kv_cache_memory_bytes: "when specified, gpu_memory_utilization is ignored"
    # (vllm/config/cache.py, CacheConfig.kv_cache_memory_bytes docstring).
    "--kv-cache-memory-bytes": "set models.<m>.vllm.gpu_memory_utilization instead",
    "--kv-cache-dtype": "set models.<m>.vllm.kv_cache_dtype instead",
    "--enable-prefix-caching": "set models.<m>.vllm.enable_prefix_caching instead",
    # KVEventsConfig publishes on a ZMQ endpoint (vllm/config/kv_events.py, default
    # "tcp://*:5557"): inferplane opens it only for the llm-d router's precise prefix scoring.
    "--kv-events-config": "set models.<m>.routing.prefix_cache: precise instead (the router "
    "subscribes to the events)",
    "--enable-chunked-prefill": "set models.<m>.vllm.enable_chunked_prefill instead",
    "--enforce-eager": "set models.<m>.vllm.enforce_eager instead",
    "--speculative-config": "set models.<m>.vllm.speculative instead",
    "--enable-lora": "set models.<m>.vllm.lora instead",
    "--lora-modules": "set models.<m>.vllm.lora.adapters instead",
    "--default-mm-loras": "set models.<m>.vllm.lora.adapters instead",
    "--max-loras": "set models.<m>.vllm.lora.max_loras instead",
    "--max-lora-rank": "set models.<m>.vllm.lora.max_lora_rank instead",
    "--chat-template": "set models.<m>.vllm.chat_template instead",
    "--tool-call-parser": "set models.<m>.vllm.tool_call_parser instead",
    "--enable-auto-tool-choice": "set models.<m>.vllm.tool_call_parser instead (it turns this on)",
    "--download-dir": "remove it: inferplane stages the weights (models.<m>.source)",
    "--data-parallel-size": "scale with models.<m>.replicas instead",
    # Not fields, but able to change any of the above, or to put a secret in plain text.
    # `--config` YAML is spliced into the command line (FlexibleArgumentParser.
    # _pull_args_from_config, vllm/utils/__init__.py).
    "--config": "write the options in extra_args instead: a config file could set owned flags",
    "--api-key": "remove it: an API key is a secret, and arguments are stored in plain text",
}

# flag -> why it is refused (no blueprint field gives the same).
REFUSED_FLAGS: dict[str, str] = {
    # transformers' `trust_remote_code` imports the repository's own modeling/tokenizer .py
    # files (vllm/transformers_utils/config.py, get_config; transformers dynamic_module_utils).
    "--trust-remote-code": CODE + " (the model repository's .py files)",
    "--code-revision": CODE + " (a revision of the repository's .py files)",
    # Imported by qualified name: ToolParserManager.import_tool_parser
    # (vllm/entrypoints/openai/tool_parsers/abstract_tool_parser.py), middleware in
    # build_app (vllm/entrypoints/openai/api_server.py: importlib.import_module),
    # resolve_obj_by_qualname for worker/scheduler classes and logits processors
    # (vllm/v1/sample/logits_processor/__init__.py), IO processor plugins
    # (vllm/plugins/io_processors/__init__.py), logging dictConfig "()" factories
    # (load_log_config in api_server.py; https://docs.python.org/3/library/logging.config.html).
    "--tool-parser-plugin": CODE,
    "--middleware": CODE,
    "--worker-cls": CODE,
    "--worker-extension-cls": CODE,
    "--scheduler-cls": CODE,
    "--logits-processors": CODE,
    "--logits-processor-pattern": CODE + " (clients name the processors to import)",
    "--io-processor-plugin": CODE,
    "--log-config-file": CODE + " (logging configs can name factories to call)",
    # CompilationConfig.inductor_passes is imported by qualified name
    # (vllm/config/compilation.py), and cache_dir moves the compile cache inferplane stages.
    "--compilation-config": CODE + " (inductor passes), and moves the staged compile cache "
    "(models.<m>.vllm.enforce_eager turns compilation off)",
    # KVTransferConfig.kv_connector_module_path is imported (vllm/config/kv_transfer.py), and
    # connectors listen for peers; KVEventsConfig publishes on a ZMQ endpoint
    # (vllm/config/kv_events.py, default "tcp://*:5557").
    "--kv-transfer-config": CODE + ", and " + ENDPOINT,
    "--additional-config": "passes unreviewed settings to platform plugins",
    # Rendered media from a local path: MediaConnector (vllm/multimodal/utils.py) reads
    # file:// URLs under allowed_local_media_path.
    "--allowed-local-media-path": "lets clients read files of the serving pod",
    # CORS (fastapi CORSMiddleware in build_app): lets other web sites' scripts call the API.
    "--allowed-origins": "lets scripts of other web sites call the API (CORS)",
    "--allowed-methods": "lets scripts of other web sites call the API (CORS)",
    "--allowed-headers": "lets scripts of other web sites call the API (CORS)",
    "--allow-credentials": "lets scripts of other web sites call the API (CORS)",
    # Tool servers: MCP/demo tool servers the server calls (vllm/entrypoints/tool_server.py).
    "--tool-server": ELSEWHERE + " (tool servers the model calls)",
    "--tokenizer": ELSEWHERE + ": the tokenizer is the one staged with the weights",
    "--tokenizer-revision": ELSEWHERE + ": the tokenizer is the one staged with the weights",
    "--hf-config-path": ELSEWHERE + ": the config is the one staged with the weights",
    "--generation-config": ELSEWHERE + ": generation defaults come with the weights",
    "--hf-token": "the serving pods read no Hub (the weights are staged)",
    # Loaders such as tensorizer and runai_streamer read object stores directly
    # (vllm/model_executor/model_loader/).
    "--load-format": ELSEWHERE + " (tensorizer and runai_streamer read other stores)",
    "--model-loader-extra-config": ELSEWHERE + " (a loader's URIs and credentials)",
    "--otlp-traces-endpoint": ELSEWHERE + " (traces of every request)",
    "--collect-detailed-traces": "needs --otlp-traces-endpoint, which is refused",
    "--distributed-executor-backend": "Ray and external launchers join workers elsewhere, "
    "and inferplane runs one pod per replica",
    "--ray-workers-use-nsight": "Ray and external launchers join workers elsewhere, "
    "and inferplane runs one pod per replica",
    # RequestLogger logs each prompt (vllm/entrypoints/logger.py); enable_log_outputs logs each
    # completion (serving_chat.py / serving_completion.py).
    "--enable-log-requests": PROMPTS,
    "--enable-log-outputs": PROMPTS,
    "--no-disable-log-requests": PROMPTS,
    # disable_log_stats=True builds AsyncLLM with log_stats=False (vllm/v1/engine/async_llm.py):
    # no stat loggers, so the Prometheus gauges KEDA scales on stay at 0 while /metrics answers.
    "--disable-log-stats": "turns off the queue and latency metrics the autoscaler reads",
    "--headless": "turns off the HTTP server the Service, probes and metrics use",
    "--api-server-count": "inferplane sizes each pod for one API server process",
    "--data-parallel-address": "data parallelism across pods opens RPC ports the NetworkPolicy "
    "closes (scale with models.<m>.replicas)",
    "--data-parallel-backend": "data parallelism across pods opens RPC ports the NetworkPolicy "
    "closes (scale with models.<m>.replicas)",
    "--data-parallel-hybrid-lb": "data parallelism across pods opens RPC ports the "
    "NetworkPolicy closes (scale with models.<m>.replicas)",
    "--data-parallel-rank": "data parallelism across pods opens RPC ports the NetworkPolicy "
    "closes (scale with models.<m>.replicas)",
    "--data-parallel-rpc-port": "data parallelism across pods opens RPC ports the "
    "NetworkPolicy closes (scale with models.<m>.replicas)",
    "--data-parallel-size-local": "data parallelism across pods opens RPC ports the "
    "NetworkPolicy closes (scale with models.<m>.replicas)",
    "--data-parallel-start-rank": "data parallelism across pods opens RPC ports the "
    "NetworkPolicy closes (scale with models.<m>.replicas)",
    # The probes and the metrics scrape speak plain HTTP to the pod.
    "--ssl-keyfile": "TLS in the pod breaks the probes and the metrics scrape (plain HTTP)",
    "--ssl-certfile": "TLS in the pod breaks the probes and the metrics scrape (plain HTTP)",
    "--ssl-ca-certs": "TLS in the pod breaks the probes and the metrics scrape (plain HTTP)",
    "--ssl-cert-reqs": "TLS in the pod breaks the probes and the metrics scrape (plain HTTP)",
    "--enable-ssl-refresh": "TLS in the pod breaks the probes and the metrics scrape",
    # Prompt embeddings are decoded with torch.load and to_dense() (vllm/entrypoints/
    # renderer.py, load_prompt_embeds): CVE-2025-62164, memory corruption from a crafted
    # sparse tensor, affects vLLM 0.10.2 up to 0.11.0.
    "--enable-prompt-embeds": "decodes client tensors with torch.load, exploitable in this "
    "vLLM (CVE-2025-62164)",
    "--help": "prints the help and exits, so the server never starts",
}

ALLOWED_FLAGS: frozenset[str] = _names(
    """
    --async-scheduling --block-size --calculate-kv-scales --chat-template-content-format
    --config-format --convert --cpu-offload-gb --cuda-graph-sizes --disable-async-output-proc
    --disable-cascade-attn --disable-chunked-mm-input --disable-custom-all-reduce
    --disable-fastapi-docs --disable-frontend-multiprocessing --disable-hybrid-kv-cache-manager
    --disable-log-requests --disable-mm-preprocessor-cache --disable-sliding-window
    --disable-uvicorn-access-log --enable-eplb --enable-expert-parallel
    --enable-force-include-usage --enable-lora-bias --enable-multimodal-encoder-data-parallel
    --enable-prompt-tokens-details --enable-request-id-headers --enable-server-load-tracking
    --enable-sleep-mode --enable-tokenizer-info-endpoint --eplb-config --eplb-log-balancedness
    --eplb-step-interval --eplb-window-size --exclude-tools-when-tool-choice-none
    --fully-sharded-loras --guided-decoding-backend
    --guided-decoding-disable-additional-properties --guided-decoding-disable-any-whitespace
    --guided-decoding-disable-fallback --h11-max-header-count --h11-max-incomplete-event-size
    --hf-overrides --ignore-patterns --interleave-mm-strings --kv-sharing-fast-prefill
    --limit-mm-per-prompt --log-error-stack --logprobs-mode --long-prefill-token-threshold
    --lora-dtype --lora-extra-vocab-size --mamba-cache-dtype --mamba-ssm-cache-dtype
    --max-cpu-loras --max-log-len --max-logprobs --max-long-partial-prefills
    --max-num-partial-prefills --max-parallel-loading-workers --max-seq-len-to-capture
    --media-io-kwargs --mm-encoder-tp-mode --mm-processor-cache-gb --mm-processor-kwargs
    --model-impl --num-gpu-blocks-override --num-lookahead-slots --num-redundant-experts
    --override-attention-dtype --override-generation-config --override-pooler-config
    --preemption-mode --prefix-caching-hash-algo --pt-load-map-location --reasoning-parser
    --response-role --return-tokens-as-token-ids --root-path --rope-scaling --rope-theta
    --runner --safetensors-load-strategy --scheduler-delay-factor --scheduling-policy --seed
    --show-hidden-metrics-for-version --skip-mm-profiling --skip-tokenizer-init --swap-space
    --task --tokenizer-mode --use-tqdm-on-load --uvicorn-log-level
    """
)

# `--no-X` is classified as `X` unless listed here: turning off something refused is fine.
ALLOWED_NEGATIONS: frozenset[str] = frozenset(
    {
        "--no-trust-remote-code",
        "--no-enable-log-requests",
        "--no-enable-log-outputs",
        "--no-allow-credentials",
        "--no-enable-ssl-refresh",
        "--no-enable-prompt-embeds",
        "--no-ray-workers-use-nsight",
        "--no-data-parallel-hybrid-lb",
    }
)


def classify_flag(flag: str) -> tuple[str, str]:
    """(allowed|owned|refused, hint or reason) of one long option."""
    if flag in ALLOWED_NEGATIONS:
        return "allowed", ""
    base = flag
    if flag not in OWNED_FLAGS and flag not in REFUSED_FLAGS and flag not in ALLOWED_FLAGS:
        base = "--" + flag[5:] if flag.startswith("--no-") else flag
    if base in OWNED_FLAGS:
        return "owned", OWNED_FLAGS[base]
    if base in REFUSED_FLAGS:
        return "refused", REFUSED_FLAGS[base]
    if base in ALLOWED_FLAGS:
        return "allowed", ""
    raise KeyError(flag)


# Variables vLLM does not read through envs.py but that the container sets, or that change
# how any Python or native process starts; classified so their refusal names the reason.
# Everything not in a table is refused as unclassified.
OWNED_OTHER_ENV: dict[str, str] = {
    "HOME": "the server's home is a writable scratch volume",
    "USER": "the server runs as a fixed non-root user",
    "XDG_CACHE_HOME": "caches live on the scratch volume",
    "HF_HOME": "Hugging Face files live on the models volume",
    "HF_HUB_OFFLINE": "model-store weights are served offline (models.<m>.source decides)",
    "TRANSFORMERS_OFFLINE": "model-store weights are served offline (models.<m>.source decides)",
    "HF_HUB_DISABLE_TELEMETRY": "telemetry stays off",
    "DO_NOT_TRACK": "usage statistics stay off",
    "NVIDIA_VISIBLE_DEVICES": "the device plugin assigns the GPUs (models.<m>.gpus decides)",
}
REFUSED_OTHER_ENV: dict[str, str] = {
    # ld.so(8): LD_PRELOAD / LD_LIBRARY_PATH; python(1): PYTHONPATH, PYTHONSTARTUP,
    # PYTHONHOME; https://docs.python.org/3/using/cmdline.html#environment-variables
    "LD_PRELOAD": CODE + " (a shared library preloaded into every process)",
    "PYTHONPATH": CODE + " (modules shadowing vLLM's)",
    "PYTHONHOME": CODE + " (another Python standard library)",
    "PYTHONSTARTUP": CODE,
    "PYTHONINSPECT": "keeps the process in an interactive prompt",
    # Proxies: urllib, requests and huggingface_hub honour them
    # (https://docs.python.org/3/library/urllib.request.html#urllib.request.getproxies).
    "HTTPS_PROXY": ELSEWHERE + " (every outgoing request goes through a proxy)",
    "HTTP_PROXY": ELSEWHERE + " (every outgoing request goes through a proxy)",
    "ALL_PROXY": ELSEWHERE + " (every outgoing request goes through a proxy)",
    "NO_PROXY": ELSEWHERE + " (it decides which requests skip the proxy)",
    "HF_ENDPOINT": ELSEWHERE + " (another Hub)",
    "HF_TOKEN": "the serving pods read no Hub (tokens are references under secrets)",
}
ALLOWED_OTHER_ENV: dict[str, str] = {
    # https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html#nccl-debug
    "NCCL_DEBUG": "NCCL's log level",
    # https://pytorch.org/docs/stable/notes/cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf
    "PYTORCH_CUDA_ALLOC_CONF": "PyTorch's CUDA caching allocator",
    # https://www.openmp.org/spec-html/5.0/openmpse50.html (OMP_NUM_THREADS)
    "OMP_NUM_THREADS": "OpenMP threads",
    # https://github.com/huggingface/tokenizers: tokenizers/src/utils/parallelism.rs
    "TOKENIZERS_PARALLELISM": "Hugging Face tokenizers' threads",
}

# envs.py variable -> why inferplane owns it.
OWNED_VLLM_ENV: dict[str, str] = {
    "VLLM_CACHE_ROOT": "the compile cache lives where inferplane stages it",
    "VLLM_CONFIG_ROOT": "vLLM's config folder is inferplane's scratch volume",
    "VLLM_NO_USAGE_STATS": "usage statistics stay off",
    "VLLM_DO_NOT_TRACK": "usage statistics stay off",
    "CUDA_VISIBLE_DEVICES": "the device plugin assigns the GPUs (models.<m>.gpus decides)",
    "LOCAL_RANK": "the device plugin assigns the GPUs (models.<m>.gpus decides)",
    # Both change what the staged compile cache is and whether it is read
    # (vllm/compilation/backends.py, compiler_interface.py).
    "VLLM_DISABLE_COMPILE_CACHE": "inferplane stages and reads the compile cache; "
    "use models.<m>.vllm.enforce_eager to compile nothing",
    "VLLM_USE_STANDALONE_COMPILE": "the staged compile cache is built with vLLM's default",
    # v0 engine metrics differ from v1's (vllm/engine/metrics.py vs vllm/v1/metrics/loggers.py).
    "VLLM_USE_V1": "the autoscaler reads the v1 engine's metrics",
    "VLLM_HOST_IP": "inferplane's networking: the pod's address",
    "VLLM_PORT": "inferplane's networking: vLLM's internal ports",
    "VLLM_LOOPBACK_IP": "inferplane's networking: vLLM's internal ports",
    "VLLM_RPC_BASE_PATH": "inferplane's networking: vLLM's internal sockets",
    "VLLM_USAGE_SOURCE": "usage statistics stay off",
}

# envs.py variable -> why it is refused; sources are vllm/envs.py (the variable's comment)
# and the module named.
REFUSED_VLLM_ENV: dict[str, str] = {
    # api_server.py: `if envs.VLLM_SERVER_DEV_MODE:` adds /reset_prefix_cache, /sleep,
    # /wake_up, /collective_rpc ...; VLLM_TORCH_PROFILER_DIR adds /start_profile;
    # VLLM_ALLOW_RUNTIME_LORA_UPDATING adds /v1/load_lora_adapter (loads any path).
    "VLLM_SERVER_DEV_MODE": ENDPOINT + " (development routes, /collective_rpc among them)",
    "VLLM_TORCH_PROFILER_DIR": ENDPOINT + " (/start_profile, /stop_profile)",
    "VLLM_ALLOW_RUNTIME_LORA_UPDATING": ENDPOINT + " (/v1/load_lora_adapter loads any path)",
    "VLLM_LORA_RESOLVER_CACHE_DIR": "loads adapters clients name, outside models.<m>.vllm.lora",
    "VLLM_USE_MODELSCOPE": ELSEWHERE + " (ModelScope instead of the staged weights)",
    "VLLM_MODEL_REDIRECT_PATH": ELSEWHERE + " (redirects model names to other paths)",
    "VLLM_USAGE_STATS_SERVER": ELSEWHERE + " (usage reports)",
    "S3_ACCESS_KEY_ID": "a credential in plain text, which loaders use to read other stores",
    "S3_SECRET_ACCESS_KEY": "a credential in plain text, which loaders use to read other stores",
    "S3_ENDPOINT_URL": ELSEWHERE,
    "VLLM_CI_USE_S3": ELSEWHERE + " (vLLM's CI bucket)",
    "VLLM_API_KEY": "an API key is a secret (reference it under secrets)",
    # pickle-based serialisation of messages between processes (vllm/v1/serial_utils.py).
    "VLLM_ALLOW_INSECURE_SERIALIZATION": CODE + " (pickle between processes)",
    "VLLM_PLUGINS": CODE + " (which installed plugins load)",
    "VLLM_NCCL_SO_PATH": CODE + " (a shared library from a path)",
    "VLLM_CUDART_SO_PATH": CODE + " (a shared library from a path)",
    "LD_LIBRARY_PATH": CODE + " (shared libraries from other paths)",
    "CUDA_HOME": CODE + " (another CUDA toolkit's libraries)",
    # logging dictConfig: "()" factories and ext:// streams are imported
    # (https://docs.python.org/3/library/logging.config.html#access-to-external-objects).
    "VLLM_LOGGING_CONFIG_PATH": CODE + " (logging configs can name factories to call)",
    "VLLM_LOGGING_STREAM": CODE + " (an ext:// stream is imported by name)",
    "VLLM_CONFIGURE_LOGGING": "inferplane reads vLLM's default logging",
    "VLLM_GPT_OSS_USE_CONTAINER_TOOL": "runs model-written code in a container tool",
    "VLLM_DEBUG_LOG_API_SERVER_RESPONSE": PROMPTS,
    "VLLM_TRACE_FUNCTION": "traces every Python call to files (debugging only)",
    # envs.py: "this is a temporary hack ... will cause a memory leak".
    "VLLM_ENABLE_RESPONSES_API_STORE": "keeps every Responses API request in memory",
    "VLLM_KEEP_ALIVE_ON_ENGINE_DEATH": "keeps a pod whose engine died looking alive",
    "VLLM_NIXL_SIDE_CHANNEL_HOST": ENDPOINT + " (the NIXL side channel)",
    "VLLM_NIXL_SIDE_CHANNEL_PORT": ENDPOINT + " (the NIXL side channel)",
    "VLLM_TEST_FORCE_LOAD_FORMAT": "a test hook that changes how weights load",
    "VLLM_TEST_FORCE_FP8_MARLIN": "a test hook",
    "VLLM_TEST_DYNAMO_FULLGRAPH_CAPTURE": "a test hook",
    "VLLM_RANDOMIZE_DP_DUMMY_INPUTS": "a test hook of data parallelism",
    "VLLM_PP_LAYER_PARTITION": "pipeline parallelism: inferplane uses tensor parallelism",
    "VLLM_USE_AITER_UNIFIED_ATTENTION": "read on AMD GPUs only",
}

# Prefix -> reason, for families of variables that do not apply to this stack.
REFUSED_VLLM_ENV_PREFIXES: dict[str, str] = {
    "VLLM_ROCM_": "read on AMD GPUs only",
    "VLLM_TPU_": "read on TPUs only",
    "VLLM_XLA_": "read on TPUs only",
    "VLLM_CPU_": "read by the CPU backend only",
    "VLLM_RAY_": "Ray joins workers elsewhere, and inferplane runs one pod per replica",
    "VLLM_USE_RAY_": "Ray joins workers elsewhere, and inferplane runs one pod per replica",
    "VLLM_DP_": "data parallelism across pods opens RPC ports the NetworkPolicy closes",
}

# Read when building vLLM (setup.py, vllm/envs.py "Installation Time Env Vars"), not serving.
BUILD_TIME_ENV: frozenset[str] = frozenset(
    {
        "VLLM_TARGET_DEVICE",
        "MAX_JOBS",
        "NVCC_THREADS",
        "VLLM_USE_PRECOMPILED",
        "VLLM_DOCKER_BUILD_CONTEXT",
        "VLLM_TEST_USE_PRECOMPILED_NIGHTLY_WHEEL",
        "CMAKE_BUILD_TYPE",
        "VERBOSE",
    }
)

ALLOWED_VLLM_ENV: frozenset[str] = _names(
    """
    VLLM_LOGGING_LEVEL VLLM_LOGGING_PREFIX VLLM_LOG_STATS_INTERVAL VLLM_ATTENTION_BACKEND
    VLLM_USE_FLASHINFER_SAMPLER VLLM_FLASH_ATTN_VERSION VLLM_USE_TRITON_FLASH_ATTN
    VLLM_V1_USE_PREFILL_DECODE_ATTENTION VLLM_ENGINE_ITERATION_TIMEOUT_S
    VLLM_IMAGE_FETCH_TIMEOUT VLLM_VIDEO_FETCH_TIMEOUT VLLM_AUDIO_FETCH_TIMEOUT
    VLLM_MEDIA_LOADING_THREAD_COUNT VLLM_MAX_AUDIO_CLIP_FILESIZE_MB VLLM_VIDEO_LOADER_BACKEND
    VLLM_MM_INPUT_CACHE_GIB VLLM_FUSED_MOE_CHUNK_SIZE VLLM_ENABLE_FUSED_MOE_ACTIVATION_CHUNKING
    VLLM_ALLOW_LONG_MAX_MODEL_LEN VLLM_RPC_TIMEOUT VLLM_HTTP_TIMEOUT_KEEP_ALIVE
    VLLM_USE_TRITON_AWQ VLLM_SKIP_P2P_CHECK VLLM_DISABLED_KERNELS VLLM_LOG_BATCHSIZE_INTERVAL
    VLLM_V1_OUTPUT_PROC_CHUNK_SIZE VLLM_MLA_DISABLE VLLM_MOE_DP_CHUNK_SIZE
    VLLM_MARLIN_USE_ATOMIC_ADD VLLM_MXFP4_USE_MARLIN VLLM_V0_USE_OUTLINES_CACHE
    VLLM_V1_USE_OUTLINES_CACHE VLLM_USE_DEEP_GEMM VLLM_USE_DEEP_GEMM_E8M0
    VLLM_USE_DEEP_GEMM_E8M0_HOPPER VLLM_SKIP_DEEP_GEMM_WARMUP VLLM_USE_FUSED_MOE_GROUPED_TOPK
    VLLM_USE_FLASHINFER_MOE_FP8 VLLM_USE_FLASHINFER_MOE_FP4 VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8
    VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8_CUTLASS VLLM_USE_FLASHINFER_MOE_MXFP4_BF16
    VLLM_XGRAMMAR_CACHE_MB VLLM_MSGPACK_ZERO_COPY_THRESHOLD VLLM_ALL2ALL_BACKEND
    VLLM_FLASHINFER_MOE_BACKEND VLLM_MAX_TOKENS_PER_EXPERT_FP4_MOE
    VLLM_FLASHINFER_ALLREDUCE_FUSION_THRESHOLDS_MB VLLM_MOE_ROUTING_SIMULATION_STRATEGY
    VLLM_TOOL_PARSE_REGEX_TIMEOUT_SECONDS VLLM_SLEEP_WHEN_IDLE VLLM_MQ_MAX_CHUNK_BYTES_MB
    VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS VLLM_KV_CACHE_LAYOUT VLLM_COMPUTE_NANS_IN_LOGITS
    VLLM_USE_NVFP4_CT_EMULATIONS VLLM_NIXL_ABORT_REQUEST_TIMEOUT VLLM_USE_CUDNN_PREFILL
    VLLM_USE_TRTLLM_ATTENTION VLLM_FLASHINFER_DISABLE_Q_QUANTIZATION VLLM_HAS_FLASHINFER_CUBIN
    VLLM_USE_TRTLLM_FP4_GEMM VLLM_ENABLE_CUDAGRAPH_GC VLLM_DISABLE_PAD_FOR_CUDAGRAPH
    VLLM_PROCESS_NAME_PREFIX VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE
    VLLM_ALLREDUCE_USE_SYMM_MEM VLLM_TUNED_CONFIG_FOLDER VLLM_GPT_OSS_HARMONY_SYSTEM_INSTRUCTIONS
    VLLM_CUSTOM_SCOPES_FOR_PROFILING VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES
    VLLM_RINGBUFFER_WARNING_INTERVAL VLLM_LOGITS_PROCESSOR_THREADS VLLM_ASSETS_CACHE
    VLLM_WORKER_MULTIPROC_METHOD VLLM_ENABLE_V1_MULTIPROCESSING
    VLLM_TORCH_PROFILER_RECORD_SHAPES VLLM_TORCH_PROFILER_WITH_PROFILE_MEMORY
    VLLM_TORCH_PROFILER_WITH_STACK VLLM_TORCH_PROFILER_WITH_FLOPS
    Q_SCALE_CONSTANT K_SCALE_CONSTANT V_SCALE_CONSTANT
    """
)


def classify_env(var: str) -> tuple[str, str]:
    """(allowed|owned|refused, reason) of one variable of vllm/envs.py."""
    if var in ALLOWED_VLLM_ENV:
        return "allowed", ""
    if var in OWNED_VLLM_ENV:
        return "owned", OWNED_VLLM_ENV[var]
    if var in REFUSED_VLLM_ENV:
        return "refused", REFUSED_VLLM_ENV[var]
    if var in BUILD_TIME_ENV:
        return "refused", "read only when building vLLM, never by the server"
    for prefix, reason in REFUSED_VLLM_ENV_PREFIXES.items():
        if var.startswith(prefix):
            return "refused", reason
    raise KeyError(var)


def classify_other_env(var: str) -> tuple[str, str]:
    if var in ALLOWED_OTHER_ENV:
        return "allowed", ""
    if var in OWNED_OTHER_ENV:
        return "owned", OWNED_OTHER_ENV[var]
    return "refused", REFUSED_OTHER_ENV[var]


OTHER_ENV: frozenset[str] = frozenset({*OWNED_OTHER_ENV, *REFUSED_OTHER_ENV, *ALLOWED_OTHER_ENV})


# --- the tables -----------------------------------------------------------------------------

HEADER = """\
# {what} of vLLM {version} (the pinned VERSIONS["vllm"]), classified.
# Source: PyPI wheel {wheel}
# (sha256 {sha256}), files {files},
# read and classified by scripts/vllm_serve_flags.py (see its docstring to regenerate).
# One name a line: NAME<TAB>allowed | NAME<TAB>owned<TAB>how to set it from the blueprint |
# NAME<TAB>refused<TAB>why{extra}"""


def flags_table(
    version: str, wheel: str, sha256: str, longs: Iterable[str], shorts: dict[str, str]
) -> str:
    lines = [
        HEADER.format(
            what="Every option of `vllm serve`",
            version=version,
            wheel=wheel,
            sha256=sha256,
            files="vllm/engine/arg_utils.py, vllm/entrypoints/openai/cli_args.py, vllm/config/*.py",
            extra=" | -SHORT<TAB>short<TAB>--its-long-option",
        )
    ]
    unclassified = []
    for flag in sorted(longs):
        try:
            kind, text = classify_flag(flag)
        except KeyError:
            unclassified.append(flag)
            continue
        lines.append("\t".join(x for x in (flag, kind, text) if x))
    for short in sorted(shorts):
        lines.append(f"{short}\tshort\t{shorts[short]}")
    stale = (set(OWNED_FLAGS) | set(REFUSED_FLAGS) | ALLOWED_FLAGS | ALLOWED_NEGATIONS) - set(longs)
    if unclassified or stale:
        raise SystemExit(
            f"classify these options of vllm serve {version}: {sorted(unclassified)}; "
            f"no longer options, remove them here: {sorted(stale)}"
        )
    return "\n".join(lines) + "\n"


def env_table(version: str, wheel: str, sha256: str, names: Iterable[str]) -> str:
    lines = [
        HEADER.format(
            what="Every variable of vllm/envs.py, and a few others",
            version=version,
            wheel=wheel,
            sha256=sha256,
            files="vllm/envs.py",
            extra="\n# A name in no line is refused as unclassified.",
        )
    ]
    names = set(names)
    unclassified = []
    for var in sorted(names | OTHER_ENV):
        try:
            kind, text = classify_env(var) if var in names else classify_other_env(var)
        except KeyError:
            unclassified.append(var)
            continue
        lines.append("\t".join(x for x in (var, kind, text) if x))
    classified = (
        set(ALLOWED_VLLM_ENV) | set(OWNED_VLLM_ENV) | set(REFUSED_VLLM_ENV) | BUILD_TIME_ENV
    )
    stale = classified - names
    if unclassified or stale:
        raise SystemExit(
            f"classify these variables of vllm/envs.py {version}: {sorted(unclassified)}; "
            f"no longer in envs.py, remove them here: {sorted(stale)}"
        )
    return "\n".join(lines) + "\n"


# The wheels classified so far: version -> sha256 of the PyPI wheel
# (https://pypi.org/project/vllm/0.10.2/#files). A wheel not listed here is refused, so the
# tables always name a file anyone can fetch and compare.
WHEELS: dict[str, tuple[str, str]] = {
    "0.10.2": (
        "vllm-0.10.2-cp38-abi3-manylinux1_x86_64.whl",
        "e0cba6110483d9bf25c4402d8655cf78d366dd13e4155210980cc3480ed98b7b",
    ),
}


def main(argv: list[str]) -> int:
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    wheel, root = Path(args[0]), Path(args[1])
    version = wheel.name.split("-")[1]
    sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
    if WHEELS.get(version) != (wheel.name, sha256):
        raise SystemExit(f"{wheel.name} (sha256 {sha256}) is not in WHEELS: add it there")
    longs, shorts = options(root)
    out = Path(__file__).resolve().parent.parent / "inferplane" / "blueprint"
    tables = {
        out / "vllm_serve_flags.txt": flags_table(version, wheel.name, sha256, longs, shorts),
        out / "vllm_env_vars.txt": env_table(version, wheel.name, sha256, env_vars(root)),
    }
    stale = [p.name for p, text in tables.items() if not p.exists() or p.read_text() != text]
    if check:
        if stale:
            print(f"stale: {', '.join(stale)}; rerun without --check", file=sys.stderr)
        return 1 if stale else 0
    for path, text in tables.items():
        path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
