"""A plan tells the truth: values that exist only after deploy are shown as unknowns that
name their source, never as the IDs the offline run had to make up; the rules still see
well-formed values."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from pathlib import Path

from inferplane.app import plan_output
from inferplane.app.offline import Recording
from inferplane.app.offline_values import ACCOUNT_ID, CloudFacts, UnknownValues

APP = Path(__file__).resolve().parents[2] / "inferplane" / "app"


def _plan_text(recording: Recording, environment: str) -> str:
    revealed = recording.revealed()
    files = plan_output.files(revealed, "support-assistant", environment)
    return "\n".join(text for _, text in files)


def test_aws_plan_names_deploy_time_values_and_holds_no_made_up_ids(
    reference_recording: Callable[[str], Recording],
) -> None:
    recording = reference_recording("staging")
    text = _plan_text(recording, "staging")
    assert ACCOUNT_ID not in text
    # Made-up EC2 IDs, or an ARN naming an account (wildcard and S3 ARNs are known values).
    made_up = re.compile(
        r"\b(?:subnet|vpc|sg|rtb|igw|nat|eipalloc)-[0-9a-f]{17}\b|arn:aws:[a-z0-9-]*:[a-z0-9-]*:\d{12}:"
    )
    assert made_up.findall(text) == []
    doc = json.loads(
        next(t for n, t in plan_output.files(recording.revealed(), "s", "e") if n == "plan.json")
    )
    by_name = {r["name"]: r for r in doc["resources"]}
    lb = by_name["support-assistant-staging-chat-lb"]["inputs"]["metadata"]["annotations"]
    assert lb["service.beta.kubernetes.io/aws-load-balancer-subnets"] == (
        "<unknown: id of subnet support-assistant-staging-private-a>"
    )
    reader = next(
        r
        for r in doc["resources"]
        if r["type"] == "kubernetes:core/v1:ServiceAccount"
        and r["inputs"]["metadata"]["name"] == "model-reader"
    )
    assert reader["inputs"]["metadata"]["annotations"]["eks.amazonaws.com/role-arn"] == (
        "<unknown: arn of role support-assistant-staging-model-reader>"
    )


def test_the_recording_itself_keeps_provider_formats_for_the_rules(
    reference_recording: Callable[[str], Recording],
) -> None:
    recording = reference_recording("staging")
    raw = json.dumps([r.inputs for r in recording], default=str)
    assert f"arn:aws:iam::{ACCOUNT_ID}:role/" in raw
    assert "subnet-" in raw


def test_gcp_plan_names_what_the_existing_cluster_and_new_accounts_provide(
    reference_recording: Callable[[str], Recording],
) -> None:
    recording = reference_recording("prod")
    shown = json.dumps([r.inputs for r in recording.revealed()])
    assert (
        "<unknown: workloadIdentityConfigs[0].workloadPool from getCluster acme-ml-prod, "
        "prod-gke, us-central1>" in shown
    )
    assert "<unknown: email of account support-assistant-prod-model-reader>" in shown
    assert "iam.gserviceaccount.com" not in shown


def test_unknown_values_label_ids_outputs_and_lookups() -> None:
    values = UnknownValues(CloudFacts("aws", "us-east-1", ("us-east-1a",)))
    values.note_resource(
        "aws:ec2/subnet:Subnet",
        "shop-prod-private-a",
        "subnet-0abc1234def567890",
        {"cidrBlock": "10.0.0.0/19", "availabilityZone": "us-east-1a"},
        {
            "cidrBlock": "10.0.0.0/19",
            "availabilityZone": "us-east-1a",
            "arn": f"arn:aws:ec2:us-east-1:{ACCOUNT_ID}:subnet/subnet-0abc1234def567890",
            "ownerId": ACCOUNT_ID,
        },
    )
    values.note_invoke(
        "aws:ec2/getSubnets:getSubnets",
        {"filters": [{"name": "availability-zone", "values": ["us-east-1b"]}]},
        {"ids": ["subnet-0fff1234def567890"]},
    )
    shown = values.reveal(
        {
            "subnets": "subnet-0abc1234def567890,subnet-0fff1234def567890",
            "policy": '{"Resource": "'
            + f"arn:aws:ec2:us-east-1:{ACCOUNT_ID}:subnet/subnet-0abc1234def567890"
            + '"}',
            "account": ACCOUNT_ID,
            "zone": "us-east-1a",
        }
    )
    assert shown == {
        "subnets": "<unknown: id of subnet shop-prod-private-a>,"
        "<unknown: ids[0] from getSubnets availability-zone, us-east-1b>",
        "policy": '{"Resource": "<unknown: arn of subnet shop-prod-private-a>"}',
        "account": "<unknown: AWS account id>",
        "zone": "us-east-1a",
    }


def test_mocks_and_invokes_no_longer_import_each_other() -> None:
    def imports(name: str) -> set[str]:
        tree = ast.parse((APP / f"{name}.py").read_text(encoding="utf-8"))
        return {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}

    assert "inferplane.app.offline_mocks" not in imports("offline_invokes")
    assert "inferplane.app.offline_values" in imports("offline_invokes")
    assert "inferplane.app.offline_values" in imports("offline_mocks")


def test_names_that_start_with_the_clusters_name_stay_names(
    reference_recording: Callable[[str], Recording],
) -> None:
    # An EKS cluster's ID is its name, given as an input: nothing made up, so a
    # PriorityClass named after the blueprint and environment keeps its name and file name.
    recording = reference_recording("staging")
    files = dict(plan_output.files(recording.revealed(), "support-assistant", "staging"))
    [name] = [n for n in files if "priorityclass" in n]
    assert name.endswith("-priorityclass-cluster-support-assistant-staging-l4-spare-gpus.yaml")
    assert "name: support-assistant-staging-l4-spare-gpus\n" in files[name]
    assert not [n for n in files if "unknown" in n]


def test_an_id_that_is_an_input_is_not_unknown() -> None:
    unknowns = UnknownValues(CloudFacts("aws", "us-east-1", ("us-east-1a",)))
    unknowns.note_resource(
        "aws:eks/cluster:Cluster", "shop-prod", "shop-prod", {"name": "shop-prod"}, {}
    )
    assert unknowns.reveal("shop-prod-l4-spare-gpus") == "shop-prod-l4-spare-gpus"
