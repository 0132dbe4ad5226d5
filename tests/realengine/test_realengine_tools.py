"""The tool builder of the end-to-end run: go.mod reading, the staging-module mapping, the
recipe key that decides when a cached tool is built again."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

E2E = Path(__file__).resolve().parents[2] / "e2e"
sys.path.insert(0, str(E2E))

import tools  # noqa: E402

GOMOD = """module k8s.io/kubernetes

go 1.26.0

require (
\tgithub.com/blang/semver/v4 v4.0.0
\tk8s.io/api v0.0.0 // indirect
)

require go.etcd.io/etcd/api/v3 v3.7.0

replace (
\tk8s.io/api => ./staging/src/k8s.io/api
\tk8s.io/client-go => ./staging/src/k8s.io/client-go // a comment
)

replace github.com/atotto/clipboard => github.com/tgummerer/clipboard v0.0.0-20241001131231-d0
"""


def test_replace_lines_of_blocks_and_single_lines_are_read() -> None:
    assert tools.gomod_replaces(GOMOD) == [
        ("k8s.io/api", "./staging/src/k8s.io/api"),
        ("k8s.io/client-go", "./staging/src/k8s.io/client-go"),
        (
            "github.com/atotto/clipboard",
            "github.com/tgummerer/clipboard v0.0.0-20241001131231-d0",
        ),
    ]


def test_staging_modules_map_to_the_published_release_of_the_same_version() -> None:
    assert tools.staging_replaces(GOMOD, "v1.37.2") == [
        "k8s.io/api => k8s.io/api v0.37.2",
        "k8s.io/client-go => k8s.io/client-go v0.37.2",
    ]


def test_every_tool_has_a_pin_and_a_cache_folder_keyed_by_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(tools, "upstream_gomod", lambda module, version: GOMOD)
    for name, make in tools.TOOLS.items():
        tool = make()
        assert tool.version in tool.folder().name, name
        assert tool.folder().parent == tmp_path / "inferplane" / "tools"
        assert not tool.built()


def test_a_changed_pin_changes_the_cache_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tools, "upstream_gomod", lambda module, version: GOMOD)
    before = tools.kwok_tool().folder()
    pins = tools.pins()
    pins["kwok"]["version"] = "v9.9.9"
    monkeypatch.setattr(tools, "pins", lambda: pins)
    after = tools.kwok_tool().folder()
    assert before != after
    assert "v9.9.9" in after.name


def test_a_changed_recipe_changes_the_cache_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    a = tools.kwok_tool()
    b = tools.kwok_tool()
    b.ldflags = [*b.ldflags, "-X x.y=z"]
    assert a.version == b.version
    assert a.folder() != b.folder()
