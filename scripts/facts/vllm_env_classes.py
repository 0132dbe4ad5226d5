"""How every variable of `vllm/envs.py` of a supported release (and a few others) is
classified: owned by inferplane, refused, or allowed."""

from __future__ import annotations

from vllm_reasons import CODE, ELSEWHERE, ENDPOINT, PROMPTS, names

# Mooncake is a KV transfer connector (--kv-transfer-config, refused) that talks to peers.
KV_CONNECTOR = "read by KV transfer connectors, which --kv-transfer-config would load"

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
    # 0.33.0: each changes what the staged compile cache is or how it is read
    # (vllm/envs.py comments; vllm/compilation/).
    "VLLM_COMPILE_CACHE_SAVE_FORMAT": "the staged compile cache is built with vLLM's default",
    "VLLM_USE_AOT_COMPILE": "the staged compile cache is built with vLLM's default",
    "VLLM_FORCE_AOT_LOAD": "the staged compile cache is built with vLLM's default",
    "VLLM_USE_MEGA_AOT_ARTIFACT": "the staged compile cache is built with vLLM's default",
    "VLLM_USE_BYTECODE_HOOK": "the staged compile cache is built with vLLM's default",
    "VLLM_FLASHINFER_AUTOTUNE_CACHE_DIR": "caches live on the scratch volume",
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
    # --- 0.33.0 (vllm/envs.py, the comment above each variable) ---------------------------
    "VLLM_EC_SIDE_CHANNEL_HOST": ENDPOINT + " (the encoder-cache connector's ZMQ channel)",
    "VLLM_EC_SIDE_CHANNEL_PORT": ENDPOINT + " (the encoder-cache connector's ZMQ channel)",
    "VLLM_P2P_SIDE_CHANNEL_HOST": ENDPOINT + " (the P2P KV-offload control socket)",
    "VLLM_P2P_SIDE_CHANNEL_PORT": ENDPOINT + " (the P2P KV-offload control socket)",
    "MOONCAKE_PREFERRED_SEGMENT": KV_CONNECTOR,
    "MOONCAKE_REQUESTER_LOCAL_HOSTNAME": KV_CONNECTOR,
    "VLLM_LORA_RESOLVER_HF_REPO_LIST": ELSEWHERE + " (LoRA adapters from Hub repositories)",
    # "Custom implementations can be registered via @MEDIA_CONNECTOR_REGISTRY".
    "VLLM_MEDIA_CONNECTOR": "picks a media connector that plugins register",
    "VLLM_GPT_OSS_SYSTEM_TOOL_MCP_LABELS": "lets the model call container, code-interpreter "
    "and web-search tools",
    "VLLM_USE_EXPERIMENTAL_PARSER_CONTEXT": ELSEWHERE + " (MCP tool servers the model calls)",
    # "Used when VLLM_USE_RUST_FRONTEND=1": a binary found by path replaces the API server.
    "VLLM_RUST_FRONTEND_PATH": CODE + " (a frontend binary from a path)",
    "VLLM_USE_RUST_FRONTEND": "replaces the API server whose routes, probes and metrics "
    "inferplane serves with the Rust frontend",
    "VLLM_USE_RUST_BENCH": "read by vllm bench only, never by the server",
    "VLLM_CUDA_COMPATIBILITY_PATH": CODE + " (CUDA libraries from a path)",
    # A directory path: MediaConnector writes fetched media there and, past the TTL or the
    # size cap, unlinks every entry of the directory not starting with "."
    # (vllm/multimodal/media/connector.py, __init__ and _maybe_evict); one client's
    # fetched media are served to another from it.
    "VLLM_MEDIA_CACHE": "writes, and evicts by deleting, files at a path of the serving "
    "pod (a directory it names)",
    # Forward compatibility changes which driver the release needs; validate checks the
    # release table's minimum driver against the nodes.
    "VLLM_ENABLE_CUDA_COMPATIBILITY": "changes which NVIDIA driver the release needs, which "
    "validate checks against the nodes",
    "VLLM_DEBUG_DUMP_PATH": "dumps compiled graphs to files (debugging only)",
    # "Logging level for request JSON body": at the server's level it logs each request.
    "VLLM_REQUEST_BODY_LOG_LEVEL": PROMPTS,
    "VLLM_SKIP_MODEL_NAME_VALIDATION": "answers requests for any model name, so requests "
    "meant for another model reach this one",
    "VLLM_DISABLE_REQUEST_ID_RANDOMIZATION": "serves KV connectors matching request ids "
    "across instances, which --kv-transfer-config would load",
    "VLLM_GPU_NIC_PCIE_MAPPING": "sets variables it names, outside this table",
    "VLLM_NIC_SELECTION_VARS": "sets variables it names, outside this table",
    # "Set via Docker ENV at image build time; informational only".
    "VLLM_BUILD_COMMIT": "the image's build provenance, set when it was built",
    "VLLM_BUILD_PIPELINE": "the image's build provenance, set when it was built",
    "VLLM_BUILD_URL": "the image's build provenance, set when it was built",
    "VLLM_IMAGE_TAG": "the image's build provenance, set when it was built",
    "VLLM_WSL2_ENABLE_PIN_MEMORY": "read on WSL2 only",
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
    "VLLM_ELASTIC_EP_": "data parallelism across pods opens RPC ports the NetworkPolicy closes",
    "VLLM_MOONCAKE_": KV_CONNECTOR,
    "VLLM_XPU_": "read on Intel GPUs only",
    "VLLM_ZENTORCH_": "read by the Zen CPU backend only",
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
        # 0.33.0 "Whether to skip version suffix when building package", "Main CUDA
        # version of vLLM" (setup.py), the NCCL header path and the precompiled Rust binary.
        "VLLM_SKIP_VERSION_SUFFIX",
        "VLLM_SKIP_PRECOMPILED_VERSION_SUFFIX",
        "VLLM_MAIN_CUDA_VERSION",
        "VLLM_NCCL_INCLUDE_PATH",
        "VLLM_USE_PRECOMPILED_RUST",
    }
)

ALLOWED_VLLM_ENV: frozenset[str] = names(
    """
    VLLM_LOGGING_PREFIX VLLM_LOG_STATS_INTERVAL VLLM_ATTENTION_BACKEND
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


# 0.33.0: kernel choices, limits, timeouts and logging that neither load code, open
# endpoints, reach other stores nor change what inferplane owns (vllm/envs.py comments).
ALLOWED_VLLM_ENV_0_33: frozenset[str] = names(
    """
    FORCE_COLOR NO_COLOR VLLM_ADAPTIVE_VERIFICATION_PROFILE_CONTEXT_LEN
    VLLM_ALLREDUCE_USE_FLASHINFER VLLM_ALLREDUCE_USE_FLASHINFER_PCIE_IPC
    VLLM_ASSETS_CACHE_MODEL_CLEAN VLLM_B12X_MOE_FP4_FORCE_A16 VLLM_BATCH_INVARIANT
    VLLM_BEAM_ALWAYS_CONSTRAIN_OUTPUT VLLM_BLOCKSCALE_FP8_GEMM_FLASHINFER
    VLLM_CHAT_TEMPLATE_FUEL VLLM_CHAT_TEMPLATE_RENDER_TIMEOUT
    VLLM_COHERE2_ATTN_MOE_DUAL_STREAM_TOKEN_THRESHOLD VLLM_DBO_COMM_SMS VLLM_DCP_Q_REPLICATE
    VLLM_DEBUG_MFU_METRICS VLLM_DEBUG_WORKSPACE VLLM_DEEPEPLL_NVFP4_DISPATCH
    VLLM_DEEPEP_BUFFER_SIZE_MB VLLM_DEEPEP_HIGH_THROUGHPUT_FORCE_INTRA_NODE
    VLLM_DEEPEP_LOW_LATENCY_USE_MNNVL VLLM_DEEPEP_V2_ALLOW_HYBRID_MODE
    VLLM_DEEPEP_V2_ALLOW_MULTIPLE_REDUCTION VLLM_DEEPEP_V2_PREFER_OVERLAP
    VLLM_DEEP_GEMM_WARMUP VLLM_DISABLE_DSV4_MEGAMOE_SHARED_EXPERT_FUSION
    VLLM_DISABLE_LOG_LOGO VLLM_DISABLE_PYNCCL VLLM_DISABLE_SHARED_EXPERTS_STREAM
    VLLM_DISTRIBUTED_USE_SPLIT_GROUP VLLM_ENABLE_COHERE_API
    VLLM_ENABLE_FLA_PACKED_RECURRENT_DECODE VLLM_ENABLE_GEMM_RS VLLM_ENABLE_HPC_OPS
    VLLM_ENABLE_INDUCTOR_COORDINATE_DESCENT_TUNING VLLM_ENABLE_INDUCTOR_MAX_AUTOTUNE
    VLLM_ENABLE_PREGRAD_PASSES VLLM_ENABLE_STARTUP_PLAN VLLM_ENFORCE_STRICT_TOOL_CALLING
    VLLM_ENGINE_READY_TIMEOUT_S VLLM_FASTSAFETENSORS_QUEUE_SIZE
    VLLM_FLASHINFER_ALLREDUCE_BACKEND VLLM_FLASHINFER_AUTOTUNE_SKIP_OPS
    VLLM_FLASHINFER_MOE_A2A_LOW_PRECISION_COMBINE VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE
    VLLM_FLOAT32_MATMUL_PRECISION VLLM_GC_DEBUG VLLM_GDN_DECODE_KERNEL VLLM_GPU_SYNC_CHECK
    VLLM_HTTP_MAX_REQUEST_BODY_SIZE VLLM_HUMMING_INPUT_QUANT_CONFIG
    VLLM_HUMMING_MOE_GEMM_TYPE VLLM_HUMMING_ONLINE_QUANT_CONFIG VLLM_HUMMING_USE_F16_ACCUM
    VLLM_KIMI_K3_AUX_ATTN_RES_STREAM VLLM_KIMI_K3_GEMM_AR
    VLLM_KIMI_K3_SHARD_SP_SHARED_EXPERT VLLM_KV_OFFLOAD_MAX_BATCH_DESCRIPTORS
    VLLM_LOGGING_COLOR VLLM_LOG_MODEL_INSPECTION VLLM_LORA_DISABLE_PDL
    VLLM_LORA_ENABLE_DUAL_STREAM VLLM_MARLIN_INPUT_DTYPE VLLM_MAX_AUDIO_DECODE_BYTES
    VLLM_MAX_AUDIO_DECODE_DURATION_S VLLM_MAX_AUDIO_PREPROCESS_WORKERS
    VLLM_MAX_BAD_WORDS_TOTAL_TOKENS VLLM_MAX_COMPLETION_PROMPTS VLLM_MAX_EMBED_DECODE_BYTES
    VLLM_MAX_IMAGE_PIXELS VLLM_MAX_MEDIA_DOWNLOAD_SIZE_MB
    VLLM_MAX_MEDIA_REQUEST_DECODE_BYTES VLLM_MAX_MEDIA_REQUEST_DOWNLOAD_SIZE_MB
    VLLM_MAX_NUM_BAD_WORDS VLLM_MAX_N_SEQUENCES VLLM_MAX_STOP_STRINGS
    VLLM_MEDIA_CACHE_MAX_SIZE_MB VLLM_MEDIA_CACHE_TTL_HOURS VLLM_MEDIA_FETCH_MAX_RETRIES
    VLLM_MEDIA_URL_ALLOW_REDIRECTS VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
    VLLM_MOE_SKIP_PADDING VLLM_MOE_USE_DEEP_GEMM VLLM_MULTI_STREAM_GEMM_TOKEN_THRESHOLD
    VLLM_MXFP4_EMULATION_DEQUANT_AT_LOAD VLLM_MXFP8_EMULATION_DEQUANT_AT_LOAD
    VLLM_NVTX_SCOPES_FOR_PROFILING VLLM_OBJECT_STORAGE_SHM_BUFFER_NAME
    VLLM_P2P_HANDSHAKE_TIMEOUT_S VLLM_P2P_IDLE_TIMEOUT_S VLLM_P2P_MAX_PEERS
    VLLM_PATTERN_MATCH_DEBUG VLLM_RAISE_ON_LOGIT_NANS VLLM_REGEX_COMPILATION_TIMEOUT_S
    VLLM_REPLICATE_EMBED VLLM_SHARED_EXPERTS_STREAM_TOKEN_THRESHOLD
    VLLM_SPARSE_INDEXER_MAX_LOGITS_MB VLLM_SSM_CONV_STATE_LAYOUT
    VLLM_STEP5_SHARD_SP_SHARED_EXPERT VLLM_SYSTEM_START_DATE
    VLLM_TOOL_JSON_ERROR_AUTOMATIC_RETRY VLLM_TRITON_FORCE_FIRST_CONFIG
    VLLM_TRITON_JIT_WARMUP_NUM_THREADS VLLM_TRITON_USE_TD VLLM_USE_BREAKABLE_CUDAGRAPH
    VLLM_USE_DEEP_GEMM_TMA_ALIGNED_SCALES VLLM_USE_DIRECT_DCP_A2A
    VLLM_USE_DIRECT_DCP_KV_GATHER VLLM_USE_DIRECT_DCP_Q_GATHER VLLM_USE_FASTOKENS
    VLLM_USE_FLASHINFER_MOE_INT4 VLLM_USE_HW_AGNOSTIC VLLM_USE_LAYERNAME
    VLLM_USE_NCCL_SYMM_MEM VLLM_USE_OINK_OPS VLLM_USE_SIMPLE_KV_OFFLOAD
    VLLM_USE_SPINLOOP_EXT VLLM_USE_V2_MODEL_RUNNER VLLM_WEIGHT_OFFLOADING_DISABLE_PIN_MEMORY
    VLLM_WEIGHT_OFFLOADING_DISABLE_UVA VLLM_WORKER_SHUTDOWN_TIMEOUT_SECONDS
    """
)


# envs.py variable -> (the values it may take, why any other is refused): variables whose
# name is harmless but some of whose values are not.
VALUE_ENV: dict[str, tuple[frozenset[str], str]] = {
    # The level of vLLM's loggers and handler (vllm/logger.py, DEFAULT_LOGGING_CONFIG), read
    # upper-cased (envs.py: os.getenv("VLLM_LOGGING_LEVEL", "INFO").upper()); logging takes
    # a level by its name only (Lib/logging/__init__.py, _checkLevel: _nameToLevel). DEBUG
    # (and NOTSET, level 0: everything) logs what the model writes: every tool-call parser
    # logs each streamed piece of output, e.g. 0.33.0 vllm/tool_parsers/hermes_tool_parser.py
    # line 177 and deepseekv3_tool_parser.py line 142 `logger.debug("delta_text: %s",
    # delta_text)`, deepseekv3_tool_parser.py lines 334-335 the arguments of the call, and
    # 0.10.2 vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py line 177 the same:
    # what --enable-log-outputs (refused) would write. INFO and above log no content (prompts
    # and outputs are logged at INFO only under --enable-log-requests/--enable-log-outputs).
    "VLLM_LOGGING_LEVEL": (
        names("CRITICAL FATAL ERROR WARN WARNING INFO"),
        "DEBUG and NOTSET log what the model writes (the tool-call parsers log every streamed "
        "piece of output)",
    ),
}


def classify_env(var: str) -> tuple[str, str]:
    """(allowed|values|owned|refused, reason) of one variable of vllm/envs.py; `values`
    carries the values allowed, a tab, and why others are refused."""
    if var in ALLOWED_VLLM_ENV or var in ALLOWED_VLLM_ENV_0_33:
        return "allowed", ""
    if var in VALUE_ENV:
        allowed, why = VALUE_ENV[var]
        return "values", " ".join(sorted(allowed)) + "\t" + why
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


def classified() -> set[str]:
    """Every envs.py variable named here (prefix families aside)."""
    return {
        *ALLOWED_VLLM_ENV,
        *ALLOWED_VLLM_ENV_0_33,
        *VALUE_ENV,
        *OWNED_VLLM_ENV,
        *REFUSED_VLLM_ENV,
        *BUILD_TIME_ENV,
    }
