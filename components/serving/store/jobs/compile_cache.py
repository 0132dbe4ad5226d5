"""Runs ``vllm serve`` until it is healthy, then stops it: its ``torch.compile`` cache is
then on disk. Run in the model's vLLM image, with the serving container's arguments.

    python3 compile_cache.py --health-url URL --cache-dir DIR [--poll-s S] [--skip-if FILE]
        -- <vllm serve arguments>

vLLM builds the engine, which compiles and captures, before it serves HTTP
(vllm-project/vllm ``vllm/entrypoints/openai/api_server.py`` ``run_server_worker``), so the
first answer of ``/health`` means the compiled graphs are cached. A server that exits
before it is healthy fails the Job with its own exit status; so does a cache directory left
empty.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Options:
    health_url: str
    cache_dir: str
    poll_s: float
    skip_if: str | None
    serve_args: list[str]


def parse(argv: Sequence[str]) -> Options:
    """The command line; everything after ``--`` is ``vllm serve``'s, passed on as it is."""
    argv = list(argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(prog="compile_cache.py")
    parser.add_argument("--health-url", required=True)
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--poll-s", type=float, default=5.0)
    parser.add_argument("--skip-if", default=None)
    known = parser.parse_args(argv[:cut])
    return Options(known.health_url, known.cache_dir, known.poll_s, known.skip_if, argv[cut + 1 :])


def healthy(url: str) -> bool:
    """Whether ``url`` answers 2xx within five seconds."""
    try:
        with urllib.request.urlopen(url, timeout=5):
            return True
    except OSError:
        return False


def wait_healthy(
    probe: Callable[[], bool],
    exited: Callable[[], int | None],
    sleep: Callable[[float], None],
    poll_s: float,
) -> int | None:
    """Polls `probe` every `poll_s` until it holds (None) or the server has exited (its
    exit status, from `exited`)."""
    while not probe():
        status = exited()
        if status is not None:
            return status
        sleep(poll_s)
    return None


def cache_written(cache_dir: str) -> bool:
    """Whether vLLM wrote anything under `cache_dir`."""
    return os.path.isdir(cache_dir) and any(os.scandir(cache_dir))


def main(argv: Sequence[str]) -> int:
    options = parse(argv)
    if options.skip_if and os.path.exists(options.skip_if):
        return 0
    server = subprocess.Popen(["vllm", "serve", *options.serve_args])
    status = wait_healthy(
        lambda: healthy(options.health_url), server.poll, time.sleep, options.poll_s
    )
    if status is not None:
        print("vllm serve stopped before /health answered", file=sys.stderr)
        return status or 1
    server.send_signal(signal.SIGTERM)
    server.wait()
    if not cache_written(options.cache_dir):
        print(f"vllm wrote no torch.compile cache under {options.cache_dir}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
