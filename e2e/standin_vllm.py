"""A STAND-IN vLLM replica: answers like vLLM's OpenAI server, with the capacity planner's
latency; it is not vLLM and runs no model.

    python e2e/standin_vllm.py IP PORT BLUEPRINT ENV MODEL INPUT_TOKENS OUTPUT_TOKENS [SLOWER]

It serves, at IP:PORT inside the rehearsal's network namespace (e2e/netns.py):

- ``POST /v1/completions`` and ``POST /v1/chat/completions``: the request joins the
  replica's engine (`inferplane.app.rehearsal.engine.ReplicaEngine`: continuous batching up
  to ``max_num_seqs``, a queue beyond it, latencies from the planner's model of MODEL on
  its GPU, every rate divided by SLOWER) and is answered when the engine has produced its
  tokens; the text is a placeholder. With ``"stream": true`` the answer is server-sent
  events as vLLM v0.33.0 sends them (``entrypoints/openai/completion/serving.py`` and
  ``chat_completion/serving.py``: a ``data: <chunk>`` event per token, as the engine
  produces it, then ``data: [DONE]``), each chunk a ``text_completion`` or
  ``chat.completion.chunk`` (their ``protocol.py``: ``CompletionStreamResponse``,
  ``ChatCompletionStreamResponse`` with a ``delta``), the last with its
  ``finish_reason``;
- ``GET /metrics``: vLLM's families (`ReplicaEngine.exposition`) with the pinned release's
  histogram buckets, and ``inferplane_standin_info{stand_in="true"}``;
- ``GET /health``: 200.

Every response carries ``X-Inferplane-Stand-In: true``. A request waits at most
`REQUEST_TIMEOUT_S`; then it is answered 503.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from inferplane.app.rehearsal.engine import ReplicaEngine  # noqa: E402

HEADER = "X-Inferplane-Stand-In"
REQUEST_TIMEOUT_S = 600.0
TICK_S = 0.005


class Runner:
    """Runs the engine in real time: one thread advances it and wakes finished requests."""

    def __init__(self, engine: ReplicaEngine) -> None:
        self.engine = engine
        self.origin = time.monotonic()
        self.events: dict[int, threading.Event] = {}
        self.streams: dict[int, queue.Queue[tuple[int, bool]]] = {}
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def now(self) -> float:
        return time.monotonic() - self.origin

    def request(self, output_tokens: int | None) -> dict[str, Any] | None:
        event = threading.Event()
        with self.lock:
            rid = self.engine.submit(self.now(), output_tokens)
            self.events[rid] = event
        if not event.wait(REQUEST_TIMEOUT_S):
            return None
        return {"id": rid}

    def stream(self, output_tokens: int | None) -> tuple[int, queue.Queue[tuple[int, bool]]]:
        """Submit a streamed request: its id, and the queue its tokens arrive on as
        (tokens so far, last)."""
        tokens: queue.Queue[tuple[int, bool]] = queue.Queue()
        with self.lock:
            rid = self.engine.submit(self.now(), output_tokens, stream=True)
            self.streams[rid] = tokens
        return rid, tokens

    def _loop(self) -> None:
        while True:
            nxt = self.engine.next_event()
            wait = TICK_S if nxt is None else min(TICK_S, max(0.0, nxt - self.now()))
            time.sleep(wait)
            with self.lock:
                for done in self.engine.advance(self.now()):
                    event = self.events.pop(done.rid, None)
                    if event is not None:
                        event.set()
                for rid, n, last in self.engine.take_tokens():
                    found = self.streams.get(rid)
                    if found is not None:
                        found.put((n, last))
                        if last:
                            del self.streams[rid]


def make_handler(runner: Runner, model: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._send(200, runner.engine.exposition(), "text/plain; version=0.0.4")
            elif path == "/health":
                self._send(200, "")
            else:
                self._send(
                    404,
                    "not found: a stand-in serves /v1/completions, "
                    "/v1/chat/completions, /metrics and /health\n",
                )

        def do_POST(self) -> None:
            path = self.path.split("?", 1)[0]
            if path not in ("/v1/completions", "/v1/chat/completions"):
                self._send(404, "not found\n")
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(min(length, 1 << 20)) or b"{}")
            except ValueError:
                self._send(400, "not JSON\n")
                return
            tokens = body.get("max_tokens") or body.get("max_completion_tokens")
            tokens = tokens if isinstance(tokens, int) and 0 < tokens <= 1 << 20 else None
            chat = path == "/v1/chat/completions"
            if body.get("stream") is True:
                self._stream(tokens, chat)
                return
            got = runner.request(tokens)
            if got is None:
                self._send(503, "the stand-in's engine did not finish the request in time\n")
                return
            text = "(stand-in: no model runs here)"
            choice = (
                {"index": 0, "message": {"role": "assistant", "content": text}}
                if chat
                else {"index": 0, "text": text}
            )
            reply = {
                "id": f"standin-{got['id']}",
                "object": "chat.completion" if chat else "text_completion",
                "model": model,
                "choices": [{**choice, "finish_reason": "length"}],
            }
            self._send(200, json.dumps(reply), "application/json")

        def _stream(self, tokens: int | None, chat: bool) -> None:
            """Server-sent events, one per token as the engine produces it; the connection
            closes after ``data: [DONE]`` (no length is known in advance)."""
            rid, arrived = runner.stream(tokens)
            self.close_connection = True
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header(HEADER, "true")
            self.end_headers()
            deadline = time.monotonic() + REQUEST_TIMEOUT_S
            last = False
            while not last:
                try:
                    n, last = arrived.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    return  # the engine did not finish in time: the stream ends unfinished
                piece = "(stand-in)" if n == 1 else " ."
                choice: dict[str, Any] = (
                    {"index": 0, "delta": {"role": "assistant", "content": piece}}
                    if chat and n == 1
                    else {"index": 0, "delta": {"content": piece}}
                    if chat
                    else {"index": 0, "text": piece}
                )
                chunk = {
                    "id": f"standin-{rid}",
                    "object": "chat.completion.chunk" if chat else "text_completion",
                    "model": model,
                    "choices": [{**choice, "finish_reason": "length" if last else None}],
                }
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

        def _send(self, status: int, body: str, ctype: str = "text/plain") -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.send_header(HEADER, "true")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


def engine_for(
    blueprint: str, env_name: str, model: str, inp: int, out: int, slower: float
) -> ReplicaEngine:
    from inferplane.blueprint.resolution.resolve import load_blueprint, resolve

    doc, _ = load_blueprint(blueprint)
    env = resolve(doc, env_name)
    m = env.models[model]
    return ReplicaEngine.of(
        m,
        env.pool_of(m),
        input_tokens=inp,
        output_tokens=out,
        pinned_vllm=env.versions.vllm,
        slower=slower,
    )


def main(argv: list[str]) -> int:
    if len(argv) not in (7, 8):
        print(__doc__, file=sys.stderr)
        return 2
    ip, port, blueprint, env_name, model, inp, out = argv[:7]
    slower = float(argv[7]) if len(argv) == 8 else 1.0
    engine = engine_for(blueprint, env_name, model, int(inp), int(out), slower)
    server = ThreadingHTTPServer((ip, int(port)), make_handler(Runner(engine), model))
    server.daemon_threads = True
    print(
        f"stand-in (not vLLM) for {model} at http://{ip}:{port}: batch cap {engine.cap}, "
        f"slower x{slower:g}",
        file=sys.stderr,
        flush=True,
    )
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
