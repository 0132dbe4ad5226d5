"""The built-in GPU catalog: what each supported GPU is, and what runs it on each cloud.

Facts per GPU: memory, architecture and CUDA compute capability, the MIG profiles it
offers (with how many slices of each fit one GPU), and per cloud the instance (AWS) or
machine type (GCP) for each GPU count. A GPU a cloud does not offer has no entry there.

On AWS the GPUs come with the instance type. On GCP, A2/A3/A4/G2 machine types come with
their GPUs attached; T4 is attached to an N1 machine as a guest accelerator.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from inferplane.blueprint import releases


@dataclass(frozen=True)
class GpuType:
    """One GPU model as the catalog knows it."""

    id: str
    """Blueprint name, e.g. ``nvidia-l4``."""
    display_name: str
    memory_gib: int
    architecture: str
    compute_capability: str
    mig_profiles: Mapping[str, int] = field(default_factory=dict)
    """MIG profile -> slices of that profile in one GPU (empty: no MIG)."""
    aws_instances: Mapping[int, str] = field(default_factory=dict)
    """GPUs per node -> EC2 instance type."""
    gcp_machines: Mapping[int, str] = field(default_factory=dict)
    """GPUs per node -> GCE machine type."""
    gcp_accelerator: str | None = None
    """GCE accelerator type (``guest_accelerators[].type``)."""

    @property
    def supports_mig(self) -> bool:
        return bool(self.mig_profiles)

    @property
    def cc_major_minor(self) -> tuple[int, int]:
        major, minor = self.compute_capability.split(".")
        return int(major), int(minor)

    @property
    def supports_bf16(self) -> bool:
        return self.cc_major_minor >= (8, 0)

    @property
    def supports_fp8(self) -> bool:
        """FP8 tensor cores: Ada (8.9), Hopper (9.0) and later."""
        return self.cc_major_minor >= (8, 9)

    def instance_type(self, cloud: str, gpus_per_node: int) -> str | None:
        table = self.aws_instances if cloud == "aws" else self.gcp_machines
        return table.get(gpus_per_node)

    def gpu_counts(self, cloud: str) -> tuple[int, ...]:
        table = self.aws_instances if cloud == "aws" else self.gcp_machines
        return tuple(sorted(table))


def _ro(d: dict[Any, Any]) -> Mapping[Any, Any]:
    return MappingProxyType(d)


_A100_80_MIG = {"1g.10gb": 7, "1g.20gb": 4, "2g.20gb": 3, "3g.40gb": 2, "4g.40gb": 1, "7g.80gb": 1}

GPUS: Mapping[str, GpuType] = _ro(
    {
        g.id: g
        for g in (
            GpuType(
                "nvidia-t4",
                "NVIDIA T4",
                16,
                "turing",
                "7.5",
                aws_instances=_ro({1: "g4dn.2xlarge", 4: "g4dn.12xlarge", 8: "g4dn.metal"}),
                gcp_machines=_ro({1: "n1-standard-8", 2: "n1-standard-16", 4: "n1-standard-32"}),
                gcp_accelerator="nvidia-tesla-t4",
            ),
            GpuType(
                "nvidia-a10g",
                "NVIDIA A10G",
                24,
                "ampere",
                "8.6",
                aws_instances=_ro({1: "g5.2xlarge", 4: "g5.12xlarge", 8: "g5.48xlarge"}),
            ),
            GpuType(
                "nvidia-l4",
                "NVIDIA L4",
                24,
                "ada-lovelace",
                "8.9",
                aws_instances=_ro({1: "g6.2xlarge", 4: "g6.12xlarge", 8: "g6.48xlarge"}),
                gcp_machines=_ro(
                    {
                        1: "g2-standard-8",
                        2: "g2-standard-24",
                        4: "g2-standard-48",
                        8: "g2-standard-96",
                    }
                ),
                gcp_accelerator="nvidia-l4",
            ),
            GpuType(
                "nvidia-l40s",
                "NVIDIA L40S",
                48,
                "ada-lovelace",
                "8.9",
                aws_instances=_ro({1: "g6e.2xlarge", 4: "g6e.12xlarge", 8: "g6e.48xlarge"}),
            ),
            GpuType(
                "nvidia-a100-40gb",
                "NVIDIA A100 40GB",
                40,
                "ampere",
                "8.0",
                mig_profiles=_ro(
                    {
                        "1g.5gb": 7,
                        "1g.10gb": 4,
                        "2g.10gb": 3,
                        "3g.20gb": 2,
                        "4g.20gb": 1,
                        "7g.40gb": 1,
                    }
                ),
                aws_instances=_ro({8: "p4d.24xlarge"}),
                gcp_machines=_ro(
                    {
                        1: "a2-highgpu-1g",
                        2: "a2-highgpu-2g",
                        4: "a2-highgpu-4g",
                        8: "a2-highgpu-8g",
                        16: "a2-megagpu-16g",
                    }
                ),
                gcp_accelerator="nvidia-tesla-a100",
            ),
            GpuType(
                "nvidia-a100-80gb",
                "NVIDIA A100 80GB",
                80,
                "ampere",
                "8.0",
                mig_profiles=_ro(dict(_A100_80_MIG)),
                aws_instances=_ro({8: "p4de.24xlarge"}),
                gcp_machines=_ro(
                    {
                        1: "a2-ultragpu-1g",
                        2: "a2-ultragpu-2g",
                        4: "a2-ultragpu-4g",
                        8: "a2-ultragpu-8g",
                    }
                ),
                gcp_accelerator="nvidia-a100-80gb",
            ),
            GpuType(
                "nvidia-h100-80gb",
                "NVIDIA H100 80GB",
                80,
                "hopper",
                "9.0",
                mig_profiles=_ro(dict(_A100_80_MIG)),
                aws_instances=_ro({1: "p5.4xlarge", 8: "p5.48xlarge"}),
                gcp_machines=_ro(
                    {1: "a3-highgpu-1g", 2: "a3-highgpu-2g", 4: "a3-highgpu-4g", 8: "a3-highgpu-8g"}
                ),
                gcp_accelerator="nvidia-h100-80gb",
            ),
            GpuType(
                "nvidia-h200",
                "NVIDIA H200 141GB",
                141,
                "hopper",
                "9.0",
                mig_profiles=_ro(
                    {
                        "1g.18gb": 7,
                        "1g.35gb": 4,
                        "2g.35gb": 3,
                        "3g.71gb": 2,
                        "4g.71gb": 1,
                        "7g.141gb": 1,
                    }
                ),
                aws_instances=_ro({8: "p5en.48xlarge"}),
                gcp_machines=_ro({8: "a3-ultragpu-8g"}),
                gcp_accelerator="nvidia-h200-141gb",
            ),
            GpuType(
                "nvidia-b200",
                "NVIDIA B200",
                180,
                "blackwell",
                "10.0",
                mig_profiles=_ro(
                    {
                        "1g.23gb": 7,
                        "1g.45gb": 4,
                        "2g.45gb": 3,
                        "3g.90gb": 2,
                        "4g.90gb": 1,
                        "7g.180gb": 1,
                    }
                ),
                aws_instances=_ro({8: "p6-b200.48xlarge"}),
                gcp_machines=_ro({8: "a4-highgpu-8g"}),
                gcp_accelerator="nvidia-b200",
            ),
        )
    }
)


_GB_IN_GIB = 10**9 / 2**30

LOCAL_NVME: Mapping[str, tuple[int, int, str]] = _ro(
    {
        # AWS instance store, "<disks> x <size> GB NVMe SSD" (decimal GB): the EC2 instance
        # types guide, https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html
        # ("Instance store specifications"). g4dn/g5/g6/g6e rows were checked against a
        # copy of the EC2 pricing data's "storage" attribute (an aws-cdk-style instance list,
        # e.g. "g6.48xlarge ... Storage: 8 x 940 NVMe SSD"); the p4d/p4de/p5/p5en/p6 rows
        # were not re-read here.
        "g4dn.2xlarge": (1, 225, "GB"),
        "g4dn.12xlarge": (1, 900, "GB"),
        "g4dn.metal": (2, 900, "GB"),
        "g5.2xlarge": (1, 450, "GB"),
        "g5.12xlarge": (1, 3800, "GB"),
        "g5.48xlarge": (2, 3800, "GB"),
        "g6.2xlarge": (1, 450, "GB"),
        "g6.12xlarge": (4, 940, "GB"),
        "g6.48xlarge": (8, 940, "GB"),
        "g6e.2xlarge": (1, 450, "GB"),
        "g6e.12xlarge": (2, 1900, "GB"),
        "g6e.48xlarge": (4, 1900, "GB"),
        "p4d.24xlarge": (8, 1000, "GB"),
        "p4de.24xlarge": (8, 1000, "GB"),
        "p5.4xlarge": (1, 3840, "GB"),
        "p5.48xlarge": (8, 3840, "GB"),
        "p5en.48xlarge": (8, 3840, "GB"),
        "p6-b200.48xlarge": (8, 3840, "GB"),
        # GCE Local SSD that comes with the machine type (375 GiB disks):
        # https://cloud.google.com/compute/docs/accelerator-optimized-machines and
        # https://cloud.google.com/compute/docs/disks/local-ssd. A2 Standard (a2-highgpu,
        # a2-megagpu), G2 and N1 machines can *attach* Local SSD but come without it: 0
        # here, since inferplane's node pools attach none. a3-highgpu-8g (16 disks) was
        # checked against a public machine table; the other rows were not re-read here.
        "a2-ultragpu-1g": (1, 375, "GiB"),
        "a2-ultragpu-2g": (2, 375, "GiB"),
        "a2-ultragpu-4g": (4, 375, "GiB"),
        "a2-ultragpu-8g": (8, 375, "GiB"),
        "a3-highgpu-1g": (2, 375, "GiB"),
        "a3-highgpu-2g": (4, 375, "GiB"),
        "a3-highgpu-4g": (8, 375, "GiB"),
        "a3-highgpu-8g": (16, 375, "GiB"),
        "a3-ultragpu-8g": (32, 375, "GiB"),
        "a4-highgpu-8g": (32, 375, "GiB"),
    }
)
"""Instance type -> (disks, size per disk, unit) of the node-local NVMe / Local SSD it comes
with. Types not listed have none. Recorded only: inferplane's node pools do not format or
mount it (EKS needs a local-storage setup in the node bootstrap, GKE an ephemeral-storage
Local SSD config), so weights are copied to the pod's emptyDir on the boot disk."""


def local_nvme_gib(instance_type: str | None) -> int:
    """GiB of node-local NVMe (AWS instance store) or bundled Local SSD (GCE) that
    `instance_type` comes with; 0 when none or unknown (`LOCAL_NVME`)."""
    found = LOCAL_NVME.get(instance_type or "")
    if found is None:
        return 0
    disks, size, unit = found
    return disks * size if unit == "GiB" else int(disks * size * _GB_IN_GIB)


def gpu(gpu_id: str) -> GpuType:
    """The catalog entry for `gpu_id`; KeyError when unknown (the schema prevents that)."""
    return GPUS[gpu_id]


def instance_family(cloud: str, instance_type: str) -> str:
    """The family that decides an instance's GPU: AWS ``g6.2xlarge`` -> ``g6``; GCP
    ``a2-ultragpu-1g`` -> ``a2-ultragpu`` (the tier decides 40 or 80 GB), and any N1
    machine -> ``n1`` (T4s are attached to N1 machines as guest accelerators)."""
    if cloud == "aws":
        return instance_type.split(".", 1)[0]
    if instance_type.startswith("n1-"):
        return "n1"
    return instance_type.rsplit("-", 1)[0]


def instance_gpus(cloud: str, instance_type: str) -> tuple[GpuType, int | None] | None:
    """(GPU, GPUs per node) that `instance_type` carries: the count when the catalog lists
    that exact type, None when only its family is known; None for a family without a
    catalog GPU."""
    for entry in GPUS.values():
        table = entry.aws_instances if cloud == "aws" else entry.gcp_machines
        for count, known in table.items():
            if known == instance_type:
                return entry, count
    family = instance_family(cloud, instance_type)
    for entry in GPUS.values():
        table = entry.aws_instances if cloud == "aws" else entry.gcp_machines
        if any(instance_family(cloud, known) == family for known in table.values()):
            return entry, None
    return None


_FAMILY = re.compile(r"(?:nvidia|tesla|[-_ ])*([a-z]+\d+[a-z]?)(?:[-_ ]*(\d+)\s*(?:gi?b?)?)?")


def suggest(text: str) -> tuple[str, ...]:
    """Catalog GPUs `text` most likely means, by family and memory rather than spelling:
    ``nvidia-h100`` -> nvidia-h100-80gb; ``a100`` -> both A100s; ``a100-80`` -> the 80 GB
    one. Empty when no catalog GPU is of that family."""
    found = _FAMILY.match(text.strip().lower())
    if found is None:
        return ()
    family, memory = found.group(1), found.group(2)
    same = [g for g in GPUS.values() if _family_of(g) == family]
    if memory is not None:
        exact = [g for g in same if g.memory_gib == int(memory)]
        same = exact or same
    return tuple(sorted(g.id for g in same))


def _family_of(entry: GpuType) -> str:
    """``nvidia-a100-80gb`` -> ``a100``; ``nvidia-l40s`` -> ``l40s``."""
    return entry.id.removeprefix("nvidia-").split("-", 1)[0]


# --- NGC releases -------------------------------------------------------------------------
# The Triton and TensorRT containers of one NGC release (YY.MM) ship the same TensorRT.
# Engines must be built with that TensorRT: it decides how precision is requested.
# TensorRT 10.x takes builder precision flags; 11.x builds strongly typed networks only.
# The supported releases' TensorRT is the `tensorrt` of their row in releases.json (with its
# source); these are the earlier releases a custom image's `base_release` may still name.
_TENSORRT_BEFORE_THE_TABLE: tuple[tuple[str, str], ...] = (
    ("24.05", "10.0"),
    ("24.08", "10.3"),
    ("24.12", "10.7"),
    ("25.01", "10.8"),
    ("25.05", "10.10"),
)


@functools.cache
def tensorrt_by_release() -> tuple[tuple[str, str], ...]:
    """(release, TensorRT) of every known NGC release, oldest first: the earlier ones above
    and the release table's."""
    table = [(r.release, r.tensorrt or "") for r in releases.engine_releases("triton")]
    rows = [*_TENSORRT_BEFORE_THE_TABLE, *table]
    return tuple(sorted(rows, key=lambda row: _release_key(row[0])))


def tensorrt_version(release: str) -> str:
    """The TensorRT version in the NGC containers of `release` (the newest known at or before it).

    Releases before the first known one are treated as the first; a new release only needs
    its row in releases.json.
    """
    rows = tensorrt_by_release()
    chosen = rows[0][1]
    key = _release_key(release)
    for rel, trt in rows:
        if _release_key(rel) <= key:
            chosen = trt
    return chosen


def onnx_conversion(precision: str) -> str:
    """How an ONNX model gets into `precision` ("Migrating from TensorRT 10.x to 11.x",
    docs.nvidia.com/deeplearning/tensorrt/11.0.0: ModelOpt AutoCast for fp16/bf16, explicit
    quantization with Q/DQ nodes for the rest)."""
    if precision in ("fp16", "bf16"):
        return (
            "python -m modelopt.onnx.autocast --onnx_path model.onnx "
            f"--low_precision_type {precision}"
        )
    return (
        "quantize it with Q/DQ nodes, e.g. with TensorRT Model Optimizer; the layers it leaves "
        "unquantized run in the types the ONNX model gives them"
    )


NGC_RELEASE = re.compile(r"^\d{2}\.\d{2}$")
"""An NGC release as a Triton image's `base_release` names it (``26.02``)."""
NGC_TRITON_IMAGE = re.compile(
    r"^nvcr\.io/nvidia/tritonserver:(\d{2}\.\d{2})(-[A-Za-z0-9_.-]+)?(@sha256:[0-9a-f]{64})?$"
)
"""An NGC Triton image by tag (``nvcr.io/nvidia/tritonserver:25.08-py3``), the tag optionally
pinned to a digest: its release is the tag's ``YY.MM``; group 2 is the variant
(``-py3``, ``-trtllm-python-py3``, ...)."""


def ngc_triton_release(image: str) -> str | None:
    """``25.06`` of ``nvcr.io/nvidia/tritonserver:25.06-py3``; None for any other image."""
    match = NGC_TRITON_IMAGE.match(image)
    return match.group(1) if match else None


def tensorrt_major(release: str) -> int:
    return int(tensorrt_version(release).split(".")[0])


def _release_key(release: str) -> tuple[int, int]:
    year, month = release.split(".")[:2]
    return int(year), int(month)
