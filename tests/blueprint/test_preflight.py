"""The capacity preflight's judgement (`inferplane.blueprint.capacity.preflight`): what the
cloud answered, against the blueprint, with the rule each problem belongs to."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path

from inferplane.blueprint.capacity import preflight
from inferplane.blueprint.capacity.preflight import PoolAnswers, judge, next_window
from inferplane.blueprint.model import Environment
from inferplane.blueprint.resolution.resolve import resolve_file

ROOT = Path(__file__).resolve().parents[2]
NOW = dt.datetime(2026, 6, 1, tzinfo=dt.UTC)  # a Monday
SOURCES = """\
    overrides:
      gpu_pools:
        l4:
          capacity:
            - capacity_block: {id: cr-0fedcba9876543210, ends: "2026-06-03T11:30:00Z"}
              zone: eu-west-1a
            - on_demand
            - spot
"""


def _env(tmp_path: Path, extra: str = "") -> Environment:
    text = (ROOT / "blueprints" / "chat-minimal.yaml").read_text()
    anchor = '      kubernetes_version: "1.33"\n'
    path = tmp_path / "chat.yaml"
    path.write_text(text.replace(anchor, anchor + SOURCES + extra, 1))
    return resolve_file(str(path), "prod")


BLOCK = {
    "availabilityZone": "eu-west-1a",
    "instanceCount": 2,
    "startDate": "2026-05-20T11:30:00Z",
    "endDate": "2026-06-03T11:30:00Z",
    "state": "active",
}


def _answers(**changes: object) -> dict[str, PoolAnswers]:
    base: dict[str, object] = {
        "offered_zones": ("eu-west-1a", "eu-west-1b"),
        "vcpus": 8,
        "quotas": {
            "Running On-Demand G and VT instances": 96.0,
            "All G and VT Spot Instance Requests": 96.0,
        },
        "blocks": {"cr-0fedcba9876543210": BLOCK},
        "spot_prices": {"eu-west-1a": "0.41"},
    }
    base.update(changes)
    return {"l4": PoolAnswers(**base)}  # type: ignore[arg-type]


def _rules(rows: dict[str, object]) -> list[tuple[str, str]]:
    return [(zone, p["rule"]) for _, zone, p in preflight.problems_of(rows)]  # type: ignore[arg-type]


def test_every_source_passes_when_the_answers_fit(tmp_path: Path) -> None:
    rows = judge(_env(tmp_path), _answers(), NOW)
    zone_a, zone_b = rows["l4"]["eu-west-1a"], rows["l4"]["eu-west-1b"]
    assert [(r["source"], r["status"]) for r in zone_a] == [
        ("capacity_block", "ok"),
        ("on_demand", "ok"),
        ("spot", "ok"),
    ]
    assert zone_a[2]["spot_usd_per_hour"] == "0.41"
    assert "spot_usd_per_hour" not in zone_b[1]  # no answer for eu-west-1b: none recorded
    assert _rules(rows) == []


def test_the_quota_counts_max_plus_surge_in_every_zone(tmp_path: Path) -> None:
    # nodes.max 4 + 2 surge, in 2 zones, at 8 vCPUs = 96: one vCPU less refuses.
    quotas = {
        "Running On-Demand G and VT instances": 95.0,
        "All G and VT Spot Instance Requests": 96.0,
    }
    rows = judge(_env(tmp_path), _answers(quotas=quotas), NOW)
    assert _rules(rows) == [("eu-west-1a", "capacity-quota"), ("eu-west-1b", "capacity-quota")]
    message = rows["l4"]["eu-west-1a"][1]["problems"][0]["message"]
    assert "may need 96 vCPUs" in message and "more than the quota of 95" in message


def test_a_type_not_offered_in_a_zone_is_refused_there_only(tmp_path: Path) -> None:
    rows = judge(_env(tmp_path), _answers(offered_zones=("eu-west-1a",)), NOW)
    assert _rules(rows) == [("eu-west-1b", "capacity-offered"), ("eu-west-1b", "capacity-offered")]


def test_a_block_in_another_zone_is_refused(tmp_path: Path) -> None:
    blocks = {"cr-0fedcba9876543210": {**BLOCK, "availabilityZone": "eu-west-1c"}}
    rows = judge(_env(tmp_path), _answers(blocks=blocks), NOW)
    assert _rules(rows) == [("eu-west-1a", "reservation-zone")]
    problem = rows["l4"]["eu-west-1a"][0]["problems"][0]
    assert problem["path"][-2:] == ["capacity", 0]
    assert "is in eu-west-1c, not eu-west-1a" in problem["message"]


def test_a_block_that_ends_before_a_schedule_window_is_refused(tmp_path: Path) -> None:
    weekly = """\
      models:
        chat:
          replicas:
            min: 1
            max: 4
            schedule:
              - {schedule: "0 8 * * 0", duration: 2h, min: 2}
"""
    rows = judge(_env(tmp_path, weekly), _answers(), NOW)
    assert _rules(rows) == [("eu-west-1a", "capacity-block-window")]
    message = rows["l4"]["eu-west-1a"][0]["problems"][0]["message"]
    assert "ends 2026-06-03T11:30Z, before model chat's schedule window '0 8 * * 0'" in message
    assert "next closes at 2026-06-07T10:00Z" in message


def test_no_answer_is_not_checked_never_passed(tmp_path: Path) -> None:
    rows = judge(_env(tmp_path), {"l4": PoolAnswers()}, NOW)
    block, on_demand, spot = rows["l4"]["eu-west-1a"]
    assert block["status"] == spot["status"] == "not checked"
    assert block["not_checked"] == ["Capacity Block cr-0fedcba9876543210 (no answer)"]
    assert on_demand["status"] == "not checked"
    unasked = judge(_env(tmp_path), {}, NOW)["l4"]["eu-west-1a"][0]
    assert unasked["status"] == "not checked" and "reason" in unasked


def test_next_window_reads_the_schedule_in_its_time_zone() -> None:
    start, end = next_window("0 9 * * 1-5", 3600, "Europe/Berlin", NOW) or (None, None)
    assert start == dt.datetime(2026, 6, 1, 7, 0, tzinfo=dt.UTC)  # 09:00 CEST
    assert end == dt.datetime(2026, 6, 1, 8, 0, tzinfo=dt.UTC)
    saturday = dt.datetime(2026, 6, 6, 12, tzinfo=dt.UTC)
    assert (next_window("0 9 * * 1-5", 3600, "UTC", saturday) or (None,))[0] == dt.datetime(
        2026, 6, 8, 9, tzinfo=dt.UTC
    )


def test_quota_names_follow_the_family_and_market() -> None:
    assert preflight.quota_name("p5.48xlarge", "on_demand") == "Running On-Demand P instances"
    assert preflight.quota_name("g6e.xlarge", "spot") == "All G and VT Spot Instance Requests"
    assert preflight.quota_name("inf2.xlarge", "on_demand") is None


def test_a_block_answer_without_a_zone_leaves_the_zone_not_checked(tmp_path: Path) -> None:
    # What the offline harness hands back for a call it has no recording of: the call's
    # own arguments, every field of the answer empty.
    blocks = {"cr-0fedcba9876543210": {"id": "cr-0fedcba9876543210"}}
    rows = judge(_env(tmp_path), _answers(blocks=blocks), NOW)
    block = rows["l4"]["eu-west-1a"][0]
    assert "zone" not in block.get("checked", [])
    assert any("zone (no answer)" in n for n in block["not_checked"])
    assert block["status"] != "ok"


def test_a_block_that_ended_or_is_cancelled_is_refused(tmp_path: Path) -> None:
    ended = judge(_env(tmp_path), _answers(), dt.datetime(2026, 7, 1, tzinfo=dt.UTC))
    assert _rules(ended) == [("eu-west-1a", "capacity-block-window")]
    ((_, _, problem),) = preflight.problems_of(ended)
    assert "ended 2026-06-03T11:30Z: no node can launch into it" in problem["message"]
    cancelled = {"cr-0fedcba9876543210": {**BLOCK, "state": "cancelled"}}
    rows = judge(_env(tmp_path), _answers(blocks=cancelled), NOW)
    ((_, _, problem),) = preflight.problems_of(rows)
    assert "is cancelled: no node can launch into it" in problem["message"]


def test_the_window_is_checked_only_where_a_schedule_is_compared(tmp_path: Path) -> None:
    # chat-minimal's models keep no schedule windows: the block's end is checked, no window.
    rows = judge(_env(tmp_path), _answers(), NOW)
    assert rows["l4"]["eu-west-1a"][0]["checked"] == ["zone", "state", "end"]


def test_a_quota_is_not_checked_when_a_pool_drawing_on_it_has_no_vcpu_answer(
    tmp_path: Path,
) -> None:
    # A second G-family pool on the same on-demand quota whose vCPUs nobody answered: the
    # first pool's sum would leave it out, so its quota may not be called checked.
    env = _env(tmp_path)
    second = dataclasses.replace(env.pools["l4"], name="l4b")
    env = dataclasses.replace(env, pools={**env.pools, "l4b": second})
    rows = judge(env, _answers(), NOW)
    on_demand = rows["l4"]["eu-west-1a"][1]
    assert "quota" not in on_demand.get("checked", [])
    assert any("its sum is unknown" in n for n in on_demand["not_checked"])


def test_with_the_clusters_karpenter_the_quota_counts_no_update_surge(tmp_path: Path) -> None:
    import dataclasses as dc

    env = _env(tmp_path)
    addons = dc.replace(
        env.cluster.addons, karpenter=dc.replace(env.cluster.addons.karpenter, existing=True)
    )
    env = dc.replace(env, cluster=dc.replace(env.cluster, addons=addons))
    # nodes.max 4 in 2 zones at 8 vCPUs = 64, no surge: a quota of 64 holds.
    quotas = {
        "Running On-Demand G and VT instances": 64.0,
        "All G and VT Spot Instance Requests": 64.0,
    }
    assert _rules(judge(env, _answers(quotas=quotas), NOW)) == []
