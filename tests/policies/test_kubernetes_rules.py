"""The rules that reason about nodes and load balancers on a `cloud: kubernetes`
environment (the reference blueprint's `local`): nothing adds nodes, the pools' nodes are
the ones that exist, and a Service carries no scheme."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from inferplane.blueprint.derived import scale_out
from inferplane.blueprint.model import Environment, MinMax
from inferplane.policies.rules import rule
from inferplane.policies.stack import Stack

Env = Callable[[str], Environment]


def with_pool(env: Environment, pool: str, **changes: object) -> Environment:
    pools = {**env.pools, pool: dataclasses.replace(env.pools[pool], **changes)}
    return dataclasses.replace(env, pools=pools)


def test_the_reference_local_environment_passes_the_node_rules(reference_env: Env) -> None:
    env = reference_env("local")
    stack = Stack.of([], env)
    assert stack.fixed_nodes
    for rule_id in ("capacity-headroom", "warm-replicas"):
        assert rule(rule_id).run(stack) == [], rule_id
    # No node finding (l4 keeps a spare GPU); only chat's 16 GB checkpoint, whose copy takes
    # a scale-out over the bound whatever the nodes: the finding names the levers that
    # stream it instead.
    found = rule("scale-out-budget").run(stack)
    assert [(f.target, f.field) for f in found] == [
        ("models.chat", ("models", "chat", "scale_out", "levers"))
    ]
    assert "stream_weights (free)" in found[0].message


def without_spare(env: Environment) -> Environment:
    """Pool l4 without its spare GPU, and without the nodes (one GPU each) beyond its warm
    replicas: a GPU the minimum nodes leave idle would take the next replica."""
    pool = env.pools["l4"]
    idle = scale_out.idle_units_of(env, "l4")
    less = dataclasses.replace(pool.nodes, min=pool.nodes.min - pool.spare_gpus - idle)
    return with_pool(env, "l4", spare_gpus=0, nodes=less)


def test_no_node_is_counted_in_the_budget(reference_env: Env) -> None:
    env = without_spare(reference_env("local"))
    budgets = scale_out.budgets(env)
    assert budgets["chat"].part("node") is None
    assert budgets["chat"].part("image_pull") is None
    cloud = scale_out.budgets(without_spare(reference_env("prod")))
    assert cloud["chat"].part("node") is not None


def test_without_a_spare_gpu_a_scale_out_never_becomes_ready(reference_env: Env) -> None:
    env = without_spare(reference_env("local"))
    found = rule("scale-out-budget").run(Stack.of([], env))
    assert [(f.target, f.field) for f in found] == [
        ("models.chat", ("gpu_pools", "l4", "spare_gpus")),
        ("models.ranker", ("gpu_pools", "l4", "spare_gpus")),
        ("models.toxicity", ("gpu_pools", "l4", "spare_gpus")),
    ]
    assert found[0].message == (
        "nothing adds nodes in environment 'local', and pool l4 keeps 0 spare GPU unit(s) per "
        "zone while a replica of chat needs 1: a scale-out waits for a GPU another pod frees, "
        "or never becomes ready; keep spare_gpus: 1 (or more) on pool l4"
    )


def test_capacity_counts_the_nodes_that_exist(reference_env: Env) -> None:
    env = with_pool(reference_env("local"), "l4", nodes=MinMax(3, 3))
    found = rule("capacity-headroom").run(_stack(env))
    assert [f.target for f in found][:1] == ["gpu_pools.l4"]
    assert found[0].message.startswith(
        "at max replicas the models on pool l4 need 9 GPUs (chat 3x1, ranker 2x1, toxicity "
        "2x1, spare_gpus 2) but its nodes across zones (nothing adds more) give 6; add nodes "
        "and raise nodes.min and nodes.max to match, or lower replicas.max or spare_gpus"
    )


def test_warm_replicas_need_the_nodes_that_exist(reference_env: Env) -> None:
    env = with_pool(reference_env("local"), "l4", nodes=MinMax(1, 1))
    found = rule("warm-replicas").run(_stack(env))
    capacity = [f for f in found if f.target == "gpu_pools.l4"]
    assert capacity and capacity[0].message.endswith(
        "; add nodes in zone-a until it has 4, and set nodes.min and nodes.max to 4"
    )


def test_a_load_balancer_service_needs_the_platform_s_word_that_it_is_private(
    reference_env: Env,
) -> None:
    """The Service carries no scheme on a kubernetes environment: a cloud's controller would
    give it a public address, so only the platform can confirm the cluster's own load
    balancer is private; its source ranges are judged either way."""
    env = reference_env("local")
    env = dataclasses.replace(
        env, cluster=dataclasses.replace(env.cluster, load_balancer="load_balancer")
    )
    found = rule("public-endpoint").run(_stack(env))
    assert [(f.target, f.field, f.message) for f in found] == [
        (
            "environments.local",
            ("environments", "local", "cluster", "load_balancer"),
            "Services chat-lb, nightly-embed-lb, ranker-lb, toxicity-lb are of type "
            "LoadBalancer on a kubernetes "
            "environment, whose own load balancer decides where their addresses live (a "
            "cloud's controller makes them public by default) and the platform has not "
            "confirmed it private; use cluster.load_balancer: cluster_ip, or ask the platform "
            "team to list this environment in public-endpoint.internal_load_balancers",
        )
    ]
    for key in ("*", env.blueprint, f"{env.blueprint}/local"):
        listed = {"internal_load_balancers": [key]}
        assert rule("public-endpoint").run(_stack(env), listed) == [], key
    # Another environment's (or blueprint's) word does not count.
    other = {"internal_load_balancers": [f"{env.blueprint}/prod", "other-blueprint"]}
    assert len(rule("public-endpoint").run(_stack(env), other)) == 1
    wide = dataclasses.replace(
        env, load_balancer=dataclasses.replace(env.load_balancer, allowed_cidrs=("0.0.0.0/0",))
    )
    found = rule("public-endpoint").run(_stack(wide), {"internal_load_balancers": ["*"]})
    assert found and all(f.field == ("load_balancer", "allowed_cidrs") for f in found)


def _stack(env: Environment) -> Stack:
    """The rules' view of `env`'s offline program, as `inferplane check` builds it."""
    from inferplane.app.check import stack_of

    return stack_of(env)
