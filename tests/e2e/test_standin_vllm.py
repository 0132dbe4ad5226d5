"""The stand-in vLLM replica (e2e/standin_vllm.py) answers like vLLM's OpenAI server with
the planner's latency and exports vLLM's histograms; it says it is a stand-in."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from inferplane.app.rehearsal import stream

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "e2e" / "standin_vllm.py"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serving(port: int) -> str:
    """The stand-in's base URL once it answers /health (within 60 s)."""
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            urllib.request.urlopen(f"{base}/health", timeout=2).close()
            return base
        except OSError:
            assert time.monotonic() < deadline, "the stand-in did not start"
            time.sleep(0.2)


def test_a_completion_takes_the_planners_time_and_lands_in_the_histograms() -> None:
    port = free_port()
    args = ["127.0.0.1", str(port), str(ROOT / "blueprints" / "chat-minimal.yaml"), "local"]
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), *args, "chat", "512", "16"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = serving(port)
        body = json.dumps({"model": "chat", "prompt": "hi", "max_tokens": 16}).encode()
        start = time.monotonic()
        with urllib.request.urlopen(f"{base}/v1/completions", body, timeout=30) as resp:
            took = time.monotonic() - start
            assert resp.headers["X-Inferplane-Stand-In"] == "true"
            reply = json.loads(resp.read())
        assert reply["object"] == "text_completion" and reply["model"] == "chat"
        assert reply["choices"][0]["finish_reason"] == "length"
        # 16 tokens of a 7B model on an L4: the planner's roughly 0.14 s per token.
        assert 0.5 < took < 10
        with urllib.request.urlopen(f"{base}/metrics", timeout=5) as resp:
            text = resp.read().decode()
        assert 'vllm:e2e_request_latency_seconds_count{model_name="chat",engine="0"} 1' in text
        assert 'inferplane_standin_info{model_name="chat",engine="0",stand_in="true"' in text
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        assert proc.stderr is not None
        assert "stand-in (not vLLM) for chat" in proc.stderr.read()


def test_a_streamed_chat_answers_one_event_per_token_as_the_engine_produces_it() -> None:
    port = free_port()
    args = ["127.0.0.1", str(port), str(ROOT / "blueprints" / "chat-minimal.yaml"), "local"]
    proc = subprocess.Popen(
        [sys.executable, str(SCRIPT), *args, "chat", "512", "16"],
        stderr=subprocess.DEVNULL,
    )
    try:
        base = serving(port)
        body = json.dumps(
            {
                "model": "chat",
                "messages": [{"role": "user", "content": "hi"}],
                "max_tokens": 8,
                "stream": True,
            }
        ).encode()
        start = time.monotonic()
        arrivals: list[float] = []
        events: list[str] = []
        with urllib.request.urlopen(f"{base}/v1/chat/completions", body, timeout=30) as resp:
            assert resp.headers["Content-Type"] == "text/event-stream"
            assert resp.headers["X-Inferplane-Stand-In"] == "true"
            for line in resp:
                if line.strip():
                    arrivals.append(time.monotonic() - start)
                    events.append(line.decode().strip())
        assert events[-1] == "data: [DONE]"
        chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-1]]
        assert len(chunks) == 8
        assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
        assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
        assert [c["choices"][0]["finish_reason"] for c in chunks] == [None] * 7 + ["length"]
        # The first token comes at the engine's TTFT, the others one decode step apart: the
        # stream spreads over the request, it is not one burst at its end.
        assert arrivals[7] - arrivals[0] > 0.3
        with urllib.request.urlopen(f"{base}/metrics", timeout=5) as resp:
            text = resp.read().decode()
        assert 'vllm:e2e_request_latency_seconds_count{model_name="chat",engine="0"} 1' in text
        # The rehearsal's sender reads the same stream to its [DONE], token by token.
        got = stream.request(
            "127.0.0.1", port, "/v1/completions", {"prompt": "x", "max_tokens": 8}, timeout=30
        )
        assert (got.outcome, got.tokens, len(got.gaps_s)) == ("ok", 8, 7)
        assert got.ttft_s is not None and got.e2e_s is not None and got.ttft_s < got.e2e_s
    finally:
        proc.terminate()
        proc.wait(timeout=10)
