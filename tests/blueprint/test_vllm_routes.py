"""``routes.txt`` of each supported vLLM release is what scripts/facts/vllm_routes.py writes from
the routes it lists (reading them again from the wheel is scripts/facts/vllm_wheels.py's job), a
route nobody classified stops the script, and every option or variable that adds a refused
route is refused or owned in the release's own tables."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from inferplane.blueprint import releases
from inferplane.blueprint.upstream import vllm_owned, vllm_routes

ROOT = Path(__file__).resolve().parents[2]
FACTS = ROOT / "inferplane" / "facts" / "vllm"
RELEASES = [r.release for r in releases.engine_releases("vllm")]
NAME = re.compile(r"(unless |without )?(--[a-z0-9-]+|VLLM_[A-Z0-9_]+)")


def script(name: str) -> ModuleType:
    sys.path.insert(0, str(ROOT / "scripts" / "facts"))
    return __import__(name)


def regenerate(release: str, text: str) -> str:
    serve_flags, routes = script("vllm_serve_flags"), script("vllm_routes")
    head = "\n".join(text.splitlines()[:4])
    found, guard = routes.stored(text)
    return str(routes.table(release, head, found, guard, serve_flags.stored_routes(release)))


@pytest.mark.parametrize("release", RELEASES)
def test_the_route_table_is_what_the_script_generates(release: str) -> None:
    text = (FACTS / release / "routes.txt").read_text()
    assert regenerate(release, text) == text


def test_a_route_table_of_another_script_version_is_stale(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = (FACTS / "v0.33.0" / "routes.txt").read_text()
    monkeypatch.setattr(script("vllm_routes"), "ROUTES_VERSION", "0")
    assert regenerate("v0.33.0", text) != text


def test_a_new_route_must_be_classified_before_the_table_is_written() -> None:
    routes = script("vllm_routes")
    found, guard = routes.stored((FACTS / "v0.33.0" / "routes.txt").read_text())
    found["/v1/new_thing"] = ({"POST"}, ["vllm/entrypoints/new/api_router.py:12"])
    with pytest.raises(SystemExit) as raised:
        routes.table(
            "v0.33.0", "# head", found, guard, script("vllm_serve_flags").stored_routes("v0.33.0")
        )
    assert str(raised.value) == (
        "classify these routes of vllm v0.33.0 in scripts/facts/vllm_route_classes.py: "
        "['/v1/new_thing']; a route of no supported release, remove them there: []"
    )


def test_the_guard_is_the_one_each_release_tests() -> None:
    assert vllm_routes.guarded_prefixes("v0.10.2") == ("/v1",)
    assert vllm_routes.guarded_prefixes("v0.33.0") == ("/v1", "/v2", "/inference", "/cohere")


@pytest.mark.parametrize("release", RELEASES)
def test_every_served_route_is_guarded_by_the_key_or_a_probe_or_the_metrics(
    release: str,
) -> None:
    table = vllm_routes.route_table(release)
    prefixes = vllm_routes.guarded_prefixes(release)
    unguarded = {p for p in vllm_routes.served_routes(release) if not p.startswith(prefixes)}
    assert unguarded == {"/health", "/metrics"}
    assert (table["/health"].kind, table["/metrics"].kind) == ("probe", "metrics")


def test_a_client_route_outside_v0_10_2_guard_is_refused_there() -> None:
    assert vllm_routes.route_table("v0.10.2")["/v2/rerank"] == vllm_routes.Route(
        "refused",
        "a pooling model that scores",
        "Cohere rerank v2, outside this release's API-key guard",
    )
    assert vllm_routes.route_table("v0.33.0")["/v2/rerank"].kind == "client"


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize(
    "path",
    ["/invocations", "/tokenize", "/detokenize", "/docs", "/redoc", "/openapi.json",
     "/version", "/load", "/ping", "/scale_elastic_ep", "/is_scaling_elastic_ep",
     "/pooling", "/classify", "/score", "/rerank"],
)  # fmt: skip
def test_the_routes_outside_the_guard_are_refused(release: str, path: str) -> None:
    assert vllm_routes.route_table(release)[path].kind == "refused"


@pytest.mark.parametrize("release", RELEASES)
def test_every_option_or_variable_that_adds_a_refused_route_is_refused(release: str) -> None:
    """An option that adds only refused routes may not be passed; one that also adds a
    client route (VLLM_ENABLE_COHERE_API) stays allowed: the route guard answers 404 for
    the refused one."""
    table = vllm_routes.route_table(release)

    def names(kind: str) -> set[str]:
        return {
            m.group(2)
            for route in table.values()
            if route.kind == kind
            for m in NAME.finditer(route.when)
            if not m.group(1)
        }

    flags, env = vllm_owned.flag_table(release), vllm_owned.env_table(release)
    entries = {n: flags.get(n) or env.get(n) for n in names("refused") - names("client")}
    allowed = {
        n for n, e in entries.items() if e is not None and e.kind not in ("refused", "owned")
    }
    assert allowed == set()
