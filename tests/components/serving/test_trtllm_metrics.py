"""TensorRT-LLM models: autoscaling, recording and alerting rules and the dashboard use the
``nv_trt_llm_*`` series the backend exports (names checked against `KNOWN_METRICS`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from crd_schema import errors
from promql_checks import matchers, metric_names, parse, selectors, single_element, unknown_metrics
from serving_fixtures import args_of

from inferplane.blueprint.loading.loader import load
from inferplane.blueprint.model import Environment, Slo
from inferplane.blueprint.resolution.resolve import resolve
from inferplane.components.serving.observability import dashboards, monitoring, promql
from inferplane.components.serving.observability.promql_scope import Scope
from inferplane.components.serving.scaling import autoscaling

ROOT = Path(__file__).resolve().parents[3]
NS = "llm-serving"
MODEL = "chat-70b"
TRTLLM = Scope(namespace=NS, model=MODEL, server="triton", deployment=MODEL, trtllm=True)


@pytest.fixture(scope="session")
def llm_env() -> Environment:
    return resolve(load(ROOT / "blueprints" / "llm-serving.yaml"), "prod")


def test_scope_of_a_tensorrt_llm_model(llm_env: Environment) -> None:
    env, model = args_of(llm_env, MODEL)
    assert Scope.of(env, model, NS) == TRTLLM


def test_queue_depth_counts_the_backends_waiting_requests_too() -> None:
    query = promql.queue_depth(TRTLLM)
    assert metric_names(query) == {
        "nv_trt_llm_request_metrics",
        "nv_inference_pending_request_count",
    }
    waiting = [s for s in selectors(query) if s.name == "nv_trt_llm_request_metrics"]
    assert [matchers(s)["request_type"] for s in waiting] == [("=", "waiting")]
    plain = dataclasses.replace(TRTLLM, trtllm=False)
    assert metric_names(promql.queue_depth(plain)) == {"nv_inference_pending_request_count"}


def test_trtllm_queries_parse_use_known_series_and_select_the_model() -> None:
    queries = [
        promql.queue_depth(TRTLLM),
        promql.inflight_requests(TRTLLM),
        promql.kv_cache_used_ratio(TRTLLM),
        promql.autoscaling_query(TRTLLM, "queue_depth"),
    ]
    for query in queries:
        parse(query)
        assert not unknown_metrics(query), query
        for sel in selectors(query):
            m = matchers(sel)
            assert m["namespace"] == ("=", NS)
            assert m["model"] == ("=", MODEL)
    assert promql.KNOWN_METRICS["nv_trt_llm_kv_cache_block_metrics"] == "triton-trtllm"
    for metric in ("queue_depth", "gpu_utilization", "p95_latency_ms"):
        assert single_element(promql.autoscaling_query(TRTLLM, metric)), metric  # type: ignore[arg-type]
    used = [matchers(s)["kv_cache_block_type"] for s in selectors(queries[2])]
    assert used == [("=", "used"), ("=", "max")]
    assert matchers(selectors(queries[1])[0])["request_type"] == ("=", "active")


def test_trtllm_signals_refuse_other_models() -> None:
    plain = dataclasses.replace(TRTLLM, trtllm=False)
    with pytest.raises(ValueError, match="only for TensorRT-LLM models"):
        promql.inflight_requests(plain)
    with pytest.raises(ValueError, match="only for TensorRT-LLM models"):
        promql.kv_cache_used_ratio(plain)


def test_rules_record_trtllm_series_and_alert_on_a_full_kv_cache(llm_env: Environment) -> None:
    env, model = args_of(llm_env, MODEL)
    spec = monitoring.prometheus_rule_spec(env, model, NS)
    rule = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "spec": spec}
    assert errors(rule) == []
    records = {r["record"] for g in spec["groups"] for r in g["rules"] if "record" in r}
    assert {promql.INFLIGHT_REQUESTS, promql.KV_CACHE_USED_RATIO} <= records
    alerts = {r["alert"]: r for g in spec["groups"] for r in g["rules"] if "alert" in r}
    # the backend reserves its KV cache at load: GPU memory always looks full
    assert "InferenceGPUMemoryHigh" not in alerts
    kv = alerts["InferenceKVCacheFull"]
    assert kv["expr"] == (
        f'inferplane:model_kv_cache_used_ratio{{namespace="{NS}", model="{MODEL}"}} > 0.95'
    )
    assert kv["for"] == "10m"
    for group in spec["groups"]:
        for r in group["rules"]:
            parse(r["expr"])
            assert not unknown_metrics(r["expr"]), r


def test_dashboard_shows_inflight_requests_and_kv_cache(llm_env: Environment) -> None:
    env, model = args_of(llm_env, MODEL)
    board = dashboards.dashboard(env, model, NS)
    titles = [p["title"] for p in board["panels"]]
    assert "In-flight requests" in titles and "KV cache blocks used" in titles
    assert "Time to first token (p95)" not in titles
    exprs = dashboards.queries(board)
    assert f'inferplane:model_inflight_requests{{namespace="{NS}", model="{MODEL}"}}' in exprs


def test_scaled_object_validates_and_scales_on_the_backend_queue(llm_env: Environment) -> None:
    env, model = args_of(llm_env, MODEL)
    spec = autoscaling.scaled_object_spec(env, model, NS, MODEL)
    obj = {
        "apiVersion": "keda.sh/v1alpha1",
        "kind": "ScaledObject",
        "metadata": {"name": MODEL, "namespace": NS},
        "spec": spec,
    }
    assert errors(obj) == []
    (trigger,) = spec["triggers"]
    assert trigger["metadata"]["query"] == promql.queue_depth(TRTLLM)
    assert trigger["metadata"]["threshold"] == "8"


def test_streaming_model_has_a_time_to_first_token_signal(llm_env: Environment) -> None:
    streaming = dataclasses.replace(TRTLLM, streaming=True)
    query = promql.ttft_p95_ms(streaming)
    assert query == (
        "histogram_quantile(0.95, sum by (le) (rate(nv_inference_first_response_histogram_ms_"
        f'bucket{{namespace="{NS}", model="{MODEL}"}}[2m])))'
    )
    assert not unknown_metrics(query)
    assert single_element(promql.autoscaling_query(streaming, "ttft_p95_ms"))
    with pytest.raises(ValueError, match="only for vllm"):
        promql.ttft_p95_ms(TRTLLM)

    llm = llm_env.models[MODEL].tensorrt_llm
    assert llm is not None
    env_model = dataclasses.replace(
        llm_env.models[MODEL],
        tensorrt_llm=dataclasses.replace(llm, streaming=True),
        slo=Slo(p95_ms=30000, ttft_p95_ms=800),
    )
    models = dict(llm_env.models)
    models[MODEL] = env_model
    env, model = args_of(dataclasses.replace(llm_env, models=models), MODEL)
    assert Scope.of(env, model, NS) == streaming
    spec = monitoring.prometheus_rule_spec(env, model, NS)
    records = {r["record"] for g in spec["groups"] for r in g["rules"] if "record" in r}
    assert promql.TTFT_P95_MS in records
    alerts = {r["alert"]: r for g in spec["groups"] for r in g["rules"] if "alert" in r}
    ttft = alerts["InferenceTTFTAboveSLO"]
    assert (
        ttft["expr"] == f'inferplane:model_ttft_p95_ms{{namespace="{NS}", model="{MODEL}"}} > 800'
    )
    assert "lower tensorrt_llm.max_batch_size or add replicas" in ttft["annotations"]["runbook"]
    titles = [p["title"] for p in dashboards.dashboard(env, model, NS)["panels"]]
    assert "Time to first token (p95)" in titles
