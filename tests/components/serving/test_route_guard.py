"""vLLM serves internals outside its API key's guard (``/invocations``, ``/tokenize``,
``/scale_elastic_ep``, ``/docs`` ...). inferplane's route guard answers 404 for every path
the release's ``routes.txt`` does not classify client, probe or metrics: the module is
tested here as the plain ASGI app the serving container imports (the shipped text, loaded
from a file), and the pods that load it are tested field by field."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from serving_fixtures import (
    CONFIG_MAP,
    DEPLOYMENT,
    JOB,
    args_of,
    container,
    k8s_object,
    pod_spec,
    serve,
)

from inferplane.blueprint.model import Environment
from inferplane.blueprint.upstream.vllm_routes import served_routes
from inferplane.components.serving.observability.monitoring import service_monitor_spec
from inferplane.components.serving.vllm.route_guard import shipped_source
from inferplane.components.serving.vllm.vllm_compile import compile_key, job_name

GUARD_DIR = "/etc/inferplane/route-guard"
MOUNT = {"name": "route-guard", "mountPath": GUARD_DIR, "readOnly": True}
VOLUME = {"name": "route-guard", "configMap": {"name": "chat-route-guard"}}
MIDDLEWARE = ["--middleware", "inferplane_route_guard.RouteGuard"]
NOT_FOUND = [
    {
        "type": "http.response.start",
        "status": 404,
        "headers": [(b"content-type", b"application/json"), (b"content-length", b"22")],
    },
    {"type": "http.response.body", "body": b'{"detail":"Not Found"}'},
]


def shipped(tmp_path: Path, release: str = "v0.33.0") -> ModuleType:
    """The module as the serving container imports it: the shipped text, from a file."""
    path = tmp_path / "inferplane_route_guard.py"
    path.write_text(shipped_source(served_routes(release)))
    spec = importlib.util.spec_from_file_location("inferplane_route_guard", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def call(guard_class: Any, scope: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """(the paths the wrapped app saw, what the guard sent) for one request."""
    seen: list[str] = []
    sent: list[dict[str, Any]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope.get("path", scope["type"]))

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(guard_class(app)(scope, receive, send))
    return seen, sent


def http(path: str, root_path: str = "", method: str = "POST") -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path, "root_path": root_path}


@pytest.mark.parametrize(
    "path",
    [
        "/v1/chat/completions",
        "/v1/completions",
        "/v1/models",
        "/v1/responses/resp_123",
        "/v1/responses/resp_123/cancel",
        "/health",
        "/metrics",
    ],
)
def test_the_client_api_probes_and_metrics_pass(tmp_path: Path, path: str) -> None:
    assert call(shipped(tmp_path).RouteGuard, http(path)) == ([path], [])


@pytest.mark.parametrize(
    "path",
    [
        "/invocations",
        "/tokenize",
        "/detokenize",
        "/scale_elastic_ep",
        "/is_scaling_elastic_ep",
        "/docs",
        "/redoc",
        "/openapi.json",
        "/version",
        "/load",
        "/ping",
        "/kv_event_sources",
        "/generative_scoring",
        "/pooling",
        "/classify",
        "/score",
        "/rerank",
        "/v1/load_lora_adapter",
        "/v1/chat/completions/render",
        "/collective_rpc",
        # near misses of served paths: the router would redirect or match these
        "/v1/models/",
        "/metricsx",
        "/metrics/x",
        "/v1/responses/a/b/cancel",
        "/v1/responses//cancel",
        "//health",
    ],
)
def test_every_other_path_is_not_found_whatever_the_key(tmp_path: Path, path: str) -> None:
    scope = {**http(path), "headers": [(b"authorization", b"Bearer the-right-key")]}
    assert call(shipped(tmp_path).RouteGuard, scope) == ([], NOT_FOUND)


def test_the_path_is_read_below_the_root_path_as_vllm_reads_it(tmp_path: Path) -> None:
    guard = shipped(tmp_path).RouteGuard
    assert call(guard, http("/llm/v1/models", root_path="/llm")) == (["/llm/v1/models"], [])
    assert call(guard, http("/llm/tokenize", root_path="/llm")) == ([], NOT_FOUND)


def test_a_websocket_to_another_path_is_closed_before_it_opens(tmp_path: Path) -> None:
    guard = shipped(tmp_path).RouteGuard
    scope = {"type": "websocket", "path": "/v1/realtime_internal", "root_path": ""}
    assert call(guard, scope) == ([], [{"type": "websocket.close", "code": 1008}])


def test_lifespan_events_reach_the_server(tmp_path: Path) -> None:
    assert call(shipped(tmp_path).RouteGuard, {"type": "lifespan"}) == (["lifespan"], [])


def test_the_module_as_written_in_the_tree_refuses_everything() -> None:
    from inferplane.components.serving.vllm import route_guard

    assert call(route_guard.RouteGuard, http("/health")) == ([], NOT_FOUND)


def test_a_client_route_outside_the_key_guard_of_v0_10_2_is_refused(tmp_path: Path) -> None:
    """v0.10.2 guards only /v1: its /v2/rerank would serve without the key."""
    guard = shipped(tmp_path, "v0.10.2").RouteGuard
    assert call(guard, http("/v2/rerank")) == ([], NOT_FOUND)
    assert call(guard, http("/v1/rerank")) == (["/v1/rerank"], [])


def test_the_shipped_module_lists_exactly_the_served_routes_of_the_release() -> None:
    text = shipped_source(served_routes("v0.33.0"))
    line = next(x for x in text.splitlines() if x.startswith("ALLOWED_ROUTES: tuple"))
    assert line == (
        "ALLOWED_ROUTES: tuple[str, ...] = ('/cohere/v2/chat', '/health', '/metrics', "
        "'/v1/audio/transcriptions', '/v1/audio/translations', '/v1/chat/completions', "
        "'/v1/chat/completions/batch', '/v1/completions', '/v1/decisions', "
        "'/v1/embeddings', '/v1/messages', '/v1/messages/count_tokens', '/v1/models', "
        "'/v1/realtime', '/v1/rerank', '/v1/responses', '/v1/responses/{response_id}', "
        "'/v1/responses/{response_id}/cancel', '/v1/score', '/v1/systemone', '/v2/embed', "
        "'/v2/rerank')"
    )


def test_serving_pods_load_the_guard_from_its_read_only_config_map(staging: Environment) -> None:
    rec = serve(staging, ["chat"])
    cm = k8s_object(rec, CONFIG_MAP, "chat-route-guard")
    assert cm.get("metadata", "name") == "chat-route-guard"
    assert cm.get("data") == {
        "inferplane_route_guard.py": shipped_source(served_routes(staging.versions.vllm))
    }
    chat = k8s_object(rec, DEPLOYMENT, "chat")
    vllm = container(chat, "vllm")
    at = vllm["args"].index("--middleware")
    assert vllm["args"][at : at + 2] == MIDDLEWARE
    assert vllm["args"].count("--middleware") == 1
    assert [e for e in vllm["env"] if e["name"] == "PYTHONPATH"] == [
        {"name": "PYTHONPATH", "value": GUARD_DIR}
    ]
    assert [m for m in vllm["volumeMounts"] if m["name"] == "route-guard"] == [MOUNT]
    assert [v for v in pod_spec(chat)["volumes"] if v["name"] == "route-guard"] == [VOLUME]
    assert cm.urn in chat.depends_on


def test_the_probes_and_the_scrape_ask_served_routes(staging: Environment) -> None:
    rec = serve(staging, ["chat"])
    vllm = container(k8s_object(rec, DEPLOYMENT, "chat"), "vllm")
    probes = {vllm[p]["httpGet"]["path"] for p in ("startupProbe", "readinessProbe")}
    probes.add(vllm["livenessProbe"]["httpGet"]["path"])
    assert probes == {"/health"}
    env, model = args_of(staging, "chat")
    (endpoint,) = service_monitor_spec(env, model, "ns", "chat")["endpoints"]
    assert {*probes, endpoint["path"]} <= set(served_routes(env.vllm_version))


def test_the_compile_job_runs_the_server_behind_the_same_guard(staging: Environment) -> None:
    rec = serve(staging, ["chat"])
    env, model = args_of(staging, "chat")
    job = k8s_object(rec, JOB, job_name(model, compile_key(env, model)))
    compile_container = container(job, "compile", init=True)
    at = compile_container["command"].index("--middleware")
    assert compile_container["command"][at : at + 2] == MIDDLEWARE
    assert "--health-url=http://127.0.0.1:8000/health" in compile_container["command"]
    assert {"name": "PYTHONPATH", "value": GUARD_DIR} in compile_container["env"]
    assert MOUNT in compile_container["volumeMounts"]
    assert VOLUME in pod_spec(job)["volumes"]
    assert k8s_object(rec, CONFIG_MAP, "chat-route-guard").urn in job.depends_on
