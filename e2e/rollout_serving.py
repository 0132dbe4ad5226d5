"""The stand-ins and the sender of the rollout run (e2e/rehearse_rollout_run.py): one
stand-in vLLM process (e2e/standin_vllm.py) per Running pod of the model, at its pod IP and
at the speed its pod template's annotation names (`rollout_objects.SLOWER_ANNOTATION`),
stopped by PID when its pod goes; requests round robin over the ready ones, to pod IPs only
(inside the rehearsal's network namespace), counted per version."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import signal
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import cluster
import rollout_objects as ro
from kube import Kube
from rehearse_run import MAX_IN_FLIGHT, POD_NET, _healthy

HERE = Path(__file__).resolve().parent
POLL_S = 1.0


class Serving:
    """The stand-ins (one per Running pod, at the speed its annotation names) and the sender,
    in one thread: `peak_rps` requests a second, round robin over the ready stand-ins;
    requests counted per version."""

    def __init__(
        self,
        state: Path,
        client: Kube,
        objs: dict[str, Any],
        rps: float,
        standin_args: tuple[str, str, str],
    ) -> None:
        self.state, self.client, self.ns = state, client, objs["namespace"]
        self.selector = ",".join(f"{k}={v}" for k, v in objs["selector"].items())
        self.rps = rps
        self.blueprint, self.env_name, self.model = standin_args
        self.pids: dict[str, int] = {}
        self.ready: dict[str, tuple[str, str]] = {}  # pod -> (ip, version)
        self.sent: dict[str, int] = {}
        self.failed = 0
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(max_workers=MAX_IN_FLIGHT)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def reconcile(self) -> None:
        running: dict[str, tuple[str, str, str]] = {}
        for pod in self.client.items(
            f"/api/v1/namespaces/{self.ns}/pods", labelSelector=self.selector
        ):
            status, meta = pod.get("status") or {}, pod["metadata"]
            ip = status.get("podIP")
            if meta.get("deletionTimestamp") or status.get("phase") != "Running" or not ip:
                continue
            if ipaddress.ip_address(ip) not in POD_NET:  # the sender sends nowhere else
                continue
            notes = meta.get("annotations") or {}
            running[meta["name"]] = (
                ip,
                notes.get(ro.VERSION_ANNOTATION, "?"),
                notes.get(ro.SLOWER_ANNOTATION, "1"),
            )
        for name in list(self.pids):
            if name not in running:
                with self.lock:
                    self.ready.pop(name, None)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pids.pop(name), signal.SIGTERM)
        for name, (ip, version, slower) in running.items():
            if name not in self.pids:
                cmd = [
                    sys.executable,
                    str(HERE / "standin_vllm.py"),
                    ip,
                    str(ro.HTTP_PORT),
                    self.blueprint,
                    self.env_name,
                    self.model,
                    str(self.input_tokens),
                    str(self.output_tokens),
                    slower,
                ]
                self.pids[name] = cluster.spawn(self.state, f"stand-in-{name}", cmd)
            if name not in self.ready and _healthy(ip):
                with self.lock:
                    self.ready[name] = (ip, version)

    def _send(self, ip: str, version: str) -> None:
        body = json.dumps({"model": self.model, "prompt": "x", "max_tokens": self.output_tokens})
        req = urllib.request.Request(
            f"http://{ip}:{ro.HTTP_PORT}/v1/completions",
            body.encode(),
            {"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                good = resp.status == 200
        except OSError:
            good = False
        if not good:
            with self.lock:
                self.failed += 1

    def _loop(self) -> None:
        owed, turn, last, next_reconcile = 0.0, 0, time.monotonic(), 0.0
        while not self.stop.is_set():
            now = time.monotonic()
            if now >= next_reconcile:
                with contextlib.suppress(Exception):
                    self.reconcile()
                next_reconcile = now + POLL_S
            owed += self.rps * (now - last)
            last = now
            with self.lock:
                targets = sorted(self.ready.values())
            while owed >= 1.0 and targets:
                owed -= 1.0
                ip, version = targets[turn % len(targets)]
                turn += 1
                with self.lock:
                    self.sent[version] = self.sent.get(version, 0) + 1
                self.pool.submit(self._send, ip, version)
            if not targets:
                owed = 0.0
            time.sleep(0.05)

    def start(self, input_tokens: int, output_tokens: int) -> None:
        self.input_tokens, self.output_tokens = input_tokens, output_tokens
        self.thread.start()

    def counts(self) -> dict[str, Any]:
        with self.lock:
            return {"sent": dict(self.sent), "failed": self.failed, "ready": len(self.ready)}

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)
        self.pool.shutdown(wait=False, cancel_futures=True)
