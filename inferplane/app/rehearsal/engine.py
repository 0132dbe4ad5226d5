"""The STAND-IN replica's engine: a model of one vLLM replica, not vLLM.

A rehearsal's serving pods run no model. Each one gets a stand-in process that answers
requests with the latency the capacity planner's model gives for that model on that GPU
(`inferplane.blueprint.capacity.roofline.at_batch`, fed by `load.llm_load` exactly as the
planner is, aiconfigurator's timings included where it has them: one source, no numbers of
its own), and exports what vLLM exports about them. Every figure it produces is "from the
stand-ins' model", and every report says so.

How a replica is modelled:

- continuous batching: up to `ReplicaEngine.cap` sequences run at once (vLLM's
  ``max_num_seqs`` as the blueprint sets it, else the release's default for the GPU, and
  never more than the KV cache holds, `roofline.LlmEstimate.kv_batch`); more wait in a FIFO
  queue (``vllm:num_requests_waiting``);
- with ``B`` sequences running, an iteration lasts the planner's ``ITL(B)`` (a decode step
  plus the batch's share of chunked prefill): a request admitted into the batch gets its
  first token ``prefill + ITL(B)`` later (the planner's ``TTFT(B)``), then one token per
  iteration, each at the batch size of the moment, until its output is complete; then the
  next waiting request takes its place;
- ``--slower F`` divides every rate by F (the planner's ``speed`` = 1 / F): 1.3 shows what
  the estimate's slow end would do.

The histograms use the bucket bounds a replica of the model would export (`bounds`: the vLLM
release's defaults with the model's SLO lines added), so the quantiles Prometheus computes from
the stand-in are interpolated exactly as from vLLM.
"""

from __future__ import annotations

import collections
import heapq
import threading
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from inferplane.blueprint import defaults
from inferplane.blueprint.capacity import load as capacity_load
from inferplane.blueprint.capacity import roofline, targets
from inferplane.blueprint.model import GpuPool, Model
from inferplane.blueprint.model_scaling import Traffic
from inferplane.blueprint.upstream import vllm_buckets

STAND_IN: Final = "stand-in"
"""The label every stand-in figure carries (``source``) and the reports print."""

TTFT: Final = targets.TTFT_HISTOGRAM
ITL: Final = "vllm:inter_token_latency_seconds"
E2E: Final = "vllm:e2e_request_latency_seconds"
EXPORTED: Final = (TTFT, ITL, E2E)
"""The histograms a stand-in exports, with labelnames ["model_name", "engine"] (vLLM v0.33.0
vllm/v1/metrics/loggers.py, line 499)."""


def bounds(release: str, model: Model | None = None) -> dict[str, tuple[float, ...]]:
    """The bucket bounds of each `EXPORTED` histogram of a replica of vLLM `release`: the
    release's (inferplane/facts/vllm/<release>/histogram_buckets.txt, read from its wheel),
    with `model`'s lines added as its pods are told to (`targets.histogram_buckets`); for a
    model, `release` is the environment's and the model's own image may run another."""
    if model is None:
        every = vllm_buckets.exported(release, {})
    else:
        every = targets.exported_bounds(model, release)
    if not every:
        raise ValueError(f"vLLM {release} has no histogram bucket facts")
    return {name: every[name] for name in EXPORTED}


VLLM_BUCKETS: Final = bounds(defaults.VERSIONS["vllm"])
"""The pinned release's default bounds."""
LABELS: Final = ("model_name", "engine")


def default_max_num_seqs(gpu_memory_gib: float, gpu_id: str) -> int:
    """vLLM v0.33.0's ``max_num_seqs`` for the OpenAI API server when none is set:
    1024 on GPUs of 160 GiB or more, and on those of 70 GiB or more but A100s; 256 on the
    rest (vllm/engine/arg_utils.py, `EngineArgs.get_batch_defaults`, lines 2973-3006)."""
    if gpu_memory_gib >= 160 or (gpu_memory_gib >= 70 and "a100" not in gpu_id.lower()):
        return 1024
    return 256


class Histogram:
    """A Prometheus histogram: cumulative counts per upper bound, the sum and the count."""

    def __init__(self, bounds: Sequence[float]) -> None:
        self.bounds = tuple(bounds)
        self.counts = [0] * (len(self.bounds) + 1)  # the last one is +Inf
        self.total = 0.0

    def observe(self, value: float) -> None:
        # prometheus_client puts a value into the first bucket whose bound is >= it.
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total += value

    @property
    def count(self) -> int:
        return sum(self.counts)

    def cumulative(self) -> list[tuple[str, int]]:
        out, running = [], 0
        for bound, n in zip((*self.bounds, float("inf")), self.counts, strict=True):
            running += n
            out.append(("+Inf" if bound == float("inf") else _le(bound), running))
        return out


def _le(bound: float) -> str:
    # prometheus_client's `floatToGoString`: 1.0 -> "1.0", 0.3 -> "0.3".
    return repr(float(bound))


@dataclass
class _Request:
    rid: int
    arrived: float
    output_tokens: int
    admitted: float = 0.0
    first_at: float | None = None
    last_token: float = 0.0
    tokens: int = 0


@dataclass(frozen=True)
class Finished:
    rid: int
    arrived: float
    ttft_s: float
    e2e_s: float
    tokens: int


@dataclass
class ReplicaEngine:
    """One stand-in replica's engine over simulated time (seconds, any origin).

    `submit` queues a request; `advance(now)` runs the iterations that fit until `now` and
    returns the requests finished meanwhile; `take_tokens()` gives the tokens produced
    meanwhile for the requests submitted with ``stream=True``. Thread-safe."""

    load: roofline.LlmLoad
    cap: int
    model_name: str
    output_tokens: int
    slower: float = 1.0
    clock: float = 0.0
    waiting: collections.deque[_Request] = field(default_factory=collections.deque)
    running: list[_Request] = field(default_factory=list)
    histograms: dict[str, Histogram] = field(
        default_factory=lambda: {name: Histogram(b) for name, b in VLLM_BUCKETS.items()}
    )
    finished_total: int = 0
    prompt_tokens_total: int = 0
    generation_tokens_total: int = 0
    _next: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _points: dict[int, roofline.LlmPoint] = field(default_factory=dict)
    _due: list[tuple[float, int]] = field(default_factory=list)
    _by_id: dict[int, _Request] = field(default_factory=dict)
    _streamed: set[int] = field(default_factory=set)
    _tokens: list[tuple[int, int, bool]] = field(default_factory=list)

    @classmethod
    def of(
        cls,
        model: Model,
        pool: GpuPool,
        *,
        input_tokens: int,
        output_tokens: int,
        pinned_vllm: str | None = None,
        slower: float = 1.0,
    ) -> ReplicaEngine:
        """The engine of `model` on `pool`'s GPU for requests of these lengths, from the
        capacity planner's own inputs (`capacity.load.llm_load`); raises ValueError where
        the planner has no model of it (the message says why)."""
        if not slower >= 1.0 or slower > 10:
            raise ValueError(f"--slower is a factor from 1 to 10, not {slower:g}")
        peak = model.traffic.peak_rps if model.traffic else 1.0
        shared = model.traffic.shared_prefix if model.traffic else 0.0
        traffic = Traffic(peak, input_tokens, output_tokens, shared)
        got, why = capacity_load.llm_load(replace(model, traffic=traffic), pool, pinned_vllm)
        if got is None:
            raise ValueError(f"the capacity planner has no model of {model.name}: {why}")
        load = replace(got, speed=1.0 / slower)
        kv_batch = roofline.estimate(load).kv_batch
        engine_cap = capacity_load.batch_limit(model) or default_max_num_seqs(
            pool.gpu.memory_gib, pool.gpu.id
        )
        release = pinned_vllm or defaults.VERSIONS["vllm"]
        return cls(
            load,
            max(1, min(engine_cap, kv_batch)),
            model.name,
            output_tokens,
            slower,
            histograms={n: Histogram(b) for n, b in bounds(release, model).items()},
        )

    def point(self, batch: int) -> roofline.LlmPoint:
        if batch not in self._points:
            self._points[batch] = roofline.at_batch(self.load, batch)
        return self._points[batch]

    def submit(self, now: float, output_tokens: int | None = None, stream: bool = False) -> int:
        with self._lock:
            self._advance(now)
            rid = self._next
            self._next += 1
            if stream:
                self._streamed.add(rid)
            tokens = max(1, output_tokens or self.output_tokens)
            self.waiting.append(_Request(rid, now, tokens))
            self.prompt_tokens_total += self.load.input_tokens
            self._admit()
            return rid

    def advance(self, now: float) -> list[Finished]:
        with self._lock:
            return self._advance(now)

    def take_tokens(self) -> list[tuple[int, int, bool]]:
        """(request id, tokens so far, last) for each token of a streamed request produced
        since the last call, in order."""
        with self._lock:
            out, self._tokens = self._tokens, []
            return out

    def gauges(self) -> tuple[int, int]:
        """(waiting, running) now."""
        with self._lock:
            return len(self.waiting), len(self.running)

    def next_event(self) -> float | None:
        """When the next token is due, None when idle."""
        with self._lock:
            return self._due[0][0] if self._due else None

    def _admit(self) -> None:
        admitted = []
        while self.waiting and len(self.running) < self.cap:
            req = self.waiting.popleft()
            req.admitted = max(self.clock, req.arrived)
            self.running.append(req)
            self._by_id[req.rid] = req
            admitted.append(req)
        if admitted:
            # Its prompt first, then the iteration that yields its first token, at the
            # batch it joined.
            p = self.point(len(self.running))
            for req in admitted:
                due = req.admitted + (p.prefill_ms + p.itl_ms) / 1000
                heapq.heappush(self._due, (due, req.rid))

    def _advance(self, now: float) -> list[Finished]:
        done: list[Finished] = []
        while self._due and self._due[0][0] <= now:
            at, rid = heapq.heappop(self._due)
            self.clock = at
            req = self._by_id[rid]
            req.tokens += 1
            if req.first_at is None:
                req.first_at = at
                self.histograms[TTFT].observe(at - req.arrived)
            else:
                self.histograms[ITL].observe(at - req.last_token)
            req.last_token = at
            if rid in self._streamed:
                last = req.tokens >= req.output_tokens
                self._tokens.append((rid, req.tokens, last))
                if last:
                    self._streamed.discard(rid)
            if req.tokens >= req.output_tokens:
                self.histograms[E2E].observe(at - req.arrived)
                self.finished_total += 1
                self.generation_tokens_total += req.tokens
                done.append(
                    Finished(
                        req.rid,
                        req.arrived,
                        req.first_at - req.arrived,
                        at - req.arrived,
                        req.tokens,
                    )
                )
                self.running.remove(req)
                del self._by_id[rid]
                self._admit()
            else:
                # One token per iteration, at the batch's iteration time now.
                itl = self.point(len(self.running)).itl_ms / 1000
                heapq.heappush(self._due, (at + itl, rid))
        self.clock = max(self.clock, now)
        return done

    def exposition(self) -> str:
        """The Prometheus text of what vLLM would export about this replica (stand-in)."""
        labels = f'model_name="{self.model_name}",engine="0"'
        with self._lock:
            waiting, running = len(self.waiting), len(self.running)
            out = [
                "# HELP inferplane_standin_info A STAND-IN replica (not vLLM): latency from "
                "the capacity planner's model.",
                "# TYPE inferplane_standin_info gauge",
                f'inferplane_standin_info{{{labels},stand_in="true",slower="{self.slower:g}"}} 1',
                "# TYPE vllm:num_requests_running gauge",
                f"vllm:num_requests_running{{{labels}}} {running}",
                "# TYPE vllm:num_requests_waiting gauge",
                f"vllm:num_requests_waiting{{{labels}}} {waiting}",
                "# TYPE vllm:request_success_total counter",
                f'vllm:request_success_total{{{labels},finished_reason="length"}} '
                f"{self.finished_total}",
                "# TYPE vllm:prompt_tokens_total counter",
                f"vllm:prompt_tokens_total{{{labels}}} {self.prompt_tokens_total}",
                "# TYPE vllm:generation_tokens_total counter",
                f"vllm:generation_tokens_total{{{labels}}} {self.generation_tokens_total}",
            ]
            for name, hist in self.histograms.items():
                out.append(f"# TYPE {name} histogram")
                for le, n in hist.cumulative():
                    out.append(f'{name}_bucket{{{labels},le="{le}"}} {n}')
                out.append(f"{name}_count{{{labels}}} {hist.count}")
                out.append(f"{name}_sum{{{labels}}} {hist.total!r}")
        return "\n".join(out) + "\n"
