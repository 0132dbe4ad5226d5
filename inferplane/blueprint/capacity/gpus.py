"""Peak dense tensor throughput and memory bandwidth of each catalog GPU.

The roofline estimate (`inferplane.blueprint.capacity.roofline`) needs two numbers per GPU:
how many floating-point operations a second its tensor cores do on dense (not 2:4 sparse)
matrices, in the 16-bit and 8-bit formats, and how many bytes a second its memory delivers.
NVIDIA's datasheets print the tensor figures "with sparsity" (footnote: "Shown with
sparsity. Specifications are one-half lower without sparsity"), so every figure below is
half the datasheet's. Each row cites its datasheet; `checked` names the public copy the
numbers were compared against where one was read, and is empty where they were not.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final


@dataclass(frozen=True)
class GpuPeak:
    """Dense peaks of one GPU."""

    bf16_tflops: float
    """Dense BF16/FP16 tensor TFLOPS (FP16 for GPUs without BF16)."""
    fp8_tflops: float | None
    """Dense FP8 tensor TFLOPS; None: no FP8 tensor cores (FP8 weights compute in 16 bits)."""
    bandwidth_gb_s: float
    """Memory bandwidth, GB/s (decimal)."""
    source: str
    checked: str = ""


PEAKS: Final[Mapping[str, GpuPeak]] = MappingProxyType(
    {
        # T4: 65 TFLOPS mixed-precision FP16 tensor (dense; Turing has no sparsity), 320 GB/s
        "nvidia-t4": GpuPeak(65, None, 320, "https://www.nvidia.com/en-us/data-center/tesla-t4/"),
        # A10G: AWS's variant of the A10, without a datasheet of its own; the A10's figures
        # (125 TFLOPS BF16 dense, 600 GB/s) are the upper end for it
        "nvidia-a10g": GpuPeak(
            125, None, 600, "https://www.nvidia.com/en-us/data-center/products/a10-gpu/"
        ),
        # L4: 242 TFLOPS BF16 / 485 FP8 with sparsity, 300 GB/s
        "nvidia-l4": GpuPeak(
            121,
            242,
            300,
            "https://www.nvidia.com/en-us/data-center/l4/",
            "https://www.yobitel.com/knowledge-base/nvidia-l4 (121 BF16, 242 FP8 dense, 300 GB/s)",
        ),
        # L40S: 733 TFLOPS BF16 / 1,466 FP8 with sparsity, 864 GB/s
        "nvidia-l40s": GpuPeak(
            362,
            733,
            864,
            "https://www.nvidia.com/en-us/data-center/l40s/",
            "https://grokipedia.com/page/NVIDIA_L4_vs_L40S (1,466 FP8 sparse, 864 GB/s)",
        ),
        # A100 SXM: 624 TFLOPS BF16 with sparsity; 1,555 GB/s (40GB), 2,039 GB/s (80GB)
        "nvidia-a100-40gb": GpuPeak(
            312, None, 1555, "https://www.nvidia.com/en-us/data-center/a100/"
        ),
        "nvidia-a100-80gb": GpuPeak(
            312, None, 2039, "https://www.nvidia.com/en-us/data-center/a100/"
        ),
        # H100 SXM (p5, a3-highgpu): 1,979 TFLOPS BF16 / 3,958 FP8 with sparsity, 3.35 TB/s
        "nvidia-h100-80gb": GpuPeak(
            989,
            1979,
            3350,
            "https://www.nvidia.com/en-us/data-center/h100/",
            "https://glennklockwood.com/garden/processors/h100 (989.4 BF16 dense); "
            "https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html (3,350 GB/s)",
        ),
        # H200 SXM: the H100's tensor cores with 4.8 TB/s HBM3e
        "nvidia-h200": GpuPeak(989, 1979, 4800, "https://www.nvidia.com/en-us/data-center/h200/"),
        # B200 (HGX B200, per GPU): 72 PFLOPS FP8 and 36 PFLOPS BF16 with sparsity for eight
        # GPUs, 64 TB/s of HBM3e for eight
        "nvidia-b200": GpuPeak(2250, 4500, 8000, "https://www.nvidia.com/en-us/data-center/hgx/"),
    }
)
"""Catalog GPU id -> its dense peaks."""


def peak(gpu: str) -> GpuPeak | None:
    return PEAKS.get(gpu)


@dataclass(frozen=True)
class KernelFloor:
    """What a GPU's kernels measurably do, with no engine around them (the floor under any
    serving engine): the roofline on this GPU is never faster than it (`roofline`)."""

    bandwidth_gb_s: float
    """Bytes per second one GPU's decode kernels read, beside the fixed per-layer time
    (`roofline.LAYER_TIME_S`), GB/s."""
    fast_band: float
    """How much faster than the estimate the measured kernels ran, at most: the band's
    optimistic end on this GPU."""
    source: str


CALIBRATION_DIR: Final = "scripts/calibration"
"""Where the measured tables live (README, scripts and raw results of each GPU)."""

KERNEL_FLOORS: Final[Mapping[str, KernelFloor]] = MappingProxyType(
    {
        # H200 (2026-12-04): 16 rows of results-sizes.json (llama-3.2-1b, qwen2.5-1.5b,
        # qwen2.5-7b, llama-3.1-70b) fix 3.11 TB/s with `roofline.LAYER_TIME_S`: the
        # bandwidth with which, at the smallest per-layer time leaving no row faster than the
        # estimate, the slowest-estimated row is closest (estimate / measured 1.00-1.40). The
        # 15 rows of results-llama-3.1-8b.json, held out of that fit, lie at 1.01-1.42: the
        # fastest, decode of 16 sequences at 4,096 tokens (6.68 ms measured, 9.5 estimated),
        # sets the optimistic end at +43%.
        "nvidia-h200": KernelFloor(
            3110, 0.43, f"{CALIBRATION_DIR}/h200: results-sizes.json, results-llama-3.1-8b.json"
        ),
    }
)
"""Catalog GPU id -> its measured kernel floor; a GPU without a row has no calibration."""
