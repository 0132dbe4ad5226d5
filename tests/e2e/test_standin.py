"""The stand-in's metrics (e2e/standin.py): its exposition, and the gauges a rehearsal sets
over HTTP."""

from __future__ import annotations

import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "e2e"))

import standin  # noqa: E402

WAITING = 'vllm:num_requests_waiting{model_name="chat"}'


def test_a_sample_line_is_series_and_value() -> None:
    assert standin.parse_sample(f"{WAITING} 30\n") == (WAITING, "vllm:num_requests_waiting", 30.0)
    assert standin.parse_sample("up 1") == ("up", "up", 1.0)
    assert standin.parse_sample('x{a="q\\"t",b=""} 2.5') == ('x{a="q\\"t",b=""}', "x", 2.5)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("vllm:num_requests_waiting", "not a sample line"),
        ("9lives 1", "not a sample line"),
        ("x{model_name=chat} 1", "not a sample line"),
        ("x 1 2", "not a sample line"),
        ("x many", "not a number: 'many'"),
        ("x NaN", "not a finite number: 'NaN'"),
        ("x +Inf", "not a finite number: '+Inf'"),
    ],
)
def test_anything_else_is_refused_with_the_reason(line: str, message: str) -> None:
    with pytest.raises(standin.SampleError) as err:
        standin.parse_sample(line)
    assert str(err.value).startswith(message)


def test_the_exposition_has_the_counter_then_each_gauge_family_once() -> None:
    gauges = standin.Gauges(
        [f"{WAITING} 0", 'vllm:num_requests_running{model_name="chat"} 3', f"{WAITING} 7"]
    )
    gauges.set('vllm:num_requests_waiting{model_name="other"} 1.5')
    assert gauges.render(served=4) == (
        "# HELP inferplane_standin_requests_total /metrics requests served by this stand-in "
        "(not a real server).\n"
        "# TYPE inferplane_standin_requests_total counter\n"
        'inferplane_standin_requests_total{stand_in="true"} 4\n'
        "# TYPE vllm:num_requests_running gauge\n"
        'vllm:num_requests_running{model_name="chat"} 3\n'
        "# TYPE vllm:num_requests_waiting gauge\n"
        'vllm:num_requests_waiting{model_name="chat"} 7\n'
        'vllm:num_requests_waiting{model_name="other"} 1.5\n'
    )


@pytest.fixture
def server() -> Iterator[str]:
    standin.Handler.gauges = standin.Gauges([f"{WAITING} 0"])
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), standin.Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def fetch(url: str, data: bytes | None = None) -> tuple[int, str, str | None]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data), timeout=10) as resp:
            return resp.status, resp.read().decode(), resp.headers.get(standin.HEADER)
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode(), err.headers.get(standin.HEADER)


def test_a_post_sets_the_gauge_the_next_scrape_reads(server: str) -> None:
    assert fetch(f"{server}/stand-in/gauge", f"{WAITING} 30".encode()) == (
        200,
        f"set {WAITING}\n",
        "true",
    )
    status, body, header = fetch(f"{server}/metrics")
    assert (status, header) == (200, "true")
    assert body.endswith(f"# TYPE vllm:num_requests_waiting gauge\n{WAITING} 30\n")


def test_a_bad_sample_or_path_is_refused(server: str) -> None:
    assert fetch(f"{server}/stand-in/gauge", b"x NaN") == (
        400,
        "not a finite number: 'NaN'\n",
        "true",
    )
    assert fetch(f"{server}/v1/completions", b"{}") == (
        404,
        "not found: POST /stand-in/gauge sets a gauge\n",
        "true",
    )
    assert fetch(f"{server}/health")[:2] == (
        404,
        "not found: this stand-in serves /metrics and /stand-in/gauge\n",
    )
    assert f"{WAITING} 0\n" in fetch(f"{server}/metrics")[1]
