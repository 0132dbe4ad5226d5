"""inferplane's route guard for vLLM's API server: a plain ASGI middleware that answers 404
for every path but the routes of the pinned release that ``routes.txt`` classifies
``client``, ``probe`` or ``metrics`` (`ALLOWED_ROUTES`).

vLLM's API key guards only paths starting with ``/v1`` (v0.10.2) or ``/v1``, ``/v2``,
``/inference``, ``/cohere`` (v0.33.0 ``GUARDED_PREFIX``, vllm/entrypoints/serve/middleware/
authenticate.py); ``/invocations`` (which serves chat and completions), ``/tokenize``,
``/scale_elastic_ep``, ``/docs`` and others are registered outside it with default options,
and no option of vLLM removes them. This module closes them whatever the key.

The serving container imports it by ``--middleware <module>.RouteGuard``: vLLM adds a class
with ``app.add_middleware(cls)`` after its own CORS, authentication and scaling middleware
(v0.10.2 ``build_app`` in vllm/entrypoints/openai/api_server.py, v0.33.0
``init_entrypoints_middleware`` in vllm/entrypoints/serve/middleware/register.py), and
starlette runs the middleware added last first (``Starlette.add_middleware`` inserts at
index 0), so this guard sees every request before vLLM's own code. v0.33.0 then calls
``model_hosting_container_standards.sagemaker.bootstrap`` (vllm/entrypoints/launchers/app.py),
which keeps the engine's middleware in order and puts a "throttle" middleware outside it only
when one is registered (aws/model-hosting-container-standards
``common/fastapi/middleware/core.py``, ``load_middlewares``: by
``CUSTOM_FASTAPI_MIDDLEWARE_THROTTLE`` or a script ``SAGEMAKER_MODEL_PATH`` names), which
``vllm.env`` cannot set: no table classifies those variables.

The module runs inside the vLLM image and imports only the standard library. inferplane
writes a copy with `ALLOWED_ROUTES` filled in into a ConfigMap (`shipped_source`); this file
itself, with none, refuses every path.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

ALLOWED_ROUTES: tuple[str, ...] = ()
"""The route templates served: FastAPI paths, ``{name}`` standing for one path segment."""

MARKER = "ALLOWED_ROUTES: tuple[str, ...] = ()"
"""The line `shipped_source` replaces."""

NOT_FOUND = b'{"detail":"Not Found"}'
"""FastAPI's own answer to an unknown path."""

POLICY_VIOLATION = 1008
"""WebSocket close code of a refused connection (RFC 6455 section 7.4.1)."""


def _pattern(template: str) -> str:
    parts = re.split(r"(\{[^/{}]+\})", template)
    return "".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts)


def matcher(routes: Iterable[str]) -> re.Pattern[str]:
    """One expression that matches exactly the paths of `routes` (no trailing slash, no
    prefix of another path); it matches nothing when `routes` is empty."""
    patterns = [_pattern(r) for r in sorted(routes)]
    return re.compile("|".join(patterns) if patterns else r"(?!)")


class RouteGuard:
    """Passes a request on only when its path is one of `allowed` (default
    `ALLOWED_ROUTES`); any other HTTP request gets 404, any other WebSocket is closed before
    it opens. Lifespan events pass. The path is compared after the app's ``root_path`` is
    removed, as vLLM's ``AuthenticationMiddleware`` compares it."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str] | None = None) -> None:
        self.app = app
        self.allowed = matcher(ALLOWED_ROUTES if allowed is None else allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path = str(scope["path"]).removeprefix(str(scope.get("root_path", "")))
        if self.allowed.fullmatch(path):
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": POLICY_VIOLATION})
        else:
            await send(
                {
                    "type": "http.response.start",
                    "status": 404,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(NOT_FOUND)).encode()),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": NOT_FOUND})


def shipped_source(routes: Iterable[str]) -> str:
    """This module's source with `ALLOWED_ROUTES` set to `routes`: the file the serving
    container imports."""
    from importlib import resources

    text = resources.files(__package__ or "").joinpath("route_guard.py").read_text()
    assert text.count(MARKER) == 2, "the marker appears in its definition and in MARKER"
    line = f"ALLOWED_ROUTES: tuple[str, ...] = {tuple(sorted(routes))!r}"
    return text.replace(MARKER + "\n", line + "\n", 1)
