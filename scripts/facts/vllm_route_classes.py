"""How inferplane classifies each HTTP route the API server of `vllm serve` can register
(read from the wheel by `vllm_routes.py`): what a client may reach through the load
balancer, and why everything else is refused.

Classes:
- ``client``: the API a client calls (OpenAI, Anthropic, Cohere, Jina/Cohere rerank). It must
  lie under the release's API-key guard (`vllm_routes.guarded_prefixes`); the script refuses
  a ``client`` route outside it.
- ``probe``: what the kubelet's probes and the compile-cache Job ask (``/health``).
- ``metrics``: what Prometheus scrapes (``/metrics``).
- ``refused``: everything else: internals, administration, duplicates of the client API
  outside the key's guard, documentation, routes of other servers.

`WHEN` says what makes vLLM register the route (a model task, an option or a variable); an
option or variable named there for a refused route must be refused in the release's flag
and variable tables (`tests/blueprint/test_vllm_routes.py`).

Sources (v0.33.0): the routers register in ``vllm/entrypoints/launchers/api_server/
routers.py`` (``register_api_routers``), ``vllm/entrypoints/serve/__init__.py`` and the
factories it calls; v0.10.2 registers every route in ``vllm/entrypoints/openai/api_server.py``.
"""

from __future__ import annotations

from typing import Final

CLIENT: Final = "client"
PROBE: Final = "probe"
METRICS: Final = "metrics"
REFUSED: Final = "refused"

_GEN = "a generating model"
_POOL = "a pooling model"
_UNGUARDED = "outside the API key's guard"
_DEV = "VLLM_SERVER_DEV_MODE=1"

ROUTES: Final[dict[str, tuple[str, str, str]]] = {
    # path: (class, when vLLM registers it, why it is refused or what it serves)
    "/v1/chat/completions": (CLIENT, _GEN, "OpenAI chat completions"),
    "/v1/chat/completions/batch": (CLIENT, _GEN, "several chat completions in one request"),
    "/v1/completions": (CLIENT, _GEN, "OpenAI completions"),
    "/v1/responses": (CLIENT, _GEN, "OpenAI responses"),
    "/v1/responses/{response_id}": (CLIENT, _GEN, "OpenAI responses: a stored response"),
    "/v1/responses/{response_id}/cancel": (CLIENT, _GEN, "OpenAI responses: cancel one"),
    "/v1/models": (CLIENT, "always", "OpenAI models: the served names"),
    "/v1/messages": (CLIENT, _GEN, "Anthropic messages"),
    "/v1/messages/count_tokens": (CLIENT, _GEN, "Anthropic token counting"),
    "/v1/decisions": (CLIENT, "always", "classification decisions over a prompt"),
    "/v1/systemone": (CLIENT, "always", "structured decisions over a prompt"),
    "/cohere/v2/chat": (CLIENT, f"{_GEN} and VLLM_ENABLE_COHERE_API=1", "Cohere chat v2"),
    "/v1/embeddings": (CLIENT, f"{_POOL} (embed or token_embed)", "OpenAI embeddings"),
    "/v1/score": (CLIENT, f"{_POOL} that scores", "scores of text pairs"),
    "/v1/rerank": (CLIENT, f"{_POOL} that scores", "Jina/Cohere rerank"),
    "/v2/rerank": (CLIENT, f"{_POOL} that scores", "Cohere rerank v2"),
    "/v2/embed": (CLIENT, f"{_POOL} (embed)", "Cohere embed v2"),
    "/v1/audio/transcriptions": (CLIENT, "a transcription model", "OpenAI transcriptions"),
    "/v1/audio/translations": (CLIENT, "a transcription model", "OpenAI translations"),
    "/v1/realtime": (CLIENT, "a realtime model", "OpenAI realtime transcription (WebSocket)"),
    "/health": (PROBE, "always", "200 once the engine serves: the kubelet's probes"),
    "/metrics": (METRICS, "always", "Prometheus exposition: the ServiceMonitor scrapes it"),
    "/invocations": (
        REFUSED,
        "always",
        f"SageMaker's dispatcher to chat, completions and pooling, {_UNGUARDED}: "
        "it would serve the model without the key",
    ),
    "/ping": (REFUSED, "always", f"SageMaker's health check, {_UNGUARDED} (probes use /health)"),
    "/tokenize": (REFUSED, "always", f"runs the tokenizer and chat template, {_UNGUARDED}"),
    "/detokenize": (REFUSED, "always", f"runs the tokenizer, {_UNGUARDED}"),
    "/tokenizer_info": (
        REFUSED,
        "--enable-tokenizer-info-endpoint",
        f"serves the tokenizer's configuration and chat template, {_UNGUARDED}",
    ),
    "/load": (REFUSED, "always", f"the server's load, {_UNGUARDED} (Prometheus has it)"),
    "/version": (REFUSED, "always", f"names the vLLM version, {_UNGUARDED}"),
    "/kv_event_sources": (REFUSED, "always", f"the KV-cache event endpoints, {_UNGUARDED}"),
    "/generative_scoring": (REFUSED, _GEN, f"scores with the generating model, {_UNGUARDED}"),
    "/pooling": (REFUSED, _POOL, f"raw pooler output, {_UNGUARDED}"),
    "/classify": (REFUSED, f"{_POOL} (classify)", f"classification, {_UNGUARDED}"),
    "/score": (REFUSED, f"{_POOL} that scores", f"a copy of /v1/score {_UNGUARDED}"),
    "/rerank": (REFUSED, f"{_POOL} that scores", f"a copy of /v1/rerank {_UNGUARDED}"),
    "/scale_elastic_ep": (REFUSED, _GEN, f"rescales data parallelism, {_UNGUARDED}"),
    "/is_scaling_elastic_ep": (REFUSED, _GEN, f"elastic scaling state, {_UNGUARDED}"),
    "/docs": (REFUSED, "unless --disable-fastapi-docs", f"Swagger UI, {_UNGUARDED}"),
    "/docs/oauth2-redirect": (REFUSED, "unless --disable-fastapi-docs", "Swagger UI's helper"),
    "{app.swagger_ui_oauth2_redirect_url}": (
        REFUSED,
        "--enable-offline-docs",
        "Swagger UI's helper, served from the wheel",
    ),
    "/redoc": (REFUSED, "unless --disable-fastapi-docs", f"ReDoc UI, {_UNGUARDED}"),
    "/openapi.json": (
        REFUSED,
        "unless --disable-fastapi-docs",
        f"the whole route map, {_UNGUARDED}",
    ),
    "/static": (REFUSED, "--enable-offline-docs", f"Swagger UI's files, {_UNGUARDED}"),
    "/v1/load_lora_adapter": (
        REFUSED,
        "VLLM_ALLOW_RUNTIME_LORA_UPDATING=1",
        "loads an adapter from any path or repository (adapters are blueprint fields)",
    ),
    "/v1/unload_lora_adapter": (
        REFUSED,
        "VLLM_ALLOW_RUNTIME_LORA_UPDATING=1",
        "unloads a served adapter",
    ),
    "/start_profile": (
        REFUSED,
        "--profiler-config (v0.33.0), VLLM_TORCH_PROFILER_DIR (v0.10.2)",
        f"writes profiler traces, {_UNGUARDED}",
    ),
    "/stop_profile": (
        REFUSED,
        "--profiler-config (v0.33.0), VLLM_TORCH_PROFILER_DIR (v0.10.2)",
        f"writes profiler traces, {_UNGUARDED}",
    ),
    "/fault_tolerance/apply": (
        REFUSED,
        "--enable-fault-tolerance",
        f"acts on the engine's fault handling, {_UNGUARDED}",
    ),
    "/fault_tolerance/status": (REFUSED, "--enable-fault-tolerance", f"engine state, {_UNGUARDED}"),
    "/inference/v1/generate": (
        REFUSED,
        "--enable-scale-out or --tokens-only",
        "generates from raw token ids (disaggregated serving's internal API)",
    ),
    "/inference/v1/abort_requests": (
        REFUSED,
        "--enable-scale-out or --tokens-only",
        "aborts any request by id",
    ),
    "/abort_requests": (
        REFUSED,
        f"--enable-scale-out or --tokens-only; {_DEV}",
        f"aborts any request by id, {_UNGUARDED}",
    ),
    "/v1/chat/completions/render": (
        REFUSED,
        "--enable-scale-out or --tokens-only",
        "returns the rendered prompt (disaggregated serving's internal API)",
    ),
    "/v1/completions/render": (
        REFUSED,
        "--enable-scale-out or --tokens-only",
        "returns the rendered prompt (disaggregated serving's internal API)",
    ),
    "/v1/messages/render": (
        REFUSED,
        "--enable-scale-out or --tokens-only",
        "returns the rendered prompt (disaggregated serving's internal API)",
    ),
    "/v1/responses/render": (
        REFUSED,
        "--enable-scale-out or --tokens-only",
        "returns the rendered prompt (disaggregated serving's internal API)",
    ),
    "/cohere/v2/chat/render": (
        REFUSED,
        f"{_GEN} and VLLM_ENABLE_COHERE_API=1",
        "returns the rendered prompt (an internal of disaggregated serving)",
    ),
    "/v1/chat/completions/derender": (
        REFUSED,
        "--enable-scale-out or --tokens-only",
        "turns token ids back into a response (disaggregated serving's internal API)",
    ),
    "/v1/completions/derender": (
        REFUSED,
        "--enable-scale-out or --tokens-only",
        "turns token ids back into a response (disaggregated serving's internal API)",
    ),
    "{route.path}": (
        REFUSED,
        "without --enable-scale-out",
        "the scale-out routes above, answering 403",
    ),
    "/server_info": (REFUSED, _DEV, f"the whole configuration and environment, {_UNGUARDED}"),
    "/reset_prefix_cache": (REFUSED, _DEV, f"development route, {_UNGUARDED}"),
    "/reset_mm_cache": (REFUSED, _DEV, f"development route, {_UNGUARDED}"),
    "/reset_encoder_cache": (REFUSED, _DEV, f"development route, {_UNGUARDED}"),
    "/collective_rpc": (REFUSED, _DEV, f"calls any method on every worker, {_UNGUARDED}"),
    "/sleep": (REFUSED, _DEV, f"frees the GPU memory, {_UNGUARDED}"),
    "/wake_up": (REFUSED, _DEV, f"development route, {_UNGUARDED}"),
    "/is_sleeping": (REFUSED, _DEV, f"development route, {_UNGUARDED}"),
    "/release_kv_cache_memory": (REFUSED, _DEV, f"development route, {_UNGUARDED}"),
    "/pause": (REFUSED, _DEV, f"pauses generation (reinforcement learning), {_UNGUARDED}"),
    "/resume": (REFUSED, _DEV, f"reinforcement-learning route, {_UNGUARDED}"),
    "/is_paused": (REFUSED, _DEV, f"reinforcement-learning route, {_UNGUARDED}"),
    "/init_weight_transfer_engine": (REFUSED, _DEV, f"replaces the weights, {_UNGUARDED}"),
    "/shutdown_weight_transfer_engine": (REFUSED, _DEV, f"weight transfer, {_UNGUARDED}"),
    "/start_weight_update": (REFUSED, _DEV, f"replaces the weights, {_UNGUARDED}"),
    "/start_draft_weight_update": (REFUSED, _DEV, f"replaces the weights, {_UNGUARDED}"),
    "/update_weights": (REFUSED, _DEV, f"replaces the weights, {_UNGUARDED}"),
    "/finish_weight_update": (REFUSED, _DEV, f"replaces the weights, {_UNGUARDED}"),
    "/update_weight_version": (REFUSED, _DEV, f"reinforcement-learning route, {_UNGUARDED}"),
    "/weight_info": (REFUSED, _DEV, f"reinforcement-learning route, {_UNGUARDED}"),
    "/weight_checker": (REFUSED, _DEV, f"reinforcement-learning route, {_UNGUARDED}"),
    "/get_world_size": (REFUSED, _DEV, f"reinforcement-learning route, {_UNGUARDED}"),
    "/generate": (
        REFUSED,
        "another server (vllm/entrypoints/api_server.py)",
        "the demonstration server's route, not vllm serve's",
    ),
    "/ready": (
        REFUSED,
        "another server (vllm/entrypoints/launchers/dp_supervisor.py)",
        "the data-parallel supervisor's route, not the API server's",
    ),
    "/readyz": (
        REFUSED,
        "another server (vllm/entrypoints/launchers/dp_supervisor.py)",
        "the data-parallel supervisor's route, not the API server's",
    ),
}
"""Every route of every supported release, classified. A route of no supported release is
stale and refused by the script, as an unclassified one is."""


def classify_route(path: str) -> tuple[str, str, str]:
    """(class, when, why) of `path`; KeyError when unclassified."""
    return ROUTES[path]
