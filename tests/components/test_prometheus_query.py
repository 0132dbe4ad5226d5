"""The type check of an existing Prometheus' query Service (`prometheus_query`)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from inferplane.components.prometheus_query import checked_type, query_service


def test_the_service_a_query_url_names() -> None:
    assert query_service("http://prometheus-operated.monitoring.svc:9090") == (
        "monitoring",
        "prometheus-operated",
    )
    assert query_service("https://p.obs.svc.cluster.local:9443/prom") == ("obs", "p")


@pytest.mark.parametrize("spec", [{"type": "ClusterIP"}, {"type": "NodePort"}, {}, None])
def test_a_service_that_routes_in_the_cluster_passes(spec: dict[str, str] | None) -> None:
    kind = (spec or {}).get("type", "ClusterIP")
    assert checked_type("monitoring", "prom", spec) == f"monitoring/prom ({kind})"


def test_an_external_name_alias_is_refused() -> None:
    spec = {"type": "ExternalName", "externalName": "metrics.attacker.example"}
    with pytest.raises(ValueError) as err:
        checked_type("monitoring", "prom", spec)
    assert str(err.value) == (
        "Service monitoring/prom, which query_url names, is an ExternalName alias of "
        "'metrics.attacker.example': KEDA would scale the GPU Deployments on whatever answers "
        "there. Point query_url (cluster.addons.prometheus) at the Prometheus' own Service"
    )


PROGRAM = '''
import pulumi, pulumi_kubernetes as k8s
from inferplane.components.prometheus_query import checked_query_service

class Cluster(pulumi.runtime.Mocks):
    """Answers the read of the query Service with what a hostile namespace could hold."""

    def new_resource(self, args):
        state = dict(args.inputs)
        if args.resource_id:
            state["spec"] = {"type": "ExternalName", "externalName": "metrics.attacker.example"}
        return (args.resource_id or args.name + "-id", state)

    def call(self, args):
        return {}

pulumi.runtime.set_mocks(Cluster(), preview=True)
checked = checked_query_service("s", "http://prom.monitoring.svc:9090", None, None)
cm = k8s.core.v1.ConfigMap("cm", metadata={"name": "env", "annotations": {"a": checked}})

@pulumi.runtime.test
def deploy():
    return cm.metadata.apply(lambda m: print("REGISTERED", m))

deploy()
'''


def test_an_external_name_alias_stops_the_registration_that_takes_it() -> None:
    """Under Pulumi's mocks, the ConfigMap that carries the check is never registered when
    the read Service is an ExternalName: the deploy fails at preview."""
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode != 0
    assert "REGISTERED" not in proc.stdout
    assert "is an ExternalName alias of 'metrics.attacker.example'" in proc.stderr
