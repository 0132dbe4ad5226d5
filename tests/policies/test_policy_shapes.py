"""Rules on hand-written resource shapes: what CrossGuard sees from any program, including
faults a blueprint cannot express (the components never render them)."""

from __future__ import annotations

from typing import Any

import pytest
import shapes as S

from inferplane.policies import resources as R
from inferplane.policies.framework import Finding
from inferplane.policies.rules import all_rules, rule


def run(rule_id: str, resources: list[R.Resource], **config: Any) -> list[Finding]:
    return rule(rule_id).run(S.stack(resources), config)


def test_compliant_hand_written_stack_passes_every_rule() -> None:
    stack = S.stack(S.compliant())
    for r in all_rules():
        assert r.run(stack) == [], r.id


# --- warm-replicas ------------------------------------------------------------------------
def test_scaled_object_without_min_replica_count_scales_to_zero() -> None:
    resources = S.compliant()
    resources[4] = S.scaled_object("chat", lo=None)
    [finding] = run("warm-replicas", resources)
    assert finding.target == "models.chat"
    assert finding.field == ("models", "chat", "replicas", "min")
    assert "renders no minReplicaCount" in finding.message


def test_idle_replica_count_undercuts_the_warm_minimum() -> None:
    resources = S.compliant()
    resources[4] = S.scaled_object("chat", idleReplicaCount=0)
    [finding] = run("warm-replicas", resources)
    assert "idleReplicaCount" in finding.message


def test_minimum_below_one_per_zone_and_configurable_floor() -> None:
    resources = S.compliant()
    resources[4] = S.scaled_object("chat", lo=1.0)
    [finding] = run("warm-replicas", resources)
    assert "keeps 1 warm replica;" in finding.message and "needs at least 2" in finding.message
    assert run("warm-replicas", S.compliant(), min_warm_replicas_per_zone=2)[0].target == (
        "models.chat"
    )


def test_a_realtime_model_at_zero_says_how_it_comes_back() -> None:
    resources = S.compliant()
    resources[4] = S.scaled_object("chat", lo=0.0)
    [finding] = run("warm-replicas", resources)
    assert "keeps 0 warm replicas" in finding.message
    assert finding.message.endswith(
        "; at zero nothing wakes it (no cron or HTTP add-on trigger, and its own metrics "
        "vanish with its last pod): it does not come back until its minimum is raised"
    )
    http = {
        "type": "external-push",
        "metadata": {
            "scalerAddress": "keda-add-ons-http-external-scaler.keda:9090",
            "httpScaledObject": "chat",
        },
    }
    cron = {
        "type": "cron",
        "metadata": {"timezone": "UTC", "start": "0 8 * * *", "end": "0 18 * * *"},
    }
    resources[4].props["spec"]["triggers"] += [http, cron]
    [finding] = run("warm-replicas", resources)  # still a cold start: still reported
    assert finding.message.endswith(
        "; at zero it wakes on its own HTTP requests (held by the KEDA HTTP add-on) or its "
        "schedule (0 8 * * * to 0 18 * * *, UTC), and that first request waits"
    )


def test_batch_models_may_scale_to_zero() -> None:
    resources = S.compliant()
    resources[3] = S.deployment("chat", latency="batch")
    resources[4] = S.scaled_object("chat", lo=0.0, latency="batch")
    assert run("warm-replicas", resources) == []


def test_pool_minimum_must_hold_warm_gpus_per_zone() -> None:
    resources = S.compliant()
    resources[1] = S.node_group("l4", S.ZONES[0], lo=0)
    [finding] = run("warm-replicas", resources)
    assert finding.target == "gpu_pools.l4"
    assert finding.field == ("gpu_pools", "l4", "nodes", "min")
    assert "in zone us-east-1a, nodes.min 0" in finding.message


# --- same-zone-placement -------------------------------------------------------------------
def test_node_group_spanning_subnets() -> None:
    resources = S.compliant()
    resources[1] = S.node_group("l4", S.ZONES[0], subnets=2)
    [finding] = run("same-zone-placement", resources)
    assert finding.target == "gpu_pools.l4" and "spans 2 zones" in finding.message


def test_gke_node_pool_in_two_locations() -> None:
    pool = S.res(
        R.GKE_NODE_POOL,
        "np",
        {
            "nodeLocations": list(S.ZONES),
            "nodeConfig": {"labels": {"inferplane.dev/pool": "l4"}},
            "autoscaling": {"minNodeCount": 2.0, "maxNodeCount": 4.0},
        },
    )
    findings = run("same-zone-placement", [*S.compliant(), pool])
    assert [f.message.split(";")[0] for f in findings] == ["node group np spans 2 zones or subnets"]


def test_unpinned_pods_and_pods_outside_pool_zones() -> None:
    resources = S.compliant()
    unpinned = S.deployment("chat")
    del unpinned.props["spec"]["template"]["spec"]["affinity"]
    resources[3] = unpinned
    [finding] = run("same-zone-placement", resources)
    assert "not pinned to zones" in finding.message and finding.field == ("models", "chat", "pool")
    resources[3] = S.deployment("chat", zones=("us-east-1a", "us-east-1c"))
    assert any("us-east-1c, outside" in f.message for f in run("same-zone-placement", resources))


AWS_ZONE_LOCAL = {
    "service.beta.kubernetes.io/aws-load-balancer-attributes": (
        "load_balancing.cross_zone.enabled=false,"
        "dns_record.client_routing_policy=availability_zone_affinity"
    )
}


@pytest.mark.parametrize(
    ("annotations", "spec", "needle"),
    [
        (AWS_ZONE_LOCAL, {"trafficDistribution": None}, "does not prefer same-zone endpoints"),
        (
            {
                **AWS_ZONE_LOCAL,
                "networking.gke.io/load-balancer-type": "Internal",
                "networking.gke.io/internal-load-balancer-allow-global-access": "true",
            },
            {},
            "allows global access",
        ),
        (
            {
                "service.beta.kubernetes.io/aws-load-balancer-attributes": (
                    "load_balancing.cross_zone.enabled=true"
                )
            },
            {},
            "enables cross-zone load balancing",
        ),
        # Cross-zone off but the default DNS policy: the name resolves to every zone's
        # address (aws-load-balancer-controller docs/guide/service/annotations.md).
        (
            {
                "service.beta.kubernetes.io/aws-load-balancer-attributes": (
                    "load_balancing.cross_zone.enabled=false"
                )
            },
            {},
            "lets DNS answer with every zone's address (dns_record.client_routing_policy is "
            "unset, so any_availability_zone)",
        ),
        (
            {
                "service.beta.kubernetes.io/aws-load-balancer-attributes": (
                    "load_balancing.cross_zone.enabled=false,"
                    "dns_record.client_routing_policy=partial_availability_zone_affinity"
                )
            },
            {},
            "set dns_record.client_routing_policy=availability_zone_affinity in "
            "service.beta.kubernetes.io/aws-load-balancer-attributes",
        ),
    ],
)
def test_load_balancer_stays_regional_and_zone_local(
    annotations: dict[str, str], spec: dict[str, Any], needle: str
) -> None:
    resources = S.compliant()
    resources[5] = S.lb_service("chat", annotations, **spec)
    [finding] = run("same-zone-placement", resources)
    assert needle in finding.message and finding.field == ("load_balancer",)


def test_partial_zone_affinity_is_accepted_when_configured() -> None:
    resources = S.compliant()
    partial = (
        "load_balancing.cross_zone.enabled=false,"
        "dns_record.client_routing_policy=partial_availability_zone_affinity"
    )
    resources[5] = S.lb_service(
        "chat", {"service.beta.kubernetes.io/aws-load-balancer-attributes": partial}
    )
    assert run("same-zone-placement", resources) != []
    assert (
        run(
            "same-zone-placement",
            resources,
            aws_client_routing_policies=[
                "availability_zone_affinity",
                "partial_availability_zone_affinity",
            ],
        )
        == []
    )


# --- one-model-per-gpu ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"gpus": "1", "limit": "2"}, "requests must equal limits"),
        ({"gpus": 0.5}, "request whole GPUs"),
        ({"resource": "nvidia.com/mig-3g.40gb"}, "but pool l4 offers nvidia.com/gpu"),
    ],
)
def test_whole_gpus_with_requests_equal_to_limits(kwargs: dict[str, Any], needle: str) -> None:
    resources = S.compliant()
    resources[3] = S.deployment("chat", **kwargs)
    assert any(needle in f.message for f in run("one-model-per-gpu", resources))


def test_triton_loads_exactly_one_model() -> None:
    resources = S.compliant()
    triton = "nvcr.io/nvidia/tritonserver:25.08-py3"
    resources[3] = S.deployment(
        "chat", image=triton, args=["tritonserver", "--model-repository=/m"]
    )
    [finding] = run("one-model-per-gpu", resources)
    assert "--model-control-mode=none" in finding.message
    resources[3] = S.deployment(
        "chat",
        image=triton,
        args=["tritonserver", "--model-control-mode=explicit", "--load-model=*"],
    )
    [finding] = run("one-model-per-gpu", resources)
    assert "loads *" in finding.message
    resources[3] = S.deployment(
        "chat", image=triton, args=["tritonserver --model-control-mode=explicit --load-model=chat"]
    )
    assert run("one-model-per-gpu", resources) == []


# --- advisories ----------------------------------------------------------------------------
def test_latency_signal_reads_trigger_queries() -> None:
    util = S.scaled_object("chat", query="avg(DCGM_FI_DEV_GPU_UTIL{pod=~'chat-.*'})")
    [finding] = run("latency-signal", [util])
    assert finding.field == ("models", "chat", "autoscaling", "metric")
    cpu = S.scaled_object("chat")
    cpu.props["spec"]["triggers"] = [{"type": "cpu", "metadata": {"value": "60"}}]
    assert len(run("latency-signal", [cpu])) == 1
    both = S.scaled_object("chat")
    both.props["spec"]["triggers"] += util.props["spec"]["triggers"]
    assert run("latency-signal", [both]) == []


def test_latency_signal_ignores_schedules_and_counts_http_requests() -> None:
    util = S.scaled_object("chat", query="avg(DCGM_FI_DEV_GPU_UTIL{pod=~'chat-.*'})")
    cron = {
        "type": "cron",
        "metadata": {"timezone": "UTC", "start": "0 8 * * *", "end": "0 18 * * *"},
    }
    util.props["spec"]["triggers"].append(cron)
    [finding] = run("latency-signal", [util])  # the clock is no load signal
    assert "GPU utilisation alone" in finding.message
    http = {
        "type": "external-push",
        "metadata": {"scalerAddress": "keda-add-ons-http-external-scaler.keda:9090"},
    }
    http["metadata"]["httpScaledObject"] = "chat"
    util.props["spec"]["triggers"].append(http)
    assert run("latency-signal", [util]) == []  # requests the interceptor holds or passes


@pytest.mark.parametrize(
    ("annotations", "spec", "field"),
    [
        ({"service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing"}, {}, "scheme"),
        ({}, {}, "scheme"),  # GKE and the in-tree controller default to external
        (None, {"loadBalancerSourceRanges": ["0.0.0.0/0"]}, "allowed_cidrs"),
    ],
)
def test_public_endpoint(
    annotations: dict[str, str] | None, spec: dict[str, Any], field: str
) -> None:
    [finding] = run("public-endpoint", [S.lb_service("chat", annotations, **spec)])
    assert finding.target == "load_balancer" and finding.field == ("load_balancer", field)


def test_public_endpoint_reads_network_policies() -> None:
    netpol = S.res(
        R.NETWORK_POLICY,
        "np",
        {
            "metadata": {"name": "chat"},
            "spec": {"ingress": [{"from": [{"ipBlock": {"cidr": "::/0"}}]}]},
        },
    )
    [finding] = run("public-endpoint", [netpol])
    assert "admits ::/0" in finding.message


def test_pinned_images_and_charts() -> None:
    findings = run("pinned-images", [S.deployment("chat", image="vllm/vllm-openai")])
    assert "has no tag (means latest); pin a version tag" in findings[0].message
    digest = "vllm/vllm-openai@sha256:" + "a" * 64
    assert run("pinned-images", [S.deployment("chat", image=digest)], require_digest=True) == []
    assert len(run("pinned-images", [S.deployment("chat")], require_digest=True)) == 1
    release = S.res(R.HELM_RELEASE, "keda", {"chart": "keda"})
    [finding] = run("pinned-images", [release])
    assert finding.field == ("versions", "keda")
    # A chart Pulumi renders is held to the same; one read from a directory is its files.
    rendered = S.res(R.HELM_CHART, "router", {"chart": "oci://ghcr.io/llm-d/charts/x"})
    assert "without a version" in run("pinned-images", [rendered])[0].message
    local = S.res(R.HELM_CHART, "router", {"chart": "/srv/charts/llm-d-router-standalone"})
    assert run("pinned-images", [local]) == []
    relative = S.res(R.HELM_CHART, "router", {"chart": "./llm-d-router-standalone"})
    assert run("pinned-images", [relative]) == []
    # What `pulumi preview` shows a policy pack of a rendered chart: no inputs at all.
    assert run("pinned-images", [S.res(R.HELM_CHART, "router", {})]) == []
    repo = {"chart": "./x", "repositoryOpts": {"repo": "https://charts.example.com"}}
    assert len(run("pinned-images", [S.res(R.HELM_RELEASE, "x", repo)])) == 1


def test_capacity_headroom_counts_keda_default_max() -> None:
    resources = S.compliant()
    resources[4] = S.scaled_object("chat", hi=None)
    del resources[4].props["spec"]["maxReplicaCount"]
    [finding] = run("capacity-headroom", resources)
    assert "need 100 GPUs" in finding.message


def test_capacity_headroom_needs_a_spare_gpu_to_surge() -> None:
    resources = S.compliant()
    resources[4] = S.scaled_object("chat", hi=8.0)
    resources[3] = S.deployment(
        "chat", strategy={"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    )
    [finding] = run("capacity-headroom", resources)
    assert "rolling update of chat" in finding.message and "0 spare" in finding.message


def test_engine_build_with_other_release_and_gpu(tensorrt_11_release: str) -> None:
    """A TensorRT 11 build ('passes' precision flags it no longer has) of another release
    ('uses') for another GPU ('runs')."""
    triton = "nvcr.io/nvidia/tritonserver:25.08-py3"
    job = S.res(
        R.JOB,
        "ranker-engine",
        {
            "metadata": {"name": "ranker-engine", "labels": {"inferplane.dev/model": "ranker"}},
            "spec": {
                "template": {
                    "spec": {
                        "nodeSelector": {"inferplane.dev/gpu": "nvidia-t4"},
                        "initContainers": [
                            {
                                "name": "trtexec",
                                "image": f"nvcr.io/nvidia/tensorrt:{tensorrt_11_release}-py3",
                                "command": [
                                    "sh",
                                    "-c",
                                    "/usr/src/tensorrt/bin/trtexec --onnx=m --fp16",
                                ],
                            }
                        ],
                        "containers": [{"name": "upload", "image": "amazon/aws-cli:2.27.50"}],
                    }
                }
            },
        },
    )
    resources = [
        S.env_configmap(),
        S.deployment(
            "ranker",
            image=triton,
            args=["tritonserver", "--model-control-mode=explicit", "--load-model=ranker"],
        ),
        job,
    ]
    messages = sorted(f.message.split(";")[0] for f in run("engine-matches-runtime", resources))
    assert [m.split(" ")[3] for m in messages] == ["passes", "runs", "uses"]
