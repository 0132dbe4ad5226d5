"""On-demand prices of the GPU instance types the catalog uses, per region.

One row per (instance type, region): US dollars per hour, Linux, on-demand, no discount.
Every row names the page its figure was read from (``source``) and the date that page
states for its figures (``read_on``: when its data was retrieved or generated); a page that
states no date carries the day it was read, and its ``basis`` says so. The table was
compiled on `TABLE_DATE`, which the plan prints next to every cost; the rows are older than
that by as much as their own dates say. A row whose price no readable page stated is left
out: a missing row gives no cost rather than a guess.

The rows come from three machine-readable price lists, each built from the provider's own
price API rather than typed from its pricing page:

- AWS g4dn, g5, g6, g6e: SkyPilot's AWS catalog (`SKYPILOT_AWS`), column ``Price`` of the
  us-east-1 rows (identical in every zone of the region).
- AWS p4d, p5: data-receipts' hyperscaler rows (`DATA_RECEIPTS`), ``usd_per_hour``. AWS cut
  its P4d and P5 on-demand prices by up to 45% in June 2025
  (https://www.usage.ai/blogs/aws/ai-ml-cost/llm-cost-optimization-aws/); these rows were
  retrieved after the cut.
- GCP g2-standard-*, a3-highgpu-*: Cyclenerd's Compute Engine price list (`CYCLENERD_GCP`),
  ``compute.instance.<machine type>.cost.us-central1.hour``, which adds the machine type's
  GPUs, vCPUs and memory SKUs from the Cloud Billing Catalog.

``derived`` rows (none at present) would not be listed as such by any source: their basis
would say how they follow from a listed row.

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

SKYPILOT_AWS: Final = (
    "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/"
    "00148f2af3672e2229b4f7bf8157d5a3f36e3c35/catalogs/v8/aws/vms.csv"
)
DATA_RECEIPTS: Final = (
    "https://raw.githubusercontent.com/datareceipts/data-receipts/main/"
    "109-gpu-pricing/hyperscalers.json"
)
CYCLENERD_GCP: Final = (
    "https://raw.githubusercontent.com/Cyclenerd/google-cloud-pricing-cost-calculator/"
    "0166a59ebba7c36f2cc8c931d9f258dcebc44776/pricing.yml"
)

_UNDATED: Final = f"listed; the catalog states no date, read on {TABLE_DATE}"
_RETRIEVED: Final = "2026-11-09"
"""data-receipts' ``"retrieved"`` field."""
_GENERATED: Final = "2025-03-06"
"""Cyclenerd's ``about.generated`` field (Thu Mar  6 03:53:56 2025)."""


@dataclass(frozen=True)
class Price:
    usd_per_hour: float
    source: str
    read_on: str
    """The date the source states for its figures, or the day it was read if it states none."""
    basis: str = "listed"
    """``listed`` (the source shows the figure), or how it was derived."""


def _aws(usd: float) -> Price:
    return Price(usd, SKYPILOT_AWS, TABLE_DATE, _UNDATED)


def _gcp(usd: float) -> Price:
    return Price(usd, CYCLENERD_GCP, _GENERATED)


_ROWS: Final[dict[tuple[str, str], Price]] = {
    # AWS, US East (N. Virginia), Linux on-demand
    ("g4dn.2xlarge", "us-east-1"): _aws(0.752),
    ("g4dn.12xlarge", "us-east-1"): _aws(3.912),
    ("g4dn.metal", "us-east-1"): _aws(7.824),
    ("g5.2xlarge", "us-east-1"): _aws(1.212),
    ("g5.12xlarge", "us-east-1"): _aws(5.672),
    ("g5.48xlarge", "us-east-1"): _aws(16.288),
    ("g6.2xlarge", "us-east-1"): _aws(0.9776),
    ("g6.12xlarge", "us-east-1"): _aws(4.6016),
    ("g6.48xlarge", "us-east-1"): _aws(13.3504),
    ("g6e.2xlarge", "us-east-1"): _aws(2.24208),
    ("g6e.12xlarge", "us-east-1"): _aws(10.49264),
    ("g6e.48xlarge", "us-east-1"): _aws(30.13118),
    ("p4d.24xlarge", "us-east-1"): Price(21.957642, DATA_RECEIPTS, _RETRIEVED),
    ("p5.48xlarge", "us-east-1"): Price(55.04, DATA_RECEIPTS, _RETRIEVED),
    # GCP, us-central1, on-demand machine types (GPUs included in A3 and G2)
    ("g2-standard-8", "us-central1"): _gcp(0.853624271),
    ("g2-standard-24", "us-central1"): _gcp(2.000832574),
    ("g2-standard-48", "us-central1"): _gcp(4.001665148),
    ("g2-standard-96", "us-central1"): _gcp(8.003330296),
    ("a3-highgpu-4g", "us-central1"): _gcp(44.2449999512877),
    ("a3-highgpu-8g", "us-central1"): _gcp(88.4899999025753),
}

PRICES: Final[Mapping[tuple[str, str], Price]] = MappingProxyType(_ROWS)
"""(instance type, region) -> price."""


def price(instance_type: str, region: str) -> Price | None:
    return PRICES.get((instance_type, region))
