"""The cost as the bill shows it: whole nodes per zone, each schedule window at its own floor,
the platform's prices first. Exact figures, computed by hand from the price rows."""

from __future__ import annotations

import pytest

from inferplane.blueprint.capacity import planner, prices
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.resolution.resolve import resolve

H100 = """\
apiVersion: inferplane/v1
kind: Blueprint
name: demo
environments:
  stg:
    cloud: aws
    region: us-east-1
    zones: [us-east-1a, us-east-1b]
    model_store: s3://models-use1/
    cluster: {create: true}
gpu_pools:
  h100:
    gpu: nvidia-h100-80gb
    gpus_per_node: 8
    nodes: {min: 1, max: 2}
models:
  chat:
    server: vllm
    source: hf://meta-llama/Llama-3.1-8B-Instruct@0e9e39f249a16976918f6564b8830bc894c89659
    pool: h100
    gpus: 4
    vllm: {max_model_len: 8192}
    replicas: {min: 2, max: 4}
    slo: {p95_ms: 4000, ttft_p95_ms: 500, itl_p95_ms: 60}
    traffic: {peak_rps: 1, input_tokens: 1200, output_tokens: 70, shared_prefix: 0.5}
    budget: {usd_per_month: 50000}
    secrets: {hf_token: {from_env: HF_TOKEN}}
"""


SYSTEM_AND_LB_H = 2 * 0.192 + 0.0225
"""Two m6i.xlarge system nodes in us-east-1 (SkyPilot's catalog) and one NLB-hour."""


def _plan(text: str, platform: dict[tuple[str, str], prices.Price] | None = None):  # type: ignore[no-untyped-def]
    env = resolve(load_text(text, "bp.yaml"), "stg")
    return planner.plan_env(env, platform or {})


def test_two_warm_replicas_in_two_zones_pay_two_whole_nodes() -> None:
    """One 4-GPU replica per zone on 8-GPU p5.48xlarge nodes: two nodes run, not one."""
    found = _plan(H100)
    cost = found.plans["chat"].cost
    assert cost is not None
    assert (cost.floor_nodes, cost.peak_nodes, cost.zones) == (1, 1, 2)
    # The GPU nodes: $80,358.40 a month, not $40,179.20. The environment adds two m6i.xlarge
    # system nodes (one per zone, at least two) and the model's NLB, all the model's own.
    assert cost.overhead_usd_h == pytest.approx(SYSTEM_AND_LB_H)
    assert cost.floor_usd_h == pytest.approx(2 * 55.04 + SYSTEM_AND_LB_H)
    assert cost.usd_month == pytest.approx(730 * (2 * 55.04 + SYSTEM_AND_LB_H))
    assert cost.counts == (
        "whole nodes of pool h100: 1 x p5.48xlarge per zone x 2 zones at the floor, 1 at peak "
        "(nodes.min, spare_gpus included)"
    )
    [budget] = [p for p in found.problems if p.path[-1] == "usd_per_month"]
    assert budget.message == (
        "the estimate costs $80,655 a month, over the budget of $50,000: whole nodes of pool "
        "h100: 1 x p5.48xlarge per zone x 2 zones at the floor, 1 at peak (nodes.min, "
        "spare_gpus included); peak all month (no replicas.schedule windows mark the busy "
        "hours); p5.48xlarge at $55.04/h (https://raw.githubusercontent.com/datareceipts/"
        "data-receipts/main/109-gpu-pricing/hyperscalers.json, 2026-11-09); with 1/1 of 2 x "
        f"m6i.xlarge system nodes at $0.192/h ({prices.SKYPILOT_AWS_E385}, 2026-12-05); its "
        f"load balancer at $0.0225/h before traffic ({prices.CLUSTERCOST_NLB}, 2026-12-05); "
        "not counted: the control plane, disks and traffic"
    )


def test_models_share_the_system_nodes_and_keep_their_own_load_balancer() -> None:
    second = H100.split("models:\n")[1].replace("  chat:", "  chat2:")
    cost = _plan(H100 + second).plans["chat"].cost
    assert cost is not None
    assert cost.overhead_usd_h == pytest.approx(2 * 0.192 / 2 + 0.0225)
    assert cost.overhead.startswith("1/2 of 2 x m6i.xlarge system nodes")


def test_a_schedule_window_is_priced_at_the_replicas_it_keeps() -> None:
    """Weekdays 08:00-18:00 keep 3 replicas of 4 GPUs per zone (two whole 8-GPU nodes per
    zone); the peak needs one: the window runs at its floor, not at the peak."""
    text = H100.replace(
        "    replicas: {min: 2, max: 4}\n",
        "    replicas:\n      min: 2\n      max: 6\n      schedule:\n"
        '        - {schedule: "0 8 * * 1-5", duration: 10h, min: 3}\n',
    )
    cost = _plan(text).plans["chat"].cost
    assert cost is not None
    busy = 2610 / 8760  # 261 weekdays x 10 h of 365 x 24 h
    floor_h, window_h = 2 * 55.04 + SYSTEM_AND_LB_H, 4 * 55.04 + SYSTEM_AND_LB_H
    assert cost.usd_month == pytest.approx(730 * (busy * window_h + (1 - busy) * floor_h))
    # The GPU nodes: $104,301 (the peak's price in the window said $80,358).
    assert round(cost.usd_month - 730 * SYSTEM_AND_LB_H) == 104301
    assert cost.month_basis == (
        "each schedule window at the larger of its floor and the peak (30% of the time), "
        "the floor otherwise"
    )


def test_a_missing_price_says_which_and_how_the_platform_adds_it() -> None:
    found = _plan(H100.replace("us-east-1", "eu-central-1"))
    plan = found.plans["chat"]
    assert plan.cost is None
    assert plan.cost_note == (
        "no price for p5.48xlarge in eu-central-1: the built-in table has no row for it; the "
        "platform adds one in its policy config under prices (instance_type: p5.48xlarge, "
        "region: eu-central-1, usd_per_hour, source, read_on)"
    )
    negotiated = prices.Price(40.0, "contract 2026-17", "2026-11-30", prices.PLATFORM_BASIS)
    priced = _plan(
        H100.replace("us-east-1", "eu-central-1"), {("p5.48xlarge", "eu-central-1"): negotiated}
    )
    cost = priced.plans["chat"].cost
    assert cost is not None and cost.price == negotiated
    # Two m6i.xlarge system nodes at eu-central-1's $0.23; no NLB price there: named.
    assert cost.usd_month == pytest.approx(730 * (2 * 40.0 + 2 * 0.23))
    assert cost.missing == (
        "no price for the model's load balancer in eu-central-1: the built-in table has no "
        "row for it; the platform adds one in its policy config under prices (instance_type: "
        "load-balancer, region: eu-central-1, usd_per_hour, source, read_on)",
    )
    lb = prices.Price(0.0252, "https://example.com/quote", "2026-12-01", prices.PLATFORM_BASIS)
    both = {("p5.48xlarge", "eu-central-1"): negotiated, ("load-balancer", "eu-central-1"): lb}
    cost = _plan(H100.replace("us-east-1", "eu-central-1"), both).plans["chat"].cost
    assert cost is not None and cost.missing == ()
    assert cost.usd_month == pytest.approx(730 * (2 * 40.0 + 2 * 0.23 + 0.0252))


def test_the_platform_rows_come_from_the_policy_config_entries() -> None:
    rows = prices.platform_rows(
        [
            {
                "instance_type": "p5.4xlarge",
                "region": "eu-central-1",
                "usd_per_hour": 9.5,
                "source": "https://example.com/contract",
                "read_on": "2026-12-01",
            }
        ]
    )
    assert rows == {
        ("p5.4xlarge", "eu-central-1"): prices.Price(
            9.5, "https://example.com/contract", "2026-12-01", prices.PLATFORM_BASIS
        )
    }


def test_the_types_a_user_picks_have_sourced_rows() -> None:
    assert prices.price("p5.4xlarge", "us-east-1") == prices.Price(
        6.88,
        prices.SKYPILOT_AWS_E385,
        "2026-12-04",
        "listed; the catalog states no date, read on 2026-12-04",
    )
    assert prices.price("p5en.48xlarge", "us-east-1") == prices.Price(
        63.296,
        prices.SKYPILOT_AWS_E385,
        "2026-12-04",
        "listed; the catalog states no date, read on 2026-12-04",
    )
    assert prices.price("a3-highgpu-1g", "europe-west4") == prices.Price(
        14.0675598969041, prices.CYCLENERD_GCP, "2025-03-06"
    )
    assert prices.price("g6.48xlarge", "eu-central-1") == prices.Price(
        16.69464,
        prices.SKYPILOT_AWS_E385,
        "2026-12-04",
        "listed; the catalog states no date, read on 2026-12-04",
    )


def test_every_catalog_type_has_a_row_or_is_one_the_docstring_names_missing() -> None:
    """The built-in table prices every instance type the catalog picks in us-east-1 or
    us-central1, except the ones `prices` names as read nowhere (a plan on them names the
    missing price and how the platform adds it)."""
    from inferplane.blueprint import catalog

    unpriced = set()
    for gpu in catalog.GPUS.values():
        unpriced |= {t for t in gpu.aws_instances.values() if not prices.price(t, "us-east-1")}
        unpriced |= {t for t in gpu.gcp_machines.values() if not prices.price(t, "us-central1")}
    assert unpriced == {"a3-ultragpu-8g", "a4-highgpu-8g"}


MISSING = {
    # The regions SkyPilot's AWS catalog (SKYPILOT_AWS_E385) does not list the type in
    "g5.2xlarge": {"us-west-1", "eu-west-3"},
    "g5.12xlarge": {"us-west-1", "eu-west-3"},
    "g5.48xlarge": {"us-west-1", "eu-west-3"},
    "g6.2xlarge": {"us-west-1", "eu-west-1"},
    "g6.12xlarge": {"us-west-1", "eu-west-1"},
    "g6.48xlarge": {"us-west-1", "eu-west-1"},
    "g6e.2xlarge": {"us-west-1", "eu-west-1", "eu-west-2", "eu-west-3"},
    "g6e.12xlarge": {"us-west-1", "eu-west-1", "eu-west-2", "eu-west-3"},
    "g6e.48xlarge": {"us-west-1", "eu-west-1", "eu-west-2", "eu-west-3"},
    "p4d.24xlarge": {"us-west-1", "eu-north-1", "eu-west-2", "eu-west-3"},
    "p4de.24xlarge": {
        "us-east-2",
        "us-west-1",
        "eu-north-1",
        "eu-west-1",
        "eu-west-2",
        "eu-west-3",
    },
    "p5.4xlarge": {"us-west-1", "eu-central-1", "eu-north-1", "eu-west-1", "eu-west-3"},
    "p5.48xlarge": {"eu-central-1", "eu-west-1", "eu-west-3"},
    "p5en.48xlarge": {"eu-central-1", "eu-west-1", "eu-west-2", "eu-west-3"},
    "p6-b200.48xlarge": {
        "us-west-1",
        "eu-central-1",
        "eu-north-1",
        "eu-west-1",
        "eu-west-2",
        "eu-west-3",
    },
    # No list read prices them (`prices` says why), in every region that offers the GPU
    "a3-ultragpu-8g": {"us-central1", "us-east4", "us-west1", "europe-west1", "europe-west4"},
    "a4-highgpu-8g": {"us-central1", "us-east1", "us-east4", "europe-west4"},
}
"""The rows the table lacks in the regions it prices the system nodes in: every one either a
region the price list does not list the type in, or a type no list prices."""


def test_the_rows_missing_where_the_system_nodes_are_priced_are_exactly_these() -> None:
    """Across the regions the table prices the system nodes in (m6i.xlarge on AWS,
    e2-standard-4 on GCP), every instance type the catalog picks has a row, except `MISSING`.
    On GCP only the regions upstream/gcp_zones.json offers the GPU in count (it lists no
    zones for the T4, which every region here offers in SkyPilot's GCP catalog)."""
    import json
    from pathlib import Path

    from inferplane.blueprint import catalog

    aws = {r for t, r in prices.PRICES if t == "m6i.xlarge"}
    gcp = {r for t, r in prices.PRICES if t == "e2-standard-4"}
    zones_file = Path(catalog.__file__).parent / "upstream" / "gcp_zones.json"
    offered = json.loads(zones_file.read_text())["gpus"]
    missing: dict[str, set[str]] = {}
    for gpu in catalog.GPUS.values():
        gcp_regions = (
            {z.rsplit("-", 1)[0] for z in offered[gpu.id]["zones"]} & gcp
            if gpu.id in offered
            else gcp
        )
        for types, regions in ((gpu.aws_instances, aws), (gpu.gcp_machines, gcp_regions)):
            for t in types.values():
                if lacking := {r for r in regions if prices.price(t, r) is None}:
                    missing[t] = lacking
    assert missing == MISSING


def test_rows_of_other_regions_n1_with_t4_and_p4de_are_sourced_rows() -> None:
    listed_on_05 = "listed; the catalog states no date, read on 2026-12-05"
    assert prices.price("p4de.24xlarge", "us-east-1") == prices.Price(
        27.44705, prices.SKYPILOT_AWS_E385, "2026-12-05", listed_on_05
    )
    assert prices.price("g4dn.2xlarge", "eu-central-1") == prices.Price(
        0.94, prices.SKYPILOT_AWS_E385, "2026-12-05", listed_on_05
    )
    assert prices.price("g6.2xlarge", "eu-central-1") == prices.Price(
        1.22249, prices.SKYPILOT_AWS_E385, "2026-12-05", listed_on_05
    )
    assert prices.price("g2-standard-8", "europe-west4") == prices.Price(
        0.897201806, prices.CYCLENERD_GCP, "2025-03-06"
    )
    assert prices.price("a3-highgpu-8g", "europe-west3") == prices.Price(
        104.43135208789, prices.CYCLENERD_GCP, "2025-03-06"
    )
    # N1 with T4s: the machine type plus the T4 row for the node's GPU count
    assert prices.price("n1-standard-8", "us-central1") == prices.Price(
        0.729998,
        f"{prices.CYCLENERD_GCP_2026} + {prices.SKYPILOT_GCP}",
        "2026-07-30",
        "derived: the machine type $0.379998/h (Cyclenerd, generated 2026-07-30) + 1 x T4 "
        "$0.35/h (SkyPilot's GCP catalog, which states no date, read on 2026-12-05)",
    )
    n1_32 = prices.price("n1-standard-32", "europe-west4")
    assert n1_32 is not None and n1_32.usd_per_hour == 3.143344  # 1.673344 + 4 x T4 1.47
    assert prices.price("a2-highgpu-1g", "us-central1") == prices.Price(
        3.673385, prices.CYCLENERD_GCP, "2025-03-06"
    )
