"""plan.json's ``capacity_sources``: per pool, zone and source in order, the node group
that launches from it, its floor and ceiling, its price where the table has one, and a
preflight that says it was not checked offline, and why. Absent where no pool lists its
sources, so such plans are what they were."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from inferplane.app import plan, plan_sources

ROOT = Path(__file__).resolve().parents[2]
SOURCES = """\
    overrides:
      gpu_pools:
        l4:
          capacity:
            - {reservation: cr-0123456789abcdef0, zone: eu-west-1a}
            - capacity_block: {id: cr-0fedcba9876543210, ends: "2026-12-20T11:30:00Z"}
              zone: eu-west-1b
            - on_demand
            - spot
"""


def _blueprint(tmp_path: Path) -> Path:
    text = (ROOT / "blueprints" / "chat-minimal.yaml").read_text()
    anchor = '      kubernetes_version: "1.33"\n'
    assert anchor in text
    path = tmp_path / "chat.yaml"
    path.write_text(text.replace(anchor, anchor + SOURCES, 1))
    return path


def _args(blueprint: Path, env: str, out: Path) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    plan.add_arguments(parser)
    return parser.parse_args([str(blueprint), "--env", env, "--out", str(out)])


def test_plan_json_lists_each_zone_s_sources_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert plan.run(_args(_blueprint(tmp_path), "prod", out)) == 0
    text = capsys.readouterr().out
    assert (
        "  l4 / eu-west-1a: reservation cr-0123456789abcdef0 [1..4] -> on_demand [0..4] "
        "-> spot [0..4]"
    ) in text
    doc = json.loads((out / "plan.json").read_text())
    zone_a = doc["capacity_sources"]["l4"]["eu-west-1a"]
    zone_b = doc["capacity_sources"]["l4"]["eu-west-1b"]
    assert [(r["source"], r["node_group"], r["nodes"]) for r in zone_a] == [
        ("reservation", "chat-minimal-prod-l4-a", {"min": 1, "max": 4}),
        ("on_demand", "chat-minimal-prod-l4-a-od", {"min": 0, "max": 4}),
        ("spot", "chat-minimal-prod-l4-a-spot", {"min": 0, "max": 4}),
    ]
    assert zone_b[0]["source"] == "capacity_block"
    assert zone_b[0]["ends"] == "2026-12-20T11:30:00Z"
    for row in zone_a + zone_b:
        assert row["preflight"] == {"status": "not checked", "reason": plan_sources.NOT_CHECKED}
    # Every node group the section names is one the plan creates.
    groups = {
        r["inputs"]["nodeGroupName"]
        for r in doc["resources"]
        if r["type"] == "aws:eks/nodeGroup:NodeGroup"
    }
    assert {r["node_group"] for r in zone_a + zone_b} <= groups


def test_cost_by_source_uses_the_on_demand_price_where_it_applies() -> None:
    from inferplane.blueprint.capacity.prices import Price
    from inferplane.blueprint.model import CapacitySource

    rate = Price(10.0, "table", "2026-12-01")
    at = ("gpu_pools", "x", "capacity")
    reserved = plan_sources._cost(CapacitySource("reservation", at, reservation="cr-1"), 2, rate)
    assert reserved == {
        "usd_per_node_hour": 10.0,
        "monthly_usd_at_floor": 14600.0,
        "price_source": "table",
    }
    assert plan_sources._cost(CapacitySource("spot", at), 0, rate) == {
        "usd_per_node_hour": None,
        "why": "the price table lists on-demand prices only, not spot",
    }


def test_no_section_without_a_listed_pool(tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert plan.run(_args(ROOT / "blueprints" / "chat-minimal.yaml", "prod", out)) == 0
    assert "capacity_sources" not in json.loads((out / "plan.json").read_text())


def test_check_says_the_preflight_was_not_checked_and_why(tmp_path: Path) -> None:
    from inferplane.app.check import check_files
    from inferplane.app.report import to_json, to_text

    path = _blueprint(tmp_path)
    report = check_files([str(path)], ["prod"], str(ROOT / "policies" / "platform-config.yaml"))
    assert report.not_checked == [
        {
            "blueprint": str(path),
            "environment": "prod",
            "check": "capacity-preflight",
            "reason": plan_sources.NOT_CHECKED,
        }
    ]
    assert f"  not checked: capacity-preflight: {plan_sources.NOT_CHECKED}\n" in to_text(report)
    assert to_json(report)["not_checked"] == report.not_checked
    plain = check_files(
        [str(ROOT / "blueprints" / "chat-minimal.yaml")],
        ["prod"],
        str(ROOT / "policies" / "platform-config.yaml"),
    )
    assert plain.not_checked == [] and "not_checked" not in to_json(plain)


RECORDED = """\
- token: aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings
  answer: {id: eu-west-1, locations: [eu-west-1a]}
- token: aws:ec2/getInstanceType:getInstanceType
  answer: {id: t, defaultVcpus: 8}
- token: aws:servicequotas/getServiceQuota:getServiceQuota
  args: {serviceCode: ec2, quotaName: Running On-Demand G and VT instances}
  answer: {id: L-DB2E81BA, value: 512}
- token: aws:servicequotas/getServiceQuota:getServiceQuota
  args: {serviceCode: ec2, quotaName: All G and VT Spot Instance Requests}
  answer: {id: L-3819A6DF, value: 32}
- token: aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation
  args: {id: cr-0fedcba9876543210}
  answer: {id: cr-0fedcba9876543210, availabilityZone: eu-west-1b, instanceCount: 2,
           startDate: "2026-05-20T11:30:00Z", endDate: "2026-12-20T11:30:00Z", state: active}
- token: aws:ec2/getSpotPrice:getSpotPrice
  args: {availabilityZone: eu-west-1a}
  answer: {id: s, spotPrice: "0.4000"}
"""
"""What EC2 answered, recorded: the type is offered in eu-west-1a only; 8 vCPUs a node;
on-demand G quota 512 vCPUs, spot 32; the Capacity Block is in eu-west-1b; spot costs 0.40
an hour in eu-west-1a (no answer for eu-west-1b)."""


def test_plan_json_carries_the_preflight_judged_from_recorded_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Judged as of a pinned day, as check's waivers are: the recorded block ends 2026-12-20.
    monkeypatch.setenv("INFERPLANE_TODAY", "2026-12-05")
    invokes = tmp_path / "invokes.yaml"
    invokes.write_text(RECORDED)
    out = tmp_path / "out"
    parser = argparse.ArgumentParser()
    plan.add_arguments(parser)
    args = parser.parse_args(
        [str(_blueprint(tmp_path)), "--env", "prod", "--out", str(out), "--invokes", str(invokes)]
    )
    assert plan.run(args) == 0
    text = capsys.readouterr().out
    assert "Capacity sources, tried in order per zone (preflight from recorded answers):" in text
    assert "  l4 / eu-west-1b: capacity_block cr-0fedcba9876543210 [0..4] ok -> " in text
    doc = json.loads((out / "plan.json").read_text())
    zone_a = doc["capacity_sources"]["l4"]["eu-west-1a"]
    zone_b = doc["capacity_sources"]["l4"]["eu-west-1b"]
    reservation, on_demand_a, spot_a = (r["preflight"] for r in zone_a)
    assert reservation["status"] == "partly checked"
    assert reservation["checked"] == ["offered"]
    assert "pulumi-aws 7.51.1 has no data source" in reservation["not_checked"][0]
    assert on_demand_a == {"status": "ok", "checked": ["offered", "quota"]}
    # nodes.max 4 plus 2 in two zones at 8 vCPUs: 96 spot vCPUs, over the quota of 32.
    assert spot_a["status"] == "refused" and spot_a["spot_usd_per_hour"] == "0.4000"
    assert [p["rule"] for p in spot_a["problems"]] == ["capacity-quota"]
    assert spot_a["problems"][0]["path"][-2:] == ["capacity", 3]
    assert zone_a[2]["cost"]["usd_per_node_hour"] == 0.4
    block, on_demand_b, spot_b = (r["preflight"] for r in zone_b)
    assert block == {"status": "ok", "checked": ["zone", "state", "end"]}
    assert on_demand_b["status"] == "refused"
    assert [p["rule"] for p in on_demand_b["problems"]] == ["capacity-offered"]
    assert [p["rule"] for p in spot_b["problems"]] == ["capacity-offered", "capacity-quota"]
    assert "spot_usd_per_hour" not in spot_b
    by_source = doc["capacity_cost_by_source"]
    assert list(by_source) == ["capacity_block", "on_demand", "reservation", "spot"]
    # The floor sits on the reservation, which the price table cannot price (no g6 row for
    # eu-west-1); the others start at zero nodes.
    assert by_source["spot"] == by_source["on_demand"] == {"monthly_usd_at_floor": 0.0}
    assert by_source["reservation"] == {"why": "the price table has no row for the type"}


def test_check_runs_the_preflight_rules_on_recorded_answers(tmp_path: Path) -> None:
    import yaml

    from inferplane.app.check import check_files

    path = _blueprint(tmp_path)
    report = check_files(
        [str(path)],
        ["prod"],
        str(ROOT / "policies" / "platform-config.yaml"),
        invokes=yaml.safe_load(RECORDED),
    )
    assert report.not_checked == []
    found = sorted(
        (r.rule, r.target, r.location.line if r.location else None)
        for r in report.results
        if r.status == "violation" and r.rule in {"capacity-offered", "capacity-quota"}
    )
    # eu-west-1b's on_demand and spot (lines 25 and 26) cannot launch the type; the spot
    # quota is short once for the pool, not once per zone.
    assert found == [
        ("capacity-offered", "gpu_pools.l4", 25),
        ("capacity-offered", "gpu_pools.l4", 26),
        ("capacity-quota", "gpu_pools.l4", 26),
    ]


def test_a_bad_invokes_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    invokes = tmp_path / "invokes.yaml"
    invokes.write_text("- {token: aws:ec2/getSpotPrice:getSpotPrice}\n")
    parser = argparse.ArgumentParser()
    plan.add_arguments(parser)
    args = parser.parse_args(
        [str(_blueprint(tmp_path)), "--env", "prod", "--invokes", str(invokes)]
    )
    assert plan.run(args) == 2
    err = capsys.readouterr().err
    assert "--invokes" in err and "entry 0 needs an `answer` mapping" in err
