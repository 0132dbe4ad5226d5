"""The capacity preflight in the stack (`inferplane.components.capacity_preflight`): the
invokes it asks and the ConfigMap it publishes, under the offline harness with recorded
answers; offline without them it asks nothing."""

from __future__ import annotations

import json
from pathlib import Path

from inferplane.app.offline import run_program
from inferplane.blueprint import naming
from inferplane.blueprint.resolution.resolve import resolve_file

ROOT = Path(__file__).resolve().parents[2]
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
PREFLIGHT_TOKENS = {
    "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings",
    "aws:ec2/getInstanceType:getInstanceType",
    "aws:servicequotas/getServiceQuota:getServiceQuota",
    "aws:ec2/getCapacityBlockReservation:getCapacityBlockReservation",
    "aws:ec2/getSpotPrice:getSpotPrice",
}
RECORDED = [
    {
        "token": "aws:ec2/getInstanceTypeOfferings:getInstanceTypeOfferings",
        "answer": {"id": "eu-west-1", "locations": ["eu-west-1a", "eu-west-1b"]},
    },
    {"token": "aws:ec2/getInstanceType:getInstanceType", "answer": {"id": "t", "defaultVcpus": 8}},
]


def _env(tmp_path: Path):  # type: ignore[no-untyped-def]
    text = (ROOT / "blueprints" / "chat-minimal.yaml").read_text()
    anchor = '      kubernetes_version: "1.33"\n'
    path = tmp_path / "chat.yaml"
    path.write_text(text.replace(anchor, anchor + SOURCES, 1))
    return resolve_file(str(path), "prod")


def test_offline_the_preflight_asks_nothing(tmp_path: Path) -> None:
    recording = run_program(_env(tmp_path))
    assert not {i.token for i in recording.invokes} & PREFLIGHT_TOKENS
    names = {r.inputs.get("metadata", {}).get("name") for r in recording.resources}
    assert naming.PREFLIGHT_CONFIGMAP not in names


def test_with_recorded_answers_it_asks_ec2_and_publishes_the_judged_rows(tmp_path: Path) -> None:
    recording = run_program(
        _env(tmp_path), invokes=RECORDED, config={"inferplane:preflightNow": "2026-06-01T00:00:00Z"}
    )
    asked = [i for i in recording.invokes if i.token in PREFLIGHT_TOKENS]
    offerings = next(i for i in asked if i.token.endswith("getInstanceTypeOfferings"))
    assert offerings.args["locationType"] == "availability-zone"
    assert {"name": "location", "values": ["eu-west-1a", "eu-west-1b"]} in offerings.args["filters"]
    quotas = sorted(i.args["quotaName"] for i in asked if "servicequotas" in i.token)
    assert quotas == ["All G and VT Spot Instance Requests", "Running On-Demand G and VT instances"]
    assert all(i.args["serviceCode"] == "ec2" for i in asked if "servicequotas" in i.token)
    block = next(i for i in asked if i.token.endswith("getCapacityBlockReservation"))
    assert block.args["id"] == "cr-0fedcba9876543210"
    spot = sorted(i.args["availabilityZone"] for i in asked if i.token.endswith("getSpotPrice"))
    assert spot == ["eu-west-1a", "eu-west-1b"]
    (cm,) = [
        r
        for r in recording.resources
        if r.inputs.get("metadata", {}).get("name") == naming.PREFLIGHT_CONFIGMAP
    ]
    assert cm.inputs["metadata"]["namespace"] == "chat-minimal"
    rows = json.loads(cm.inputs["data"]["preflight.json"])
    on_demand = rows["l4"]["eu-west-1a"][1]
    # Offered and counted (8 vCPUs), but no quota was recorded: not passed, not checked.
    assert on_demand["status"] == "partly checked"
    assert on_demand["checked"] == ["offered"]
    assert on_demand["not_checked"] == ["quota 'Running On-Demand G and VT instances' (no answer)"]
