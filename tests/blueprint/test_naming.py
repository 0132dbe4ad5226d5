"""Resource names: stable, unique, and within every cloud's length limit."""

from __future__ import annotations

from inferplane.blueprint import naming


def test_short_names_are_readable() -> None:
    assert naming.node_group_name("app", "prod", "l4", "us-east-1a") == "app-prod-l4-a"
    assert naming.node_group_name("app", "prod", "l4", "us-central1-b") == "app-prod-l4-b"


def test_long_names_fit_the_limit_and_stay_unique_and_stable() -> None:
    bp, env, pool = "support-assistant-search", "production-east", "h100-inference"
    a = naming.node_group_name(bp, env, pool, "us-central1-a", max_length=40)
    b = naming.node_group_name(bp, env, pool, "us-central1-b", max_length=40)
    assert len(a) <= 40 and len(b) <= 40
    assert a != b and a.endswith("-a") and b.endswith("-b")
    assert a.startswith("support-assistant")
    assert a == naming.node_group_name(bp, env, pool, "us-central1-a", max_length=40)
    other = naming.node_group_name(bp, env, "h100-inference2", "us-central1-a", max_length=40)
    assert other != a


def test_long_instance_label_is_hashed_to_63() -> None:
    from inferplane.blueprint import naming

    blueprint, model = "b" * 24, "m" * 40
    value = naming.model_labels(blueprint, "prod", model)["app.kubernetes.io/instance"]
    assert len(value) == 63
    assert value == naming.label_value(f"{blueprint}-{model}")
    assert value.endswith("-" + naming.short_hash(f"{blueprint}-{model}", length=8))
    assert naming.label_value("shop-chat") == "shop-chat"
