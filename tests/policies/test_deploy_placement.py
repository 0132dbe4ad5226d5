"""deploy-placement: each environment deploys where the platform's policy config places it,
at the value that moved it; an unlisted kubernetes environment is left to its stack's
kubernetes:context, a listed one is held to the list."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from inferplane.app.check import check_files
from inferplane.blueprint.errors import format_path

ROOT = Path(__file__).resolve().parents[2]
PLATFORM = ROOT / "policies" / "platform-config.yaml"
TODAY = dt.date(2026, 6, 1)


def _variant(tmp_path: Path, blueprint: str, old: str, new: str) -> Path:
    text = (ROOT / "blueprints" / blueprint).read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / blueprint
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def _placement(path: Path, config: Path | None, env: str) -> list[str]:
    report = check_files([str(path)], [env], str(config) if config else None, today=TODAY)
    assert not report.invalid, [d.format() for d in report.invalid]
    return [
        f"{r.location}: {format_path(r.field)}: {r.message}".replace(str(path.parent) + "/", "")
        for r in report.results
        if r.rule == "deploy-placement" and r.status == "violation"
    ]


def test_prod_moved_into_another_project_is_refused_at_project(tmp_path: Path) -> None:
    path = _variant(
        tmp_path, "support-assistant.yaml", "project: acme-ml-prod ", "project: acme-finance "
    )
    assert _placement(path, PLATFORM, "prod") == [
        "support-assistant.yaml:42:14: environments.prod.project: environment prod deploys "
        "to gcp project acme-finance, region us-central1, location us-central1, cluster "
        "prod-gke, not where the platform places blueprint support-assistant environment "
        "prod (gcp project acme-ml-prod, region us-central1, location us-central1, cluster "
        "prod-gke); deploy there, or ask the platform team to add this placement under "
        "deploy-placement.allowed_placements in its policy config"
    ]


def test_staging_attached_to_a_cluster_instead_of_its_own_is_refused(tmp_path: Path) -> None:
    path = _variant(
        tmp_path,
        "support-assistant.yaml",
        "      create: true             # create an EKS/GKE cluster and its network ...\n"
        '      kubernetes_version: "1.33"\n'
        "    overrides:                 # deep-merged into the sections below, for this "
        "environment only\n",
        "      existing: finance-eks\n"
        "    overrides:\n"
        "      load_balancer: {allowed_cidrs: [10.0.0.0/16]}\n",
    )
    [message] = _placement(path, PLATFORM, "staging")
    assert message.startswith(
        "support-assistant.yaml:27:17: environments.staging.cluster.existing: environment "
        "staging deploys to aws region us-east-1, cluster finance-eks, not where the platform "
        "places blueprint support-assistant environment staging (aws region us-east-1, a "
        "cluster it creates);"
    )


def test_a_kubernetes_environment_is_held_to_a_listed_context(tmp_path: Path) -> None:
    """The shipped config lists the local control plane's context for every blueprint: a
    pull request that points `local` at an administrator's context fails the check. With
    no entry at all, the stack program alone holds it to its kubernetes:context."""
    path = _variant(
        tmp_path, "chat-minimal.yaml", "context: inferplane-local", "context: prod-admin"
    )
    assert _placement(path, None, "local") == []
    assert _placement(path, PLATFORM, "local") == [
        "chat-minimal.yaml:29:16: environments.local.cluster.context: environment local "
        "deploys to kubernetes kubeconfig context prod-admin, not where the platform places "
        "blueprint chat-minimal environment local (kubernetes kubeconfig context "
        "inferplane-local); deploy there, or ask the platform team to add this placement "
        "under deploy-placement.allowed_placements in its policy config"
    ]


def test_a_switch_of_cloud_is_refused_at_cloud(tmp_path: Path) -> None:
    """An environment placed on gcp may not become a kubernetes one to escape its entry."""
    config = tmp_path / "platform.yaml"
    config.write_text(
        "deploy-placement:\n  allowed_placements:\n"
        "    chat-minimal/local: [{cloud: aws, region: eu-west-1}]\n"
    )
    path = _variant(tmp_path, "chat-minimal.yaml", "context: inferplane-local", "context: x")
    [message] = _placement(path, config, "local")
    assert message.startswith("chat-minimal.yaml:19:12: environments.local.cloud: environment ")


def test_a_placement_keyed_by_an_environment_name_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "platform.yaml"
    config.write_text(
        "deploy-placement:\n  allowed_placements:\n    prod: [{cloud: aws, region: eu-west-1}]\n"
    )
    report = check_files([str(ROOT / "blueprints" / "chat-minimal.yaml")], ["prod"], str(config))
    assert [d.format() for d in report.invalid] == [
        f"{config}:3:5: error: deploy-placement.allowed_placements.prod: key 'prod' is the "
        "name of an environment (of blueprint 'chat-minimal'), and keys of this list name "
        "blueprints: it would grant to a blueprint named 'prod', not to that environment; "
        "write chat-minimal/prod for that environment of 'chat-minimal', or the blueprint's "
        "name for all its environments"
    ]


def test_an_entry_with_keys_of_another_cloud_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "platform.yaml"
    config.write_text(
        "deploy-placement:\n  allowed_placements:\n"
        "    chat-minimal/prod: [{cloud: aws, region: eu-west-1, project: acme}]\n"
    )
    report = check_files([str(ROOT / "blueprints" / "chat-minimal.yaml")], ["prod"], str(config))
    assert [d.format() for d in report.invalid] == [
        f"{config}:3:25: error: deploy-placement.allowed_placements.chat-minimal/prod[0]: "
        "'project' is not one of ['cloud', 'region', 'cluster']; see "
        "policies/config.schema.json"
    ]
