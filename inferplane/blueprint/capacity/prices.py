"""On-demand prices of the GPU instance types the catalog uses, per region.

One row per (instance type, region): US dollars per hour, Linux, on-demand, no discount.
Every row names the page its figure was read from (``source``) and the date that page
states for its figures (``read_on``: when its data was retrieved or generated); a page that
states no date carries the day it was read, and its ``basis`` says so. The table was
compiled on `TABLE_DATE`, which the plan prints next to every cost; the rows are older than
that by as much as their own dates say. A row whose price no readable page stated is left
out: a missing row gives no cost rather than a guess, and the plan names it and how the
platform adds it (``capacity-estimate.prices`` in its policy config, `platform_rows`).

The rows come from four machine-readable price lists, each built from the provider's own
price API rather than typed from its pricing page:

- AWS g4dn, g5, g6, g6e: SkyPilot's AWS catalog (`SKYPILOT_AWS`), column ``Price`` of the
  us-east-1 rows (identical in every zone of the region).
- AWS p4d, p5: data-receipts' hyperscaler rows (`DATA_RECEIPTS`), ``usd_per_hour``. AWS cut
  its P4d and P5 on-demand prices by up to 45% in June 2025
  (https://www.usage.ai/blogs/aws/ai-ml-cost/llm-cost-optimization-aws/); these rows were
  retrieved after the cut.
- AWS p5.4xlarge, p5en, p6-b200, p4de and the regions beyond us-east-1: the same SkyPilot
  catalog at a later commit (`SKYPILOT_AWS_E385`). A region it does not list for a type has
  no row: g5 in us-west-1 and eu-west-3; g6 in us-west-1 and eu-west-1; g6e in us-west-1 and
  eu-west-1/2/3; p4d in us-west-1, eu-north-1, eu-west-2/3; p4de beyond us-east-1, us-west-2
  and eu-central-1; p5.48xlarge in eu-central-1, eu-west-1/3; p5.4xlarge beyond us-east-1/2,
  us-west-2 and eu-west-2; p5en in eu-central-1 and eu-west-1/2/3; p6-b200 beyond us-east-1/2
  and us-west-2.
- GCP g2-standard-*, a2-*, a3-highgpu-*: Cyclenerd's Compute Engine price list (`CYCLENERD_GCP`),
  ``compute.instance.<machine type>.cost.<region>.hour``, which adds the machine type's
  GPUs, vCPUs and memory SKUs from the Cloud Billing Catalog. Rows only where
  upstream/gcp_zones.json has the GPU in the region (the list also prices machine types in
  regions that do not offer them). The list at a later commit (`CYCLENERD_GCP_2026`,
  generated 2026-07-30) states the same figure for every one of these rows.
- GCP N1 machine types with T4s: ``derived`` (`_n1_t4`), since GCE bills the GPUs of an N1
  machine apart and Cyclenerd prices machine types only: the machine type from
  `CYCLENERD_GCP_2026` plus the T4 row for the node's GPU count from SkyPilot's GCP catalog
  (`SKYPILOT_GCP`), which lists accelerators apart.

Not in any list read: a3-ultragpu-8g and a4-highgpu-8g. Cyclenerd lists neither. SkyPilot's
GCP catalog prices their GPUs apart, but its rows for these GPU generations are not on-demand
prices throughout: four H100s are $16.80304/h in us-central1 and $39.1862/h in us-east4, where
Cyclenerd prices a3-highgpu-4g alike ($44.245 and $44.278), and eight H200s are $74.49392/h in
us-central1 but $36.60258/h in europe-west4. A plan on a missing row names the missing price
and how the platform adds it.

``derived`` rows are listed as such by no source: their basis says how they follow from
listed rows.

A GKE node pays for its machine type only (the GPUs are part of A2/A3/G2 machine types); an
EKS node pays for its instance. The system nodes' machine types (m6i.xlarge, e2-standard-4)
come from the same lists; a model's load balancer from `LOAD_BALANCERS`. Control planes,
disks and traffic are not counted in a plan's cost. gp3 volume charges (`GP3_VOLUMES`, per
region, from two third-party pages that each state their date) price only what the
``lazy_image_pull`` lever adds to an EKS node's root volume
(`inferplane.blueprint.derived.lever_options.lazy_pull_usd_month`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

TABLE_DATE: Final = "2026-12-05"
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

_UNDATED: Final = "listed; the catalog states no date, read on 2026-12-01"
SKYPILOT_AWS_E385: Final = (
    "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/"
    "e385a0d348eda9cefd9806423e7725944dc249e4/catalogs/v8/aws/vms.csv"
)
"""The same catalog at a later commit, which lists p5.4xlarge, p5en and p6-b200 and more
regions; column ``Price``, identical in every zone of a region."""
_READ: Final = "2026-12-04"
_UNDATED_E385: Final = f"listed; the catalog states no date, read on {_READ}"
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
    return Price(usd, SKYPILOT_AWS, "2026-12-01", _UNDATED)


def _aws2(usd: float) -> Price:
    return Price(usd, SKYPILOT_AWS_E385, _READ, _UNDATED_E385)


_READ_SYSTEM: Final = "2026-12-05"
"""When the m6i.xlarge rows of the same commit were read."""


def _aws_system(usd: float) -> Price:
    return Price(
        usd,
        SKYPILOT_AWS_E385,
        _READ_SYSTEM,
        f"listed; the catalog states no date, read on {_READ_SYSTEM}",
    )


_READ_REGIONS: Final = "2026-12-05"
"""When the rows of the catalog's AWS types beyond those above (other regions, p4de) were
read from the same commit."""


def _aws_regions(usd: float) -> Price:
    return Price(
        usd,
        SKYPILOT_AWS_E385,
        _READ_REGIONS,
        f"listed; the catalog states no date, read on {_READ_REGIONS}",
    )


def _gcp(usd: float) -> Price:
    return Price(usd, CYCLENERD_GCP, _GENERATED)


CYCLENERD_GCP_2026: Final = (
    "https://raw.githubusercontent.com/Cyclenerd/google-cloud-pricing-cost-calculator/"
    "fd66b26ff84fee5cdd94f341ea89206e76c06b99/pricing.yml"
)
"""The same list at a later commit, ``about.generated`` Thu Jul 30 06:13:17 2026; it states the
same figure as `CYCLENERD_GCP` for every GCP row of the table."""
_GENERATED_2026: Final = "2026-07-30"
SKYPILOT_GCP: Final = (
    "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/"
    "006059e0f18acb1341e22a27751e9f80df6ba92f/catalogs/v8/gcp/vms.csv"
)
"""SkyPilot's GCP catalog, the commit upstream/gcp_zones.json reads its zones from. It prices an
accelerator apart from any machine type: a row with no ``InstanceType``, ``AcceleratorName``
T4 and ``AcceleratorCount`` 1, 2 or 4 gives ``Price`` for that many T4s in a zone."""
_READ_GCP: Final = "2026-12-05"


def _n1_t4(machine_usd: float, gpus: int, gpus_usd: float) -> Price:
    """An N1 node with T4s: GCE bills the machine type and the attached GPUs apart, so the
    node costs the machine type's row plus the T4 row for its GPU count. Dated by the
    Cyclenerd list's generation: the SkyPilot list states no date (its figure was read on
    `_READ_GCP`), which the basis says."""
    return Price(
        round(machine_usd + gpus_usd, 9),
        f"{CYCLENERD_GCP_2026} + {SKYPILOT_GCP}",
        _GENERATED_2026,
        f"derived: the machine type ${machine_usd}/h (Cyclenerd, generated {_GENERATED_2026}) "
        f"+ {gpus} x T4 ${gpus_usd}/h (SkyPilot's GCP catalog, which states no date, read on "
        f"{_READ_GCP})",
    )


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
    # AWS, other regions and the types added since (SKYPILOT_AWS_E385)
    ("g6.2xlarge", "us-west-2"): _aws2(0.9776),
    ("g6.48xlarge", "us-east-2"): _aws2(13.3504),
    ("g6.48xlarge", "us-west-2"): _aws2(13.3504),
    ("g6.48xlarge", "eu-central-1"): _aws2(16.69464),
    ("g6.48xlarge", "eu-west-2"): _aws2(16.94678),
    ("g6e.12xlarge", "us-east-2"): _aws2(10.49264),
    ("g6e.12xlarge", "us-west-2"): _aws2(10.49264),
    ("g6e.12xlarge", "eu-central-1"): _aws2(13.12002),
    ("p5.4xlarge", "us-east-1"): _aws2(6.88),
    ("p5.4xlarge", "us-east-2"): _aws2(6.88),
    ("p5.4xlarge", "us-west-2"): _aws2(6.88),
    ("p5.4xlarge", "eu-west-2"): _aws2(8.944),
    ("p5.48xlarge", "us-east-2"): _aws2(55.04),
    ("p5.48xlarge", "us-west-1"): _aws2(68.8),
    ("p5.48xlarge", "us-west-2"): _aws2(55.04),
    ("p5.48xlarge", "eu-north-1"): _aws2(58.8928),
    ("p5.48xlarge", "eu-west-2"): _aws2(71.552),
    ("p5en.48xlarge", "us-east-1"): _aws2(63.296),
    ("p5en.48xlarge", "us-east-2"): _aws2(63.296),
    ("p5en.48xlarge", "us-west-1"): _aws2(79.12),
    ("p5en.48xlarge", "us-west-2"): _aws2(63.296),
    ("p5en.48xlarge", "eu-north-1"): _aws2(67.72672),
    ("p6-b200.48xlarge", "us-east-1"): _aws2(113.9328),
    ("p6-b200.48xlarge", "us-east-2"): _aws2(113.9328),
    ("p6-b200.48xlarge", "us-west-2"): _aws2(113.9328),
    # The catalog's AWS types in the other regions that the same commit lists them in, and
    # p4de.24xlarge (read on 2026-12-05, `_aws_regions`)
    ("g4dn.2xlarge", "us-east-2"): _aws_regions(0.752),
    ("g4dn.2xlarge", "us-west-1"): _aws_regions(0.902),
    ("g4dn.2xlarge", "us-west-2"): _aws_regions(0.752),
    ("g4dn.2xlarge", "eu-central-1"): _aws_regions(0.94),
    ("g4dn.2xlarge", "eu-north-1"): _aws_regions(0.798),
    ("g4dn.2xlarge", "eu-west-1"): _aws_regions(0.838),
    ("g4dn.2xlarge", "eu-west-2"): _aws_regions(0.88),
    ("g4dn.2xlarge", "eu-west-3"): _aws_regions(0.879),
    ("g4dn.12xlarge", "us-east-2"): _aws_regions(3.912),
    ("g4dn.12xlarge", "us-west-1"): _aws_regions(4.694),
    ("g4dn.12xlarge", "us-west-2"): _aws_regions(3.912),
    ("g4dn.12xlarge", "eu-central-1"): _aws_regions(4.89),
    ("g4dn.12xlarge", "eu-north-1"): _aws_regions(4.15),
    ("g4dn.12xlarge", "eu-west-1"): _aws_regions(4.362),
    ("g4dn.12xlarge", "eu-west-2"): _aws_regions(4.577),
    ("g4dn.12xlarge", "eu-west-3"): _aws_regions(4.574),
    ("g4dn.metal", "us-east-2"): _aws_regions(7.824),
    ("g4dn.metal", "us-west-1"): _aws_regions(9.389),
    ("g4dn.metal", "us-west-2"): _aws_regions(7.824),
    ("g4dn.metal", "eu-central-1"): _aws_regions(9.78),
    ("g4dn.metal", "eu-north-1"): _aws_regions(8.3),
    ("g4dn.metal", "eu-west-1"): _aws_regions(8.724),
    ("g4dn.metal", "eu-west-2"): _aws_regions(9.154),
    ("g4dn.metal", "eu-west-3"): _aws_regions(9.148),
    ("g5.2xlarge", "us-east-2"): _aws_regions(1.212),
    ("g5.2xlarge", "us-west-2"): _aws_regions(1.212),
    ("g5.2xlarge", "eu-central-1"): _aws_regions(1.5156),
    ("g5.2xlarge", "eu-north-1"): _aws_regions(1.28549),
    ("g5.2xlarge", "eu-west-1"): _aws_regions(1.35296),
    ("g5.2xlarge", "eu-west-2"): _aws_regions(1.53849),
    ("g5.12xlarge", "us-east-2"): _aws_regions(5.672),
    ("g5.12xlarge", "us-west-2"): _aws_regions(5.672),
    ("g5.12xlarge", "eu-central-1"): _aws_regions(7.09282),
    ("g5.12xlarge", "eu-north-1"): _aws_regions(6.01593),
    ("g5.12xlarge", "eu-west-1"): _aws_regions(6.33167),
    ("g5.12xlarge", "eu-west-2"): _aws_regions(7.19994),
    ("g5.48xlarge", "us-east-2"): _aws_regions(16.288),
    ("g5.48xlarge", "us-west-2"): _aws_regions(16.288),
    ("g5.48xlarge", "eu-central-1"): _aws_regions(20.3681),
    ("g5.48xlarge", "eu-north-1"): _aws_regions(17.27564),
    ("g5.48xlarge", "eu-west-1"): _aws_regions(18.18233),
    ("g5.48xlarge", "eu-west-2"): _aws_regions(20.67572),
    ("g6.2xlarge", "us-east-2"): _aws_regions(0.9776),
    ("g6.2xlarge", "eu-central-1"): _aws_regions(1.22249),
    ("g6.2xlarge", "eu-north-1"): _aws_regions(1.03688),
    ("g6.2xlarge", "eu-west-2"): _aws_regions(1.24095),
    ("g6.2xlarge", "eu-west-3"): _aws_regions(1.24095),
    ("g6.12xlarge", "us-east-2"): _aws_regions(4.6016),
    ("g6.12xlarge", "us-west-2"): _aws_regions(4.6016),
    ("g6.12xlarge", "eu-central-1"): _aws_regions(5.75429),
    ("g6.12xlarge", "eu-north-1"): _aws_regions(4.88062),
    ("g6.12xlarge", "eu-west-2"): _aws_regions(5.8412),
    ("g6.12xlarge", "eu-west-3"): _aws_regions(5.8412),
    ("g6.48xlarge", "eu-north-1"): _aws_regions(14.15992),
    ("g6.48xlarge", "eu-west-3"): _aws_regions(16.94678),
    ("g6e.2xlarge", "us-east-2"): _aws_regions(2.24208),
    ("g6e.2xlarge", "us-west-2"): _aws_regions(2.24208),
    ("g6e.2xlarge", "eu-central-1"): _aws_regions(2.8035),
    ("g6e.2xlarge", "eu-north-1"): _aws_regions(2.37822),
    ("g6e.12xlarge", "eu-north-1"): _aws_regions(11.12975),
    ("g6e.48xlarge", "us-east-2"): _aws_regions(30.13118),
    ("g6e.48xlarge", "us-west-2"): _aws_regions(30.13118),
    ("g6e.48xlarge", "eu-central-1"): _aws_regions(37.67612),
    ("g6e.48xlarge", "eu-north-1"): _aws_regions(31.96075),
    ("p4d.24xlarge", "us-east-2"): _aws_regions(21.95764),
    ("p4d.24xlarge", "us-west-2"): _aws_regions(21.95764),
    ("p4d.24xlarge", "eu-central-1"): _aws_regions(27.43298),
    ("p4d.24xlarge", "eu-west-1"): _aws_regions(23.71569),
    ("p4de.24xlarge", "us-east-1"): _aws_regions(27.44705),
    ("p4de.24xlarge", "us-west-2"): _aws_regions(27.44705),
    ("p4de.24xlarge", "eu-central-1"): _aws_regions(34.29122),
    # The EKS system nodes (`system_nodes.EKS_INSTANCE_TYPE`), m6i.xlarge
    ("m6i.xlarge", "us-east-1"): _aws_system(0.192),
    ("m6i.xlarge", "us-east-2"): _aws_system(0.192),
    ("m6i.xlarge", "us-west-1"): _aws_system(0.224),
    ("m6i.xlarge", "us-west-2"): _aws_system(0.192),
    ("m6i.xlarge", "eu-central-1"): _aws_system(0.23),
    ("m6i.xlarge", "eu-north-1"): _aws_system(0.204),
    ("m6i.xlarge", "eu-west-1"): _aws_system(0.214),
    ("m6i.xlarge", "eu-west-2"): _aws_system(0.222),
    ("m6i.xlarge", "eu-west-3"): _aws_system(0.224),
    # The GKE system nodes (`system_nodes.GKE_MACHINE_TYPE`), e2-standard-4
    ("e2-standard-4", "us-central1"): _gcp(0.13402284),
    ("e2-standard-4", "us-east1"): _gcp(0.13402284),
    ("e2-standard-4", "us-east4"): _gcp(0.15094164),
    ("e2-standard-4", "us-west1"): _gcp(0.13402284),
    ("e2-standard-4", "europe-west1"): _gcp(0.14743092),
    ("e2-standard-4", "europe-west3"): _gcp(0.17267112),
    ("e2-standard-4", "europe-west4"): _gcp(0.14754408),
    # GCP, N1 machine types with T4s attached (the catalog's nvidia-t4 on GKE), `_n1_t4`
    ("n1-standard-8", "us-central1"): _n1_t4(0.379998, 1, 0.35),
    ("n1-standard-8", "us-east1"): _n1_t4(0.379998, 1, 0.35),
    ("n1-standard-8", "us-east4"): _n1_t4(0.42797, 1, 0.37),
    ("n1-standard-8", "us-west1"): _n1_t4(0.379998, 1, 0.35),
    ("n1-standard-8", "europe-west1"): _n1_t4(0.418014, 1, 0.35),
    ("n1-standard-8", "europe-west3"): _n1_t4(0.48958, 1, 0.41),
    ("n1-standard-8", "europe-west4"): _n1_t4(0.418336, 1, 0.3675),
    ("n1-standard-16", "us-central1"): _n1_t4(0.759996, 2, 0.7),
    ("n1-standard-16", "us-east1"): _n1_t4(0.759996, 2, 0.7),
    ("n1-standard-16", "us-east4"): _n1_t4(0.85594, 2, 0.74),
    ("n1-standard-16", "us-west1"): _n1_t4(0.759996, 2, 0.7),
    ("n1-standard-16", "europe-west1"): _n1_t4(0.836028, 2, 0.7),
    ("n1-standard-16", "europe-west3"): _n1_t4(0.97916, 2, 0.82),
    ("n1-standard-16", "europe-west4"): _n1_t4(0.836672, 2, 0.735),
    ("n1-standard-32", "us-central1"): _n1_t4(1.519992, 4, 1.4),
    ("n1-standard-32", "us-east1"): _n1_t4(1.519992, 4, 1.4),
    ("n1-standard-32", "us-east4"): _n1_t4(1.71188, 4, 1.48),
    ("n1-standard-32", "us-west1"): _n1_t4(1.519992, 4, 1.4),
    ("n1-standard-32", "europe-west1"): _n1_t4(1.672056, 4, 1.4),
    ("n1-standard-32", "europe-west3"): _n1_t4(1.95832, 4, 1.64),
    ("n1-standard-32", "europe-west4"): _n1_t4(1.673344, 4, 1.47),
    # GCP, on-demand machine types (GPUs included in A3 and G2)
    ("g2-standard-8", "us-central1"): _gcp(0.853624271),
    ("g2-standard-24", "us-central1"): _gcp(2.000832574),
    ("g2-standard-48", "us-central1"): _gcp(4.001665148),
    ("g2-standard-96", "us-central1"): _gcp(8.003330296),
    ("a3-highgpu-4g", "us-central1"): _gcp(44.2449999512877),
    ("a3-highgpu-8g", "us-central1"): _gcp(88.4899999025753),
    ("a3-highgpu-1g", "us-central1"): _gcp(11.0612499878219),
    ("a3-highgpu-1g", "us-east1"): _gcp(11.0612499878219),
    ("a3-highgpu-1g", "us-east4"): _gcp(11.0694695189041),
    ("a3-highgpu-1g", "europe-west1"): _gcp(12.1712308248219),
    ("a3-highgpu-1g", "europe-west4"): _gcp(14.0675598969041),
    ("a3-highgpu-4g", "us-east1"): _gcp(44.2449999512877),
    ("a3-highgpu-4g", "us-east4"): _gcp(44.2778780756164),
    ("a3-highgpu-4g", "europe-west1"): _gcp(48.6849232992877),
    ("a3-highgpu-4g", "europe-west4"): _gcp(56.2702395876164),
    ("a3-highgpu-8g", "us-east1"): _gcp(88.4899999025753),
    ("a3-highgpu-8g", "us-east4"): _gcp(88.5557561512329),
    ("a3-highgpu-8g", "europe-west1"): _gcp(97.3698465985753),
    ("a3-highgpu-8g", "europe-west4"): _gcp(112.540479175233),
    # A100 machine types (A2: the GPUs are part of the machine type, the ``a100`` entry of
    # each row) and a3-highgpu-2g, in the regions above and us-west1
    ("a2-highgpu-1g", "us-central1"): _gcp(3.673385),
    ("a2-highgpu-1g", "us-east1"): _gcp(3.673385),
    ("a2-highgpu-1g", "us-east4"): _gcp(3.934354926),
    ("a2-highgpu-1g", "us-west1"): _gcp(3.673385),
    ("a2-highgpu-1g", "europe-west1"): _gcp(3.747369),
    ("a2-highgpu-1g", "europe-west4"): _gcp(3.747972),
    ("a2-highgpu-2g", "us-central1"): _gcp(7.34677),
    ("a2-highgpu-2g", "us-east1"): _gcp(7.34677),
    ("a2-highgpu-2g", "us-east4"): _gcp(7.868709852),
    ("a2-highgpu-2g", "us-west1"): _gcp(7.34677),
    ("a2-highgpu-2g", "europe-west1"): _gcp(7.494738),
    ("a2-highgpu-2g", "europe-west4"): _gcp(7.495944),
    ("a2-highgpu-4g", "us-central1"): _gcp(14.69354),
    ("a2-highgpu-4g", "us-east1"): _gcp(14.69354),
    ("a2-highgpu-4g", "us-east4"): _gcp(15.737419704),
    ("a2-highgpu-4g", "us-west1"): _gcp(14.69354),
    ("a2-highgpu-4g", "europe-west1"): _gcp(14.989476),
    ("a2-highgpu-4g", "europe-west4"): _gcp(14.991888),
    ("a2-highgpu-8g", "us-central1"): _gcp(29.38708),
    ("a2-highgpu-8g", "us-east1"): _gcp(29.38708),
    ("a2-highgpu-8g", "us-east4"): _gcp(31.474839408),
    ("a2-highgpu-8g", "us-west1"): _gcp(29.38708),
    ("a2-highgpu-8g", "europe-west1"): _gcp(29.978952),
    ("a2-highgpu-8g", "europe-west4"): _gcp(29.983776),
    ("a2-megagpu-16g", "us-central1"): _gcp(55.739504),
    ("a2-megagpu-16g", "us-east1"): _gcp(55.739504),
    ("a2-megagpu-16g", "us-east4"): _gcp(59.531598816),
    ("a2-megagpu-16g", "us-west1"): _gcp(55.739504),
    ("a2-megagpu-16g", "europe-west1"): _gcp(56.619696),
    ("a2-megagpu-16g", "europe-west4"): _gcp(56.62656),
    ("a2-ultragpu-1g", "us-central1"): _gcp(5.06879789041096),
    ("a2-ultragpu-1g", "us-east1"): _gcp(5.06879789041096),
    ("a2-ultragpu-1g", "us-east4"): _gcp(5.70773247945206),
    ("a2-ultragpu-1g", "us-west1"): _gcp(5.06879789041096),
    ("a2-ultragpu-1g", "europe-west1"): _gcp(5.57595089041096),
    ("a2-ultragpu-1g", "europe-west4"): _gcp(5.58091847945206),
    ("a2-ultragpu-2g", "us-central1"): _gcp(10.1375957808219),
    ("a2-ultragpu-2g", "us-east1"): _gcp(10.1375957808219),
    ("a2-ultragpu-2g", "us-east4"): _gcp(11.4154649589041),
    ("a2-ultragpu-2g", "us-west1"): _gcp(10.1375957808219),
    ("a2-ultragpu-2g", "europe-west1"): _gcp(11.1519017808219),
    ("a2-ultragpu-2g", "europe-west4"): _gcp(11.1618369589041),
    ("a2-ultragpu-4g", "us-central1"): _gcp(20.2751915616438),
    ("a2-ultragpu-4g", "us-east1"): _gcp(20.2751915616438),
    ("a2-ultragpu-4g", "us-east4"): _gcp(22.8309299178082),
    ("a2-ultragpu-4g", "us-west1"): _gcp(20.2751915616438),
    ("a2-ultragpu-4g", "europe-west1"): _gcp(22.3038035616438),
    ("a2-ultragpu-4g", "europe-west4"): _gcp(22.3236739178082),
    ("a2-ultragpu-8g", "us-central1"): _gcp(40.5503831232877),
    ("a2-ultragpu-8g", "us-east1"): _gcp(40.5503831232877),
    ("a2-ultragpu-8g", "us-east4"): _gcp(45.6618598356164),
    ("a2-ultragpu-8g", "us-west1"): _gcp(40.5503831232877),
    ("a2-ultragpu-8g", "europe-west1"): _gcp(44.6076071232877),
    ("a2-ultragpu-8g", "europe-west4"): _gcp(44.6473478356164),
    ("a3-highgpu-2g", "us-central1"): _gcp(22.1224999756438),
    ("a3-highgpu-2g", "us-east1"): _gcp(22.1224999756438),
    ("a3-highgpu-2g", "us-east4"): _gcp(22.1389390378082),
    ("a3-highgpu-2g", "us-west1"): _gcp(22.1224999756438),
    ("a3-highgpu-2g", "europe-west1"): _gcp(24.3424616496438),
    ("a3-highgpu-2g", "europe-west4"): _gcp(28.1351197938082),
    # L4 (G2) in the regions above that offer it, and H100 (A3) in us-west1 and
    # europe-west3, which offer it (upstream/gcp_zones.json)
    ("g2-standard-8", "us-east1"): _gcp(0.853624271),
    ("g2-standard-8", "us-east4"): _gcp(0.850829156),
    ("g2-standard-8", "us-west1"): _gcp(0.853624271),
    ("g2-standard-8", "europe-west1"): _gcp(0.939925708),
    ("g2-standard-8", "europe-west3"): _gcp(1.006027274),
    ("g2-standard-8", "europe-west4"): _gcp(0.897201806),
    ("g2-standard-24", "us-east1"): _gcp(2.000832574),
    ("g2-standard-24", "us-east4"): _gcp(1.994281008),
    ("g2-standard-24", "us-west1"): _gcp(2.000832574),
    ("g2-standard-24", "europe-west1"): _gcp(2.203116824),
    ("g2-standard-24", "europe-west3"): _gcp(2.358054036),
    ("g2-standard-24", "europe-west4"): _gcp(2.102975132),
    ("g2-standard-48", "us-east1"): _gcp(4.001665148),
    ("g2-standard-48", "us-east4"): _gcp(3.988562016),
    ("g2-standard-48", "us-west1"): _gcp(4.001665148),
    ("g2-standard-48", "europe-west1"): _gcp(4.406233648),
    ("g2-standard-48", "europe-west3"): _gcp(4.716108072),
    ("g2-standard-48", "europe-west4"): _gcp(4.205950264),
    ("g2-standard-96", "us-east1"): _gcp(8.003330296),
    ("g2-standard-96", "us-east4"): _gcp(7.977124032),
    ("g2-standard-96", "us-west1"): _gcp(8.003330296),
    ("g2-standard-96", "europe-west1"): _gcp(8.812467296),
    ("g2-standard-96", "europe-west3"): _gcp(9.432216144),
    ("g2-standard-96", "europe-west4"): _gcp(8.411900528),
    ("a3-highgpu-1g", "us-west1"): _gcp(11.0612499878219),
    ("a3-highgpu-1g", "europe-west3"): _gcp(13.0539190109863),
    ("a3-highgpu-2g", "europe-west3"): _gcp(26.1078380219726),
    ("a3-highgpu-4g", "us-west1"): _gcp(44.2449999512877),
    ("a3-highgpu-4g", "europe-west3"): _gcp(52.2156760439452),
    ("a3-highgpu-8g", "us-west1"): _gcp(88.4899999025753),
    ("a3-highgpu-8g", "europe-west3"): _gcp(104.43135208789),
}

PRICES: Final[Mapping[tuple[str, str], Price]] = MappingProxyType(_ROWS)
"""(instance type, region) -> price."""


def price(instance_type: str, region: str) -> Price | None:
    return PRICES.get((instance_type, region))


LOAD_BALANCER: Final = "load-balancer"
"""The item name of a model's load balancer in `LOAD_BALANCERS` and in the platform's
``prices`` (``instance_type: load-balancer``): an NLB on AWS, a passthrough load balancer's
forwarding rule on GCP (`inferplane.components.serving.load_balancer`)."""

CLUSTERCOST_NLB: Final = "https://clustercost.com/blog/network-load-balancer-pricing-2025"

LOAD_BALANCERS: Final[Mapping[tuple[str, str], Price]] = MappingProxyType(
    {
        # "NLB: $0.0225 per hour (~$16.42/month)", US-East-1. AWS's own page
        # (https://aws.amazon.com/elasticloadbalancing/pricing/) renders its rate tables from
        # dynamic tokens that no stored copy resolves; the LCU charges that traffic adds
        # ($0.006 per NLCU-hour there) are traffic, not counted.
        ("aws", "us-east-1"): Price(
            0.0225,
            CLUSTERCOST_NLB,
            "2026-12-05",
            "listed by a third-party page for US-East-1; it states no date, read on 2026-12-05",
        ),
        # GCP: https://cloud.google.com/load-balancing/pricing lists global forwarding rules
        # ($0.025/h for the first five), but the regional forwarding rules the internal and
        # external passthrough load balancers use sit in a regional table that no stored
        # copy renders: no row, and the plan names the missing price.
    }
)
"""(cloud, region) -> the hourly price of one model's load balancer, before traffic."""


def load_balancer(cloud: str, region: str) -> Price | None:
    return LOAD_BALANCERS.get((cloud, region))


GP3_FREE_IOPS: Final = 3000
"""IOPS every gp3 volume has without charge ("3,000 IOPS free", `SAISCI_GP3`)."""
GP3_FREE_THROUGHPUT_MIBPS: Final = 125
"""Throughput every gp3 volume has without charge ("125 MB/s free", `SAISCI_GP3`)."""

SAISCI_GP3: Final = "https://www.saisci.com/aws/gp2-vs-gp3-cost-comparison-ebs-volumes/"
HENDRIC_JABS_GP3: Final = "https://hendric-jabs.de/2023/11/02/gp3-in-2-minuten/"


@dataclass(frozen=True)
class VolumePrice:
    """What a gp3 volume is billed in one region, US dollars per month: its storage, and the
    IOPS and throughput provisioned above the free `GP3_FREE_IOPS` and
    `GP3_FREE_THROUGHPUT_MIBPS`. AWS quotes all three per month (billed per second), so a
    monthly cost takes them as they are, with no `HOURS_PER_MONTH` conversion."""

    usd_per_gb_month: float
    usd_per_iops_month: float
    """Per provisioned IOPS above the free 3,000."""
    usd_per_mibps_month: float
    """Per provisioned MiB/s above the free 125 (the volume's ``throughput``, which EC2
    takes in MiB/s; the pages write MB/s or MiB/s for the same provisioned figure)."""
    source: str
    read_on: str
    """The date the source states for its figures."""
    basis: str = "listed"


GP3_VOLUMES: Final[Mapping[str, VolumePrice]] = MappingProxyType(
    {
        # "gp3 Storage Pricing $0.08/GB-month; gp3 IOPS Pricing 3,000 IOPS free and
        # $0.005/provisioned IOPS-month over 3,000; gp3 Throughput Pricing 125 MB/s free and
        # $0.04/provisioned MB/s-month over 125", "based on N. Virginia Region", read by the
        # page from AWS's EBS pricing page; "Last Updated on February 4, 2021".
        "us-east-1": VolumePrice(
            0.08,
            0.005,
            0.04,
            SAISCI_GP3,
            "2021-02-04",
            "listed by a third-party page from AWS's EBS pricing page for US East "
            "(N. Virginia), last updated 2021-02-04; read on 2026-12-05",
        ),
        # eu-central-1 (Frankfurt): "1024 GiB x $0,0952", "72 IOPS x $0,006",
        # "125 MiB/s x $ 0.048", a worked example dated 2023-11-02 by its address.
        "eu-central-1": VolumePrice(
            0.0952,
            0.006,
            0.048,
            HENDRIC_JABS_GP3,
            "2023-11-02",
            "listed by a third-party page's worked example for eu-central-1, dated "
            "2023-11-02 by its address; read on 2026-12-05",
        ),
        # No other region: AWS's own page (https://aws.amazon.com/ebs/pricing/) renders its
        # regional rates from dynamic tokens that no stored copy resolves, and no catalog
        # read lists gp3's charges per region. A region without a row gives no price.
    }
)
"""region -> what a gp3 volume is billed there (AWS)."""


def gp3_volume(region: str) -> VolumePrice | None:
    return GP3_VOLUMES.get(region)


def gp3_missing(region: str) -> str:
    """Why `region` has no gp3 row (`GP3_VOLUMES`)."""
    return (
        f"the price table has no gp3 row for {region}: AWS's EBS pricing page renders its "
        "regional rates from dynamic tokens that no stored copy resolves, and no page read "
        f"states gp3's charges in {region}"
    )


PLATFORM_BASIS: Final = "the platform's price (policy config, capacity-estimate.prices)"


def platform_rows(entries: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], Price]:
    """The platform's rows from its policy config (``capacity-estimate.prices``, validated
    by the config's schema): negotiated prices, or the types and regions the table lacks.
    They win over the table's."""
    return {
        (str(e["instance_type"]), str(e["region"])): Price(
            float(e["usd_per_hour"]), str(e["source"]), str(e["read_on"]), PLATFORM_BASIS
        )
        for e in entries
    }
