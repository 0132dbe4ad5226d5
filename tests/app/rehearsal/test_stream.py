"""The sender's reader of streamed answers (`inferplane.app.rehearsal.stream`): against a tiny
loopback server that writes scripted bytes, every ending is a clear outcome, never a
traceback."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator, Sequence

import pytest

from inferplane.app.rehearsal import stream

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"


def chunk(text: str) -> bytes:
    body = {"id": "x", "object": "text_completion", "choices": [{"index": 0, "text": text}]}
    return f"data: {json.dumps(body)}\n\n".encode()


class Scripted:
    """A loopback server answering one request with `pieces`, a pause between each; a
    `None` piece closes the connection there (a reset: SO_LINGER 0)."""

    def __init__(self, pieces: Sequence[bytes | None], pause: float = 0.02) -> None:
        self.pieces, self.pause = pieces, pause
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1)
        self.port = self.sock.getsockname()[1]
        self.body = b""
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.sock.accept()
        with conn:
            conn.settimeout(5)
            data = b""
            while b"\r\n\r\n" not in data:
                data += conn.recv(4096)
            head, _, body = data.partition(b"\r\n\r\n")
            length = int(
                next(
                    line.split(b":")[1]
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                )
            )
            while len(body) < length:
                body += conn.recv(4096)
            self.body = body
            for piece in self.pieces:
                if piece is None:
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
                    return
                conn.sendall(piece)
                time.sleep(self.pause)

    def close(self) -> None:
        self.thread.join(timeout=5)
        self.sock.close()


def ask(
    pieces: Sequence[bytes | None], timeout: float = 5.0, pause: float = 0.02
) -> tuple[stream.Outcome, bytes]:
    server = Scripted(pieces, pause)
    try:
        got = stream.request(
            "127.0.0.1", server.port, "/v1/completions", {"prompt": "x"}, timeout=timeout
        )
    finally:
        server.close()
    return got, server.body


def test_a_whole_stream_gives_its_ttft_gaps_and_end_to_end() -> None:
    got, body = ask([HEAD, chunk("a"), chunk("b"), chunk("c"), b"data: [DONE]\n\n"])
    assert json.loads(body) == {"prompt": "x", "stream": True}
    assert got.outcome == "ok" and got.ok and got.status == 200
    assert got.tokens == 3 and len(got.gaps_s) == 2
    assert got.ttft_s is not None and got.e2e_s is not None
    assert 0 < got.ttft_s < got.e2e_s < 5
    # The server pauses 20 ms between pieces: the caller sees gaps about that long.
    assert all(0.005 < g < 1 for g in got.gaps_s)


def test_events_split_across_reads_are_joined() -> None:
    whole = chunk("a") + chunk("b") + b"data: [DONE]\r\n\r\n"
    pieces = [whole[i : i + 7] for i in range(0, len(whole), 7)]
    got, _ = ask([HEAD, *pieces], timeout=10)
    assert (got.outcome, got.tokens) == ("ok", 2)


def test_a_stream_cut_before_done_is_cut_with_the_tokens_seen() -> None:
    got, _ = ask([HEAD, chunk("a"), chunk("b")])
    assert (got.outcome, got.tokens) == ("cut", 2)
    assert not got.ok and "before [DONE]" in got.detail


def test_a_reset_mid_stream_is_cut() -> None:
    got, _ = ask([HEAD, chunk("a"), None])
    assert got.outcome == "cut"


def test_an_error_status_keeps_the_status() -> None:
    body = b"the engine did not finish\n"
    head = (
        f"HTTP/1.1 503 Service Unavailable\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
    )
    got, _ = ask([head])
    assert (got.outcome, got.status) == ("error_status", 503)
    assert got.detail == "the engine did not finish"


@pytest.mark.parametrize(
    "bad",
    [b"data: {not json\n\n", b"data: [1, 2]\n\n", b'data: {"error": {"message": "boom"}}\n\n'],
)
def test_a_malformed_chunk_is_malformed(bad: bytes) -> None:
    got, _ = ask([HEAD, chunk("a"), bad, b"data: [DONE]\n\n"])
    assert got.outcome == "malformed" and got.tokens == 1


def test_nothing_listening_is_refused() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    got = stream.request("127.0.0.1", port, "/v1/completions", {}, timeout=2)
    assert got.outcome == "refused"


def test_a_silent_server_times_out() -> None:
    # Silent for longer than the read timeout after its headers.
    got, _ = ask([HEAD, chunk("a")], timeout=0.3, pause=1.0)
    assert (got.outcome, got.tokens) == ("timeout", 0)
    # Bytes keep coming (comments), yet no [DONE] by the deadline.

    def slow() -> Iterator[bytes]:
        yield chunk("a")
        yield b": still here\n\n"

    ticks = iter([0.0, 0.1, 0.2, 9.0, 9.0])
    out = stream.read_events(slow(), lambda: next(ticks), 0.0, deadline=5.0)
    assert out.outcome == "timeout" and out.tokens == 1


def test_role_only_and_usage_chunks_are_not_tokens() -> None:
    role = {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
    usage = {"choices": [], "usage": {"completion_tokens": 1}}
    token = {"choices": [{"index": 0, "delta": {"content": "hi"}}]}
    assert not stream.tokens_in(json.dumps(role))
    assert not stream.tokens_in(json.dumps(usage))
    assert stream.tokens_in(json.dumps(token))


def test_the_parser_bounds_an_event() -> None:
    parser = stream.SseParser(max_event_bytes=16)
    assert parser.feed(b"data: a\n\n: comment\n\nevent: x\ndata: b\r\n\r\n") == ["a", "b"]
    with pytest.raises(stream.Malformed):
        parser.feed(b"data: " + b"x" * 32)


def test_a_crlf_split_between_reads_ends_one_line_not_two() -> None:
    parser = stream.SseParser()
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\ndata: b\r\n\r\n") == ["a\nb"]  # one event of two data lines
    assert parser.feed(b"data: c\r") == []
    assert parser.feed(b"\r") == ["c"]  # a lone CR ends a line too; two end the event


def test_latencies_count_failures_and_keep_served_times_only() -> None:
    lat = stream.Latencies()
    for i in range(100):
        lat.add(stream.Outcome("ok", 200, 0.1 + i / 1000, (0.05,) * 3, 1.0, 4))
    lat.add(stream.Outcome("cut", 200, 9.0, (), 9.0, 2))
    lat.add(stream.Outcome("refused"))
    got = lat.as_json()
    assert got["served"] == 100 and got["failed"] == 2 and got["cut_after_tokens"] == 1
    assert got["outcomes"]["cut"] == 1 and got["outcomes"]["refused"] == 1
    # p95 of 100..199 ms is 194 ms, within the buckets' 1 %; the cut request's 9 s is not in.
    assert got["ttft_p95_ms"] == pytest.approx(194, rel=0.011)
    assert got["itl_p95_ms"] == pytest.approx(50, rel=0.011)
    assert got["e2e_p95_ms"] == pytest.approx(1000, rel=0.011)
    assert stream.Latencies().as_json()["ttft_p95_ms"] is None
