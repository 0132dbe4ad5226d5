"""The rehearsal's sender, as a caller of vLLM's OpenAI server sees a streamed answer.

A chat client asks vLLM with ``"stream": true`` and reads server-sent events: one
``data: <chunk>`` event per token chunk, then ``data: [DONE]``. `request` sends one such
request (to a stand-in: the rehearsal's pod IPs, inside its own network namespace) and
reads its events as they come; `Outcome` says what the caller saw:

- ``ok``: a ``200``, token chunks, then ``[DONE]``;
- ``error_status``: an answer other than ``200`` (its status is kept);
- ``refused``: no answer at all (the connection refused or reset before a status line);
- ``cut``: a ``200``, then the stream ended before ``[DONE]`` (a replica killed with the
  request in flight; the outcome keeps how many token chunks had come);
- ``timeout``: no byte for `request`'s ``timeout`` seconds, or no ``[DONE]`` by its deadline;
- ``malformed``: an event that is not a JSON chunk, or longer than `MAX_EVENT_BYTES`.

Only ``ok`` counts as served; every other outcome is a failed request. A token chunk is a
chunk with text in one of its choices (``text``, or a ``delta``'s ``content``,
``reasoning_content`` or ``tool_calls``); a chunk without (a chat stream's role-only first
chunk, a usage chunk) is not a token. The times are the caller's: from before the
connection to the first token chunk (TTFT), between token chunks (ITL), and to ``[DONE]``
(end to end).

`Latencies` keeps the served requests' times in a bounded histogram (`RESOLUTION`-wide
buckets) for their p95s. Every loop here is bounded: events by `MAX_EVENTS`, bytes per
event by `MAX_EVENT_BYTES`, the whole answer by its deadline.
"""

from __future__ import annotations

import http.client
import json
import math
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

OUTCOMES: Final = ("ok", "error_status", "refused", "cut", "timeout", "malformed")
MAX_EVENT_BYTES: Final = 1 << 20
MAX_EVENTS: Final = 2_000_000
"""More events than any answer's tokens (a profile's lengths are at most 1,000,000)."""
READ_BYTES: Final = 64 * 1024
RESOLUTION: Final = 1.01
"""Adjacent buckets of `Latencies` differ by 1 %: its p95s are within 1 % of the exact."""


@dataclass(frozen=True)
class Outcome:
    """One streamed request as its caller saw it."""

    outcome: str
    """One of `OUTCOMES`."""
    status: int | None = None
    ttft_s: float | None = None
    gaps_s: tuple[float, ...] = ()
    """The gaps between successive token chunks (the caller's inter-token latency)."""
    e2e_s: float | None = None
    tokens: int = 0
    """Token chunks received."""
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


class Malformed(ValueError):
    """An event that is not a chunk: the stream's outcome is ``malformed``."""


class SseParser:
    """Server-sent events from bytes as they arrive: `feed` returns the ``data`` of each event
    completed by them (events end at a blank line; ``\\n``, ``\\r\\n`` and ``\\r`` all end a
    line), in order. Comments and other fields are skipped."""

    def __init__(self, max_event_bytes: int = MAX_EVENT_BYTES) -> None:
        self.max = max_event_bytes
        self._buf = b""
        self._cr = False
        """The last read ended in ``\r``: a ``\n`` that opens the next read ends the same line."""

    def feed(self, data: bytes) -> list[str]:
        if self._cr and data.startswith(b"\n"):
            data = data[1:]
        self._cr = data.endswith(b"\r")
        self._buf += data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        out = []
        while True:
            end = self._buf.find(b"\n\n")
            if end < 0:
                break
            raw, self._buf = self._buf[:end], self._buf[end + 2 :]
            lines = [line for line in raw.split(b"\n") if line.startswith(b"data:")]
            if lines:
                out.append(
                    "\n".join(
                        line[5:].removeprefix(b" ").decode("utf-8", "replace") for line in lines
                    )
                )
        if len(self._buf) > self.max:
            raise Malformed(f"an event longer than {self.max} bytes")
        return out

    @property
    def pending(self) -> bool:
        """Whether bytes of an unfinished event are waiting."""
        return bool(self._buf.strip())


def tokens_in(data: str) -> bool:
    """Whether the chunk `data` (a ``data:`` payload other than ``[DONE]``) carries a token;
    raises `Malformed` when it is not a chunk."""
    try:
        chunk = json.loads(data)
    except ValueError:
        raise Malformed(f"not a JSON chunk: {data[:80]!r}") from None
    if not isinstance(chunk, dict):
        raise Malformed(f"not a chunk object: {data[:80]!r}")
    if "error" in chunk and "choices" not in chunk:
        raise Malformed(f"an error event: {str(chunk['error'])[:120]}")
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        raise Malformed(f"a chunk without choices: {data[:80]!r}")
    for choice in choices:
        if not isinstance(choice, dict):
            raise Malformed(f"a choice that is not an object: {data[:80]!r}")
        if choice.get("text"):
            return True
        delta = choice.get("delta")
        if isinstance(delta, dict) and any(
            delta.get(k) for k in ("content", "reasoning_content", "reasoning", "tool_calls")
        ):
            return True
    return False


def read_events(
    chunks: Iterable[bytes], clock: Callable[[], float], start: float, deadline: float
) -> Outcome:
    """The outcome of a ``200`` answer whose body arrives as `chunks` (an empty read ends
    it), timed by `clock` from `start`; reading stops at `deadline`."""
    parser = SseParser()
    first: float | None = None
    last = 0.0
    gaps: list[float] = []
    tokens = events = 0

    def end(outcome: str, detail: str = "") -> Outcome:
        ttft = None if first is None else first - start
        return Outcome(outcome, 200, ttft, tuple(gaps), clock() - start, tokens, detail)

    try:
        for data in chunks:
            if not data:
                break
            now = clock()
            for payload in parser.feed(data):
                events += 1
                if events > MAX_EVENTS:
                    return end("malformed", f"more than {MAX_EVENTS} events")
                if payload.strip() == "[DONE]":
                    if tokens == 0:
                        return end("malformed", "[DONE] before any token")
                    return end("ok")
                if tokens_in(payload):
                    tokens += 1
                    if first is None:
                        first = now
                    else:
                        gaps.append(now - last)
                    last = now
            if clock() > deadline:
                return end("timeout", "no [DONE] by the deadline")
    except Malformed as err:
        return end("malformed", str(err))
    except TimeoutError:
        return end("timeout", "no byte within the read timeout")
    except OSError as err:
        return end("cut", f"the connection failed mid-stream: {err}")
    except http.client.HTTPException as err:
        return end("cut", f"the answer broke off: {err!r}")
    return end("cut", f"the stream ended before [DONE] after {tokens} token chunks")


def request(
    host: str,
    port: int,
    path: str,
    body: dict[str, Any],
    *,
    timeout: float = 600.0,
    clock: Callable[[], float] = time.monotonic,
) -> Outcome:
    """POST `body` with ``"stream": true`` to http://host:port/path and read its events;
    never raises for what the server does (every failure is an `Outcome`). The deadline is
    checked as each read returns, so a request lasts at most `timeout` plus one read's
    `timeout`: bounded, though up to twice the deadline."""
    start = clock()
    deadline = start + timeout
    # A queued request gets no byte until its first token (vLLM sends nothing meanwhile):
    # the read timeout is the whole timeout, not a shorter idle bound.
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        try:
            conn.request(
                "POST",
                path,
                json.dumps({**body, "stream": True}).encode(),
                {"Content-Type": "application/json", "Accept": "text/event-stream"},
            )
            resp = conn.getresponse()
        except TimeoutError:
            return Outcome("timeout", detail="no answer within the timeout")
        except (OSError, http.client.HTTPException) as err:
            return Outcome("refused", detail=f"no answer: {err!r}")
        if resp.status != 200:
            try:
                text = resp.read(4096).decode("utf-8", "replace")
            except (OSError, http.client.HTTPException):
                text = ""
            return Outcome(
                "error_status", resp.status, e2e_s=clock() - start, detail=text.strip()[:200]
            )

        def reads() -> Iterable[bytes]:
            while True:
                yield resp.read1(READ_BYTES)

        return read_events(reads(), clock, start, deadline)
    finally:
        conn.close()


def _bucket(seconds: float) -> int:
    return max(0, math.ceil(math.log(max(seconds, 1e-6) / 1e-6, RESOLUTION)))


@dataclass
class Latencies:
    """The caller's times of the served requests (TTFT, ITL, end to end), and the outcomes of
    all; thread-safe, memory bounded by its buckets (`RESOLUTION`) whatever the count."""

    outcomes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(OUTCOMES, 0))
    cut_after_tokens: int = 0
    """Requests cut after at least one token chunk (the caller saw a partial answer)."""
    _hist: dict[str, dict[int, int]] = field(
        default_factory=lambda: {"ttft": {}, "itl": {}, "e2e": {}}
    )
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, got: Outcome) -> None:
        with self._lock:
            self.outcomes[got.outcome] = self.outcomes.get(got.outcome, 0) + 1
            if got.outcome == "cut" and got.tokens:
                self.cut_after_tokens += 1
            if not got.ok:
                return  # a failed request's times are not a served answer's
            for key, values in (
                ("ttft", (got.ttft_s,)),
                ("itl", got.gaps_s),
                ("e2e", (got.e2e_s,)),
            ):
                hist = self._hist[key]
                for v in values:
                    if v is not None:
                        b = _bucket(v)
                        hist[b] = hist.get(b, 0) + 1

    def p95_ms(self, key: str) -> float | None:
        """The p95 of ``ttft``, ``itl`` or ``e2e`` in ms (a bucket's upper bound); None
        without a value."""
        with self._lock:
            hist = dict(self._hist[key])
        total = sum(hist.values())
        if not total:
            return None
        rank = math.ceil(0.95 * total)
        running = 0
        for b in sorted(hist):
            running += hist[b]
            if running >= rank:
                return 1e-6 * RESOLUTION**b * 1000
        raise AssertionError("unreachable: the rank is at most the total")

    def as_json(self) -> dict[str, Any]:
        with self._lock:
            outcomes = dict(self.outcomes)
            cut_after = self.cut_after_tokens
        return {
            "ttft_p95_ms": _round(self.p95_ms("ttft")),
            "itl_p95_ms": _round(self.p95_ms("itl")),
            "e2e_p95_ms": _round(self.p95_ms("e2e")),
            "served": outcomes.get("ok", 0),
            "failed": sum(n for k, n in outcomes.items() if k != "ok"),
            "outcomes": outcomes,
            "cut_after_tokens": cut_after,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
