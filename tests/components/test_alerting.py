"""Alertmanager receivers: the blueprint names them, their credentials (secret references)
reach Alertmanager only as files of a mounted Kubernetes Secret, never as Helm values.

Upstream: Alertmanager ``docs/configuration.md`` (``api_url_file``, ``routing_key_file``,
``url_file``); prometheus-operator ``AlertmanagerSpec.secrets`` ("mounted into
/etc/alertmanager/secrets/<secret-name>"); kube-prometheus-stack values.yaml
(``alertmanager.config``, ``alertmanager.alertmanagerSpec.secrets``)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from test_addons import chart, unknown_keys

from inferplane.app import plan_output
from inferplane.app.offline import SECRET, Recording, run_program
from inferplane.blueprint import naming
from inferplane.blueprint.model import AlertReceiver, Environment, SecretRef
from inferplane.components import addon_values, stack_args

RELEASE = "kubernetes:helm.sh/v3:Release"
SLACK_URL = "https://hooks.slack.com/services/T000/B000/slack-canary-7f3a"
PD_KEY = "pagerduty-canary-routing-key-91c2"
HOOK_URL = "https://hooks.example.com/alerts?token=webhook-canary-55e1"
MOUNT = "/etc/alertmanager/secrets/alertmanager-receivers"


def with_receivers(env: Environment) -> Environment:
    base = ("observability", "alerts", "receivers")

    def ref(i: int, integration: str, field: str, key: str, var: str) -> SecretRef:
        return SecretRef(name=key, path=(*base, i, integration, field), from_env=var)

    receivers = (
        AlertReceiver(
            name="ml-team",
            path=(*base, 0),
            slack_channel="#ml-alerts",
            slack_api_url=ref(0, "slack", "api_url", "ml-team-slack-api-url", "SLACK_URL"),
        ),
        AlertReceiver(
            name="oncall",
            path=(*base, 1),
            pagerduty_routing_key=ref(
                1, "pagerduty", "routing_key", "oncall-pagerduty-routing-key", "PD_KEY"
            ),
            webhook_url=ref(1, "webhook", "url", "oncall-webhook-url", "HOOK_URL"),
        ),
    )
    obs = dataclasses.replace(
        env.observability, alert_receivers=receivers, alert_route_receiver="oncall"
    )
    return dataclasses.replace(env, observability=obs)


@pytest.fixture(scope="session")
def online(staging: Environment) -> Recording:
    """The whole program, online (secrets read from the environment), with receivers."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SLACK_URL", SLACK_URL)
        mp.setenv("PD_KEY", PD_KEY)
        mp.setenv("HOOK_URL", HOOK_URL)
        mp.setenv("HF_TOKEN", "hf-token-of-the-reference-blueprint")
        return run_program(with_receivers(staging), config={"inferplane:offline": "false"})


def prometheus(rec: Recording) -> dict[str, Any]:
    (release,) = [r for r in rec.of_type(RELEASE) if r.inputs["name"] == "kube-prometheus-stack"]
    values: dict[str, Any] = release.inputs["values"]
    return values


def test_receivers_route_and_files_in_the_values(staging: Environment) -> None:
    values = addon_values.alertmanager_values(
        stack_args.alert_receivers(with_receivers(staging)), "oncall"
    )
    assert values == {
        "config": {
            "route": {"receiver": "oncall"},
            "receivers": [
                {"name": "null"},  # the chart's Watchdog route still points at it
                {
                    "name": "ml-team",
                    "slack_configs": [
                        {
                            "channel": "#ml-alerts",
                            "api_url_file": f"{MOUNT}/ml-team-slack-api-url",
                            "send_resolved": True,
                        }
                    ],
                },
                {
                    "name": "oncall",
                    "pagerduty_configs": [
                        {"routing_key_file": f"{MOUNT}/oncall-pagerduty-routing-key"}
                    ],
                    "webhook_configs": [{"url_file": f"{MOUNT}/oncall-webhook-url"}],
                },
            ],
        },
        "alertmanagerSpec": {"secrets": ["alertmanager-receivers"]},
    }


def test_the_release_values_are_the_charts_keys(online: Recording) -> None:
    values = prometheus(online)
    ref = chart("kube-prometheus-stack")
    assert unknown_keys(values, ref) == []
    # The chart's default route sends Watchdog to 'null' and keeps group_by etc.: only the
    # default receiver is replaced (Helm merges maps), and 'null' stays a receiver.
    assert ref["alertmanager"]["config"]["route"]["receiver"] == "null"
    assert values["alertmanager"]["config"]["route"] == {"receiver": "oncall"}
    assert values["alertmanager"]["alertmanagerSpec"] == {"secrets": ["alertmanager-receivers"]}


def test_credentials_live_only_in_a_secret_mounted_into_alertmanager(online: Recording) -> None:
    (secret,) = [
        r
        for r in online.of_type("kubernetes:core/v1:Secret")
        if r.get("metadata", "name") == "alertmanager-receivers"
    ]
    assert secret.get("metadata", "namespace") == naming.MONITORING_NAMESPACE
    # Every value is a Pulumi secret: encrypted in state, masked in previews.
    assert secret.inputs["stringData"] == {
        "ml-team-slack-api-url": SECRET,
        "oncall-pagerduty-routing-key": SECRET,
        "oncall-webhook-url": SECRET,
    }
    release = next(
        r for r in online.of_type(RELEASE) if r.inputs["name"] == "kube-prometheus-stack"
    )
    assert secret.urn in release.depends_on
    everything = json.dumps([r.inputs for r in online])
    for canary in (SLACK_URL, PD_KEY, HOOK_URL):
        assert canary not in everything


def test_no_credential_in_the_plan_output(online: Recording, staging: Environment) -> None:
    written = "".join(
        text for _, text in plan_output.files(online.revealed(), staging.blueprint, "staging")
    )
    assert "alertmanager-receivers" in written
    for canary in (SLACK_URL, PD_KEY, HOOK_URL):
        assert canary not in written


def test_without_receivers_alertmanager_keeps_the_chart_config(staging: Environment) -> None:
    values = addon_values.kube_prometheus_stack_values(
        retention="15d", storage_gib=50, grafana_enabled=True, alerts_enabled=True
    )
    assert values["alertmanager"] == {"enabled": True}


def test_an_unset_receiver_variable_stops_the_update_first(
    staging: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`check_deploy_inputs` covers the receivers' ``from_env`` like the models'."""
    from inferplane.app.program import check_deploy_inputs
    from inferplane.blueprint.errors import BlueprintError

    monkeypatch.setenv("HF_TOKEN", "hf")
    monkeypatch.setenv("PD_KEY", PD_KEY)
    monkeypatch.setenv("HOOK_URL", HOOK_URL)
    monkeypatch.delenv("SLACK_URL", raising=False)
    monkeypatch.setattr("inferplane.app.program.is_offline", lambda: False)
    with pytest.raises(BlueprintError) as err:
        check_deploy_inputs(with_receivers(staging))
    [diag] = err.value.diagnostics
    # The reference blueprint writes no receivers (this test adds them): the location is
    # the nearest written ancestor; the message names the full path.
    assert diag.path == ("observability", "alerts")
    assert diag.message == (
        "environment variable SLACK_URL is not set (secret "
        "observability.alerts.receivers[0].slack.api_url reads it when `pulumi up` runs)"
    )
