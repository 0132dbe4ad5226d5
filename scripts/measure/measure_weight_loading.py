"""Measure weight loading part by part, and print the scale-out constants to replace.

On a GPU machine with PyTorch, safetensors, boto3 and the Run:ai streamer wheels
(``runai-model-streamer`` and ``runai-model-streamer-s3``; no vLLM, no network), run::

    python scripts/measure/measure_weight_loading.py [--gib 16] [--concurrency 32] [--out F]

It writes a checkpoint of random tensors (``--gib``, in shards of at most 4 GiB, as
Hugging Face writes them), serves it from a local S3-compatible stand-in on 127.0.0.1
(`s3_standin`), and times each way a replica gets the weights into GPU memory:

- ``disk_read``: the shards from the local disk, their pages dropped from the cache first
  (``posix_fadvise(POSIX_FADV_DONTNEED)``, which needs no root);
- ``page_cache_to_gpu``: ``safetensors.torch.load_file(device="cuda")`` from the page cache
  (`scale_out.Constants.gpu_load_gb_per_s`);
- ``store_copy``: boto3's ``download_file`` from the stand-in onto the local disk (the copy a
  fetch container makes: the AWS CLI's transfer manager, 10 concurrent ranged GETs by default;
  `scale_out.Constants.store_read_mb_per_s`), then ``copy_then_load`` adds the load from disk;
- ``store_stream``: the Run:ai streamer from the stand-in at ``--concurrency``, each tensor
  moved to the GPU as it arrives, as vLLM's ``runai_streamer`` loader does
  (`scale_out.Constants.streamed_gb_per_s`).

Without a GPU (or without torch) the GPU steps are reported as skipped and the stream lands
in CPU memory (through the streamer's C++ reader, which needs no torch); the test suite runs
it that way on a small checkpoint. The stand-in is on the same machine: no network is in
these numbers, so they are this machine's ceiling for each path, not a cloud store's; the
store figures that replace the defaults come from the same run against the real store
(``--endpoint``, ``--bucket``, ``--prefix`` of an existing checkpoint, with the reader's keys
in the environment), where the stand-in is not started.

Prints a table and a JSON summary (``--out`` writes it too) whose ``constants`` are the
values to set under the ``scale-out-budget`` rule's policy config.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import s3_standin

SHARD_GIB = 4
BUCKET = "models"
PREFIX = "measure/"


def _torch() -> Any | None:
    try:
        import torch
    except ImportError:
        return None
    return torch


def cuda(torch: Any | None) -> bool:
    return torch is not None and bool(torch.cuda.is_available())


def write_checkpoint(folder: Path, gib: float) -> list[Path]:
    """Shards of random float16 tensors, 64 MiB each, ``model-0000i-of-0000n.safetensors``."""
    import numpy as np
    from safetensors.numpy import save_file

    rng = np.random.default_rng(0)
    tensor_bytes = 64 << 20
    total = max(1, int(gib * (1 << 30)) // tensor_bytes)
    per_shard = max(1, (SHARD_GIB << 30) // tensor_bytes)
    shards = [list(range(i, min(i + per_shard, total))) for i in range(0, total, per_shard)]
    paths = []
    for n, ids in enumerate(shards, 1):
        tensors = {
            f"model.layers.{i}.weight": rng.integers(
                0, 1 << 14, size=tensor_bytes // 2, dtype=np.uint16
            ).view(np.float16)
            for i in ids
        }
        path = folder / f"model-{n:05d}-of-{len(shards):05d}.safetensors"
        save_file(tensors, str(path))
        paths.append(path)
    (folder / "config.json").write_text("{}")
    return paths


def drop_cache(paths: list[Path]) -> bool:
    if not hasattr(os, "posix_fadvise"):
        return False
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return True


def timed(fn: Callable[[], int]) -> tuple[int, float]:
    started = time.perf_counter()
    size = fn()
    return size, time.perf_counter() - started


def read_files(paths: list[Path]) -> int:
    total = 0
    buffer = bytearray(16 << 20)
    view = memoryview(buffer)
    for path in paths:
        with path.open("rb", buffering=0) as f:
            while n := f.readinto(view):
                total += n
    return total


def load_to_gpu(torch: Any, paths: list[Path]) -> int:
    from safetensors.torch import load_file

    total = 0
    for path in paths:
        tensors = load_file(str(path), device="cuda")
        total += sum(t.numel() * t.element_size() for t in tensors.values())
    torch.cuda.synchronize()
    return total


def s3_client(endpoint: str) -> Any:
    import boto3
    from botocore.config import Config

    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name=os.environ.get("AWS_REGION", "us-east-1"),
        config=Config(s3={"addressing_style": "path"}),
    )


def copy_from_store(endpoint: str, keys: list[str], target: Path) -> int:
    """boto3's managed download (s3transfer: 8 MiB parts, 10 threads, as the AWS CLI)."""
    client = s3_client(endpoint)
    total = 0
    for key in keys:
        path = target / key.rsplit("/", 1)[-1]
        client.download_file(BUCKET, key, str(path))
        total += path.stat().st_size
    return total


def _raw_stream(uris: list[str]) -> Iterator[tuple[str, memoryview]]:
    """Every tensor of `uris` through the streamer's C++ reader: the header, then one range
    per tensor, as ``SafetensorsStreamer`` requests them."""
    from runai_model_streamer.libstreamer.libstreamer import (
        runai_end,
        runai_request,
        runai_response,
        runai_start,
    )

    def wait(handle: Any) -> None:
        while runai_response(handle) is not None:
            pass

    handle = runai_start()
    try:
        for uri in uris:
            head = bytearray(8)
            runai_request(handle, [uri], [0], [8], [memoryview(head)], [[8]])
            wait(handle)
            size = int.from_bytes(head, "little")
            header_bytes = bytearray(size)
            runai_request(handle, [uri], [8], [size], [memoryview(header_bytes)], [[size]])
            wait(handle)
            header = json.loads(header_bytes)
            header.pop("__metadata__", None)
            ranges = sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0])
            sizes = [m["data_offsets"][1] - m["data_offsets"][0] for _, m in ranges]
            data = bytearray(sum(sizes))
            runai_request(handle, [uri], [8 + size], [len(data)], [memoryview(data)], [sizes])
            wait(handle)
            offset = 0
            for (name, _), n in zip(ranges, sizes, strict=True):
                yield name, memoryview(data)[offset : offset + n]
                offset += n
    finally:
        runai_end(handle)


def stream_from_store(torch: Any | None, uris: list[str]) -> int:
    """The streamer's tensors, each moved to the GPU when there is one."""
    total = 0
    if torch is not None:
        from runai_model_streamer import SafetensorsStreamer

        device = "cuda" if cuda(torch) else "cpu"
        with SafetensorsStreamer() as streamer:
            streamer.stream_files(uris)
            for _, tensor in streamer.get_tensors():
                moved = tensor.to(device, non_blocking=False)
                total += moved.numel() * moved.element_size()
        if device == "cuda":
            torch.cuda.synchronize()
        return total
    for _, view in _raw_stream(uris):
        total += len(view)
    return total


def stand_in_torch() -> None:
    """The streamer's Python modules import torch; on the raw path nothing of it is used."""
    from unittest import mock

    for name in ("torch", "torch.distributed"):
        sys.modules.setdefault(name, mock.MagicMock(name=name))


def streamer_env(endpoint: str, concurrency: int) -> None:
    """What inferplane gives a streaming vLLM container on an S3-compatible store
    (`weight_streaming.streaming_env`), and what vLLM's loader derives
    (``RUNAI_STREAMER_CONCURRENCY``, ``RUNAI_STREAMER_S3_ENDPOINT``)."""
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "measure")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "measure")
    os.environ.setdefault("AWS_REGION", "us-east-1")
    os.environ["AWS_ENDPOINT_URL"] = endpoint
    os.environ["RUNAI_STREAMER_S3_ENDPOINT"] = endpoint
    os.environ["RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING"] = "0"
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    os.environ["RUNAI_STREAMER_CONCURRENCY"] = str(concurrency)


def row(part: str, size: int | None, seconds: float | None, note: str = "") -> dict[str, Any]:
    if size is None or seconds is None:
        return {"part": part, "skipped": note}
    return {
        "part": part,
        "bytes": size,
        "seconds": round(seconds, 3),
        "gb_per_s": round(size / seconds / 1e9, 3),
        **({"note": note} if note else {}),
    }


def measure(gib: float, concurrency: int, work: Path) -> dict[str, Any]:
    torch = _torch()
    gpu = cuda(torch)
    if torch is None:
        stand_in_torch()
    source = work / "store" / BUCKET / PREFIX
    source.mkdir(parents=True)
    shards = write_checkpoint(source, gib)
    rows = []
    dropped = drop_cache(shards)
    size, seconds = timed(lambda: read_files(shards))
    rows.append(row("disk_read", size, seconds, "" if dropped else "page cache not dropped"))
    read_files(shards)  # into the page cache
    if gpu:
        assert torch is not None
        size, seconds = timed(lambda: load_to_gpu(torch, shards))
        rows.append(row("page_cache_to_gpu", size, seconds))
    else:
        rows.append(row("page_cache_to_gpu", None, None, "skipped: no GPU"))
    with s3_standin.StandIn(work / "store") as store:
        streamer_env(store.endpoint, concurrency)
        keys = [f"{PREFIX}{p.name}" for p in shards]
        copied = work / "copied"
        copied.mkdir()
        size, seconds = timed(lambda: copy_from_store(store.endpoint, keys, copied))
        rows.append(row("store_copy", size, seconds, "boto3 download_file onto the disk"))
        copy_s = seconds
        copies = sorted(copied.iterdir())
        drop_cache(copies)
        if gpu:
            assert torch is not None
            size, seconds = timed(lambda: load_to_gpu(torch, copies))
            rows.append(
                row("copy_then_load", size, copy_s + seconds, "store_copy + load from disk")
            )
        else:
            rows.append(row("copy_then_load", None, None, "skipped: no GPU"))
        uris = [f"s3://{BUCKET}/{key}" for key in keys]
        size, seconds = timed(lambda: stream_from_store(torch, uris))
        where = "to the GPU" if gpu else "to CPU memory"
        rows.append(row("store_stream", size, seconds, f"Run:ai streamer {where}"))
        requests = len(store.requests)
    found = {r["part"]: r for r in rows}
    constants: dict[str, float] = {}
    if "gb_per_s" in found["store_copy"]:
        constants["store_read_mb_per_s"] = round(found["store_copy"]["gb_per_s"] * 1000, 1)
    if "gb_per_s" in found["store_stream"] and gpu:
        constants["streamed_gb_per_s"] = found["store_stream"]["gb_per_s"]
    if "gb_per_s" in found["page_cache_to_gpu"]:
        constants["gpu_load_gb_per_s"] = found["page_cache_to_gpu"]["gb_per_s"]
    return {
        "gib": gib,
        "concurrency": concurrency,
        "gpu": gpu,
        "torch": torch is not None,
        "parts": rows,
        "store_requests": requests,
        "constants": constants,
        "caveat": (
            "the stand-in store is on this machine (loopback): no network is in these "
            "numbers; streamed_gb_per_s is printed only when the stream reached a GPU"
        ),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gib", type=float, default=16.0, help="checkpoint size (GiB)")
    parser.add_argument("--concurrency", type=int, default=32, help="the streamer's readers")
    parser.add_argument("--out", type=Path, help="also write the JSON summary here")
    parser.add_argument("--work", type=Path, help="folder for the checkpoint (a temp dir)")
    args = parser.parse_args(argv)
    if args.work:
        args.work.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        result = measure(args.gib, args.concurrency, Path(tmp))
    for r in result["parts"]:
        if "skipped" in r:
            print(f"{r['part']:<18} {r['skipped']}")
        else:
            print(
                f"{r['part']:<18} {r['bytes'] / 1e9:8.3f} GB in {r['seconds']:8.3f} s = "
                f"{r['gb_per_s']:7.3f} GB/s  {r.get('note', '')}"
            )
    print("constants to replace (scale-out-budget policy config):")
    for name, value in result["constants"].items():
        print(f"  {name}: {value}")
    print(f"({result['caveat']})")
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
