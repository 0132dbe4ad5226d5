"""Measure TTFT of two vLLM replicas behind the llm-d router and behind round-robin.

On a machine with two GPUs, vLLM, the llm-d endpoint picker (``epp``) and Envoy, run::

    python scripts/measure/measure_routing.py --model-dir /models/llama-3.1-8b-instruct \\
        [--gpus 0,1] [--prompts 800 --prefixes 40 --prefix-len 2000 --suffix-len 200 \\
        --output-len 100 --request-rate 8] [--out routing-results]

It serves the model twice (``vllm serve``, one GPU each, prefix caching on, the flags
inferplane writes), then runs vLLM's own benchmark (``vllm bench serve``, dataset
``prefix_repetition``: many requests sharing a few long prefixes) against each arm:

- ``round_robin``: a local round-robin proxy (`round_robin_proxy`), what a connection-blind
  load balancer does;
- ``llm_aware``: Envoy asking the llm-d endpoint picker (v0.10.0, the release inferplane
  deploys) for each request's replica, with the scorers inferplane configures
  (`inferplane.components.serving.routing.router.picker_config`), the replicas given to the picker
  in a file instead of an InferencePool.

Before each arm both replicas' prefix caches are emptied (vLLM's ``/reset_prefix_cache``,
served with ``VLLM_SERVER_DEV_MODE=1``, ``vllm/entrypoints/serve/dev/cache/api_router.py``
in v0.33.0), and each arm sends the same prompts (the same ``--seed``). It prints TTFT
p50/p95/p99, throughput, how many requests each replica served and the prefix-cache hit
rate per arm, with the benchmark's raw JSON; every process it started is stopped on exit
or Ctrl-C. The logs of each process are in the output folder. CI never runs it: it needs
two GPUs and the weights; without them it says what is missing and exits with 2.

The picker, built from the pinned release's source (Go 1.26.6 or newer)::

    git clone --depth 1 --branch v0.10.0 https://github.com/llm-d/llm-d-router llm-d-router
    cd llm-d-router && CGO_ENABLED=0 go build -o epp ./cmd/epp

or, where the Go module proxy serves the release,
``CGO_ENABLED=0 go install github.com/llm-d/llm-d-router/cmd/epp@v0.10.0``.

Envoy 1.33 (the chart's proxy image, ``envoyproxy/envoy:distroless-v1.33.2``), and vLLM
v0.33.0 (its benchmark flags are the ones read here).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import yaml
from round_robin_proxy import RoundRobinProxy
from routing_setup import (
    ENVOY_VERSION,
    EPP_BUILD,
    EPP_INSTALL,
    LOOPBACK,
    VLLM_VERSION,
    ArmResult,
    Ports,
    Workload,
    arm_result,
    bench_command,
    counters,
    endpoints,
    envoy_command,
    envoy_config,
    epp_command,
    epp_config,
    report,
    serve_command,
)

from inferplane.blueprint.model import Routing

ARMS = ("round_robin", "llm_aware")


class Failure(Exception):
    """The measurement cannot go on; the message says why and where to look."""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=(__doc__ or "").split("\n")[0],
        epilog=f"The endpoint picker: {EPP_BUILD}; or {EPP_INSTALL}",
    )
    parser.add_argument("--model-dir", required=True, help="the local model directory")
    parser.add_argument("--served-model-name", help="default: the directory's name")
    parser.add_argument("--vllm", help="the vllm executable, or a python with vLLM (PATH's)")
    parser.add_argument("--epp", help="the llm-d endpoint picker binary (PATH's epp)")
    parser.add_argument("--envoy", help=f"the Envoy binary, {ENVOY_VERSION} (PATH's envoy)")
    parser.add_argument("--gpus", default="0,1", help="the two replicas' GPU ids (0,1)")
    parser.add_argument("--arms", default=",".join(ARMS), help="which arms, in order")
    parser.add_argument("--prefix-cache", choices=("approximate", "off"), default="approximate")
    parser.add_argument("--prompts", type=int, default=800)
    parser.add_argument("--prefixes", type=int, default=40)
    parser.add_argument("--prefix-len", type=int, default=2000)
    parser.add_argument("--suffix-len", type=int, default=200)
    parser.add_argument("--output-len", type=int, default=100)
    parser.add_argument("--request-rate", type=float, default=8.0, help="per second; inf")
    parser.add_argument("--max-concurrency", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-model-len", type=int)
    parser.add_argument("--max-num-seqs", type=int)
    parser.add_argument("--gpu-memory-utilization", type=float)
    parser.add_argument("--base-port", type=int, default=18000)
    parser.add_argument("--startup-timeout", type=float, default=1200.0, help="seconds")
    parser.add_argument("--out", type=Path, default=Path("routing-results"))
    args = parser.parse_args(argv)
    gpus = [g.strip() for g in args.gpus.split(",") if g.strip()]
    if len(gpus) != 2:
        parser.error(f"--gpus needs two GPU ids, one per replica, not {args.gpus!r}")
    args.gpus = gpus
    arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    unknown = [a for a in arms if a not in ARMS]
    if not arms or unknown or len(set(arms)) != len(arms):
        parser.error(f"--arms takes {' and/or '.join(ARMS)}, each once, not {args.arms!r}")
    args.arms = arms
    for name in ("prompts", "prefixes", "prefix_len", "suffix_len", "output_len"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.prompts < args.prefixes:
        # vLLM's PrefixRepetitionRandomDataset.sample raises ValueError otherwise
        parser.error(f"--prompts ({args.prompts}) must be at least --prefixes ({args.prefixes})")
    if not args.request_rate > 0:
        parser.error("--request-rate must be above 0 (inf sends every request at once)")
    if not 1024 <= args.base_port <= 65535 - 30:
        parser.error("--base-port must leave 30 ports below 65536, from 1024")
    args.served_model_name = args.served_model_name or Path(args.model_dir).name or "model"
    return args


def list_gpus() -> list[str] | None:
    """The GPU indexes ``nvidia-smi`` lists, or None without it."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        done = subprocess.run(
            ["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]


def missing(
    args: argparse.Namespace,
    which: Callable[[str], str | None] = shutil.which,
    gpus: Callable[[], list[str] | None] = list_gpus,
) -> list[str]:
    """What this machine lacks for the measurement, one line each with how to get it."""
    problems = []
    model = Path(args.model_dir)
    if not (model / "config.json").is_file():
        problems.append(f"the model directory {model} has no config.json")

    def tool(given: str | None, name: str, how: str) -> None:
        if given is None:
            if which(name) is None:
                problems.append(f"no `{name}` on PATH (give --{name}): {how}")
        elif not (os.path.isfile(given) and os.access(given, os.X_OK)):
            problems.append(f"--{name} {given} is not an executable file")

    tool(args.vllm, "vllm", f"pip install vllm=={VLLM_VERSION.removeprefix('v')}")
    if "llm_aware" in args.arms:
        tool(args.epp, "epp", f"build it at the pinned release: {EPP_BUILD}")
        tool(args.envoy, "envoy", f"Envoy {ENVOY_VERSION} from the Envoy project's releases")
    listed = gpus()
    if listed is None:
        problems.append("no NVIDIA GPU: nvidia-smi is not on PATH or does not answer")
    else:
        absent = [g for g in args.gpus if g not in listed]
        if absent:
            have = ", ".join(listed) or "none"
            problems.append(f"GPU {', '.join(absent)} not found (nvidia-smi lists: {have})")
    return problems


@contextlib.contextmanager
def child(
    name: str, cmd: Sequence[str], logs: Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    """A process in its own session, logged to ``<logs>/<name>.log``, and stopped with
    every process it started (vLLM's engine cores) when the block ends."""
    with (logs / f"{name}.log").open("wb") as log:
        proc = subprocess.Popen(
            list(cmd),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        try:
            yield proc
        finally:
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=30)


def wait_until(
    check: Callable[[], bool],
    what: str,
    timeout: float,
    watched: Sequence[tuple[str, subprocess.Popen[bytes]]],
    logs: Path,
) -> None:
    deadline = time.monotonic() + timeout
    while True:
        for name, proc in watched:
            if proc.poll() is not None:
                raise Failure(
                    f"{name} exited with {proc.returncode} before {what}; "
                    f"see {logs / (name + '.log')}"
                )
        if check():
            return
        if time.monotonic() > deadline:
            raise Failure(f"no {what} within {timeout:.0f} s; see the logs in {logs}")
        time.sleep(1.0)


def http(url: str, body: dict[str, Any] | None = None, timeout: float = 10.0) -> bytes:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if data is None else "POST")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return bytes(response.read())


def answers(url: str) -> bool:
    try:
        http(url, timeout=5)
    except OSError:
        return False
    return True


def listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, port), timeout=2):
        return True
    return False


def reset_prefix_caches(replicas: Sequence[str]) -> None:
    """Empty each replica's prefix cache; it refuses while blocks are held, so retry."""
    for url in replicas:
        for _ in range(30):
            if json.loads(http(f"{url}/reset_prefix_cache", body={})).get("success"):
                break
            time.sleep(1.0)
        else:
            raise Failure(f"{url} did not empty its prefix cache within 30 s")


def replica_counters(replicas: Sequence[str]) -> list[dict[str, float]]:
    return [counters(http(f"{url}/metrics").decode()) for url in replicas]


def bench(args: argparse.Namespace, arm: str, base_url: str, out: Path) -> dict[str, Any]:
    load = Workload(
        prompts=args.prompts,
        prefixes=args.prefixes,
        prefix_len=args.prefix_len,
        suffix_len=args.suffix_len,
        output_len=args.output_len,
        request_rate=args.request_rate,
        max_concurrency=args.max_concurrency,
        seed=args.seed,
    )
    cmd = bench_command(args.vllm, base_url, args.served_model_name, args.model_dir, load, out)
    print(f"[{arm}] $ " + " ".join(cmd), flush=True)
    out.unlink(missing_ok=True)  # a result left by an earlier run is not this one's
    # a few hundred long prompts take minutes; three hours is a hung server
    done = subprocess.run(cmd, check=False, timeout=3 * 3600)
    if done.returncode != 0 or not out.is_file():
        raise Failure(
            f"[{arm}] vllm bench serve failed (exit {done.returncode}); "
            f"the servers' logs are in {out.parent}"
        )
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def run_arm(args: argparse.Namespace, arm: str, ports: Ports, replicas: list[str]) -> ArmResult:
    logs: Path = args.out
    out = (logs / f"{arm}.json").resolve()
    reset_prefix_caches(replicas)
    before = replica_counters(replicas)
    with contextlib.ExitStack() as stack:
        if arm == "round_robin":
            proxy = RoundRobinProxy(
                [(LOOPBACK, ports.replica(i)) for i in range(2)], port=ports.round_robin
            )
            proxy.start()
            stack.callback(proxy.stop)
            base_url = f"http://{LOOPBACK}:{ports.round_robin}"
        else:
            routing = Routing(mode="llm_aware", prefix_cache=args.prefix_cache)
            endpoints_file = (logs / "endpoints.yaml").resolve()
            endpoints_file.write_text(yaml.safe_dump(endpoints(ports)))
            config_file = logs / "epp-config.yaml"
            config = epp_config(routing, endpoints_file)
            config_file.write_text(yaml.safe_dump(config, sort_keys=False))
            envoy_file = logs / "envoy.yaml"
            envoy_file.write_text(yaml.safe_dump(envoy_config(ports), sort_keys=False))
            epp = stack.enter_context(child("epp", epp_command(args.epp, config_file, ports), logs))
            # the ext_proc port opens once the endpoints file is loaded (runWithFileDiscovery)
            picker = partial(listening, ports.epp_grpc)
            wait_until(picker, "endpoint picker", 60, [("epp", epp)], logs)
            envoy = stack.enter_context(child("envoy", envoy_command(args.envoy, envoy_file), logs))
            # the admin's GET /ready answers 200 once Envoy is initialized
            # (https://www.envoyproxy.io/docs/envoy/v1.33.2/operations/admin)
            ready = partial(answers, f"http://{LOOPBACK}:{ports.envoy_admin}/ready")
            wait_until(ready, "Envoy", 60, [("epp", epp), ("envoy", envoy)], logs)
            base_url = f"http://{LOOPBACK}:{ports.envoy}"
        result = bench(args, arm, base_url, out)
    return arm_result(arm, out, result, before, replica_counters(replicas))


def measure(args: argparse.Namespace) -> list[ArmResult]:
    ports = Ports(args.base_port)
    logs: Path = args.out
    replicas = [f"http://{LOOPBACK}:{ports.replica(i)}" for i in range(2)]
    with contextlib.ExitStack() as stack:
        procs = []
        for i, gpu in enumerate(args.gpus):
            cmd = serve_command(
                args.vllm,
                args.model_dir,
                args.served_model_name,
                ports.replica(i),
                max_model_len=args.max_model_len,
                max_num_seqs=args.max_num_seqs,
                gpu_memory_utilization=args.gpu_memory_utilization,
            )
            print(f"[replica-{i}] $ " + " ".join(cmd), flush=True)
            env = {**os.environ, "CUDA_VISIBLE_DEVICES": gpu, "VLLM_SERVER_DEV_MODE": "1"}
            name = f"replica-{i}"
            procs.append((name, stack.enter_context(child(name, cmd, logs, env))))
        for url in replicas:
            health = f"{url}/health"
            wait_until(partial(answers, health), health, args.startup_timeout, procs, logs)
            # one request each, so neither arm pays for the first request's warm-up
            hello = {"model": args.served_model_name, "prompt": "Hello", "max_tokens": 1}
            http(f"{url}/v1/completions", hello, timeout=600)
        return [run_arm(args, arm, ports, replicas) for arm in args.arms]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    problems = missing(args)
    if problems:
        print("measure_routing: cannot measure on this machine:", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 2
    args.vllm = args.vllm or shutil.which("vllm")
    args.epp = args.epp or shutil.which("epp")
    args.envoy = args.envoy or shutil.which("envoy")
    args.model_dir = str(Path(args.model_dir).resolve())
    args.out.mkdir(parents=True, exist_ok=True)
    # SIGTERM ends the run as Ctrl-C does, so every process started is stopped
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        results = measure(args)
    except KeyboardInterrupt:
        print("measure_routing: interrupted; every process it started is stopped", file=sys.stderr)
        return 130
    except (Failure, OSError, subprocess.TimeoutExpired) as err:
        print(f"measure_routing: {err}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGTERM, previous)
    for line in report(results):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
