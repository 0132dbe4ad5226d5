"""The Grafana dashboard of every reference model."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
from grafana_foundation_sdk.cog.plugins import register_default_plugins
from grafana_foundation_sdk.models.dashboard import Dashboard as DashboardModel
from promql_checks import parse, unknown_metrics
from serving_fixtures import args_of

from inferplane.blueprint.model import Autoscaling, Environment, Model, Signal
from inferplane.components.serving.observability import dashboards, rules
from inferplane.components.stack_serving import serving_environment

NS = "support-assistant"
MODELS = [
    (e, m) for e in ("staging", "prod") for m in ("chat", "ranker", "toxicity", "nightly-embed")
]

COMMON_PANELS = [
    "Request latency",
    "Queue time vs compute time per request",
    "Throughput",
    "Errors",
    "Waiting requests",
    "Replicas: desired vs ready",
    "Cold starts: time to ready",
    "Pod starts and restarts",
    "GPU utilisation",
    "GPU memory used",
]
VLLM_PANELS = ["Time to first token (p95)", "Generated tokens"]
CACHE_PANEL = "Response cache hit rate"


@pytest.fixture(params=MODELS, ids=[f"{e}-{m}" for e, m in MODELS])
def case(
    request: pytest.FixtureRequest, reference_env: Callable[[str], Environment]
) -> tuple[Environment, Model, dict[str, Any]]:
    env_name, model_name = request.param
    env = reference_env(env_name)
    model = env.models[model_name]
    return env, model, dashboards.dashboard(*args_of(env, model), NS)


def panels(board: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["title"]: p for p in board["panels"] if p["type"] != "row"}


def test_identity(case: tuple[Environment, Model, dict[str, Any]]) -> None:
    env, model, board = case
    assert board["uid"] == dashboards.dashboard_uid(serving_environment(env), NS, model.name)
    assert len(board["uid"]) <= 40
    assert board["title"] == f"support-assistant / {model.name} ({env.name})"
    assert {"inferplane", env.blueprint, model.server} <= set(board["tags"])


def test_uids_differ_per_model_and_environment(
    reference_env: Callable[[str], Environment],
) -> None:
    uids = {
        dashboards.dashboard_uid(serving_environment(reference_env(e)), NS, m) for e, m in MODELS
    }
    assert len(uids) == len(MODELS)


def test_panels_per_server(case: tuple[Environment, Model, dict[str, Any]]) -> None:
    _, model, board = case
    expected = set(COMMON_PANELS) | (set(VLLM_PANELS) if model.server == "vllm" else set())
    expected |= {f"Scaling on {s.metric}" for s in model.autoscaling.signals}
    if model.response_cache is not None and model.response_cache.enabled:
        expected.add(CACHE_PANEL)
    assert set(panels(board)) == expected
    rows = [p["title"] for p in board["panels"] if p["type"] == "row"]
    assert rows == ["Latency", "Traffic", "Capacity", "Autoscaling signals"]


def test_every_listed_signal_has_a_panel_at_its_target(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    signals = (Signal("queue_depth", 4.0), Signal("ttft_p95_ms", 300.0))
    chat = dataclasses.replace(env.models["chat"], autoscaling=Autoscaling(signals, 600))
    board = dashboards.dashboard(*args_of(env, chat), NS)
    by_title = panels(board)
    assert _threshold(by_title["Scaling on queue_depth"]) == 4.0
    assert _threshold(by_title["Scaling on ttft_p95_ms"]) == 300.0
    (queue,) = by_title["Scaling on queue_depth"]["targets"]
    assert "kube_deployment_spec_replicas" in queue["expr"]  # per replica, as the HPA reads it
    (ttft,) = by_title["Scaling on ttft_p95_ms"]["targets"]
    assert "vllm:time_to_first_token_seconds_bucket" in ttft["expr"]


@pytest.mark.parametrize("backend", ["local", "redis"])
def test_a_cached_triton_model_shows_its_hit_rate(
    reference_env: Callable[[str], Environment], backend: str
) -> None:
    env = reference_env("prod")
    ranker = env.models["ranker"]
    assert ranker.response_cache is not None
    cache = dataclasses.replace(ranker.response_cache, backend=backend)
    board = dashboards.dashboard(
        *args_of(env, dataclasses.replace(ranker, response_cache=cache)), NS
    )
    (target,) = panels(board)[CACHE_PANEL]["targets"]
    sel = '{namespace="support-assistant", model="ranker"}'
    hits = f"sum(rate(nv_cache_num_hits_per_model{sel}[2m]))"
    misses = f"sum(rate(nv_cache_num_misses_per_model{sel}[2m]))"
    assert target["expr"] == f"{hits} / ({hits} + {misses})"
    parse(target["expr"])
    uncached = dataclasses.replace(ranker, response_cache=None)
    assert CACHE_PANEL not in panels(dashboards.dashboard(*args_of(env, uncached), NS))


def test_every_query_targets_the_prometheus_datasource_and_known_series(
    case: tuple[Environment, Model, dict[str, Any]],
) -> None:
    _, _, board = case
    for panel in panels(board).values():
        assert panel["type"] == "timeseries"
        assert panel["datasource"] == {"type": "prometheus", "uid": "prometheus"}
        assert panel["targets"], panel["title"]
        ref_ids = [t["refId"] for t in panel["targets"]]
        assert len(set(ref_ids)) == len(ref_ids)
        for target in panel["targets"]:
            assert target["datasource"]["uid"] == "prometheus"
            parse(target["expr"])
            assert not unknown_metrics(target["expr"]), target["expr"]
    assert len(dashboards.queries(board)) == sum(len(p["targets"]) for p in panels(board).values())


def _threshold(panel: dict[str, Any]) -> float | None:
    defaults = panel["fieldConfig"]["defaults"]
    if "thresholds" not in defaults:
        return None
    assert defaults["custom"]["thresholdsStyle"] == {"mode": "dashed"}
    steps = defaults["thresholds"]["steps"]
    assert steps[0]["value"] is None
    value: float = steps[-1]["value"]
    return value


def test_slo_lines(case: tuple[Environment, Model, dict[str, Any]]) -> None:
    _, model, board = case
    by_title = panels(board)
    p95 = model.slo.p95_ms if model.slo else None
    assert _threshold(by_title["Request latency"]) == p95
    if model.server == "vllm":
        ttft = model.slo.ttft_p95_ms if model.slo else None
        assert _threshold(by_title["Time to first token (p95)"]) == ttft
    assert _threshold(by_title["GPU memory used"]) == rules.gpu_memory_threshold(model)
    assert _threshold(by_title["Replicas: desired vs ready"]) == model.replicas.max


def test_layout_does_not_overlap(case: tuple[Environment, Model, dict[str, Any]]) -> None:
    _, _, board = case
    ids = [p["id"] for p in board["panels"]]
    assert len(set(ids)) == len(ids)
    cells = set()
    for panel in board["panels"]:
        pos = panel["gridPos"]
        assert pos["x"] >= 0 and pos["x"] + pos["w"] <= 24
        area = set(
            itertools.product(
                range(pos["x"], pos["x"] + pos["w"]), range(pos["y"], pos["y"] + pos["h"])
            )
        )
        assert not cells & area, panel["title"]
        cells |= area


def test_the_sdk_reads_its_json_back(case: tuple[Environment, Model, dict[str, Any]]) -> None:
    board = case[2]
    register_default_plugins()
    decoded = DashboardModel.from_json(board)
    assert decoded.uid == board["uid"]
    assert decoded.panels is not None and len(decoded.panels) == len(board["panels"])


def test_json_is_deterministic(reference_env: Callable[[str], Environment]) -> None:
    env = reference_env("prod")
    first = dashboards.dashboard_json(*args_of(env, env.models["chat"]), NS)
    assert first == dashboards.dashboard_json(*args_of(env, env.models["chat"]), NS)
    assert json.loads(first) == dashboards.dashboard(*args_of(env, env.models["chat"]), NS)
