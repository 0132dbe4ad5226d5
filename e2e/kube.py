"""A small Kubernetes REST client for the end-to-end run (client certificates, JSON only).

It needs nothing beyond the standard library, so the harness can talk to the local API
server before and after Pulumi does, and assert on what the real scheduler did.
"""

from __future__ import annotations

import http.client
import json
import ssl
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class KubeError(Exception):
    def __init__(self, status: int, body: str, what: str) -> None:
        super().__init__(f"{what}: HTTP {status}: {body[:500]}")
        self.status = status


@dataclass
class Kube:
    host: str
    port: int
    ca: Path
    cert: Path
    key: Path

    def _ctx(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(cafile=str(self.ca))
        ctx.load_cert_chain(str(self.cert), str(self.key))
        return ctx

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
        query: dict[str, str] | None = None,
    ) -> Any:
        if query:
            path = f"{path}?{urllib.parse.urlencode(query)}"
        conn = http.client.HTTPSConnection(self.host, self.port, context=self._ctx(), timeout=60)
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        try:
            conn.request(method, path, body=data, headers=headers)
            resp = conn.getresponse()
            text = resp.read().decode()
        finally:
            conn.close()
        if resp.status >= 300:
            raise KubeError(resp.status, text, f"{method} {path}")
        return json.loads(text) if text else None

    def get(self, path: str, **query: str) -> Any:
        return self.request("GET", path, query=query or None)

    def exists(self, path: str) -> bool:
        try:
            self.get(path)
            return True
        except KubeError as err:
            if err.status == 404:
                return False
            raise

    def create(self, path: str, obj: dict) -> Any:
        try:
            return self.request("POST", path, obj)
        except KubeError as err:
            if err.status == 409:
                return None
            raise

    def merge_patch(self, path: str, patch: dict) -> Any:
        return self.request("PATCH", path, patch, "application/merge-patch+json")

    def items(self, path: str, **query: str) -> list[dict]:
        return list(self.get(path, **query).get("items", []))

    def wait(self, what: str, check: Callable[[], Any], timeout: float, every: float = 0.5) -> Any:
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                value = check()
                if value:
                    return value
            except (KubeError, OSError) as err:
                last = err
            time.sleep(every)
        raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}: {last or ''}")


def resource_path(obj: dict, plural: str, namespaced: bool = True) -> str:
    """The collection path of an object (``/api/v1/...`` or ``/apis/<group>/<v>/...``)."""
    api = obj["apiVersion"]
    base = f"/api/{api}" if "/" not in api else f"/apis/{api}"
    ns = obj.get("metadata", {}).get("namespace")
    if namespaced and ns:
        return f"{base}/namespaces/{ns}/{plural}"
    return f"{base}/{plural}"
