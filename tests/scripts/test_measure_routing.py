"""scripts/measure/measure_routing.py without a GPU: its arguments, the command lines and
configurations it writes (held to the pinned chart and to inferplane's own), the round-robin
proxy on real loopback sockets, the report read from a benchmark result, the teardown of
what it starts, and its message where a tool is missing."""

from __future__ import annotations

import argparse
import http.client
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from inferplane.blueprint import releases
from inferplane.blueprint.model import Routing
from inferplane.blueprint.upstream import vllm_owned
from inferplane.components.serving.routing import router
from inferplane.components.serving.vllm.vllm_flags import vllm_flags

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts" / "measure"))

import measure_routing as script  # noqa: E402
import routing_setup as setup  # noqa: E402
from round_robin_proxy import RoundRobinProxy  # noqa: E402

CHART = ROOT / "tests" / "reference" / "llm-d-router-v0.10.0" / "charts"
PORTS = setup.Ports(18000)


def test_arguments_and_their_defaults(tmp_path: Path) -> None:
    args = script.parse_args(["--model-dir", str(tmp_path / "llama-8b")])
    assert args.gpus == ["0", "1"]
    assert args.arms == ["round_robin", "llm_aware"]
    assert args.served_model_name == "llama-8b"
    assert (args.prompts, args.prefixes, args.prefix_len, args.suffix_len) == (800, 40, 2000, 200)
    assert args.request_rate == 8.0 and args.prefix_cache == "approximate"
    args = script.parse_args(
        ["--model-dir", "m", "--gpus", "2, 3", "--arms", "llm_aware", "--request-rate", "inf"]
    )
    assert args.gpus == ["2", "3"] and args.arms == ["llm_aware"]
    assert args.request_rate == float("inf")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--gpus", "0"], "--gpus needs two GPU ids, one per replica, not '0'"),
        (["--arms", "round_robin,fastest"], "--arms takes round_robin and/or llm_aware"),
        (["--arms", "llm_aware,llm_aware"], "--arms takes round_robin and/or llm_aware"),
        (["--prompts", "10", "--prefixes", "20"], "--prompts (10) must be at least --prefixes"),
        (["--prefix-len", "0"], "--prefix-len must be at least 1"),
        (["--request-rate", "0"], "--request-rate must be above 0"),
        (["--prefix-cache", "precise"], "invalid choice: 'precise'"),
    ],
)
def test_arguments_it_refuses(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as refused:
        script.parse_args(["--model-dir", "m", *argv])
    assert refused.value.code == 2
    assert message in capsys.readouterr().err


def test_a_replica_is_served_with_inferplanes_flags_on_loopback() -> None:
    cmd = setup.serve_command("/opt/vllm/bin/vllm", "/models/m", "m", 18001, max_num_seqs=64)
    flags = vllm_flags(
        weights="/models/m",
        port=18001,
        served_names=["m"],
        tensor_parallel_size=1,
        max_num_seqs=64,
        enable_prefix_caching=True,
    )
    assert cmd == ["/opt/vllm/bin/vllm", "serve", *flags, "--host", "127.0.0.1"]
    assert "--enable-prefix-caching" in cmd
    assert cmd[:5] == ["/opt/vllm/bin/vllm", "serve", "/models/m", "--port", "18001"]
    # a Python with vLLM runs its console script's module
    assert setup.serve_command("/venv/bin/python3", "/m", "m", 1)[:4] == [
        "/venv/bin/python3",
        "-m",
        "vllm.entrypoints.cli.main",
        "serve",
    ]


@pytest.mark.parametrize("release", [r.release for r in releases.engine_releases("vllm")])
def test_every_serve_flag_is_an_option_of_each_supported_vllm(release: str) -> None:
    cmd = setup.serve_command(
        "vllm", "/m", "m", 1, max_model_len=4096, max_num_seqs=8, gpu_memory_utilization=0.9
    )
    flags = {a for a in cmd if a.startswith("--")}
    assert flags - vllm_owned.serve_flags(release) == set()


def test_the_benchmark_sends_the_shared_prefix_workload_and_saves_its_result() -> None:
    load = setup.Workload(
        prompts=800, prefixes=40, prefix_len=2000, suffix_len=200, output_len=100,
        request_rate=8.0, seed=7,
    )  # fmt: skip
    out = Path("/results/llm_aware.json")
    cmd = setup.bench_command("vllm", "http://127.0.0.1:18011", "m", "/models/m", load, out)
    assert cmd == [
        "vllm", "bench", "serve",
        "--backend", "openai",
        "--base-url", "http://127.0.0.1:18011",
        "--endpoint", "/v1/completions",
        "--model", "m",
        "--tokenizer", "/models/m",
        "--dataset-name", "prefix_repetition",
        "--prefix-repetition-prefix-len", "2000",
        "--prefix-repetition-suffix-len", "200",
        "--prefix-repetition-num-prefixes", "40",
        "--prefix-repetition-output-len", "100",
        "--num-prompts", "800",
        "--seed", "7",
        "--ignore-eos",
        "--request-rate", "8",
        "--percentile-metrics", "ttft,tpot,itl,e2el",
        "--metric-percentiles", "50,95,99",
        "--ready-check-timeout-sec", "120",
        "--save-result",
        "--result-dir", "/results",
        "--result-filename", "llm_aware.json",
    ]  # fmt: skip
    at_once = setup.Workload(10, 2, 8, 8, 8, request_rate=float("inf"), max_concurrency=16)
    cmd = setup.bench_command("vllm", "http://x", "m", "/m", at_once, out)
    assert cmd[cmd.index("--request-rate") + 1] == "inf"
    assert cmd[-2:] == ["--max-concurrency", "16"]


def test_the_picker_runs_file_discovery_plaintext_on_loopback_ports() -> None:
    assert setup.epp_command("/bin/epp", Path("/r/epp-config.yaml"), PORTS) == [
        "/bin/epp",
        "--config-file", "/r/epp-config.yaml",
        "--pool-name", "measure-routing",
        "--pool-namespace", "local",
        "--grpc-port", "18020",
        "--grpc-health-port", "18021",
        "--metrics-port", "18022",
        "--secure-serving=false",
        "--tracing=false",
        "--enable-pprof=false",
    ]  # fmt: skip
    assert setup.endpoints(PORTS) == {
        "endpoints": [
            {"name": "replica-0", "address": "127.0.0.1", "port": "18001"},
            {"name": "replica-1", "address": "127.0.0.1", "port": "18002"},
        ]
    }


@pytest.mark.parametrize("prefix_cache", ["approximate", "off"])
def test_the_picker_scores_as_inferplane_deploys_it(prefix_cache: str) -> None:
    routing = Routing(mode="llm_aware", prefix_cache=prefix_cache)  # type: ignore[arg-type]
    config = setup.epp_config(routing, Path("/r/endpoints.yaml"))
    deployed = router.picker_config(routing)
    assert config["plugins"][:-1] == deployed["plugins"]
    assert config["schedulingProfiles"] == deployed["schedulingProfiles"]
    assert config["plugins"][-1] == {
        "name": "file-discovery",
        "type": "file-discovery",
        "parameters": {"path": "/r/endpoints.yaml", "watchFile": False},
    }
    # docs/discovery.md at v0.10.0: a discovery plugin replaces the InferencePool
    assert config["dataLayer"] == {"discovery": {"pluginRef": "file-discovery"}}
    scorers = {p["pluginRef"]: p["weight"] for p in config["schedulingProfiles"][0]["plugins"]}
    expected = {"queue-scorer": 2, "kv-cache-utilization-scorer": 2}
    if prefix_cache == "approximate":
        expected["prefix-cache-scorer"] = 3
    assert scorers == expected


def test_the_default_picker_config_is_the_charts_own() -> None:
    """For the default routing `plugins_config` leaves the chart's ``default-plugins.yaml``
    in place; `picker_config` must be that same configuration (routerlib
    ``templates/_config.yaml`` for vLLM over HTTP, where no parser is added)."""
    template = (CHART / "routerlib" / "templates" / "_config.yaml").read_text()
    block = template.split("default-plugins.yaml: |\n", 1)[1].split("  payload-agnostic", 1)[0]
    # the plugins up to the latency predictor's (off by default); for vLLM no engine
    # parameter and no parser (the `if ne ... "vllm"` and `range $parsers` blocks)
    block = block.split("{{- if .Values.router.latencyPredictor.enabled }}")[0]
    block = re.sub(
        r"\{\{- (if ne \$modelServerType|range \$p).*?\{\{- end \}\}", "", block, flags=re.S
    )
    text = "\n".join(line for line in block.splitlines() if not line.strip().startswith("{{"))
    text = re.sub(r"\{\{ \.Values[^}]*default \"([^\"]*)\" \| quote \}\}", r'"\1"', text)
    text = re.sub(r"\{\{ \.Values[^}]*default true \}\}", "true", text)
    chart = yaml.safe_load(text)
    profile = [
        {"pluginRef": "queue-scorer", "weight": 2},
        {"pluginRef": "kv-cache-utilization-scorer", "weight": 2},
        {"pluginRef": "prefix-cache-scorer", "weight": 3},
    ]
    assert re.search(r"- name: default\n\s+plugins:\n\s+- pluginRef: queue-scorer\n", template)
    ours = router.picker_config(Routing(mode="llm_aware"))
    assert ours["plugins"] == chart["plugins"]
    assert ours["schedulingProfiles"] == [{"name": "default", "plugins": profile}]
    assert (ours["apiVersion"], ours["kind"]) == (chart["apiVersion"], chart["kind"])


def chart_envoy() -> dict[str, Any]:
    """The chart's Envoy preset (standalone values.yaml), its template expressions filled
    in as the chart renders them in sidecar mode with failOpen."""
    values = yaml.safe_load((CHART / "llm-d-router-standalone" / "values.yaml").read_text())
    text = values["router"]["proxy"]["presets"]["envoy"]["configMap"]["data"]["envoy.yaml"]
    text = "\n".join(line for line in text.splitlines() if not line.strip().startswith("{{"))
    text = re.sub(r"\{\{[^}]*\}\}", "TEMPLATE", text)
    parsed: dict[str, Any] = yaml.safe_load(text)
    return parsed


def _filters(config: dict[str, Any], listener: str) -> dict[str, Any]:
    (found,) = [x for x in config["static_resources"]["listeners"] if x["name"] == listener]
    manager = found["filter_chains"][0]["filters"][0]["typed_config"]
    return {f["name"]: f["typed_config"] for f in manager["http_filters"]} | {"": manager}


def _cluster(config: dict[str, Any], name: str) -> dict[str, Any]:
    (found,) = [c for c in config["static_resources"]["clusters"] if c["name"] == name]
    return found


def test_envoy_asks_the_picker_as_the_charts_proxy_does() -> None:
    ours, chart = setup.envoy_config(PORTS), chart_envoy()
    mine, theirs = _filters(ours, "vllm"), _filters(chart, "vllm")
    ext, chart_ext = mine["envoy.filters.http.ext_proc"], theirs["envoy.filters.http.ext_proc"]
    for key in ("@type", "processing_mode", "message_timeout"):
        assert ext[key] == chart_ext[key], key
    assert ext["grpc_service"]["timeout"] == chart_ext["grpc_service"]["timeout"]
    assert ext["grpc_service"]["envoy_grpc"] == {
        "cluster_name": "ext_proc",
        "authority": "localhost:18020",
    }
    # the one difference: a picker failure fails the request instead of passing it unscored
    assert chart_ext["failure_mode_allow"] == "TEMPLATE" and ext["failure_mode_allow"] is False
    assert mine["envoy.filters.http.router"] == theirs["envoy.filters.http.router"]
    assert list(mine) == list(theirs)  # ext_proc before the router, as in the chart
    route = mine[""]["route_config"]["virtual_hosts"][0]["routes"][0]["route"]
    chart_route = theirs[""]["route_config"]["virtual_hosts"][0]["routes"][0]["route"]
    for key in ("cluster", "timeout", "idle_timeout"):
        assert route[key] == chart_route[key]
    dst = _cluster(ours, "original_destination_cluster")
    chart_dst = _cluster(chart, "original_destination_cluster")
    for key in ("type", "lb_policy", "connect_timeout", "original_dst_lb_config"):
        assert dst[key] == chart_dst[key], key
    assert dst["circuit_breakers"] == chart_dst["circuit_breakers"]
    assert dst["original_dst_lb_config"]["http_header_name"] == "x-gateway-destination-endpoint"
    epp, chart_epp = _cluster(ours, "ext_proc"), _cluster(chart, "ext_proc")
    for key in ("connect_timeout", "lb_policy", "typed_extension_protocol_options"):
        assert epp[key] == chart_epp[key], key
    assert epp["type"] == "STATIC"
    (endpoint,) = epp["load_assignment"]["endpoints"][0]["lb_endpoints"]
    assert endpoint["endpoint"]["address"]["socket_address"] == {
        "address": "127.0.0.1",
        "port_value": 18020,
    }
    (listener,) = ours["static_resources"]["listeners"]
    assert listener["address"]["socket_address"] == {"address": "127.0.0.1", "port_value": 18011}
    assert ours["admin"]["address"]["socket_address"]["port_value"] == 18012


def test_envoy_runs_beside_any_other_envoy() -> None:
    assert setup.envoy_command("/bin/envoy", Path("/r/envoy.yaml")) == [
        "/bin/envoy", "-c", "/r/envoy.yaml", "--log-level", "warn", "--disable-hot-restart",
    ]  # fmt: skip


class Upstream(BaseHTTPRequestHandler):
    """Answers with its server's name and the request body it got; ``/stream`` sends one
    chunk, then the second only once the test has read the first (or after 5 s)."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        server: Any = self.server
        server.seen.append((self.path, body, self.headers.get("Connection")))
        if self.path == "/stream":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.write(b"5\r\nfirst\r\n")
            self.wfile.flush()
            server.released.append(server.release.wait(5))
            self.wfile.write(b"6\r\nsecond\r\n0\r\n\r\n")
            return
        reply = server.name + b":" + body
        self.send_response(200)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def upstreams() -> Iterator[list[Any]]:
    servers: list[Any] = []
    for name in (b"A", b"B"):
        server: Any = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
        server.name, server.seen, server.release, server.released = name, [], threading.Event(), []
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
    yield servers
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def proxy(upstreams: list[Any]) -> Iterator[RoundRobinProxy]:
    running = RoundRobinProxy([("127.0.0.1", s.server_address[1]) for s in upstreams])
    running.start()
    yield running
    running.stop()


def _post(port: int, path: str, body: bytes) -> tuple[int, bytes, str | None]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("POST", path, body=body, headers={"Connection": "keep-alive"})
    response = conn.getresponse()
    out = response.status, response.read(), response.getheader("Connection")
    conn.close()
    return out


def test_the_proxy_sends_each_request_to_the_next_replica_in_turn(
    proxy: RoundRobinProxy, upstreams: list[Any]
) -> None:
    answers = [_post(proxy.port, "/v1/completions", f"p{i}".encode()) for i in range(6)]
    assert [a[1] for a in answers] == [b"A:p0", b"B:p1", b"A:p2", b"B:p3", b"A:p4", b"B:p5"]
    assert {a[0] for a in answers} == {200} and {a[2] for a in answers} == {"close"}
    assert proxy.counts == [3, 3]
    # bodies, paths and the connection the upstream was asked for
    assert upstreams[0].seen == [("/v1/completions", f"p{i}".encode(), "close") for i in (0, 2, 4)]


def test_the_proxy_balances_requests_not_connections(proxy: RoundRobinProxy) -> None:
    """One client connection with two requests: the proxy closes after the first, so the
    client's second request (on a new connection) goes to the other replica."""
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    seen = []
    for body in (b"x", b"y"):
        conn.request("POST", "/", body=body)
        seen.append(conn.getresponse().read())
    conn.close()
    assert seen == [b"A:x", b"B:y"]


def test_the_proxy_passes_a_stream_through_as_it_arrives(
    proxy: RoundRobinProxy, upstreams: list[Any]
) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    conn.request("POST", "/stream", body=b"{}")
    response = conn.getresponse()
    assert response.getheader("Transfer-Encoding") == "chunked"
    assert response.read1() == b"first"  # before the upstream has sent the rest
    upstreams[0].release.set()
    assert response.read() == b"second"
    conn.close()
    assert upstreams[0].released == [True]


def test_the_proxy_reframes_a_chunked_request_body(proxy: RoundRobinProxy) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
    conn.request("POST", "/", body=iter([b"ab", b"cd"]), encode_chunked=True)
    assert conn.getresponse().read() == b"A:abcd"
    conn.close()


def test_the_proxy_answers_502_for_an_unreachable_replica(upstreams: list[Any]) -> None:
    closed = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    port = closed.server_address[1]
    closed.server_close()
    running = RoundRobinProxy([("127.0.0.1", port)])
    running.start()
    try:
        status, body, _ = _post(running.port, "/", b"x")
    finally:
        running.stop()
    assert status == 502 and body.startswith(f"upstream 127.0.0.1:{port} unreachable".encode())


METRICS = """\
# HELP vllm:request_success_total Count of successfully processed requests.
# TYPE vllm:request_success_total counter
vllm:request_success_total{engine="0",finished_reason="stop",model_name="m"} 3.0
vllm:request_success_total{engine="0",finished_reason="length",model_name="m"} %d.0
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="m"} %d.0
# TYPE vllm:prefix_cache_hits_total counter
vllm:prefix_cache_hits_total{engine="0",model_name="m"} %d.0
vllm:prefix_cache_hits_created{engine="0",model_name="m"} 1.7e9
"""


def test_the_replica_counters_are_summed_over_their_labels() -> None:
    assert setup.counters(METRICS % (10, 5000, 1200)) == {
        "vllm:request_success_total": 13.0,
        "vllm:prefix_cache_hits_total": 1200.0,
        "vllm:prefix_cache_queries_total": 5000.0,
    }


def bench_result(ttft: tuple[float, float, float], rps: float) -> dict[str, Any]:
    """The shape `vllm bench serve --save-result` writes at v0.33.0 with
    ``--percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,95,99`` and without
    ``--save-detailed`` (vllm/benchmarks/serve.py: `main_async`'s setup keys, `benchmark`'s
    result dict, `process_one_metric`'s ``mean_/median_/std_/p<p>_<metric>_ms``)."""
    result: dict[str, Any] = {
        "date": "20261202-010203", "endpoint_type": "openai", "backend": "openai",
        "label": None, "model_id": "m", "tokenizer_id": "/models/m", "num_prompts": 800,
        "request_rate": 8.0, "burstiness": 1.0, "max_concurrency": None,
        "duration": 104.2, "completed": 800, "failed": 0, "total_input_tokens": 1760000,
        "total_output_tokens": 80000, "request_throughput": rps, "request_goodput": None,
        "output_throughput": rps * 100, "total_token_throughput": rps * 2300,
        "latencies": [], "queue_times": [], "max_output_tokens_per_s": 1200.0,
        "max_concurrent_requests": 61, "rtfx": 0.0,
    }  # fmt: skip
    for metric, base in (("ttft", ttft), ("tpot", (20.0, 30, 40)), ("itl", (20.0, 35, 60))):
        result |= {f"mean_{metric}_ms": base[0] * 1.1, f"median_{metric}_ms": base[0]}
        result |= {f"std_{metric}_ms": 5.0}
        result |= {f"p{p}_{metric}_ms": v for p, v in zip(("50", "95", "99"), base, strict=True)}
    return result


def test_the_report_reads_the_saved_results_and_the_replicas_counters() -> None:
    before = [setup.counters(METRICS % (0, 0, 0))] * 2
    rr = setup.arm_result(
        "round_robin",
        Path("/r/round_robin.json"),
        bench_result((400.0, 1800.0, 2600.0), 7.68),
        before,
        [
            setup.counters(METRICS % (400, 900000, 300000)),
            setup.counters(METRICS % (400, 900000, 330000)),
        ],
    )
    aware = setup.arm_result(
        "llm_aware",
        Path("/r/llm_aware.json"),
        bench_result((120.0, 450.0, 900.0), 7.95),
        before,
        [
            setup.counters(METRICS % (380, 850000, 760000)),
            setup.counters(METRICS % (420, 950000, 860000)),
        ],
    )
    assert rr.ttft_ms == {"50": 400.0, "95": 1800.0, "99": 2600.0}
    assert rr.per_replica == (400, 400) and aware.per_replica == (380, 420)
    assert rr.prefix_hit_rate == pytest.approx(0.35)
    assert setup.report([rr, aware]) == [
        "arm           TTFT p50 ms    p95 ms    p99 ms   req/s  out tok/s  failed  per replica  prefix hits",  # noqa: E501
        "round_robin         400.0    1800.0    2600.0    7.68      768.0       0  400/400            35.0%",  # noqa: E501
        "llm_aware           120.0     450.0     900.0    7.95      795.0       0  380/420            90.0%",  # noqa: E501
        "llm_aware TTFT / round_robin TTFT: p50 0.30, p95 0.25, p99 0.35",
        "raw results (vllm bench serve --save-result):",
        "  round_robin: /r/round_robin.json",
        "  llm_aware: /r/llm_aware.json",
    ]


def test_a_result_without_a_p50_reads_the_median() -> None:
    result = bench_result((100.0, 200.0, 300.0), 1.0)
    del result["p50_ttft_ms"], result["p99_ttft_ms"]
    counted = [setup.counters("")] * 2
    arm = setup.arm_result("round_robin", Path("/r.json"), result, counted, counted)
    assert arm.ttft_ms == {"50": 100.0, "95": 200.0, "99": None}
    assert arm.prefix_hit_rate is None
    assert setup.report([arm])[1].split()[:5] == ["round_robin", "100.0", "200.0", "-", "1.00"]


def _args(tmp_path: Path, *extra: str) -> argparse.Namespace:
    return script.parse_args(["--model-dir", str(tmp_path), *extra])


def test_what_a_machine_without_gpu_or_tools_lacks(tmp_path: Path) -> None:
    problems = script.missing(_args(tmp_path), which=lambda _: None, gpus=lambda: None)
    assert problems == [
        f"the model directory {tmp_path} has no config.json",
        "no `vllm` on PATH (give --vllm): pip install vllm==0.33.0",
        "no `epp` on PATH (give --epp): build it at the pinned release: git clone --depth 1 "
        "--branch v0.10.0 https://github.com/llm-d/llm-d-router llm-d-router && "
        "cd llm-d-router && CGO_ENABLED=0 go build -o epp ./cmd/epp",
        "no `envoy` on PATH (give --envoy): Envoy 1.33.2 from the Envoy project's releases",
        "no NVIDIA GPU: nvidia-smi is not on PATH or does not answer",
    ]


def test_given_tools_are_checked_and_round_robin_alone_needs_no_router(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    args = _args(tmp_path, "--arms", "round_robin", "--vllm", str(tmp_path / "config.json"))
    problems = script.missing(args, which=lambda _: "/bin/x", gpus=lambda: ["0"])
    assert problems == [
        f"--vllm {tmp_path / 'config.json'} is not an executable file",
        "GPU 1 not found (nvidia-smi lists: 0)",
    ]
    args = _args(tmp_path, "--gpus", "0,1")
    assert script.missing(args, which=lambda _: "/bin/x", gpus=lambda: ["0", "1"]) == []


def test_without_them_it_says_so_and_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no vllm, epp, envoy or nvidia-smi
    assert script.main(["--model-dir", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("measure_routing: cannot measure on this machine:\n  - the model")
    assert "  - no NVIDIA GPU: nvidia-smi is not on PATH or does not answer\n" in err
    assert "Traceback" not in err


def test_a_child_and_everything_it_started_are_stopped(tmp_path: Path) -> None:
    with script.child("tree", ["sh", "-c", "sleep 300 & echo started; wait"], tmp_path) as proc:
        deadline = time.monotonic() + 10
        while b"started" not in (tmp_path / "tree.log").read_bytes():
            assert time.monotonic() < deadline
            time.sleep(0.05)
        group = proc.pid
    assert proc.returncode == -signal.SIGTERM
    # the background sleep went with its parent's group (once its new parent reaps it)
    deadline = time.monotonic() + 5
    while True:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            break
        assert time.monotonic() < deadline, "a process of the group outlived the block"
        time.sleep(0.05)


def test_a_child_that_dies_fails_the_wait_with_its_log(tmp_path: Path) -> None:
    with script.child("replica-0", ["sh", "-c", "exit 3"], tmp_path) as proc:
        proc.wait(timeout=10)
        with pytest.raises(script.Failure) as failed:
            script.wait_until(lambda: False, "health", 5, [("replica-0", proc)], tmp_path)
    assert str(failed.value) == (
        f"replica-0 exited with 3 before health; see {tmp_path / 'replica-0.log'}"
    )


def test_a_run_that_cannot_start_ends_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every tool present but vLLM exits at once: exit 1, its log named, nothing left."""
    (tmp_path / "config.json").write_text("{}")
    vllm = tmp_path / "vllm"
    vllm.write_text("#!/bin/sh\necho 'no CUDA device' >&2\nexit 1\n")
    vllm.chmod(0o755)
    monkeypatch.setattr(script, "missing", lambda args: [])
    out = tmp_path / "out"
    code = script.main(
        [
            *("--model-dir", str(tmp_path), "--vllm", str(vllm), "--out", str(out)),
            *("--arms", "round_robin", "--startup-timeout", "30"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert re.match(r"measure_routing: replica-[01] exited with 1 before http://", err)
    assert (out / "replica-0.log").read_text() == "no CUDA device\n"
    assert "Traceback" not in err


FAKE_VLLM = '''\
"""A stand-in for the `vllm` CLI: `serve` answers the routes the script uses, counting
completions in vllm:request_success_total; `bench serve` sends --num-prompts completions to
--base-url and saves a result with the keys vllm bench serve writes."""
import json, sys, time, urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

def option(name):
    return sys.argv[sys.argv.index(name) + 1]

if sys.argv[1] == "serve":
    done = [0]
    class Handler(BaseHTTPRequestHandler):
        def answer(self, body):
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def do_GET(self):
            if self.path == "/metrics":
                self.answer(b'vllm:request_success_total{engine="0"} %d.0\\n' % done[0])
            else:
                self.answer(b"")
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path == "/v1/completions":
                done[0] += 1
            self.answer(b'{"success": true}')
        def log_message(self, *args):
            pass
    ThreadingHTTPServer((option("--host"), int(option("--port"))), Handler).serve_forever()
elif sys.argv[1:3] == ["bench", "serve"]:
    ttfts = []
    for i in range(int(option("--num-prompts"))):
        start = time.monotonic()
        body = json.dumps({"model": option("--model"), "prompt": str(i)}).encode()
        urllib.request.urlopen(option("--base-url") + "/v1/completions", body, timeout=10).read()
        ttfts.append((time.monotonic() - start) * 1000)
    ttfts.sort()
    result = {"completed": len(ttfts), "failed": 0, "request_throughput": 2.0,
              "output_throughput": 20.0, "median_ttft_ms": ttfts[len(ttfts) // 2],
              "p95_ttft_ms": ttfts[-1], "p99_ttft_ms": ttfts[-1]}
    with open(option("--result-dir") + "/" + option("--result-filename"), "w") as f:
        json.dump(result, f)
'''


def free_base() -> int:
    """A base port whose replica and proxy ports are free now."""
    for base in range(21000 + os.getpid() % 1000 * 30, 65000, 30):
        ports = setup.Ports(base)
        if not any(
            script.listening(p) for p in (ports.replica(0), ports.replica(1), ports.round_robin)
        ):
            return base
    raise AssertionError("no free ports")


def test_the_round_robin_arm_end_to_end_with_a_stand_in_vllm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole run on loopback with `vllm` replaced: both replicas start and answer, the
    prompts alternate over them through the proxy, the report says so, and nothing is left
    listening afterwards."""
    (tmp_path / "config.json").write_text("{}")
    vllm = tmp_path / "vllm"
    vllm.write_text(f"#!{sys.executable}\n{FAKE_VLLM}")
    vllm.chmod(0o755)
    monkeypatch.setattr(script, "missing", lambda args: [])
    base, out = free_base(), tmp_path / "out"
    argv = ["--model-dir", str(tmp_path), "--vllm", str(vllm), "--out", str(out)]
    argv += ["--arms", "round_robin", "--prompts", "6", "--prefixes", "2"]
    argv += ["--base-port", str(base), "--startup-timeout", "60"]
    assert script.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    (row,) = [line for line in lines if line.startswith("round_robin ")]
    assert row.split()[5:] == ["20.0", "0", "3/3", "-"]
    assert lines[-1] == f"  round_robin: {(out / 'round_robin.json').resolve()}"
    ports = setup.Ports(base)
    assert not any(script.listening(ports.replica(i)) for i in range(2))
    assert not script.listening(ports.round_robin)
