"""What the end-to-end run reads and decides without a cluster: engine events, the verdicts
it compares with `inferplane check`, the made-up secrets and the search for them in plain
text, the environments it cannot deploy here, and the KWOK nodes of a blueprint's pools."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "e2e"))

import nodes  # noqa: E402
import pulumi_cli  # noqa: E402
import run  # noqa: E402

from inferplane.blueprint import naming  # noqa: E402
from inferplane.blueprint.resolution.resolve import resolve_file  # noqa: E402

DEPLOYMENT_URN = (
    "urn:pulumi:local::inferplane::inferplane:stack:InferenceStack$"
    "inferplane:serving:ModelServer$kubernetes:apps/v1:Deployment::new-user-local-chat"
)
# Lines as `pulumi preview --event-log` writes them (engine events, apitype/events.go).
EVENTS = [
    {"sequence": 0, "diagnosticEvent": {"message": "warning", "severity": "warning"}},
    {
        "sequence": 7,
        "policyEvent": {
            "resourceUrn": DEPLOYMENT_URN,
            "message": "A realtime model gets one more ready replica within a bounded time",
            "policyName": "scale-out-budget",
            "policyPackName": "inferplane",
            "enforcementLevel": "advisory",
        },
    },
    {
        "sequence": 8,
        "policyEvent": {
            "message": "stack-level",
            "policyName": "slo-defined",
            "policyPackName": "inferplane",
            "enforcementLevel": "mandatory",
        },
    },
    {
        "sequence": 9,
        "summaryEvent": {"resourceChanges": {"create": 78}, "result": "succeeded"},
    },
]


def test_policy_verdicts_are_rule_level_and_resource_urn() -> None:
    assert pulumi_cli.policy_verdicts_of(EVENTS) == [
        {"rule": "scale-out-budget", "level": "advisory", "urn": DEPLOYMENT_URN},
        {"rule": "slo-defined", "level": "mandatory", "urn": ""},
    ]


def test_the_change_summary_is_read_from_the_summary_event() -> None:
    assert pulumi_cli.changes_of(EVENTS) == {"create": 78}


def test_no_summary_or_a_failed_one_is_no_answer_about_changes() -> None:
    with pytest.raises(pulumi_cli.StepFailed, match="no summary"):
        pulumi_cli.changes_of(EVENTS[:2])
    failed = [{"summaryEvent": {"resourceChanges": {"same": 3}, "result": "failed"}}]
    with pytest.raises(pulumi_cli.StepFailed, match="'failed'"):
        pulumi_cli.changes_of(failed)


def test_runner_variables_and_config_secrets_get_made_up_values() -> None:
    env = resolve_file(ROOT / "blueprints" / "chat-minimal.yaml", "prod")
    variables, config = run.secret_inputs(env)
    assert list(variables) == ["HF_TOKEN"]
    assert variables["HF_TOKEN"].startswith("e2e-secret-") and len(variables["HF_TOKEN"]) > 30
    assert config == {}


def test_a_secret_value_in_any_file_of_state_or_logs_is_found(tmp_path: Path) -> None:
    (tmp_path / "backend" / ".pulumi").mkdir(parents=True)
    (tmp_path / "logs").mkdir()
    state = tmp_path / "backend" / ".pulumi" / "local.json"
    state.write_text(json.dumps({"outputs": {"token": {"ciphertext": "v1:abc"}}}))
    assert run.plain_text_leaks(["e2e-secret-123456"], [tmp_path / "backend"]) == []
    (tmp_path / "logs" / "up.log").write_text("env HF_TOKEN=e2e-secret-123456\n")
    found = run.plain_text_leaks(["e2e-secret-123456"], [tmp_path / "backend", tmp_path / "logs"])
    assert len(found) == 1 and "up.log" in found[0] and "123456" not in found[0]


def test_what_cannot_be_deployed_here_says_why() -> None:
    llm = resolve_file(ROOT / "blueprints" / "llm-serving.yaml", "prod")
    (helm,) = run.not_runnable(llm)
    assert "gpu_operator, keda, keda_http_add_on, prometheus are `install`" in helm
    # A Redis cache's password is generated in the program's own Python: it deploys here.
    assert run.not_runnable(resolve_file(ROOT / "blueprints" / "llm-serving.yaml", "local")) == []
    new_user = resolve_file(ROOT / "e2e" / "blueprints" / "new-user.yaml", "local")
    assert run.not_runnable(new_user) == []
    routed = resolve_file(ROOT / "blueprints" / "llm-routing.yaml", "local")
    assert run.not_runnable(routed) == []  # its pickers' pods are completed to pass restricted


def test_kwok_nodes_carry_the_pool_s_labels_taint_and_gpus_per_zone() -> None:
    env = resolve_file(ROOT / "e2e" / "blueprints" / "new-user.yaml", "local")
    made = nodes.nodes_for(env)
    gpu = [n for n in made if naming.POOL_LABEL in n["metadata"]["labels"]]
    system = [n for n in made if naming.POOL_LABEL not in n["metadata"]["labels"]]
    # two pools x two zones x three nodes, and two system nodes per zone
    assert len(gpu) == 12 and len(system) == 4
    node = next(n for n in gpu if n["metadata"]["name"] == "l4-chat-zone-b-2")
    labels = node["metadata"]["labels"]
    assert labels[naming.POOL_LABEL] == "l4-chat"
    assert labels[naming.BLUEPRINT_LABEL] == "new-user"
    assert labels[naming.TOPOLOGY_ZONE_LABEL] == "zone-b"
    assert labels["topology.kubernetes.io/region"] == "local"
    assert node["spec"]["taints"] == [
        {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    ]
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "1"
    assert node["metadata"]["annotations"]["kwok.x-k8s.io/node"] == "fake"
    assert all(not n["spec"]["taints"] for n in system)
    assert {n["metadata"]["labels"][naming.TOPOLOGY_ZONE_LABEL] for n in system} == {
        "zone-a",
        "zone-b",
    }


def test_the_project_s_stack_names_the_control_plane_s_context(tmp_path: Path) -> None:
    """The stack program deploys only where the stack's own config says: the project's
    stack file names the local control plane's kubeconfig context."""
    blueprint = ROOT / "e2e" / "blueprints" / "new-user.yaml"
    proj = pulumi_cli.project_dir(tmp_path, blueprint, "local", "inferplane-local")
    config = yaml.safe_load((proj / "Pulumi.local.yaml").read_text())["config"]
    assert config["kubernetes:context"] == "inferplane-local"
    assert config["inferplane:blueprint"] == str(blueprint)
    assert resolve_file(blueprint, "local").cluster.context == "inferplane-local"
