"""`SpareGpus`: per zone of a pool, placeholder pods holding `spare_gpus` GPU units of the
pool's resource (a MIG slice on a MIG pool) under a negative PriorityClass that serving
pods preempt; valid Kubernetes objects that pass Pod Security ``restricted``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import kubernetes_validate
import pulumi_kubernetes as k8s
import pytest
from pod_security import ints, pods, violations
from serving_fixtures import DEPLOYMENT

from inferplane.app.offline import Recording
from inferplane.blueprint import naming
from inferplane.components.serving.scaling.spare_gpus import (
    PLACEHOLDER_PRIORITY,
    SpareGpus,
    SpareGpusArgs,
)
from inferplane.components.serving.spec_parts import ServingPool

PRIORITY_CLASS = "kubernetes:scheduling.k8s.io/v1:PriorityClass"
NS = "demo"
ZONES = ("us-east-1a", "us-east-1b")
EXCLUSIVE = ServingPool(name="l4", gpu_type="nvidia-l4", zones=ZONES, gpu_units_per_node=4)
MIG = ServingPool(
    name="h100",
    gpu_type="nvidia-h100-80gb",
    zones=ZONES[:1],
    gpu_resource="nvidia.com/mig-3g.40gb",
    gpu_units_per_node=16,
)
EXPENDABLE_PODS_PRIORITY_CUTOFF = -10
"""cluster-autoscaler's default ``--expendable-pods-priority-cutoff`` (kubernetes/autoscaler
``cluster-autoscaler/config/flags/flags.go``): pods below it never cause a scale-up."""


def run(run_mocked: Callable[..., Recording], pool: ServingPool, spare: int, per_pod: int):
    def program() -> None:
        SpareGpus(
            f"demo-stg-{pool.name}-spare-gpus",
            SpareGpusArgs(
                pool=pool,
                spare_gpu_units_per_zone=spare,
                gpu_units_per_pod=per_pod,
                part_of="demo",
                environment="stg",
                namespace=NS,
                provider=k8s.Provider("cluster"),
            ),
        )

    return run_mocked(program)


def by_zone(rec: Recording) -> dict[str, dict[str, Any]]:
    """Placeholder Deployments by the one zone each is pinned to."""
    out = {}
    for r in rec.of_type(DEPLOYMENT):
        if r.get("metadata", "labels", naming.ROLE_LABEL) != naming.SPARE_GPU_ROLE:
            continue
        spec = r.get("spec", "template", "spec")
        terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        (expr,) = terms["nodeSelectorTerms"][0]["matchExpressions"]
        assert expr["key"] == naming.TOPOLOGY_ZONE_LABEL and expr["operator"] == "In"
        (zone,) = expr["values"]
        out[zone] = ints(r.inputs)
    return out


def test_one_zone_pinned_deployment_per_zone_holds_the_spare_gpus(run_mocked) -> None:
    rec = run(run_mocked, EXCLUSIVE, spare=2, per_pod=1)
    zones = by_zone(rec)
    assert sorted(zones) == list(ZONES)
    for zone, dep in zones.items():
        assert dep["metadata"]["name"] == f"l4-spare-gpus-{zone}"
        assert dep["metadata"]["annotations"] == {"pulumi.com/skipAwait": "true"}
        assert dep["spec"]["replicas"] == 2
        pod = dep["spec"]["template"]["spec"]
        assert pod["nodeSelector"] == {naming.POOL_LABEL: "l4"}
        assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "present",
                "effect": "NoSchedule"} in pod["tolerations"]  # fmt: skip
        (pause,) = pod["containers"]
        assert pause["image"] == "registry.k8s.io/pause:3.10"
        assert pause["resources"]["requests"]["nvidia.com/gpu"] == "1"
        assert pause["resources"]["limits"]["nvidia.com/gpu"] == "1"
        assert pod["priorityClassName"] == "demo-stg-l4-spare-gpus"
        assert pod["terminationGracePeriodSeconds"] == 0
        assert pod["automountServiceAccountToken"] is False


def test_a_mig_pool_holds_mig_slices_whole_replicas_at_a_time(run_mocked) -> None:
    rec = run(run_mocked, MIG, spare=4, per_pod=2)
    (dep,) = by_zone(rec).values()
    assert dep["spec"]["replicas"] == 2
    (pause,) = dep["spec"]["template"]["spec"]["containers"]
    assert pause["resources"]["limits"] == {"nvidia.com/mig-3g.40gb": "2", "memory": "16Mi"}
    assert "nvidia.com/gpu" not in pause["resources"]["requests"]


def test_the_priority_class_is_negative_yet_scales_the_cluster_and_never_preempts(
    run_mocked,
) -> None:
    rec = run(run_mocked, EXCLUSIVE, spare=1, per_pod=1)
    (pc,) = rec.of_type(PRIORITY_CLASS)
    fields = ints(pc.inputs)
    assert fields["metadata"]["name"] == "demo-stg-l4-spare-gpus"
    assert "namespace" not in fields["metadata"]
    # Serving pods carry no priorityClassName: priority 0 (no class is globalDefault), so
    # they preempt placeholders ("If there is no PriorityClass with globalDefault set, the
    # priority of Pods with no priorityClassName is zero", kubernetes.io pod-priority-
    # preemption); -10 is the lowest value the cluster autoscaler still adds nodes for.
    assert EXPENDABLE_PODS_PRIORITY_CUTOFF <= fields["value"] == PLACEHOLDER_PRIORITY < 0
    assert fields["preemptionPolicy"] == "Never"
    assert fields["globalDefault"] is False
    # Every Deployment is created after its class (admission rejects an unknown class).
    for dep in rec.of_type(DEPLOYMENT):
        assert pc.urn in dep.depends_on


def test_placeholders_are_children_of_the_component(run_mocked) -> None:
    rec = run(run_mocked, EXCLUSIVE, spare=1, per_pod=1)
    (component,) = rec.of_type("inferplane:serving:SpareGpus")
    children = rec.children(component)
    assert sorted(r.name for r in children) == [
        "demo-stg-l4-spare-gpus-priority",
        "demo-stg-l4-spare-gpus-us-east-1a",
        "demo-stg-l4-spare-gpus-us-east-1b",
    ]


@pytest.mark.parametrize("pool,spare,per_pod", [(EXCLUSIVE, 2, 1), (MIG, 4, 2)])
def test_objects_are_valid_and_pods_restricted(run_mocked, pool, spare, per_pod) -> None:
    rec = run(run_mocked, pool, spare, per_pod)
    for r in rec:
        if r.type.startswith("kubernetes:"):
            kubernetes_validate.validate(ints(dict(r.inputs)), "1.33", strict=True)
    found = pods(rec, NS)
    assert len(found) == len(pool.zones)
    assert [p for _, spec, ann in found for p in violations(ints(spec), ann)] == []


@pytest.mark.parametrize("spare,per_pod", [(3, 2), (0, 1)])
def test_placeholders_that_cannot_hold_the_spare_exactly_are_refused(
    run_mocked, spare, per_pod
) -> None:
    with pytest.raises(Exception, match="pool 'l4'"):
        run(run_mocked, EXCLUSIVE, spare, per_pod)


def test_the_reference_stack_keeps_one_spare_l4_per_zone(reference_recording) -> None:
    for env_name, zones in {"staging": ("us-east-1a",), "prod": ZONES_PROD}.items():
        rec = reference_recording(env_name)
        found = by_zone(rec)
        assert sorted(found) == list(zones)
        for dep in found.values():
            assert dep["spec"]["replicas"] == 1
            assert dep["metadata"]["namespace"] == "support-assistant"
        # the MIG pool keeps none (its only model is a batch model)
        assert not [d for d in found.values() if d["metadata"]["labels"][naming.POOL_LABEL] != "l4"]


ZONES_PROD = ("us-central1-a", "us-central1-b")
