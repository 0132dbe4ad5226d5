"""The Alertmanager receivers' credentials: one Kubernetes Secret, never Helm values.

kube-prometheus-stack renders ``alertmanager.config`` into a Secret of its own, but the
values it renders from are stored in plain text (Pulumi state, the Helm release Secret). So
the receivers' URLs and keys go into `addon_values.ALERTMANAGER_SECRET` instead, as Pulumi
secrets, and the values only name the files the operator mounts from it
(`addon_values.alertmanager_values`).
"""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_kubernetes as k8s

from inferplane.blueprint import naming
from inferplane.components.addon_values import ALERTMANAGER_SECRET, AlertReceiverValues


def secret_keys(receivers: tuple[AlertReceiverValues, ...]) -> list[str]:
    """The keys the receivers read from the Secret."""
    return [
        key
        for r in receivers
        for key in (r.slack_api_url_key, r.pagerduty_routing_key_key, r.webhook_url_key)
        if key is not None
    ]


def receivers_secret(
    name: str,
    receivers: tuple[AlertReceiverValues, ...],
    values: Mapping[str, pulumi.Input[str]],
    opts: pulumi.ResourceOptions,
) -> k8s.core.v1.Secret:
    """The Secret with one key per credential of `receivers`, each value a Pulumi secret
    (`values`: key -> value). Raises ValueError when a key has no value."""
    missing = [key for key in secret_keys(receivers) if key not in values]
    if missing:
        raise ValueError(f"no value for alert receiver secret(s) {', '.join(missing)}")
    return k8s.core.v1.Secret(
        name,
        metadata={"name": ALERTMANAGER_SECRET, "namespace": naming.MONITORING_NAMESPACE},
        type="Opaque",
        string_data={key: pulumi.Output.secret(values[key]) for key in secret_keys(receivers)},
        opts=pulumi.ResourceOptions.merge(
            opts, pulumi.ResourceOptions(additional_secret_outputs=["data", "stringData"])
        ),
    )
