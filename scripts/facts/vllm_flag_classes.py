"""How every option of `vllm serve` of a supported release is classified: owned by a blueprint
field, refused, or allowed."""

from __future__ import annotations

from vllm_reasons import CODE, ELSEWHERE, ENDPOINT, PROMPTS, names

EMBEDS = (
    "decodes tensors clients send with torch.load, the path of CVE-2025-62164 (vLLM 0.10.2 "
    "to 0.11.0)"
)
DATA_PARALLEL = (
    "data parallelism across pods opens RPC ports the NetworkPolicy closes (scale with "
    "models.<m>.replicas)"
)
MULTI_NODE = (
    "multi-node serving joins workers of other pods through ports the NetworkPolicy closes, "
    "and inferplane runs one pod per replica"
)
TLS = "TLS in the pod breaks the probes and the metrics scrape (plain HTTP)"

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
    # 0.33.0 ObservabilityConfig.custom_histogram_buckets: the bounds the SLO alerts, the
    # triggers and the rollout guard compute their p95 from (vllm/config/observability.py).
    "--custom-histogram-buckets": "set models.<m>.slo instead: inferplane adds each SLO "
    "line to vLLM's default bounds, so the SLO alerts compare the p95 with a bound",
    # 0.33.0 (vllm/engine/arg_utils.py): --device-memory-utilization is a second name of
    # --gpu-memory-utilization (same dest); --spec-method/--spec-model/--spec-tokens are
    # shorthands of speculative_config; quantization_config carries the quantization.
    "--device-memory-utilization": "set models.<m>.vllm.gpu_memory_utilization instead",
    "--device-ids": "remove it: the device plugin assigns the GPUs (models.<m>.gpus decides)",
    "--prefill-context-parallel-size": "set models.<m>.gpus instead: inferplane splits a "
    "model over its GPUs by tensor parallelism",
    "--spec-method": "set models.<m>.vllm.speculative instead",
    "--spec-model": "set models.<m>.vllm.speculative instead",
    "--spec-tokens": "set models.<m>.vllm.speculative instead",
    "--quantization-config": "set models.<m>.vllm.quantization instead",
    # Not fields, but able to change any of the above, or to put a secret in plain text.
    # `--config` YAML is spliced into the command line (FlexibleArgumentParser.
    # _pull_args_from_config, vllm/utils/__init__.py).
    "--config": "write the options in extra_args instead: a config file could set owned flags",
    "--api-key": "remove it: an API key is a secret, and arguments are stored in plain text",
    # inferplane's route guard (components/serving/vllm/route_guard.py), which answers 404 for
    # every route routes.txt does not classify client, probe or metrics; any other module
    # would be Python code named by the blueprint.
    "--middleware": "remove it: inferplane sets it to its route guard, and any other "
    "middleware loads and runs Python code named by the blueprint",
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
    "--kv-events-config": ENDPOINT,
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
    # attach_router (vllm/entrypoints/serve/tokenize/api_router.py) adds GET /tokenizer_info,
    # which returns the tokenizer's init kwargs and the chat template
    # (TokenizerInfo._get_tokenizer_config, tokenize/serving.py), a path the API key does not
    # guard (GUARDED_PREFIX, vllm/entrypoints/serve/middleware/authenticate.py); v0.10.2 the
    # same in vllm/entrypoints/openai/api_server.py. inferplane/facts/vllm/<release>/
    # routes.txt classifies every route.
    "--enable-tokenizer-info-endpoint": "serves the tokenizer's configuration and the chat "
    "template at /tokenizer_info, a route the API key does not guard",
    # FastAPI's Swagger UI served from the wheel: /docs, /static and the OAuth2 redirect
    # (v0.33.0 vllm/entrypoints/serve/instrumentator/offline_docs.py), outside the key's guard.
    "--enable-offline-docs": "adds the routes of the API's documentation (/docs, /static), "
    "which the API key does not guard",
    # The probes and the metrics scrape speak plain HTTP to the pod.
    "--ssl-keyfile": "TLS in the pod breaks the probes and the metrics scrape (plain HTTP)",
    "--ssl-certfile": "TLS in the pod breaks the probes and the metrics scrape (plain HTTP)",
    "--ssl-ca-certs": "TLS in the pod breaks the probes and the metrics scrape (plain HTTP)",
    "--ssl-cert-reqs": "TLS in the pod breaks the probes and the metrics scrape (plain HTTP)",
    "--enable-ssl-refresh": "TLS in the pod breaks the probes and the metrics scrape",
    # Prompt embeddings are decoded with torch.load and to_dense() (0.10.2: vllm/entrypoints/
    # renderer.py, load_prompt_embeds): CVE-2025-62164, memory corruption from a crafted
    # sparse tensor, affects vLLM 0.10.2 up to 0.11.0. 0.33.0 decodes image, audio and video
    # embeddings the same way (vllm/multimodal/media/image.py, audio.py, video.py:
    # torch.load(buffer, weights_only=True)).
    "--enable-prompt-embeds": EMBEDS,
    "--enable-mm-embeds": EMBEDS,
    "--help": "prints the help and exits, so the server never starts",
    # ModelConfig.hf_overrides updates the model's Hugging Face config before anything loads
    # (0.10.2 vllm/config/__init__.py, 0.33.0 vllm/config/model.py: ModelConfig.__post_init__
    # -> get_config(hf_overrides_kw=...)): `model_type` picks the config class
    # (0.33.0 vllm/transformers_utils/config.py, get_config: "Allow hf_overrides to override
    # model_type"), `architectures` the model class vLLM imports (ModelRegistry), `auto_map`
    # the repository's code, and `quantization_config` / `torch_dtype` what
    # models.<m>.vllm.quantization and models.<m>.precision set. Its keys are every model's
    # own, so no allowlist of them can be read from vLLM's source.
    "--hf-overrides": "overrides any key of the model's config: `architectures`, `model_type` "
    "and `auto_map` choose the code that loads, `quantization_config` and `torch_dtype` "
    "what models.<m>.vllm.quantization and models.<m>.precision set",
    # --- 0.33.0 -------------------------------------------------------------------------
    # Imported by qualified name: ModelConfig.model_class_overrides ("module:class", as
    # ModelRegistry.register_model, vllm/config/model.py); StructuredOutputsConfig.
    # reasoning_parser_plugin (vllm/config/structured_outputs.py), also settable through
    # --structured-outputs-config; EncoderCacheManagerConfig resolve_obj_by_qualname
    # (vllm/config/ec_manager_config.py); ECTransferConfig.ec_connector_module_path
    # (vllm/config/ec_transfer.py), whose connectors talk to peers (VLLM_EC_SIDE_CHANNEL_*).
    "--model-class-overrides": CODE,
    "--reasoning-parser-plugin": CODE,
    "--structured-outputs-config": CODE + " (its reasoning_parser_plugin)",
    "--ec-manager-config": CODE,
    "--ec-transfer-config": CODE + ", and " + ENDPOINT,
    # LoggingConfig.pylogging_config_file is a dictConfig file (vllm/config/logging.py).
    "--logging-config": CODE + " (logging configs can name factories to call)",
    # ProfilerConfig: a profiler adds /start_profile and /stop_profile
    # (vllm/entrypoints/serve/profile/api_router.py, attach_router).
    "--profiler-config": ENDPOINT + " (/start_profile, /stop_profile)",
    # FrontendArgs.grpc_port: a second listener (gRPC Inference and Control services);
    # --grpc serves gRPC on --port instead of HTTP (vllm/entrypoints/common/cli_args.py).
    "--grpc-port": ENDPOINT + " (the gRPC Inference and Control services)",
    "--grpc": "replaces the HTTP server the Service, probes and metrics use with gRPC",
    "--tokens-only": "serves only the tokens-in/tokens-out routes, not the API clients call",
    # BaseFrontendArgs.enable_scale_out registers /render, /derender, /inference/v1/generate
    # and /inference/v1/abort_requests.
    "--enable-scale-out": "adds routes that generate from raw token ids and abort requests "
    "by id (/inference/v1/abort_requests)",
    # BaseFrontendArgs: "Only enable this when API clients are trusted".
    "--trust-request-chat-template": "renders chat templates that clients send",
    "--trust-request-mm-kwargs": "lets clients change the multimodal preprocessing and "
    "its resource use",
    "--enable-trace-replay": "lets clients force the decoded tokens (debugging and RL only)",
    # WeightTransferConfig: weights sent during RL training by a trainer process.
    "--weight-transfer-config": ELSEWHERE + " (weights a trainer sends)",
    # --mm-encoder-fp8-scale-path reads, -save-path writes a file by path (ModelConfig).
    "--mm-encoder-fp8-scale-path": "reads a file at a path outside the staged model",
    "--mm-encoder-fp8-scale-save-path": "writes a file at a path outside the scratch volume",
    "--ssl-ciphers": TLS,
    "--data-parallel-external-lb": DATA_PARALLEL,
    "--data-parallel-multi-port-external-lb": DATA_PARALLEL,
    "--data-parallel-supervisor-port": DATA_PARALLEL,
    "--dp-supervisor-probe-failure-threshold": DATA_PARALLEL,
    "--dp-supervisor-probe-interval-s": DATA_PARALLEL,
    "--dp-supervisor-probe-timeout-s": DATA_PARALLEL,
    "--dp-sync-interval": DATA_PARALLEL,
    "--enable-elastic-ep": DATA_PARALLEL,
    "--elastic-ep-max-dp-size": DATA_PARALLEL,
    # FaultToleranceConfig: "scaling down fault DPEngineCore" (vllm/config/parallel.py).
    "--enable-fault-tolerance": DATA_PARALLEL,
    "--fault-tolerance-config": DATA_PARALLEL,
    # ParallelConfig: "multi-node distributed inference when distributed_executor_backend
    # is mp" (vllm/config/parallel.py).
    "--nnodes": MULTI_NODE,
    "--node-rank": MULTI_NODE,
    "--master-addr": MULTI_NODE,
    "--master-port": MULTI_NODE,
}

ALLOWED_FLAGS: frozenset[str] = names(
    """
    --async-scheduling --block-size --calculate-kv-scales --chat-template-content-format
    --config-format --convert --cpu-offload-gb --cuda-graph-sizes --disable-async-output-proc
    --disable-cascade-attn --disable-chunked-mm-input --disable-custom-all-reduce
    --disable-fastapi-docs --disable-frontend-multiprocessing --disable-hybrid-kv-cache-manager
    --disable-log-requests --disable-mm-preprocessor-cache --disable-sliding-window
    --disable-uvicorn-access-log --enable-eplb --enable-expert-parallel
    --enable-force-include-usage --enable-lora-bias --enable-multimodal-encoder-data-parallel
    --enable-prompt-tokens-details --enable-request-id-headers --enable-server-load-tracking
    --enable-sleep-mode --eplb-config --eplb-log-balancedness
    --eplb-step-interval --eplb-window-size --exclude-tools-when-tool-choice-none
    --fully-sharded-loras --guided-decoding-backend
    --guided-decoding-disable-additional-properties --guided-decoding-disable-any-whitespace
    --guided-decoding-disable-fallback --h11-max-header-count --h11-max-incomplete-event-size
    --ignore-patterns --interleave-mm-strings --kv-sharing-fast-prefill
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
# 0.33.0: kernel, scheduling, cache, observability and frontend tuning options that neither
# load code, open endpoints, reach other stores nor set a blueprint field
# (vllm/config/*.py, vllm/entrypoints/common/cli_args.py docstrings).
ALLOWED_FLAGS_0_33: frozenset[str] = names(
    """
    --aggregate-engine-logging --all2all-backend --allow-deprecated-quantization
    --allowed-media-domains --anthropic-disabled-thinking-effort --attention-backend
    --attention-config --aux-output-config --cohere-format --cohere-is-reasoning-model
    --cp-kv-cache-interleave-size --cpu-distributed-timeout-seconds --cpu-offload-params
    --cudagraph-capture-sizes --cudagraph-metrics
    --dbo-decode-token-threshold --dbo-prefill-token-threshold --dcp-comm-backend
    --dcp-kv-cache-interleave-size --dcp-q-replicate --default-chat-template-kwargs
    --diffusion-config --disable-access-log-for-endpoints
    --disable-nccl-for-dp-synchronization --distributed-timeout-seconds
    --enable-batch-sharded-sampling --enable-cumem-allocator --enable-dbo
    --enable-ep-weight-filter --enable-flash-late-interaction --enable-flashinfer-autotune
    --enable-hc-sp --enable-layerwise-nvtx-tracing --enable-log-deltas
    --enable-logging-iteration-details --enable-mamba-cache-stochastic-rounding
    --enable-mamba-shared-prefix-checkpoint --enable-mfu-metrics
    --enable-mixed-moe-lora-format --enable-moe-shared-loras --enable-nccl-comm-suspend
    --enable-per-request-metrics --enable-return-routed-experts
    --enable-shm-tensor-arena --enable-tower-connector-lora --engram-config
    --expert-placement-strategy --fail-on-environ-validation --fingerprint-mode
    --fingerprint-value --gdn-prefill-backend --ir-op-priority --jit-monitor-mode
    --jit-monitor-verbose --kda-decode-backend --kda-prefill-backend --kernel-config
    --kv-cache-dtype-skip-layers --kv-cache-metrics --kv-cache-metrics-sample
    --kv-offloading-backend --kv-offloading-size --language-model-only --linear-backend
    --log-level --long-prefill-token-threshold-adaptive --lora-target-modules
    --mamba-backend --mamba-block-size --mamba-cache-mode --mamba-cache-philox-rounds
    --mamba-ssu-algorithm --max-cudagraph-capture-size --max-lora-cls-labels
    --max-num-active-seqs --max-num-queued-reqs --max-num-queued-tokens
    --max-num-scheduled-tokens --mm-device-do-normalize --mm-encoder-attn-backend
    --mm-encoder-attn-dtype --mm-encoder-fp8-scale-save-margin --mm-encoder-only
    --mm-hasher-algorithm --mm-ipc-gpu-memory-gb --mm-processor-cache-type
    --mm-processor-device --mm-shm-cache-max-object-size-mb --mm-tensor-ipc --moe-backend
    --monokernel --numa-bind --numa-bind-cpus --numa-bind-nodes --offload-backend
    --offload-group-size --offload-num-in-group --offload-params --offload-prefetch-step
    --optimization-level --per-request-spec-decode-metrics --performance-mode
    --pooler-config --prefill-schedule-interval --prefix-cache-retention-interval
    --prefix-match-unit --reasoning-config --reasoning-effort-map --renderer-num-workers
    --replayssm-buffer-len --return-sampling-mask --safetensors-prefetch-block-size
    --safetensors-prefetch-num-threads --scheduler-reserve-full-isl --shutdown-timeout
    --sleep-mode-backend --sleep-mode-offload-cudagraph --sleep-preserve-parameter-names
    --sparse-indexer-topk-backend --specialize-active-lora --sse-keep-alive-interval
    --stream-interval --swa-bounded-replay --tool-strict-level --ubatch-size
    --use-fp64-gumbel --use-replayssm --video-pruning-method --video-pruning-rate
    --watchdog-config --watermark --watermark-config
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
        "--no-enable-mm-embeds",
        "--no-trust-request-chat-template",
        "--no-trust-request-mm-kwargs",
        "--no-enable-scale-out",
        "--no-enable-trace-replay",
        "--no-tokens-only",
        "--no-data-parallel-external-lb",
        "--no-enable-elastic-ep",
        "--no-enable-fault-tolerance",
        "--no-enable-tokenizer-info-endpoint",
        "--no-enable-offline-docs",
    }
)


def classify_flag(flag: str) -> tuple[str, str]:
    """(allowed|owned|refused, hint or reason) of one long option."""
    if flag in ALLOWED_NEGATIONS:
        return "allowed", ""
    base = flag
    if flag not in classified():
        base = "--" + flag[5:] if flag.startswith("--no-") else flag
    if base in OWNED_FLAGS:
        return "owned", OWNED_FLAGS[base]
    if base in REFUSED_FLAGS:
        return "refused", REFUSED_FLAGS[base]
    if base in ALLOWED_FLAGS or base in ALLOWED_FLAGS_0_33:
        return "allowed", ""
    raise KeyError(flag)


def classified() -> set[str]:
    """Every long option named here."""
    return {
        *OWNED_FLAGS,
        *REFUSED_FLAGS,
        *ALLOWED_FLAGS,
        *ALLOWED_FLAGS_0_33,
        *ALLOWED_NEGATIONS,
    }
