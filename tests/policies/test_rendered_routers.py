"""The routing rules on a router chart Pulumi rendered, as ``pulumi preview`` shows it to the
policy pack: the chart component without its inputs, and the objects it rendered (shapes
of llm-d-router v0.10.0 ``config/charts/routerlib/templates``: ``_inferencepool.yaml``,
``_deployment.yaml``, ``_config.yaml`` and the Envoy preset's ConfigMap)."""

from __future__ import annotations

from typing import Any

import shapes as S

from inferplane.policies import resources as R
from inferplane.policies.routers import RouterRelease, router_releases
from inferplane.policies.rules import rule

NAME = "chat-zone-a"
PLUGINS = """\
apiVersion: inference.networking.x-k8s.io/v1alpha1
kind: EndpointPickerConfig
plugins:
- type: queue-scorer
- type: prefix-cache-scorer
"""


def rendered(
    replicas: int = 2,
    failure_mode: str | None = "FailOpen",
    fail_open: str = "true",
    plugins: str = PLUGINS,
) -> list[R.Resource]:
    ref: dict[str, Any] = {"name": f"{NAME}-epp", "port": {"number": 9002}}
    if failure_mode is not None:
        ref["failureMode"] = failure_mode
    pool = S.res(
        R.INFERENCE_POOL,
        f"router:llm-routing/{NAME}",
        {
            "metadata": {"name": NAME, "namespace": "llm-routing"},
            "spec": {
                "selector": {"matchLabels": {"inferplane.dev/model": "chat"}},
                "targetPorts": [{"number": 8000}],
                "endpointPickerRef": ref,
            },
        },
    )
    picker = S.res(
        R.DEPLOYMENT,
        f"router:llm-routing/{NAME}-epp",
        {
            "metadata": {"name": f"{NAME}-epp", "namespace": "llm-routing"},
            "spec": {
                "replicas": replicas,
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "envoy",
                                "image": "docker.io/envoyproxy/envoy:distroless-v1.33.2",
                            },
                            {
                                "name": "epp",
                                "image": "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0",
                                "args": ["--config-file", "/config/inferplane-plugins.yaml"],
                            },
                        ],
                        "volumes": [
                            {"name": "plugins-config-volume", "configMap": {"name": NAME}},
                            {"name": "config", "configMap": {"name": f"{NAME}-envoy"}},
                        ],
                    }
                },
            },
        },
    )
    config = S.res(
        R.CONFIG_MAP,
        f"router:llm-routing/{NAME}",
        {"metadata": {"name": NAME}, "data": {"inferplane-plugins.yaml": plugins}},
    )
    envoy = S.res(
        R.CONFIG_MAP,
        f"router:llm-routing/{NAME}-envoy",
        {
            "metadata": {"name": f"{NAME}-envoy"},
            "data": {"envoy.yaml": f"ext_proc:\n  failure_mode_allow: {fail_open}\n"},
        },
    )
    chart = S.res(R.HELM_CHART, "router", {})  # preview shows the component's inputs empty
    return [chart, pool, picker, config, envoy]


def test_a_rendered_router_reads_as_its_chart_values() -> None:
    [router] = router_releases(S.stack(rendered()))
    assert isinstance(router, RouterRelease)
    assert router.name == NAME and router.model == "chat"
    assert router.picker_name == f"{NAME}-epp"
    assert router.values["epp"]["replicas"] == 2
    assert router.values["epp"]["pluginsConfigFile"] == "inferplane-plugins.yaml"
    assert router.values["proxy"] == {"failOpen": True}
    assert router.values["inferencePool"] == {"failureMode": "FailOpen"}


def test_the_rules_pass_a_compliant_rendered_router() -> None:
    stack = S.stack(rendered())
    for rule_id in ("router-high-availability", "prefix-cache-routing"):
        assert rule(rule_id).run(stack, {}) == [], rule_id


def test_the_rules_judge_what_the_chart_rendered() -> None:
    ha = rule("router-high-availability")
    [one] = ha.run(S.stack(rendered(replicas=1)), {})
    assert "runs 1 endpoint picker(s), fewer than 2" in one.message
    # The CRD's default failure mode is FailClose.
    [closed] = ha.run(S.stack(rendered(failure_mode=None)), {})
    assert "fails closed" in closed.message
    [proxy] = ha.run(S.stack(rendered(fail_open="false")), {})
    assert "fails closed" in proxy.message
    prefix = rule("prefix-cache-routing")
    [ignored] = prefix.run(S.stack(rendered(plugins="plugins:\n- type: queue-scorer\n")), {})
    assert f"the router {NAME} ignores cached prompt prefixes" in ignored.message


def test_a_router_with_its_chart_values_is_read_once() -> None:
    values = {"router": {"epp": {"replicas": 2}, "modelServers": {"matchLabels": {}}}}
    chart = S.res(
        R.HELM_CHART,
        "router",
        {
            "chart": "oci://ghcr.io/llm-d/charts/llm-d-router-standalone",
            "name": NAME,
            "values": values,
        },
    )
    routers = router_releases(S.stack([chart, *rendered()[1:]]))
    assert [r.release.type for r in routers] == [R.HELM_CHART]
