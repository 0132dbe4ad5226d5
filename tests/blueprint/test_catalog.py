"""The GPU catalog: every supported GPU with facts that resolution and components rely on."""

from __future__ import annotations

import pytest

from inferplane.blueprint import catalog
from inferplane.blueprint.catalog import GPUS, tensorrt_major, tensorrt_version

REQUIRED = (
    "nvidia-t4",
    "nvidia-a10g",
    "nvidia-l4",
    "nvidia-l40s",
    "nvidia-a100-40gb",
    "nvidia-a100-80gb",
    "nvidia-h100-80gb",
    "nvidia-h200",
    "nvidia-b200",
)


def test_supported_gpus() -> None:
    assert set(REQUIRED) <= set(GPUS)


@pytest.mark.parametrize("gpu_id", REQUIRED)
def test_each_gpu_runs_somewhere_and_mig_slices_fit(gpu_id: str) -> None:
    gpu = GPUS[gpu_id]
    assert gpu.aws_instances or gpu.gcp_machines
    if gpu.gcp_machines:
        assert gpu.gcp_accelerator
    for profile, count in gpu.mig_profiles.items():
        compute, memory = profile.split(".")
        assert 1 <= count <= 7 and compute.endswith("g") and memory.endswith("gb")


def test_known_instance_types() -> None:
    assert GPUS["nvidia-l4"].instance_type("aws", 1) == "g6.2xlarge"
    assert GPUS["nvidia-l4"].instance_type("gcp", 1) == "g2-standard-8"
    assert GPUS["nvidia-h100-80gb"].instance_type("aws", 8) == "p5.48xlarge"
    assert GPUS["nvidia-a100-40gb"].instance_type("aws", 8) == "p4d.24xlarge"
    assert GPUS["nvidia-t4"].instance_type("gcp", 1) == "n1-standard-8"
    assert GPUS["nvidia-a10g"].instance_type("gcp", 1) is None


def test_precision_support_follows_compute_capability() -> None:
    assert not GPUS["nvidia-t4"].supports_bf16
    assert GPUS["nvidia-a100-80gb"].supports_bf16 and not GPUS["nvidia-a100-80gb"].supports_fp8
    assert GPUS["nvidia-l4"].supports_fp8 and GPUS["nvidia-h100-80gb"].supports_fp8
    assert not GPUS["nvidia-l4"].supports_mig and GPUS["nvidia-h100-80gb"].supports_mig


def test_tensorrt_of_an_ngc_release() -> None:
    assert tensorrt_version("25.08") == "10.13"
    assert tensorrt_major("25.08") == 10
    assert tensorrt_major("26.02") == 10  # TensorRT 11.0 went GA after 26.02 (2026-06-02)
    assert tensorrt_version("23.01") == "10.0"  # older than the table: its first row


def test_tensorrt_of_the_26_07_release_is_11_1() -> None:
    """nvcr.io/nvidia/tensorrt:26.07-py3 is TensorRT 11.1.0.106 (NVIDIA/TensorRT-Model-Connect
    Dockerfile.dev.x86 at e9132e79fba1 asserts it of the image); a later release not in the
    table reads as the newest row."""
    assert tensorrt_version("26.07") == "11.1"
    assert tensorrt_major("26.07") == 11
    assert tensorrt_version("26.08") == "11.1"


def test_local_nvme_of_the_catalog_instance_types() -> None:
    # AWS sizes are decimal GB (2 x 3800 GB = 7078 GiB); GCE Local SSD disks are 375 GiB.
    assert catalog.local_nvme_gib("g5.48xlarge") == 7078
    assert catalog.local_nvme_gib("g6.2xlarge") == 419
    assert catalog.local_nvme_gib("p5.48xlarge") == 28610
    assert catalog.local_nvme_gib("a3-highgpu-8g") == 6000
    # Local SSD a machine can attach but does not come with, or none at all: 0.
    assert catalog.local_nvme_gib("g2-standard-8") == 0
    assert catalog.local_nvme_gib("a2-highgpu-1g") == 0
    assert catalog.local_nvme_gib("n1-standard-8") == 0
    assert catalog.local_nvme_gib(None) == 0
    # Every row names an instance type of the catalog.
    known = {
        t
        for g in catalog.GPUS.values()
        for t in (*g.aws_instances.values(), *g.gcp_machines.values())
    }
    assert set(catalog.LOCAL_NVME) <= known


def test_an_ngc_triton_image_pinned_to_a_digest_keeps_its_tags_release() -> None:
    digest = "@sha256:" + "a" * 64
    assert catalog.ngc_triton_release("nvcr.io/nvidia/tritonserver:26.07-py3" + digest) == "26.07"
    assert catalog.ngc_triton_release("nvcr.io/nvidia/tritonserver:26.07-py3@sha256:abc") is None
    assert catalog.ngc_triton_release("nvcr.io/other/tritonserver:26.07-py3" + digest) is None
