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
    for name, make in tools.ALL_TOOLS.items():
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


OPERATOR_GOMOD = """module github.com/prometheus-operator/prometheus-operator

go 1.24.0

replace (
\tgithub.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring => ./pkg/apis/monitoring
\tgithub.com/prometheus-operator/prometheus-operator/pkg/client => ./pkg/client
\texample.com/fork => example.com/fork v1.2.3
)
"""


def test_cached_asks_for_the_e2e_group_only_and_the_rehearsal_group_on_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(tools, "upstream_gomod", lambda module, version: GOMOD)
    assert tools.main(["cached"]) == 1
    assert capsys.readouterr().out == (
        "not built: kubernetes, etcd, kwok, pulumi, pulumi-kubernetes, keda\n"
    )
    assert tools.main(["cached", "--group", "rehearsal"]) == 1
    assert capsys.readouterr().out == (
        "not built: prometheus, prometheus-operator, keda-metrics-apiserver, argo-rollouts\n"
    )
    assert tools.main(["cached", "--group", "nightly"]) == 2
    assert capsys.readouterr().err == (
        "error: unknown group 'nightly'; groups: e2e, rehearsal, karpenter\n"
    )


def test_prometheus_keeps_kubernetes_discovery_only_and_is_stamped_with_its_release() -> None:
    tool = tools.prometheus_tool()
    assert tool.binaries == {
        "github.com/prometheus/prometheus/cmd/prometheus": "prometheus",
        "github.com/prometheus/prometheus/cmd/promtool": "promtool",
    }
    assert tool.requires == [("github.com/prometheus/prometheus", "v0.316.0")]
    assert tool.tags == ["remove_all_sd", "enable_kubernetes_sd"]
    assert tool.ldflags == ["-X github.com/prometheus/common/version.Version=3.16.0"]


def test_the_operator_drops_its_relative_replaces_and_keeps_its_crds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tools, "upstream_gomod", lambda module, version: OPERATOR_GOMOD)
    tool = tools.prometheus_operator_tool()
    module = "github.com/prometheus-operator/prometheus-operator"
    assert tool.replaces == ["example.com/fork => example.com/fork v1.2.3"]
    assert tool.binaries == {f"{module}/cmd/operator": "prometheus-operator"}
    assert tool.module_files == [
        (f"{module}@v0.85.0", "example/prometheus-operator-crd/*.yaml", "share/crds/")
    ]


def test_keda_metrics_server_is_its_own_tool_beside_an_unchanged_operator(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tools, "upstream_gomod", lambda module, version: GOMOD)
    operator, adapter = tools.keda_tool(), tools.keda_metrics_tool()
    assert operator.binaries == {"github.com/kedacore/keda/v2/cmd/operator": "keda-operator"}
    assert adapter.binaries == {"github.com/kedacore/keda/v2/cmd/adapter": "keda-metrics-apiserver"}
    assert (adapter.version, adapter.replaces) == (operator.version, operator.replaces)
    assert adapter.folder() != operator.folder()


ROLLOUTS_GOMOD = """module github.com/argoproj/argo-rollouts

go 1.26.1

replace (
\tgithub.com/go-check/check => github.com/go-check/check v0.0.0-20180628173108-788fd7840127
\tk8s.io/api => k8s.io/api v0.34.5
)
"""


def test_the_rollouts_controller_repeats_its_replaces_and_keeps_the_releases_crds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tools, "upstream_gomod", lambda module, version: ROLLOUTS_GOMOD)
    tool = tools.argo_rollouts_tool()
    module = "github.com/argoproj/argo-rollouts"
    assert tool.version == "v1.10.1"
    assert tool.binaries == {f"{module}/cmd/rollouts-controller": "rollouts-controller"}
    assert tool.replaces == [
        "github.com/go-check/check => github.com/go-check/check v0.0.0-20180628173108-788fd7840127",
        "k8s.io/api => k8s.io/api v0.34.5",
    ]
    assert tool.ldflags == [f"-X {module}/utils/version.version=1.10.1"]
    assert tool.module_files == [(f"{module}@v1.10.1", "manifests/crds/*-crd.yaml", "share/crds/")]
    # Built with the machines' own Go, as every other tool.
    assert tools.pins()["go"]["toolchain"] == "local"
