"""On-demand prices of the GPU instance types the catalog uses, per region.

One row per (instance type, region): US dollars per hour, Linux, on-demand, no discount,
with the page the price was read from and the day it was read. Prices change (AWS cut its
P4d and P5 on-demand prices by up to 45% in June 2025, which the row of p5.48xlarge already
reflects: https://www.usage.ai/blogs/aws/ai-ml-cost/llm-cost-optimization-aws/), so the
plan prints `TABLE_DATE` next to every cost, and a missing row gives no cost rather than a
guess. ``derived`` rows are not listed as such by the provider: their basis says how they
follow from a listed row.

A GKE node pays for its machine type only (the GPUs are part of A2/A3/G2 machine types); an
EKS node pays for its instance. Control planes, disks, load balancers and traffic are not
counted: the figures are the GPU nodes' share of the bill, the part that scales with the
model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

TABLE_DATE: Final = "2026-12-01"
"""The day the table was compiled: the plan prints it next to every cost."""

AWS_ON_DEMAND: Final = "https://aws.amazon.com/ec2/pricing/on-demand/"
GCP_ON_DEMAND: Final = "https://cloud.google.com/compute/vm-instance-pricing#accelerator-optimized"
GCP_N1_GPU: Final = "https://cloud.google.com/compute/gpus-pricing"


@dataclass(frozen=True)
class Price:
    usd_per_hour: float
    source: str
    read_on: str
    basis: str = "listed"
    """``listed`` (the provider's page shows the figure), or how it was derived."""


_ROWS: Final[dict[tuple[str, str], Price]] = {
    # AWS, US East (N. Virginia), Linux on-demand
    ("g4dn.2xlarge", "us-east-1"): Price(0.752, AWS_ON_DEMAND, TABLE_DATE),
    ("g4dn.12xlarge", "us-east-1"): Price(3.912, AWS_ON_DEMAND, TABLE_DATE),
    ("g4dn.metal", "us-east-1"): Price(7.824, AWS_ON_DEMAND, TABLE_DATE),
    ("g5.2xlarge", "us-east-1"): Price(1.212, AWS_ON_DEMAND, TABLE_DATE),
    ("g5.12xlarge", "us-east-1"): Price(5.672, AWS_ON_DEMAND, TABLE_DATE),
    ("g5.48xlarge", "us-east-1"): Price(16.288, AWS_ON_DEMAND, TABLE_DATE),
    ("g6.2xlarge", "us-east-1"): Price(0.9776, AWS_ON_DEMAND, TABLE_DATE),
    ("g6.12xlarge", "us-east-1"): Price(4.6016, AWS_ON_DEMAND, TABLE_DATE),
    ("g6.48xlarge", "us-east-1"): Price(13.3504, AWS_ON_DEMAND, TABLE_DATE),
    ("g6e.2xlarge", "us-east-1"): Price(2.24208, AWS_ON_DEMAND, TABLE_DATE),
    ("g6e.12xlarge", "us-east-1"): Price(10.49264, AWS_ON_DEMAND, TABLE_DATE),
    ("g6e.48xlarge", "us-east-1"): Price(30.13118, AWS_ON_DEMAND, TABLE_DATE),
    ("p4d.24xlarge", "us-east-1"): Price(21.96, AWS_ON_DEMAND, TABLE_DATE),
    ("p5.48xlarge", "us-east-1"): Price(55.04, AWS_ON_DEMAND, TABLE_DATE),
    # GCP, us-central1, on-demand machine types (GPUs included in A3 and G2)
    ("g2-standard-8", "us-central1"): Price(0.85375, GCP_ON_DEMAND, TABLE_DATE),
    ("g2-standard-24", "us-central1"): Price(2.00004, GCP_ON_DEMAND, TABLE_DATE),
    ("g2-standard-48", "us-central1"): Price(4.00008, GCP_ON_DEMAND, TABLE_DATE),
    ("g2-standard-96", "us-central1"): Price(8.00016, GCP_ON_DEMAND, TABLE_DATE),
    ("a3-highgpu-8g", "us-central1"): Price(88.2488, GCP_ON_DEMAND, TABLE_DATE),
    ("a3-highgpu-4g", "us-central1"): Price(
        44.1244,
        GCP_ON_DEMAND,
        TABLE_DATE,
        "derived: half of a3-highgpu-8g (A3 High prices its GPUs, vCPUs and memory per unit, "
        "and the 4g shape has half of each)",
    ),
}

PRICES: Final[Mapping[tuple[str, str], Price]] = MappingProxyType(_ROWS)
"""(instance type, region) -> price."""


def price(instance_type: str, region: str) -> Price | None:
    return PRICES.get((instance_type, region))
