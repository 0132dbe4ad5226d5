"""The PromQL of every model: parses, names only real series, selects only its own model."""

from __future__ import annotations

import csv
import dataclasses
import os
import re
from collections.abc import Callable

import pytest
from crd_schema import REFERENCE
from promql_checks import matchers, metric_names, parse, selectors, single_element, unknown_metrics
from serving_fixtures import args_of

from inferplane.blueprint import defaults, releases
from inferplane.blueprint.model import ROUTER_METRICS, Environment
from inferplane.blueprint.upstream import vllm_owned
from inferplane.components.serving.observability import promql, promql_scope
from inferplane.components.serving.observability.promql_scope import Scope

NS = "support-assistant"

TRITON = Scope(namespace=NS, model="toxicity", server="triton", deployment="toxicity")
TRITON_CACHED = dataclasses.replace(
    TRITON, model="ranker", deployment="ranker", response_cache=True
)
VLLM = Scope(namespace=NS, model="chat", server="vllm", deployment="chat")
MIG = dataclasses.replace(TRITON, model="nightly-embed", deployment="nightly-embed", mig=True)
SCOPES = [TRITON, TRITON_CACHED, VLLM, MIG]
ROUTED = Scope(
    namespace=NS,
    model="chat",
    server="vllm",
    deployment="chat-us-east-1a",
    router_service="chat-us-east-1a-epp",
    zone="us-east-1a",
)
"""One zone of an llm-aware model: its Deployment and its endpoint picker's Service."""


def all_queries(scope: Scope) -> list[str]:
    out = [
        promql.queue_depth(scope),
        *(promql.latency_quantile_ms(scope, q) for q in (0.5, 0.95, 0.99)),
        promql.queue_time_ms(scope),
        promql.compute_time_ms(scope),
        promql.success_rate(scope),
        promql.failure_rate(scope),
        promql.request_rate(scope),
        promql.error_ratio(scope),
        promql.gpu_utilization_percent(scope),
        promql.gpu_memory_used_ratio(scope),
        promql.spec_replicas(scope),
        promql.ready_replicas(scope),
        promql.desired_replicas(scope),
        promql.container_restarts(scope),
        promql.time_to_ready_s(scope),
        promql.pods_started(scope),
    ]
    if scope.server == "vllm":
        out += [promql.ttft_p95_ms(scope), promql.tokens_per_second(scope)]
    metrics = ["queue_depth", "gpu_utilization", "p95_latency_ms"]
    metrics += ["ttft_p95_ms", "concurrency"] if scope.server == "vllm" else []
    out += [promql.autoscaling_query(scope, m) for m in metrics]  # type: ignore[arg-type]
    return out


CASES = [(s, q) for s in SCOPES for q in all_queries(s)]


@pytest.mark.parametrize(
    ("scope", "query"), CASES, ids=[f"{s.model}-{i}" for i, (s, _) in enumerate(CASES)]
)
def test_every_query_parses_and_uses_only_known_series(scope: Scope, query: str) -> None:
    parse(query)
    assert not unknown_metrics(query), query


@pytest.mark.parametrize(
    ("scope", "query"), CASES, ids=[f"{s.model}-{i}" for i, (s, _) in enumerate(CASES)]
)
def test_every_selector_is_scoped_to_the_model(scope: Scope, query: str) -> None:
    for sel in selectors(query):
        m = matchers(sel)
        assert m["namespace"] == ("=", NS), query
        source = promql.KNOWN_METRICS[sel.name]
        if source == "triton":
            assert m["model"] == ("=", scope.model)
        elif source == "vllm":
            assert m["model_name"] == ("=", scope.model)
        elif source == "dcgm" or sel.name.startswith("kube_pod_"):
            op, regex = m["pod"]
            assert op == "=~"
            assert re.fullmatch(regex, f"{scope.deployment}-5d8f7c9b6d-x2k9p")
        elif sel.name.startswith("kube_deployment_"):
            assert m["deployment"] == ("=", scope.deployment)
        elif sel.name.startswith("kube_horizontalpodautoscaler_"):
            assert m["horizontalpodautoscaler"] == ("=", f"keda-hpa-{scope.model}")


def test_pod_regex_does_not_match_a_model_whose_name_extends_this_one() -> None:
    scope = dataclasses.replace(VLLM, deployment="chat")
    regex = matchers(selectors(promql.gpu_utilization_percent(scope))[0])["pod"][1]
    assert re.fullmatch(regex, "chat-7c9f8d6b5-abcde")
    assert not re.fullmatch(regex, "chat-large-7c9f8d6b5-abcde")
    assert not re.fullmatch(regex, "chatbot-7c9f8d6b5-abcde")


@pytest.mark.parametrize("scope", SCOPES, ids=lambda s: s.model)
def test_autoscaling_queries_return_one_element(scope: Scope) -> None:
    for metric in promql.AUTOSCALING_METRIC_TYPE:
        if metric in ROUTER_METRICS:
            with pytest.raises(ValueError, match="has no router"):
                promql.autoscaling_query(scope, metric)
            continue
        if metric in ("ttft_p95_ms", "concurrency") and scope.server != "vllm":
            with pytest.raises(ValueError, match="only for vllm"):
                promql.autoscaling_query(scope, metric)
            continue
        assert single_element(promql.autoscaling_query(scope, metric)), metric


def test_latency_queries_turn_idle_nan_into_zero_but_keep_absence_empty() -> None:
    for scope in SCOPES:
        query = promql.autoscaling_query(scope, "p95_latency_ms")
        tree = parse(query)
        assert str(tree.op) == "or"
        assert str(tree.lhs.op) == ">=" and tree.lhs.rhs.val == 0
        # the right side exists only while the server's own series exist
        assert str(tree.rhs.op) == "*" and tree.rhs.rhs.val == 0
        assert metric_names(str(tree.rhs)) <= set(promql.KNOWN_METRICS)


def test_metric_types_match_the_signal() -> None:
    assert promql.AUTOSCALING_METRIC_TYPE == {
        "queue_depth": "AverageValue",
        "concurrency": "AverageValue",
        "gpu_utilization": "Value",
        "p95_latency_ms": "Value",
        "ttft_p95_ms": "Value",
        "router_queue": "AverageValue",
        "router_running": "AverageValue",
        "pool_saturation": "Value",
    }


def test_router_signals_read_the_zone_pickers_series() -> None:
    assert promql.autoscaling_query(ROUTED, "router_queue") == (
        'sum(llm_d_epp_flow_control_queue_size{namespace="support-assistant", '
        'service="chat-us-east-1a-epp"}) or '
        'max(up{namespace="support-assistant", service="chat-us-east-1a-epp"} == 1) * 0'
    )
    assert promql.autoscaling_query(ROUTED, "router_running") == (
        'sum(llm_d_epp_request_running{namespace="support-assistant", '
        'service="chat-us-east-1a-epp"})'
    )
    assert promql.autoscaling_query(ROUTED, "pool_saturation") == (
        'max(llm_d_epp_flow_control_pool_saturation{namespace="support-assistant", '
        'service="chat-us-east-1a-epp"})'
    )
    for metric in ROUTER_METRICS:
        query = promql.autoscaling_query(ROUTED, metric)
        assert single_element(query) and unknown_metrics(query) == set(), metric
        # `up` (Prometheus' own) tells an idle router's queue from a lost one.
        wanted = {"llm-d-router", "prometheus"} if metric == "router_queue" else {"llm-d-router"}
        assert {promql.KNOWN_METRICS[n] for n in metric_names(query)} == wanted, metric


def test_one_zone_of_a_routed_model_reads_only_its_own_pods() -> None:
    assert promql.queue_depth(ROUTED) == (
        'sum(vllm:num_requests_waiting{namespace="support-assistant", model_name="chat", '
        'pod=~"chat-us-east-1a-[a-z0-9]+-[a-z0-9]+"})'
    )
    assert ROUTED.hpa == "keda-hpa-chat-us-east-1a"
    assert VLLM.hpa == "keda-hpa-chat"


def test_queue_depth_series_per_server() -> None:
    assert metric_names(promql.queue_depth(TRITON)) == {"nv_inference_pending_request_count"}
    assert metric_names(promql.queue_depth(VLLM)) == {"vllm:num_requests_waiting"}


def test_concurrency_counts_the_running_batch_and_the_queue() -> None:
    # vLLM admits requests into the running batch up to max_num_seqs: the waiting count
    # alone stays 0 while the batch outgrows the one the plan sized for the SLO.
    assert promql.autoscaling_query(VLLM, "concurrency") == (
        'sum(vllm:num_requests_running{namespace="support-assistant", model_name="chat"}) + '
        'sum(vllm:num_requests_waiting{namespace="support-assistant", model_name="chat"})'
    )
    trtllm = dataclasses.replace(TRITON, model="chat-70b", deployment="chat-70b", trtllm=True)
    assert promql.autoscaling_query(trtllm, "concurrency") == (
        'sum(nv_trt_llm_request_metrics{namespace="support-assistant", model="chat-70b", '
        'request_type="active"}) + sum(nv_trt_llm_request_metrics{namespace='
        '"support-assistant", model="chat-70b", request_type="waiting"}) + '
        'sum(nv_inference_pending_request_count{namespace="support-assistant", '
        'model="chat-70b"})'
    )
    assert single_element(promql.autoscaling_query(trtllm, "concurrency"))
    with pytest.raises(ValueError, match="concurrency exists only for vllm models"):
        promql.concurrency(TRITON)


def test_the_ttft_trigger_reads_a_short_window_and_the_rules_the_long_one() -> None:
    trigger = promql.autoscaling_query(VLLM, "ttft_p95_ms")
    assert trigger.startswith(
        "histogram_quantile(0.95, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket"
        '{namespace="support-assistant", model_name="chat"}[30s]))) * 1000 >= 0 or '
    )
    assert promql.ttft_p95_ms(VLLM).endswith('model_name="chat"}[2m]))) * 1000')


def test_triton_p95_uses_the_request_summary_at_the_configured_quantile() -> None:
    query = promql.latency_quantile_ms(TRITON, 0.95)
    assert query == (
        'max(nv_inference_request_summary_us{namespace="support-assistant", '
        'model="toxicity", quantile="0.95"}) / 1000'
    )


def test_triton_with_response_cache_sums_stage_quantiles() -> None:
    # Triton does not create nv_inference_request_summary_us when the cache is on.
    names = metric_names(promql.latency_quantile_ms(TRITON_CACHED, 0.95))
    assert names == {
        "nv_inference_queue_summary_us",
        "nv_inference_compute_input_summary_us",
        "nv_inference_compute_infer_summary_us",
        "nv_inference_compute_output_summary_us",
    }


def test_triton_only_offers_the_configured_quantiles() -> None:
    with pytest.raises(ValueError, match="quantiles"):
        promql.latency_quantile_ms(TRITON, 0.9)


def test_vllm_p95_is_the_histogram_quantile_in_ms() -> None:
    assert promql.latency_quantile_ms(VLLM, 0.95) == (
        "histogram_quantile(0.95, sum by (le) (rate(vllm:e2e_request_latency_seconds_bucket"
        '{namespace="support-assistant", model_name="chat"}[2m]))) * 1000'
    )
    assert promql.latency_quantile_ms(VLLM, 0.95, ("namespace",)).startswith(
        "histogram_quantile(0.95, sum by (le, namespace) ("
    )


def test_vllm_only_signals_refuse_triton() -> None:
    for build in (promql.ttft_p95_ms, promql.tokens_per_second):
        with pytest.raises(ValueError, match="only for vllm"):
            build(TRITON)


def test_gpu_utilization_on_mig_uses_engine_activity() -> None:
    # DCGM reports no GPU_UTIL for MIG instances.
    assert metric_names(promql.gpu_utilization_percent(MIG)) == {"DCGM_FI_PROF_GR_ENGINE_ACTIVE"}
    assert promql.gpu_utilization_percent(MIG).endswith(" * 100")
    assert metric_names(promql.gpu_utilization_percent(TRITON)) == {"DCGM_FI_DEV_GPU_UTIL"}


def test_vllm_errors_count_the_error_finish_reason_and_exclude_aborts_from_success() -> None:
    failed = selectors(promql.failure_rate(VLLM))[0]
    assert matchers(failed)["finished_reason"] == ("=", "error")
    ok = selectors(promql.success_rate(VLLM))[0]
    assert matchers(ok)["finished_reason"] == ("!~", "error|abort")


def test_selector_escapes_quotes() -> None:
    assert promql_scope.selector(a='x"y\\z') == '{a="x\\"y\\\\z"}'
    parse("up" + promql_scope.selector(a='x"y'))


def test_threshold_renders_plain_numbers() -> None:
    assert promql.threshold(4.0) == "4"
    assert promql.threshold(1500) == "1500"
    assert promql.threshold(0.5) == "0.5"


def _triton_parse_metrics_config(arg: str) -> tuple[str, str]:
    """Triton's ParseMetricsConfigOption (server src/command_line_parser.cc)."""
    eq = arg.index("=")
    setting, value = arg[:eq], arg[eq + 1 :]
    assert "," not in setting and setting and value
    return setting, value


def _triton_parse_quantiles(value: str) -> list[tuple[float, float]]:
    """Triton's MetricReporterConfig::ParseQuantiles (core src/metric_model_reporter.cc)."""
    pairs = []
    for pair in value.split(","):
        q, err = pair.split(":")
        pairs.append((float(q), float(err)))
    return pairs


def test_triton_metrics_args_parse_as_triton_parses_them(
    reference_env: Callable[[str], Environment],
) -> None:
    args = promql.triton_metrics_args(reference_env("prod").models["ranker"])
    assert args == [
        "--metrics-config=summary_latencies=true",
        "--metrics-config=summary_quantiles=0.5:0.01,0.95:0.001,0.99:0.001",
    ]
    settings = dict(_triton_parse_metrics_config(a.removeprefix("--metrics-config=")) for a in args)
    assert settings["summary_latencies"] == "true"
    quantiles = _triton_parse_quantiles(settings["summary_quantiles"])
    assert quantiles == list(promql.TRITON_SUMMARY_QUANTILES)
    assert {q for q, _ in quantiles} == set(promql.LATENCY_MS)


def test_known_dcgm_metrics_are_the_default_counters() -> None:
    path = REFERENCE / "dcgm-exporter" / "etc" / "default-counters.csv"
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"the reference counters are required under CI: {path}")
        pytest.skip(f"{path} not found")
    rows = csv.reader(line for line in path.read_text().splitlines() if line.strip())
    enabled = {row[0].strip() for row in rows if not row[0].lstrip().startswith("#")}
    known = {name for name, source in promql.KNOWN_METRICS.items() if source == "dcgm"}
    assert known == enabled


def test_scope_of_a_reference_model(reference_env: Callable[[str], Environment]) -> None:
    env = reference_env("staging")
    assert Scope.of(*args_of(env, env.models["ranker"]), NS) == Scope(
        namespace=NS, model="ranker", server="triton", deployment="ranker", response_cache=True
    )
    embed = Scope.of(*args_of(env, env.models["nightly-embed"]), NS, "embed")
    assert embed.mig and embed.deployment == "embed" and embed.hpa == "keda-hpa-nightly-embed"


@pytest.mark.parametrize("release", [r.release for r in releases.engine_releases("vllm")])
def test_every_vllm_series_a_query_uses_exists_in_every_supported_release(release: str) -> None:
    """A model may run any supported release (`versions.vllm`), so triggers, rules and
    dashboards use only series every release exposes (inferplane/facts/vllm/<release>/
    metrics.txt, read from each wheel)."""
    used = {n for _, query in CASES for n in metric_names(query) if n.startswith("vllm:")}
    assert "vllm:num_requests_waiting" in used
    assert used - vllm_owned.metric_series(release) == set()


def test_the_vllm_registry_is_the_pinned_release() -> None:
    vllm = {name for name, source in promql.KNOWN_METRICS.items() if source == "vllm"}
    assert vllm == vllm_owned.metric_series(defaults.VERSIONS["vllm"])
    # v0.33.0 no longer exposes the names v0.10.2 announced as renamed.
    assert "vllm:kv_cache_usage_perc" in vllm
    assert "vllm:gpu_cache_usage_perc" not in vllm
