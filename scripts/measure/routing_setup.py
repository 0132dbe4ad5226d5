"""What `scripts/measure/measure_routing.py` runs, as plain values: the command lines of the two
vLLM replicas, the llm-d endpoint picker, Envoy and vLLM's benchmark, the picker's and
Envoy's configuration, and the report made of the benchmark's results.

Sources, each at the release inferplane pins:

- llm-d/llm-d-router v0.10.0 (commit 71f4f0999f95b96c49a9d0c4afbd18dfdb943c26): the picker
  runs without Kubernetes when its configuration names a discovery plugin
  (``dataLayer.discovery``, ``cmd/epp/runner/runner.go`` ``runWithFileDiscovery``); the
  ``file-discovery`` plugin (Beta, no experimental flag) reads the endpoints file
  (``pkg/epp/framework/plugins/datalayer/discovery/file/README.md``: ``name``, ``address``
  an IPv4 literal, ``port`` a string). ``--endpoint-selector`` is no way around Kubernetes:
  it filters model server pods (``pkg/epp/server/options.go``), and without a discovery
  plugin ``Runner.Run`` goes on to ``ctrl.GetConfig()``, the cluster's API server.
  The flags are those of ``pkg/epp/server/options.go`` (``--config-file``, ``--pool-name``,
  ``--pool-namespace``, ``--grpc-port``, ``--grpc-health-port``, ``--metrics-port``,
  ``--secure-serving``, ``--tracing``, ``--enable-pprof``); ``docs/discovery.md`` "Running
  EPP with file discovery (no Kubernetes)" shows the same setup with Envoy.
- The Envoy configuration follows the chart's Envoy preset
  (``config/charts/llm-d-router-standalone/values.yaml``, ``router.proxy.presets.envoy``):
  the same ext_proc processing mode and timeouts and the ``ORIGINAL_DST`` cluster that
  forwards to the ``x-gateway-destination-endpoint`` header the picker sets; the tests hold
  those parts to the vendored chart.
- vllm-project/vllm v0.33.0 (``vllm/benchmarks/datasets/datasets.py``): dataset
  ``prefix_repetition`` with ``--prefix-repetition-prefix-len``, ``-suffix-len``,
  ``-num-prefixes`` (prompts per prefix = prompts // prefixes) and ``-output-len``, and
  ``--seed`` for the random prefixes; ``vllm/benchmarks/serve.py``: ``--save-result``,
  ``--result-dir``, ``--result-filename``, ``--percentile-metrics``,
  ``--metric-percentiles``, ``--ready-check-timeout-sec``, and the result's keys
  ``median_<metric>_ms``, ``p<percentile>_<metric>_ms``, ``request_throughput``,
  ``output_throughput``, ``completed``, ``failed``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from inferplane.blueprint import defaults
from inferplane.blueprint.model import Routing
from inferplane.components.serving.routing.router import ROUTER_VERSION, picker_config
from inferplane.components.serving.vllm.vllm_flags import vllm_flags

LOOPBACK: Final = "127.0.0.1"
VLLM_VERSION: Final = defaults.VERSIONS["vllm"]
"""The vLLM inferplane pins, whose benchmark flags `bench_command` writes."""
EPP_MODULE: Final = "github.com/llm-d/llm-d-router"
"""The picker's module (``go.mod`` at v0.10.0: no ``replace``, ``go 1.26.6``); its main
package is ``cmd/epp``, which ``Dockerfile.epp`` builds with ``CGO_ENABLED=0``."""
EPP_BUILD: Final = (
    f"git clone --depth 1 --branch {ROUTER_VERSION} https://{EPP_MODULE} llm-d-router && "
    "cd llm-d-router && CGO_ENABLED=0 go build -o epp ./cmd/epp"
)
"""How the picker is built from the pinned release's source (``docs/discovery.md``: "epp
binary built from this repo (go build -o epp ./cmd/epp)")."""
EPP_INSTALL: Final = f"CGO_ENABLED=0 go install {EPP_MODULE}/cmd/epp@{ROUTER_VERSION}"
"""The same through the Go module proxy, where it serves the release."""
ENVOY_VERSION: Final = "1.33.2"
"""The chart's proxy image (``docker.io/envoyproxy/envoy:distroless-v1.33.2``)."""
DESTINATION_HEADER: Final = "x-gateway-destination-endpoint"
PROCESSING_MODE: Final = {
    "request_header_mode": "SEND",
    "response_header_mode": "SEND",
    "request_body_mode": "FULL_DUPLEX_STREAMED",
    "response_body_mode": "FULL_DUPLEX_STREAMED",
    "request_trailer_mode": "SEND",
    "response_trailer_mode": "SEND",
}
PERCENTILES: Final = ("50", "95", "99")
COUNTERS: Final = (
    "vllm:request_success_total",
    "vllm:prefix_cache_hits_total",
    "vllm:prefix_cache_queries_total",
)
"""Counters of each replica read before and after an arm (``inferplane/facts/vllm/
v0.33.0/metrics.txt``: ``vllm:request_success``, ``vllm:prefix_cache_hits``,
``vllm:prefix_cache_queries``, counters, exposed with ``_total``)."""


@dataclass(frozen=True)
class Ports:
    """Every port, counted from `base`, all on loopback but the picker's metrics (its
    metrics server listens on every interface, ``serveMetrics`` in ``runner.go``)."""

    base: int

    def replica(self, index: int) -> int:
        return self.base + 1 + index

    @property
    def round_robin(self) -> int:
        return self.base + 10

    @property
    def envoy(self) -> int:
        return self.base + 11

    @property
    def envoy_admin(self) -> int:
        return self.base + 12

    @property
    def epp_grpc(self) -> int:
        return self.base + 20

    @property
    def epp_health(self) -> int:
        return self.base + 21

    @property
    def epp_metrics(self) -> int:
        return self.base + 22


@dataclass(frozen=True)
class Workload:
    """The shared-prefix workload: `prefixes` random prefixes of `prefix_len` tokens, each
    followed by random suffixes, `prompts` requests in all."""

    prompts: int
    prefixes: int
    prefix_len: int
    suffix_len: int
    output_len: int
    request_rate: float
    """Requests per second (Poisson arrivals); ``inf`` sends them all at once."""
    max_concurrency: int | None = None
    seed: int = 0


def vllm_base(vllm: str) -> list[str]:
    """How to call vLLM's CLI: the ``vllm`` executable, or a Python that has vLLM
    (its console script is ``vllm.entrypoints.cli.main:main``)."""
    if Path(vllm).name.startswith("python"):
        return [vllm, "-m", "vllm.entrypoints.cli.main"]
    return [vllm]


def serve_command(
    vllm: str,
    model_dir: str,
    served: str,
    port: int,
    *,
    max_model_len: int | None = None,
    max_num_seqs: int | None = None,
    gpu_memory_utilization: float | None = None,
) -> list[str]:
    """One replica: inferplane's own `vllm_flags` (one GPU, prefix caching on), on loopback."""
    flags = vllm_flags(
        weights=model_dir,
        port=port,
        served_names=[served],
        tensor_parallel_size=1,
        max_model_len=max_model_len,
        max_num_seqs=max_num_seqs,
        gpu_memory_utilization=gpu_memory_utilization,
        enable_prefix_caching=True,
    )
    return [*vllm_base(vllm), "serve", *flags, "--host", LOOPBACK]


def endpoints(ports: Ports, replicas: int = 2) -> dict[str, Any]:
    """The ``file-discovery`` endpoints file: each replica by address and port."""
    return {
        "endpoints": [
            {"name": f"replica-{i}", "address": LOOPBACK, "port": str(ports.replica(i))}
            for i in range(replicas)
        ]
    }


def epp_config(routing: Routing, endpoints_file: Path) -> dict[str, Any]:
    """The picker's configuration: the scorers inferplane deploys for `routing`
    (`picker_config`), with the replicas read from `endpoints_file` instead of an
    InferencePool."""
    config = picker_config(routing)
    discovery = {
        "name": "file-discovery",
        "type": "file-discovery",
        "parameters": {"path": str(endpoints_file), "watchFile": False},
    }
    return {
        **config,
        "plugins": [*config["plugins"], discovery],
        "dataLayer": {"discovery": {"pluginRef": "file-discovery"}},
    }


def epp_command(epp: str, config_file: Path, ports: Ports) -> list[str]:
    """The picker in file-discovery mode: plaintext gRPC to Envoy on loopback (the
    measurement needs no TLS), no tracing exporter and no profiler."""
    return [
        epp,
        "--config-file", str(config_file),
        "--pool-name", "measure-routing",
        "--pool-namespace", "local",
        "--grpc-port", str(ports.epp_grpc),
        "--grpc-health-port", str(ports.epp_health),
        "--metrics-port", str(ports.epp_metrics),
        "--secure-serving=false",
        "--tracing=false",
        "--enable-pprof=false",
    ]  # fmt: skip


HCM: Final = "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager"
HTTP_OPTIONS: Final = "extensions.upstreams.http.v3.HttpProtocolOptions"


def _type(name: str) -> str:
    """An Envoy ``@type``: the protobuf message's type URL."""
    return f"type.googleapis.com/envoy.{name}"


def _socket(port: int) -> dict[str, Any]:
    return {"socket_address": {"address": LOOPBACK, "port_value": port}}


def envoy_config(ports: Ports) -> dict[str, Any]:
    """Envoy between the benchmark and the replicas, asking the picker for each request.

    As the chart's preset but on loopback, and with ``failure_mode_allow: false`` where the
    deployment fails open: a measurement in which the picker dropped out would measure
    unscored routing under its name, so a picker failure fails the request instead."""
    ext_proc = {
        "name": "envoy.filters.http.ext_proc",
        "typed_config": {
            "@type": _type("extensions.filters.http.ext_proc.v3.ExternalProcessor"),
            "failure_mode_allow": False,
            "grpc_service": {
                "envoy_grpc": {
                    "cluster_name": "ext_proc",
                    "authority": f"localhost:{ports.epp_grpc}",
                },
                "timeout": "10s",
            },
            "processing_mode": dict(PROCESSING_MODE),
            "message_timeout": "1000s",
        },
    }
    router = {
        "name": "envoy.filters.http.router",
        "typed_config": {
            "@type": _type("extensions.filters.http.router.v3.Router"),
            "suppress_envoy_headers": True,
        },
    }
    route = {
        "match": {"prefix": "/"},
        "route": {
            "cluster": "original_destination_cluster",
            "timeout": "86400s",
            "idle_timeout": "86400s",
        },
    }
    manager = {
        "@type": _type(HCM),
        "stat_prefix": "vllm",
        "route_config": {
            "name": "vllm",
            "virtual_hosts": [{"name": "vllm", "domains": ["*"], "routes": [route]}],
        },
        "http_filters": [ext_proc, router],
    }
    limits = {"max_connections": 40000, "max_pending_requests": 40000, "max_requests": 40000}
    original_dst = {
        "name": "original_destination_cluster",
        "type": "ORIGINAL_DST",
        "connect_timeout": "1000s",
        "lb_policy": "CLUSTER_PROVIDED",
        "circuit_breakers": {"thresholds": [limits]},
        "original_dst_lb_config": {"use_http_header": True, "http_header_name": DESTINATION_HEADER},
    }
    epp = {
        "name": "ext_proc",
        "type": "STATIC",
        "connect_timeout": "86400s",
        "lb_policy": "LEAST_REQUEST",
        "typed_extension_protocol_options": {
            f"envoy.{HTTP_OPTIONS}": {
                "@type": _type(HTTP_OPTIONS),
                "explicit_http_config": {
                    "http2_protocol_options": {
                        "initial_stream_window_size": 65536,
                        "initial_connection_window_size": 1048576,
                    }
                },
            }
        },
        "load_assignment": {
            "cluster_name": "ext_proc",
            "endpoints": [{"lb_endpoints": [{"endpoint": {"address": _socket(ports.epp_grpc)}}]}],
        },
    }
    listener = {
        "name": "vllm",
        "address": _socket(ports.envoy),
        "per_connection_buffer_limit_bytes": 32768,
        "filter_chains": [
            {
                "filters": [
                    {
                        "name": "envoy.filters.network.http_connection_manager",
                        "typed_config": manager,
                    },
                ]
            }
        ],
    }
    return {
        "admin": {"address": _socket(ports.envoy_admin)},
        "static_resources": {"listeners": [listener], "clusters": [original_dst, epp]},
    }


def envoy_command(envoy: str, config_file: Path) -> list[str]:
    """``--disable-hot-restart``: no shared memory, so it runs beside any other Envoy
    (https://www.envoyproxy.io/docs/envoy/v1.33.2/operations/cli)."""
    return [envoy, "-c", str(config_file), "--log-level", "warn", "--disable-hot-restart"]


def bench_command(
    vllm: str, base_url: str, served: str, tokenizer: str, load: Workload, out: Path
) -> list[str]:
    """``vllm bench serve`` with the shared-prefix workload, saving its result to `out`."""
    cmd = [
        *vllm_base(vllm), "bench", "serve",
        "--backend", "openai",
        "--base-url", base_url,
        "--endpoint", "/v1/completions",
        "--model", served,
        "--tokenizer", tokenizer,
        "--dataset-name", "prefix_repetition",
        "--prefix-repetition-prefix-len", str(load.prefix_len),
        "--prefix-repetition-suffix-len", str(load.suffix_len),
        "--prefix-repetition-num-prefixes", str(load.prefixes),
        "--prefix-repetition-output-len", str(load.output_len),
        "--num-prompts", str(load.prompts),
        "--seed", str(load.seed),
        "--ignore-eos",
        "--request-rate", "inf" if math.isinf(load.request_rate) else f"{load.request_rate:g}",
        "--percentile-metrics", "ttft,tpot,itl,e2el",
        "--metric-percentiles", ",".join(PERCENTILES),
        "--ready-check-timeout-sec", "120",
        "--save-result",
        "--result-dir", str(out.parent),
        "--result-filename", out.name,
    ]  # fmt: skip
    if load.max_concurrency is not None:
        cmd += ["--max-concurrency", str(load.max_concurrency)]
    return cmd


def counters(metrics: str) -> dict[str, float]:
    """The `COUNTERS` of a Prometheus text exposition, each summed over its label sets."""
    out = dict.fromkeys(COUNTERS, 0.0)
    for line in metrics.splitlines():
        if not line or line.startswith("#"):
            continue
        if "{" in line:
            name, rest = line[: line.index("{")], line[line.rindex("}") + 1 :].split()
        else:
            name, *rest = line.split()
        if name in out and rest:
            out[name] += float(rest[0])
    return out


@dataclass(frozen=True)
class ArmResult:
    """One arm's benchmark result and what the replicas counted meanwhile."""

    arm: str
    path: Path
    ttft_ms: Mapping[str, float | None]
    """By percentile (`PERCENTILES`)."""
    request_throughput: float | None
    output_throughput: float | None
    completed: int | None
    failed: int | None
    per_replica: tuple[int, ...]
    """Requests each replica completed during the arm."""
    prefix_hit_rate: float | None
    """Prompt tokens found in the replicas' prefix caches over those looked up."""


def arm_result(
    arm: str,
    path: Path,
    result: Mapping[str, Any],
    before: Sequence[Mapping[str, float]],
    after: Sequence[Mapping[str, float]],
) -> ArmResult:
    """An arm from its saved benchmark result and the replicas' counters around it."""
    ttft: dict[str, float | None] = {p: result.get(f"p{p}_ttft_ms") for p in PERCENTILES}
    if ttft["50"] is None:
        ttft["50"] = result.get("median_ttft_ms")

    def delta(name: str) -> list[float]:
        return [a[name] - b[name] for b, a in zip(before, after, strict=True)]

    hits, queries = sum(delta(COUNTERS[1])), sum(delta(COUNTERS[2]))
    return ArmResult(
        arm=arm,
        path=path,
        ttft_ms=ttft,
        request_throughput=result.get("request_throughput"),
        output_throughput=result.get("output_throughput"),
        completed=result.get("completed"),
        failed=result.get("failed"),
        per_replica=tuple(round(d) for d in delta(COUNTERS[0])),
        prefix_hit_rate=hits / queries if queries else None,
    )


def _cell(value: float | int | None, width: int, digits: int = 1) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def report(results: Sequence[ArmResult]) -> list[str]:
    """A table of the arms, their ratio when both ran, and where the raw results are."""
    lines = [
        f"{'arm':<13}{'TTFT p50 ms':>12}{'p95 ms':>10}{'p99 ms':>10}{'req/s':>8}"
        f"{'out tok/s':>11}{'failed':>8}  {'per replica':<13}{'prefix hits':>11}"
    ]
    for r in results:
        split = "/".join(str(n) for n in r.per_replica)
        hit = "-" if r.prefix_hit_rate is None else f"{r.prefix_hit_rate:.1%}"
        lines.append(
            f"{r.arm:<13}{_cell(r.ttft_ms['50'], 12)}{_cell(r.ttft_ms['95'], 10)}"
            f"{_cell(r.ttft_ms['99'], 10)}{_cell(r.request_throughput, 8, 2)}"
            f"{_cell(r.output_throughput, 11)}{_cell(r.failed, 8, 0)}  {split:<13}{hit:>11}"
        )
    arms = {r.arm: r for r in results}
    if {"round_robin", "llm_aware"} <= arms.keys():
        rr, aware = arms["round_robin"], arms["llm_aware"]
        ratios = []
        for p in PERCENTILES:
            a, b = aware.ttft_ms[p], rr.ttft_ms[p]
            ratios.append(f"p{p} {a / b:.2f}" if a is not None and b else f"p{p} -")
        lines.append("llm_aware TTFT / round_robin TTFT: " + ", ".join(ratios))
    lines.append("raw results (vllm bench serve --save-result):")
    lines += [f"  {r.arm}: {r.path}" for r in results]
    return lines
