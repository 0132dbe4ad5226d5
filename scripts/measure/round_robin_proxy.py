"""A round-robin HTTP/1.1 reverse proxy on loopback, on the standard library's asyncio.

`scripts/measure/measure_routing.py` puts it in front of two vLLM replicas as the baseline that
LLM-aware routing is measured against: each request goes to the next upstream in turn,
whatever the replicas hold or how busy they are, as a connection-blind load balancer
does. The response is passed through as its bytes arrive, so the events of a streamed
completion reach the client when the server sends them and the client's time to first
token is the server's plus a loopback hop.

One request per connection, both ways: the upstream is asked to close after its response
(``Connection: close``) and the client is told the same, so the bytes can be piped through
untouched, chunked or not, and every request is balanced on its own even when the client
keeps a pool of connections.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence

HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding"}
)
"""Headers that describe one connection, not the message (RFC 9110 section 7.6.1); the
proxy sets its own ``Connection`` and re-frames a chunked request body."""
HEAD_LIMIT = 1 << 20
"""The longest request or response head (line and headers) read."""
PIPE_CHUNK = 1 << 16


class BadRequest(Exception):
    """A request this proxy cannot frame."""


def _headers(head: bytes) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The start line and the (name, value) header pairs of a message head."""
    lines = head.rstrip(b"\r\n").split(b"\r\n")
    pairs = []
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep:
            raise BadRequest(f"malformed header line {line[:80]!r}")
        pairs.append((name.strip(), value.strip()))
    return lines[0], pairs


def _value(pairs: list[tuple[bytes, bytes]], name: bytes) -> bytes | None:
    for key, value in pairs:
        if key.lower() == name:
            return value
    return None


def _rewrite(start: bytes, pairs: list[tuple[bytes, bytes]], extra: list[bytes]) -> bytes:
    """The head with the hop-by-hop headers replaced by ``Connection: close`` and `extra`."""
    kept = [k + b": " + v for k, v in pairs if k.lower().decode("latin-1") not in HOP_BY_HOP]
    kept += extra
    return b"\r\n".join([start, *kept, b"Connection: close", b"", b""])


async def _read_body(reader: asyncio.StreamReader, pairs: list[tuple[bytes, bytes]]) -> bytes:
    """The request body, by its ``Content-Length`` or its chunks (then sent with a length)."""
    encoding = _value(pairs, b"transfer-encoding")
    if encoding is not None:
        if encoding.lower() != b"chunked":
            raise BadRequest(f"transfer-encoding {encoding!r} is not supported")
        body = bytearray()
        while True:
            size_line = await reader.readuntil(b"\r\n")
            size = int(size_line.split(b";")[0].strip(), 16)
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":
                    pass  # trailers end at an empty line; the proxy drops them
                return bytes(body)
            body += await reader.readexactly(size)
            await reader.readexactly(2)
    length = _value(pairs, b"content-length")
    if length is None:
        return b""
    try:
        return await reader.readexactly(int(length))
    except ValueError:
        raise BadRequest(f"bad content-length {length!r}") from None


class RoundRobinProxy:
    """Requests to `upstreams` ((host, port) pairs) in turn; `counts` says how many each got.

    `start` serves on a thread of its own (its own event loop), so a caller that blocks on
    child processes keeps the proxy running; `stop` ends it.
    """

    def __init__(
        self, upstreams: Sequence[tuple[str, int]], host: str = "127.0.0.1", port: int = 0
    ) -> None:
        if not upstreams:
            raise ValueError("no upstreams")
        self.upstreams = list(upstreams)
        self.counts = [0] * len(self.upstreams)
        self.host = host
        self.port = port
        self._next = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None

    def pick(self) -> int:
        """The next upstream's index (called on the loop's thread only)."""
        index = self._next
        self._next = (index + 1) % len(self.upstreams)
        self.counts[index] += 1
        return index

    def start(self, timeout: float = 10.0) -> int:
        """Serve in the background; returns the bound port."""
        ready = threading.Event()
        failure: list[BaseException] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                self._server = loop.run_until_complete(
                    asyncio.start_server(self._handle, self.host, self.port, limit=HEAD_LIMIT)
                )
            except OSError as err:
                failure.append(err)
                ready.set()
                loop.close()
                return
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            try:
                loop.run_forever()
            finally:
                self._server.close()
                loop.run_until_complete(self._server.wait_closed())
                loop.close()

        self._thread = threading.Thread(target=serve, name="round-robin-proxy", daemon=True)
        self._thread.start()
        if not ready.wait(timeout):
            raise TimeoutError("the round-robin proxy did not start")
        if failure:
            raise failure[0]
        return self.port

    def stop(self, timeout: float = 10.0) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: asyncio.StreamWriter | None = None
        try:
            try:
                start, pairs = _headers(await reader.readuntil(b"\r\n\r\n"))
                body = await _read_body(reader, pairs)
            except (BadRequest, ValueError, asyncio.LimitOverrunError) as err:
                writer.write(_error(400, f"bad request: {err}"))
                return
            except asyncio.IncompleteReadError:
                return  # the client went away
            host, port = self.upstreams[self.pick()]
            try:
                up_reader, upstream = await asyncio.open_connection(host, port, limit=HEAD_LIMIT)
            except OSError as err:
                writer.write(_error(502, f"upstream {host}:{port} unreachable: {err}"))
                return
            length = [b"Content-Length: " + str(len(body)).encode()] if body else []
            upstream.write(_rewrite(start, pairs, length) + body)
            await upstream.drain()
            try:
                status, response = _headers(await up_reader.readuntil(b"\r\n\r\n"))
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, BadRequest):
                writer.write(_error(502, f"upstream {host}:{port} sent no response head"))
                return
            # The framing headers of the response stay (the body is piped as sent); only
            # the connection is ours to describe.
            keep = [(k, v) for k, v in response if k.lower() not in (b"connection", b"keep-alive")]
            writer.write(b"\r\n".join([status, *(k + b": " + v for k, v in keep)]))
            writer.write(b"\r\nConnection: close\r\n\r\n")
            await writer.drain()
            while chunk := await up_reader.read(PIPE_CHUNK):
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # either side hung up: nothing left to pass on
        finally:
            for w in (upstream, writer):
                if w is not None:
                    w.close()


def _error(code: int, message: str) -> bytes:
    reason = {400: "Bad Request", 502: "Bad Gateway"}[code]
    body = (message + "\n").encode()
    return (
        f"HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
