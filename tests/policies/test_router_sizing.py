"""router-sizing on llm-routing's prod (two zones of a new EKS cluster): it reports a
router the sizing guide makes larger than a system node, with the numbers and the fix, at
the traffic or at replicas.max, and says nothing of an attached cluster."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from inferplane.blueprint.model import Environment, MinMax
from inferplane.blueprint.model_scaling import Traffic
from inferplane.blueprint.resolution.resolve import resolve_file
from inferplane.policies.rules import rule
from inferplane.policies.stack import Stack

RULE = rule("router-sizing")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def routed() -> Environment:
    return resolve_file(ROOT / "blueprints" / "llm-routing.yaml", "prod")


def with_chat(env: Environment, **changes: object) -> Environment:
    models = {"chat": dataclasses.replace(env.models["chat"], **changes)}
    return dataclasses.replace(env, models=models)


def test_the_bundled_router_fits(routed: Environment) -> None:
    assert RULE.run(Stack.of([], routed)) == []
    assert RULE.run(Stack.of([], with_chat(routed, traffic=Traffic(100, 4000, 500)))) == []


def test_a_zones_prompt_tokens_past_a_node_are_reported_at_the_traffic(
    routed: Environment,
) -> None:
    env = with_chat(routed, traffic=Traffic(197.4, 100_000, 1000))
    (found,) = RULE.run(Stack.of([], env))
    assert (found.target, found.field) == ("models.chat", ("models", "chat", "traffic"))
    assert found.message.startswith(
        "by the llm-d router's sizing guide, chat's router in each zone is too large: its "
        "endpoint pickers need 46.8 CPU and 15.0 GiB each (requested at 3.52 CPU and 14.0 "
        "GiB) and its "
        "Envoy proxies need 9.8 CPU each (requested at 3.52 CPU and 2.0 GiB) for the zone's "
        "98.7 requests/s x 100,000 prompt tokens = 9,870,000 prompt tokens/s, 98,700 output "
        "tokens/s, 4 serving pods to scrape; more than the 3.52 CPU and 14.0 GiB one "
        "m6i.xlarge EKS system node holds beside its DaemonSets"
    )
    assert "spread the model over more zones" in found.message
    assert "active-active pickers are not supported" in found.message


def test_scraping_alone_past_a_node_is_reported_at_replicas_max(routed: Environment) -> None:
    # 50 serving pods per zone: 3.75 CPU of metric scraping, whatever the traffic.
    env = with_chat(routed, replicas=MinMax(2, 100))
    (found,) = RULE.run(Stack.of([], env))
    assert found.field == ("models", "chat", "replicas", "max")
    assert "pickers need 3.8 CPU each" in found.message
    assert "50 serving pods to scrape" in found.message


def test_an_attached_cluster_is_not_judged(routed: Environment) -> None:
    env = with_chat(routed, traffic=Traffic(197.4, 100_000, 1000))
    attached = dataclasses.replace(env, cluster=dataclasses.replace(env.cluster, create=False))
    assert RULE.run(Stack.of([], attached)) == []
    assert RULE.run(Stack.of([], None)) == []
