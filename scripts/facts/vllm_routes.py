"""Reads every HTTP route the API server of `vllm serve` can register from the source of a
vLLM wheel (ast, as `vllm_read` does) and writes ``routes.txt``: each route classified by
`vllm_route_classes` as ``client``, ``probe``, ``metrics`` or ``refused``. It runs as part
of ``scripts/facts/vllm_serve_flags.py`` (and so of ``scripts/facts/vllm_wheels.py``, which
checks the stored tables against the wheels).

What counts as a route, under ``vllm/entrypoints/**``: a decorator or call
``<router|app>.get/post/put/delete/patch/api_route/websocket(path, ...)``,
``add_api_route(path, ...)``, ``app.mount(path, ...)`` and starlette's ``Mount(path, ...)``
(``/metrics``); FastAPI's own ``/docs``, ``/docs/oauth2-redirect``, ``/redoc`` and
``/openapi.json`` wherever the module that builds the app calls ``FastAPI(...)``
(fastapi/applications.py: ``docs_url="/docs"``, ``redoc_url="/redoc"``,
``openapi_url="/openapi.json"``, ``swagger_ui_oauth2_redirect_url="/docs/oauth2-redirect"``
by default). A path that is not a literal is listed as its expression in braces.

The API key's guard (`guarded_prefixes`) is read from the release's
``AuthenticationMiddleware``: the ``url_path.startswith(...)`` test (v0.10.2 ``"/v1"`` in
vllm/entrypoints/openai/api_server.py; v0.33.0 ``GUARDED_PREFIX`` in
vllm/entrypoints/serve/middleware/authenticate.py). A route classified ``client`` outside
the guard would serve without the key: it is written ``refused`` for that release.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path
from typing import Final

import vllm_route_classes as classes

ROUTES_VERSION: Final = "1"
"""Written into the table; raise it whenever a change here or in `vllm_route_classes`
changes what the tables say."""

ROUTES_FILE: Final = "routes.txt"
VERBS: Final = frozenset(
    {"get", "post", "put", "delete", "patch", "head", "options", "api_route", "websocket"}
)
FASTAPI_DEFAULTS: Final = ("/docs", "/docs/oauth2-redirect", "/redoc", "/openapi.json")
BUILDERS: Final = ("entrypoints/launchers/app.py", "entrypoints/openai/api_server.py")
"""The modules whose ``build_app`` makes the API server's FastAPI app (v0.33.0, v0.10.2)."""


def _path(arg: ast.expr) -> str:
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    return "{" + ast.unparse(arg) + "}"


def _route_call(node: ast.Call) -> str | None:
    """The kind of route `node` registers (its method, mount, ...), or None."""
    func = node.func
    if isinstance(func, ast.Name) and func.id == "Mount":
        return "mount"
    if not isinstance(func, ast.Attribute):
        return None
    owner = ast.unparse(func.value)
    if func.attr in VERBS and ("router" in owner or owner == "app"):
        return func.attr
    if func.attr in ("add_api_route", "add_websocket_route", "add_route"):
        return "route"
    if func.attr == "mount" and owner == "app":
        return "mount"
    return None


def routes(root: Path) -> dict[str, tuple[set[str], list[str]]]:
    """Path -> (its methods or kinds, the ``vllm/<file>:<line>`` of each registration)."""
    out: dict[str, tuple[set[str], list[str]]] = {}

    def add(path: str, kind: str, where: str) -> None:
        kinds, places = out.setdefault(path, (set(), []))
        kinds.add(kind)
        places.append(where)

    for path in sorted((root / "entrypoints").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            kind = _route_call(node)
            if kind is not None and node.args:
                add(_path(node.args[0]), kind.upper(), f"vllm/{rel}:{node.lineno}")
            elif rel in BUILDERS and ast.unparse(node.func) == "FastAPI":
                for default in FASTAPI_DEFAULTS:
                    add(default, "FASTAPI", f"vllm/{rel}:{node.lineno}")
    if not out:
        raise SystemExit(f"{root}: no routes under entrypoints/")
    return out


def guarded_prefixes(root: Path) -> tuple[tuple[str, ...], str]:
    """(the path prefixes the API key guards, where the test is)."""
    for path in sorted((root / "entrypoints").rglob("*.py")):
        tree = ast.parse(path.read_text())
        assigned = {
            t.id: n.value
            for n in tree.body
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        for cls in ast.walk(tree):
            if not (isinstance(cls, ast.ClassDef) and cls.name == "AuthenticationMiddleware"):
                continue
            for node in ast.walk(cls):
                if (
                    isinstance(node, ast.Call)
                    and ast.unparse(node.func) == "url_path.startswith"
                    and node.args
                ):
                    arg = node.args[0]
                    if isinstance(arg, ast.Name):
                        arg = assigned[arg.id]
                    value = ast.literal_eval(arg)
                    prefixes = (value,) if isinstance(value, str) else tuple(value)
                    return prefixes, f"vllm/{path.relative_to(root).as_posix()}:{node.lineno}"
    raise SystemExit(f"{root}: no AuthenticationMiddleware with url_path.startswith(...)")


def is_guarded(path: str, prefixes: Iterable[str]) -> bool:
    """Whether the API key guards `path`: ``url_path.startswith(prefixes)``, as vLLM tests."""
    return path.startswith(tuple(prefixes))


def table(
    release: str,
    header: str,
    found: dict[str, tuple[set[str], list[str]]],
    guard: tuple[tuple[str, ...], str],
    every: Iterable[str],
) -> str:
    """The route table of `release`; `every` is the paths of all supported releases (a
    classified path in none of them is stale). `header` is the provenance lines."""
    prefixes, where = guard
    lines = [
        header,
        f"# read and classified by scripts/facts/vllm_routes.py version {ROUTES_VERSION}.",
        "# guard<TAB>PREFIXES<TAB>WHERE: the API key guards only paths starting with these.",
        "# PATH<TAB>METHODS<TAB>client|probe|metrics|refused<TAB>WHEN vLLM registers it"
        "<TAB>WHAT it serves or WHY it is refused<TAB>WHERE it is registered",
        "\t".join(("guard", " ".join(prefixes), where)),
    ]
    unclassified = []
    for path in sorted(found):
        kinds, places = found[path]
        try:
            kind, when, why = classes.classify_route(path)
        except KeyError:
            unclassified.append(path)
            continue
        if kind == classes.CLIENT and not is_guarded(path, prefixes):
            kind, why = classes.REFUSED, f"{why}, outside this release's API-key guard"
        lines.append("\t".join((path, " ".join(sorted(kinds)), kind, when, why, " ".join(places))))
    stale = set(classes.ROUTES) - set(found) - set(every)
    if unclassified or stale:
        raise SystemExit(
            f"classify these routes of vllm {release} in scripts/facts/vllm_route_classes.py: "
            f"{sorted(unclassified)}; a route of no supported release, remove them there: "
            f"{sorted(stale)}"
        )
    return "\n".join(lines) + "\n"


def stored(text: str) -> tuple[dict[str, tuple[set[str], list[str]]], tuple[tuple[str, ...], str]]:
    """(routes, guard) as a stored table lists them: what `table` reads from a wheel."""
    found: dict[str, tuple[set[str], list[str]]] = {}
    guard: tuple[tuple[str, ...], str] = ((), "")
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        row = line.split("\t")
        if row[0] == "guard":
            guard = (tuple(row[1].split()), row[2])
        else:
            found[row[0]] = (set(row[1].split()), row[5].split())
    return found, guard
