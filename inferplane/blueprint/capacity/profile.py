"""The Triton estimate: what one replica carries, from its measured latency per batch size.

Triton's dynamic batcher holds a request for at most the batching window
(``max_queue_delay_microseconds``) to form a batch, then runs the batch: a request's
latency is at most the window plus the batch's compute latency. The batch that fits the SLO
is the largest measured one (up to ``batching.max_batch_size``) whose p95 latency plus the
window stays within ``slo.p95_ms``; one replica (one model instance on its GPU) then
completes ``batch / latency`` requests per second. The window that fits is what the SLO
leaves after that batch's latency.

A request may carry several batch items (`traffic.items_per_request`: a reranker's passages
per query): the profile's batch sizes count items, Triton never splits a request across
batches, so a batch of ``B`` items holds ``floor(B / items)`` requests, and a batch smaller
than one request holds none.

The profile is a measurement, so the band is the spread of the measurement itself: ±10%
(`BAND`), an assumption covering run-to-run variance of perf_analyzer p95 figures.
"""

from __future__ import annotations

import math
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

BAND: Final = 0.10


@dataclass(frozen=True)
class ProfileEstimate:
    batch: int
    """The largest measured batch within the SLO (0: none)."""
    latency_ms: float
    rps: float
    """Requests per second of one replica at that batch."""
    window_fits_us: int
    """The largest batching window that keeps this batch within the SLO."""
    requests: int = 0
    """Requests in that batch (`batch` over the items per request, rounded down)."""


def estimate(
    points: Sequence[tuple[int, float]],
    slo_ms: float,
    window_us: int,
    max_batch: int,
    speed: float = 1.0,
    items: int = 1,
) -> ProfileEstimate:
    """The largest batch of `points` ((batch size in items, p95 ms)) whose latency, divided
    by `speed`, plus the window fits `slo_ms`, for requests of `items` items each; batch 0
    when none does."""
    window_ms = window_us / 1000
    best: ProfileEstimate = ProfileEstimate(0, 0.0, 0.0, 0)
    for batch, p95_ms in sorted(points):
        if batch > max_batch:
            break
        requests = batch // items
        latency = p95_ms / speed
        if requests == 0 or latency + window_ms > slo_ms:
            continue
        rps = requests / (latency / 1000)
        if rps >= best.rps:
            best = ProfileEstimate(batch, latency, rps, int((slo_ms - latency) * 1000), requests)
    return best


MAX_FILE_BYTES: Final = 64 * 1024
"""A profile file is a few dozen rows; a larger one is refused before it is read."""
MAX_BATCH: Final = 4096
MAX_P95_MS: Final = 600_000.0
"""The ranges of an inline point (`profilePoint` in the blueprint schema)."""
MAX_POINTS: Final = 64


class FileRefused(ValueError):
    """A profile file inferplane will not read (where it is or what it is), as opposed to
    one whose rows are wrong."""


def read_file(blueprint_dir: Path, name: str) -> str:
    """The text of profile file `name`, relative to the blueprint's directory and inside it:
    a regular file (not a FIFO or a device, which would block or never end) of at most
    `MAX_FILE_BYTES`. FileRefused says what is wrong; OSError is the file system's."""
    base = blueprint_dir.resolve()
    try:
        path = (base / name).resolve()
    except RuntimeError as e:  # Python 3.11's resolve() on a symlink loop
        raise FileRefused(f"{name} is a loop of symbolic links") from e
    if not path.is_relative_to(base):
        raise FileRefused(f"{name} is outside the blueprint's directory")
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused(f"{name} is not a regular file")
    if info.st_size > MAX_FILE_BYTES:
        raise FileRefused(f"{name} is {info.st_size} bytes, over {MAX_FILE_BYTES}")
    return path.read_text(encoding="utf-8")


def read_csv(text: str) -> list[tuple[int, float]]:
    """The points of a profile CSV (header ``batch_size,p95_ms``), held to the ranges of
    inline points; ValueError names the line of the first bad row."""
    lines = [line.strip() for line in text.splitlines()]
    if not lines or [c.strip() for c in lines[0].split(",")] != ["batch_size", "p95_ms"]:
        raise ValueError("line 1: the header must be `batch_size,p95_ms`")
    out: list[tuple[int, float]] = []
    seen: set[int] = set()
    for number, line in enumerate(lines[1:], start=2):
        if not line:
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != 2 or not re.fullmatch(r"[0-9]+", cells[0]):
            raise ValueError(f"line {number}: expected `<batch size>,<p95 ms>`")
        try:
            batch, p95 = int(cells[0]), float(cells[1])
        except ValueError:
            raise ValueError(f"line {number}: expected `<batch size>,<p95 ms>`") from None
        if not 1 <= batch <= MAX_BATCH or not (math.isfinite(p95) and 0 < p95 <= MAX_P95_MS):
            raise ValueError(
                f"line {number}: expected a batch size from 1 to {MAX_BATCH} and a p95 above "
                f"0 and at most {MAX_P95_MS:g} ms"
            )
        if batch in seen:
            raise ValueError(f"line {number}: batch size {batch} is measured twice")
        seen.add(batch)
        out.append((batch, p95))
    if not out:
        raise ValueError("the file has no rows")
    if len(out) > MAX_POINTS:
        raise ValueError(f"the file has {len(out)} rows, over {MAX_POINTS}")
    return out
