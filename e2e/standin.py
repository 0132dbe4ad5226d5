"""A STAND-IN for a pod's process: a tiny HTTP server at the pod's IP, serving metrics.

    python e2e/standin.py IP PORT [SAMPLE...]      # SAMPLE: 'name{label="v",...} VALUE'

It is not any real server: it answers ``GET /metrics`` in the Prometheus text format with
a counter (``inferplane_standin_requests_total``, the number of /metrics requests it has
served, with ``stand_in="true"``) and the gauges it was started with, and every response
carries ``X-Inferplane-Stand-In: true``. ``POST /stand-in/gauge`` with one sample line as
the body (``vllm:num_requests_waiting{model_name="chat"} 30``) sets a gauge, so that a
rehearsal can move the value a real server would report (a queue growing) and watch what
the loops reading it do. It lets the rehearsal prove the path a real pod's metrics take:
Service -> EndpointSlice -> the operator's scrape config -> Prometheus's Kubernetes
discovery -> a scrape at the pod IP. It must run inside the rehearsal's network namespace
(e2e/netns.py), where pod IPs are local.
"""

from __future__ import annotations

import math
import re
import sys
import threading
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

METRIC = "inferplane_standin_requests_total"
HEADER = "X-Inferplane-Stand-In"
SET_PATH = "/stand-in/gauge"
# The text format's metric and label names (prometheus/common model: `MetricNameRE`,
# `LabelNameRE`) and a label value in double quotes with \\, \" and \n escaped.
_LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
_SAMPLE = re.compile(
    rf"(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?P<labels>\{{(?:{_LABEL}(?:,{_LABEL})*)?\}})?"
    r" (?P<value>\S+)"
)


class SampleError(ValueError):
    pass


def parse_sample(line: str) -> tuple[str, str, float]:
    """``name{labels} value`` -> (series, metric name, value); the series is the text before
    the value, as written. A NaN or infinite value is refused: a gauge here is a count."""
    m = _SAMPLE.fullmatch(line.strip())
    if m is None:
        raise SampleError(f'not a sample line `name{{label="value"}} VALUE`: {line.strip()!r}')
    try:
        value = float(m["value"])
    except ValueError:
        raise SampleError(f"not a number: {m['value']!r}") from None
    if not math.isfinite(value):
        raise SampleError(f"not a finite number: {m['value']!r}")
    return f"{m['name']}{m['labels'] or ''}", m["name"], value


class Gauges:
    """The stand-in's gauges, by series; thread-safe (the server answers in threads)."""

    def __init__(self, samples: Sequence[str] = ()) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, tuple[str, float]] = {}
        for line in samples:
            self.set(line)

    def set(self, line: str) -> str:
        series, name, value = parse_sample(line)
        with self._lock:
            self._values[series] = (name, value)
        return series

    def render(self, served: int) -> str:
        """The exposition: the counter, then each gauge family once with its samples."""
        out = [
            f"# HELP {METRIC} /metrics requests served by this stand-in (not a real server).",
            f"# TYPE {METRIC} counter",
            f'{METRIC}{{stand_in="true"}} {served}',
        ]
        with self._lock:
            values = sorted(self._values.items(), key=lambda kv: (kv[1][0], kv[0]))
        family = None
        for series, (name, value) in values:
            if name != family:
                out.append(f"# TYPE {name} gauge")
                family = name
            out.append(f"{series} {value:g}")
        return "\n".join(out) + "\n"


class Handler(BaseHTTPRequestHandler):
    served = 0
    gauges = Gauges()

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] != "/metrics":
            self._send(404, f"not found: this stand-in serves /metrics and {SET_PATH}\n")
            return
        Handler.served += 1
        self._send(200, Handler.gauges.render(Handler.served), "text/plain; version=0.0.4")

    def do_POST(self) -> None:
        if self.path != SET_PATH:
            self._send(404, f"not found: POST {SET_PATH} sets a gauge\n")
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            series = Handler.gauges.set(self.rfile.read(length).decode())
        except (SampleError, UnicodeDecodeError) as err:
            self._send(400, f"{err}\n")
            return
        self._send(200, f"set {series}\n")

    def _send(self, status: int, body: str, ctype: str = "text/plain") -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.send_header(HEADER, "true")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(f"stand-in {self.address_string()} {format % args}\n")


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        Handler.gauges = Gauges(argv[2:])
    except SampleError as err:
        print(f"stand-in: {err}", file=sys.stderr)
        return 2
    server = ThreadingHTTPServer((argv[0], int(argv[1])), Handler)
    print(f"stand-in serving http://{argv[0]}:{argv[1]}/metrics", file=sys.stderr, flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
