"""A STAND-IN for a pod's process: a tiny HTTP server at the pod's IP, serving a counter.

    python e2e/standin.py IP PORT

It is not any real server: it answers ``GET /metrics`` with one counter in the Prometheus text
format (``inferplane_standin_requests_total``, the number of /metrics requests it has served,
with ``stand_in="true"``) and every response carries ``X-Inferplane-Stand-In: true``. It lets
the rehearsal prove the path a real pod's metrics take: Service -> EndpointSlice -> the
operator's scrape config -> Prometheus's Kubernetes discovery -> a scrape at the pod IP. It
must run inside the rehearsal's network namespace (e2e/netns.py), where pod IPs are local.
"""

from __future__ import annotations

import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

METRIC = "inferplane_standin_requests_total"
HEADER = "X-Inferplane-Stand-In"


class Handler(BaseHTTPRequestHandler):
    served = 0

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] != "/metrics":
            self._send(404, "not found: this stand-in serves /metrics only\n", "text/plain")
            return
        Handler.served += 1
        body = (
            f"# HELP {METRIC} /metrics requests served by this stand-in (not a real server).\n"
            f"# TYPE {METRIC} counter\n"
            f'{METRIC}{{stand_in="true"}} {Handler.served}\n'
        )
        self._send(200, body, "text/plain; version=0.0.4")

    def _send(self, status: int, body: str, ctype: str) -> None:
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
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    server = ThreadingHTTPServer((argv[0], int(argv[1])), Handler)
    print(f"stand-in serving http://{argv[0]}:{argv[1]}/metrics", file=sys.stderr, flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
