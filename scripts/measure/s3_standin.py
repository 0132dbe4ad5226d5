"""A minimal S3-compatible stand-in over a local folder, bound to 127.0.0.1: enough of the S3
API for the Run:ai streamer and boto3 to list and read objects (path-style requests only).

- ``GET /<bucket>?list-type=2&prefix=P[&delimiter=/]``: ListObjectsV2 (one page);
- ``HEAD /<bucket>/<key>``: the object's size, ETag and date;
- ``GET /<bucket>/<key>`` with or without ``Range: bytes=a-b``: the bytes (206 for a range).

Signatures are not checked; the access key of each request's ``Authorization`` header is
recorded (`StandIn.requests`). Objects are the files under ``root/<bucket>/``. Written on the
standard library alone, so it runs wherever Python does (a GPU machine without network), and
served by threads with the file read in large blocks, so it is not the bottleneck of a
loopback measurement the way a full S3 emulator is.
"""

from __future__ import annotations

import hashlib
import re
import threading
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit
from xml.sax.saxutils import escape

BLOCK = 4 << 20
RANGE = re.compile(r"bytes=(\d+)-(\d*)")
CREDENTIAL = re.compile(r"Credential=([^/]+)/")


class StandIn:
    """``with StandIn(root) as store: store.endpoint`` serves `root` until the block ends."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> StandIn:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _etag(path: Path) -> str:
    stat = path.stat()
    return '"' + hashlib.md5(f"{path}:{stat.st_size}:{stat.st_mtime_ns}".encode()).hexdigest() + '"'


def _handler(store: StandIn) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _record(self) -> None:
            found = CREDENTIAL.search(self.headers.get("Authorization", ""))
            with store.lock:
                store.requests.append(
                    {
                        "method": self.command,
                        "path": urlsplit(self.path).path,
                        "access_key": found.group(1) if found else None,
                        "range": self.headers.get("Range"),
                    }
                )

        def _target(self) -> tuple[str, str, dict[str, list[str]]]:
            parts = urlsplit(self.path)
            bucket, _, key = unquote(parts.path).lstrip("/").partition("/")
            return bucket, key, parse_qs(parts.query)

        def _error(self, status: int, code: str) -> None:
            body = f"<Error><Code>{code}</Code></Error>".encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _file(self, bucket: str, key: str) -> Path | None:
            path = (store.root / bucket / key).resolve()
            if store.root.resolve() not in path.parents or not path.is_file():
                return None
            return path

        def do_HEAD(self) -> None:
            self._record()
            bucket, key, _ = self._target()
            path = self._file(bucket, key)
            if path is None:
                self._error(404, "NoSuchKey")
                return
            self.send_response(200)
            self._object_headers(path, path.stat().st_size)
            self.end_headers()

        def _object_headers(self, path: Path, length: int) -> None:
            self.send_header("Content-Length", str(length))
            self.send_header("ETag", _etag(path))
            self.send_header("Last-Modified", formatdate(path.stat().st_mtime, usegmt=True))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Type", "application/octet-stream")

        def do_GET(self) -> None:
            self._record()
            bucket, key, query = self._target()
            if not key:
                self._list(bucket, query)
                return
            path = self._file(bucket, key)
            if path is None:
                self._error(404, "NoSuchKey")
                return
            size = path.stat().st_size
            start, end = 0, size - 1
            found = RANGE.fullmatch(self.headers.get("Range", "").strip())
            if found:
                start = int(found.group(1))
                end = min(int(found.group(2)) if found.group(2) else size - 1, size - 1)
                if start > end:
                    self._error(416, "InvalidRange")
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
            else:
                self.send_response(200)
            self._object_headers(path, end - start + 1)
            self.end_headers()
            with path.open("rb") as f:
                f.seek(start)
                left = end - start + 1
                while left > 0:
                    chunk = f.read(min(BLOCK, left))
                    if not chunk:
                        break
                    self.wfile.write(chunk)
                    left -= len(chunk)

        def _list(self, bucket: str, query: dict[str, list[str]]) -> None:
            prefix = query.get("prefix", [""])[0]
            delimiter = query.get("delimiter", [""])[0]
            base = store.root / bucket
            keys: list[tuple[str, int]] = []
            folders: set[str] = set()
            for path in sorted(p for p in base.rglob("*") if p.is_file()):
                key = path.relative_to(base).as_posix()
                if not key.startswith(prefix):
                    continue
                rest = key[len(prefix) :]
                if delimiter and delimiter in rest:
                    folders.add(prefix + rest.split(delimiter, 1)[0] + delimiter)
                    continue
                keys.append((key, path.stat().st_size))
            contents = "".join(
                f"<Contents><Key>{escape(k)}</Key><Size>{n}</Size>"
                "<LastModified>2026-01-01T00:00:00.000Z</LastModified>"
                '<ETag>"0"</ETag><StorageClass>STANDARD</StorageClass></Contents>'
                for k, n in keys
            )
            common = "".join(
                f"<CommonPrefixes><Prefix>{escape(f)}</Prefix></CommonPrefixes>"
                for f in sorted(folders)
            )
            body = (
                '<?xml version="1.0" encoding="UTF-8"?>'
                '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                f"<Name>{escape(bucket)}</Name><Prefix>{escape(prefix)}</Prefix>"
                f"<KeyCount>{len(keys) + len(folders)}</KeyCount><MaxKeys>1000</MaxKeys>"
                f"<Delimiter>{escape(delimiter)}</Delimiter><IsTruncated>false</IsTruncated>"
                f"{contents}{common}</ListBucketResult>"
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler
