"""The llm-d router's proxies and its wake from zero: the queue's TTL, Envoy's wait and
KEDA's cooldown derived from the model's scale-out budget; the proxies as their own
Deployment, spread, drained and rolled one zone at a time; the Envoy configuration that
strips a client's destination header and falls back to the model's Service."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from serving_fixtures import DEPLOYMENT, SERVICE, args_of, serve, with_model, with_pool

from inferplane.blueprint.model import Environment, MinMax
from inferplane.blueprint.resolution.resolve import load_blueprint, resolve
from inferplane.components.serving.routing import router, router_envoy, router_proxy
from inferplane.components.serving.scaling import autoscaling

ROOT = Path(__file__).resolve().parents[3]
RELEASE = "kubernetes:helm.sh/v4:Chart"


@pytest.fixture(scope="session")
def at_zero() -> Environment:
    """llm-routing's prod at zero replicas, with no spare GPU and no node kept (an idle GPU
    on a kept node would take the replica at once): a wake adds a node."""
    doc, _ = load_blueprint(ROOT / "blueprints" / "llm-routing.yaml")
    env = with_model(resolve(doc, "prod"), "chat", replicas=MinMax(0, 8))
    return with_pool(env, "l4", spare_gpus=0, nodes=MinMax(0, 5))


def test_the_wake_is_the_scale_out_budget_from_zero(at_zero: Environment) -> None:
    # metrics_poll 15 + scrape 5 + node 540 + image 300 + weights 81 + engine_load 47
    # + readiness 10 (`inferplane plan` prints the same parts).
    assert args_of(at_zero, "chat")[1].wake_s == 998
    warm = with_model(at_zero, "chat", replicas=MinMax(2, 8))
    assert args_of(warm, "chat")[1].wake_s is None


def test_flow_control_holds_the_waking_request_past_the_wake(at_zero: Environment) -> None:
    _, model = args_of(at_zero, "chat")
    config = router.plugins_config(model)
    assert config is not None
    # 998 s + the picker's discovery of the new pod (60 s), not the release's 60 s.
    assert config["flowControl"] == {"defaultRequestTTL": "1058s"}
    warm = router.plugins_config(dataclasses.replace(model, replicas=MinMax(2, 8)))
    assert warm is not None and "flowControl" not in warm


def test_envoy_waits_for_the_picker_as_long_as_flow_control_holds(at_zero: Environment) -> None:
    _, model = args_of(at_zero, "chat")

    def timeout(m: Any) -> str:
        config = router_envoy.envoy_config(m, "chat-eu-west-1a", "llm-routing")
        listener = config["static_resources"]["listeners"][1]
        ext_proc = listener["filter_chains"][0]["filters"][0]["typed_config"]["http_filters"][0]
        return str(ext_proc["typed_config"]["message_timeout"])

    assert timeout(model) == "1088s"
    assert timeout(dataclasses.replace(model, replicas=MinMax(2, 8))) == "1000s"


def test_keda_keeps_the_woken_replica_until_it_served(at_zero: Environment) -> None:
    env, model = args_of(at_zero, "chat")
    zoned = router.zone_model(model, "eu-west-1a")
    spec = autoscaling.scaled_object_spec(
        env, zoned, "llm-routing", "chat-eu-west-1a", "eu-west-1a"
    )
    # The TTL 1058 s + the longest request 60 s + 30 s, above the stabilisation's 600 s.
    assert spec["cooldownPeriod"] == 1148


# --- the proxies' Envoy -----------------------------------------------------------------------


def test_a_clients_destination_header_is_removed_before_routing(prod: Environment) -> None:
    _, model = args_of(prod, "chat")
    config = router_envoy.envoy_config(model, "chat-us-central1-a", "support-assistant")
    hcm = config["static_resources"]["listeners"][1]["filter_chains"][0]["filters"][0]
    assert hcm["typed_config"]["early_header_mutation_extensions"] == [
        {
            "name": "envoy.http.early_header_mutation.header_mutation",
            "typed_config": {
                "@type": "type.googleapis.com/envoy.extensions.http.early_header_mutation."
                "header_mutation.v3.HeaderMutation",
                "mutations": [{"remove": "x-gateway-destination-endpoint"}],
            },
        }
    ]


def test_without_the_pickers_answer_a_request_goes_to_the_models_service(
    prod: Environment,
) -> None:
    _, model = args_of(prod, "chat")
    config = router_envoy.envoy_config(model, "chat-us-central1-a", "support-assistant")
    hcm = config["static_resources"]["listeners"][1]["filter_chains"][0]["filters"][0]
    routes = hcm["typed_config"]["route_config"]["virtual_hosts"][0]["routes"]
    assert [(r["match"], r["route"]["cluster"]) for r in routes] == [
        (
            {
                "prefix": "/",
                "headers": [{"name": "x-gateway-destination-endpoint", "present_match": True}],
            },
            "original_destination_cluster",
        ),
        ({"prefix": "/"}, "model_fallback"),
    ]
    clusters = {c["name"]: c for c in config["static_resources"]["clusters"]}
    fallback = clusters["model_fallback"]
    assert fallback["type"] == "STRICT_DNS"
    assert fallback["load_assignment"]["endpoints"][0]["lb_endpoints"] == [
        {
            "endpoint": {
                "address": {
                    "socket_address": {
                        "address": "chat.support-assistant.svc.cluster.local",
                        "port_value": 8000,
                    }
                }
            }
        }
    ]
    ext_proc = clusters["ext_proc"]["load_assignment"]["endpoints"][0]["lb_endpoints"][0]
    assert ext_proc["endpoint"]["address"]["socket_address"] == {
        "address": "chat-us-central1-a-epp.support-assistant.svc.cluster.local",
        "port_value": 9002,
    }


def test_the_chart_carries_the_configuration_without_template_directives(
    prod: Environment,
) -> None:
    """The chart renders ``envoy.yaml`` through ``tpl`` (``llm-d-router.proxyConfigMapData``)."""
    env, model = args_of(prod, "chat")
    proxy = router.router_values(env, model, "us-central1-a")["router"]["proxy"]
    text = proxy["configMap"]["data"]["envoy.yaml"]
    assert "{{" not in text
    assert yaml.safe_load(text) == router_envoy.envoy_config(
        model, "chat-us-central1-a", "support-assistant"
    )


# --- the proxies' pods and the zones' order ---------------------------------------------------


def chart_proxy() -> dict[str, Any]:
    """The proxy Deployment as ``routerlib/templates/_proxy-deployment.yaml`` renders it."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "chat-us-central1-a-proxy", "namespace": "support-assistant"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"llm-d-router-proxy": "chat-us-central1-a-proxy"}},
            "template": {
                "metadata": {"labels": {"llm-d-router-proxy": "chat-us-central1-a-proxy"}},
                "spec": {
                    "containers": [
                        {
                            "name": "envoy-proxy",
                            "image": "docker.io/envoyproxy/envoy:distroless-v1.33.2",
                        }
                    ]
                },
            },
        },
    }


def transform_args(type_: str, props: dict[str, Any]) -> pulumi.ResourceTransformArgs:
    return pulumi.ResourceTransformArgs(
        custom=True, type_=type_, name="x", props=props, opts=pulumi.ResourceOptions()
    )


def test_the_proxies_drain_spread_and_roll_on_a_new_configuration(prod: Environment) -> None:
    _, model = args_of(prod, "chat")
    affinity = {"podAntiAffinity": {"x": 1}}
    out = router_proxy.complete_proxy(chart_proxy(), model, affinity, "abc")
    template = out["spec"]["template"]
    assert template["metadata"]["annotations"] == {"inferplane.dev/config-sha256": "abc"}
    pod = template["spec"]
    assert pod["affinity"] == affinity
    # preStop: 15 s for the endpoint to leave + the longest request (60 s); 15 s beyond.
    assert pod["terminationGracePeriodSeconds"] == 90
    (envoy,) = pod["containers"]
    assert envoy["lifecycle"] == {"preStop": {"sleep": {"seconds": 75}}}
    assert envoy["securityContext"]["allowPrivilegeEscalation"] is False


def test_only_the_pickers_go_unawaited(prod: Environment) -> None:
    transform = router_proxy.router_transform("p-epp", "p-proxy", lambda d: {**d, "done": 1})

    def run(type_: str, name: str) -> Any:
        result = transform(transform_args(type_, {"metadata": {"name": name}, "spec": {}}))
        return None if result is None else dict(result.props)

    skip = {"pulumi.com/skipAwait": "true"}
    assert run(DEPLOYMENT, "p-epp")["metadata"]["annotations"] == skip
    assert run(SERVICE, "p-epp")["metadata"]["annotations"] == skip
    assert run(DEPLOYMENT, "p-proxy") == {"metadata": {"name": "p-proxy"}, "spec": {}, "done": 1}
    assert run(SERVICE, "p-proxy") is None


def test_a_zones_router_waits_for_the_previous_zones(prod: Environment) -> None:
    from test_router import routed

    recording = serve(routed(prod), ["chat"])
    charts = {r.get("name"): r for r in recording.of_type(RELEASE)}
    first, second = charts["chat-us-central1-a"], charts["chat-us-central1-b"]
    assert first.urn in second.depends_on
    assert second.urn not in first.depends_on
