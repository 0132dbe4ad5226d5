"""A model with a rollout under Prometheus' own tool: its replica alert reads the Rollout's
ReplicaSets (its Deployment sits at zero), and each guard query returns a sample only while
the new pods breach the bound and the stable pods do not. Skips without promtool, as
test_promtool.py does."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml
from serving_fixtures import args_of, with_model, with_pool
from test_promtool import promtool, run  # noqa: F401 (the fixture)

from inferplane.blueprint.model import Environment, Rollout, RolloutGuard
from inferplane.components.serving.observability import rules
from inferplane.components.serving.scaling import rollout

NS = "support-assistant"
GUARD = RolloutGuard(p95_ms=20000, ttft_p95_ms=300, itl_p95_ms=60, error_ratio=0.05)
ROLLOUT = Rollout(steps=(10, 50, 100), step_s=300, guard=GUARD)
CANARY, STABLE = "5d8f6c7b9", "77c4d9e8f"
KSM = 'job="kube-state-metrics", instance="10.0.3.7:8080"'
READY_LABELS = {
    "namespace": NS,
    "deployment": "chat",
    "model": "chat",
    "environment": "prod",
    "latency_class": "realtime",
    "severity": "critical",
}


def replicaset(series: str, name: str, values: str) -> dict[str, str]:
    return {"series": f'{series}{{namespace="{NS}", replicaset="{name}", {KSM}}}', "values": values}


def run_tests(promtool: str, tmp_path: Path, groups: list[Any], tests: list[Any]) -> None:  # noqa: F811
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    doc = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests}
    (tmp_path / "t.test.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    result = run(promtool, "test", "rules", tmp_path / "t.test.yaml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_ready_replica_reads_the_rollout_s_replicasets(
    promtool: str,  # noqa: F811
    tmp_path: Path,
    prod: Environment,
) -> None:
    # One zone: the model runs one Deployment, `chat` (several zones run one each).
    pool = prod.pool_of(prod.models["chat"])
    one_zone = with_pool(prod, pool.name, zones=pool.zones[:1])
    groups = rules.rule_groups(*args_of(with_model(one_zone, "chat", rollout=ROLLOUT), "chat"), NS)
    for group in groups:
        for rule in group["rules"]:
            rule.pop("annotations", None)
    deployment_at_zero = [
        {
            "series": f'kube_deployment_status_replicas_ready{{namespace="{NS}", '
            f'deployment="chat", {KSM}}}',
            "values": "0x10",
        },
        replicaset("kube_replicaset_status_ready_replicas", "chat-6b7c8d9f4", "0x10"),
    ]
    tests = [
        {
            # The Rollout serves with two pods: no alert although the Deployment is at zero.
            "interval": "1m",
            "input_series": [
                *deployment_at_zero,
                replicaset("kube_replicaset_status_ready_replicas", f"chat-{STABLE}", "2x10"),
            ],
            "alert_rule_test": [
                {"eval_time": "5m", "alertname": "InferenceNoReadyReplica", "exp_alerts": []}
            ],
        },
        {
            # The Rollout's pods all go: the alert fires, named after the Deployment.
            "interval": "1m",
            "input_series": [
                *deployment_at_zero,
                replicaset("kube_replicaset_status_ready_replicas", f"chat-{STABLE}", "2 0x10"),
            ],
            "alert_rule_test": [
                {
                    "eval_time": "4m",
                    "alertname": "InferenceNoReadyReplica",
                    "exp_alerts": [{"exp_labels": READY_LABELS}],
                }
            ],
        },
    ]
    run_tests(promtool, tmp_path, groups, tests)


def _requests(hash_: str, errors_per_min: int) -> list[dict[str, str]]:
    base = f'namespace="{NS}", model_name="chat", engine="0", pod="chat-{hash_}-abcde", '
    base += f'rollouts_pod_template_hash="{hash_}"'
    return [
        {
            "series": f'vllm:request_success_total{{{base}, finished_reason="stop"}}',
            "values": f"0+{60 - errors_per_min}x10",
        },
        {
            "series": f'vllm:request_success_total{{{base}, finished_reason="error"}}',
            "values": f"0+{errors_per_min}x10",
        },
    ]


def _ttft(hash_: str, slow: bool) -> list[dict[str, str]]:
    base = f'namespace="{NS}", model_name="chat", engine="0", pod="chat-{hash_}-abcde", '
    base += f'rollouts_pod_template_hash="{hash_}"'
    # Every request's first token within 0.1 s (fast) or between 0.5 and 1 s (slow).
    buckets = {"0.1": "0x10" if slow else "0+60x10", "1.0": "0+60x10", "+Inf": "0+60x10"}
    return [
        {
            "series": f'vllm:time_to_first_token_seconds_bucket{{{base}, le="{le}"}}',
            "values": v,
        }
        for le, v in buckets.items()
    ]


def test_each_guard_query_blames_the_new_pods_only(
    promtool: str,  # noqa: F811
    tmp_path: Path,
    prod: Environment,
) -> None:
    env, model = args_of(prod, "chat")
    model = dataclasses.replace(model, rollout=ROLLOUT)
    spec = rollout.analysis_template_spec(env, model, NS, "chat")
    queries = {
        m["name"]: m["provider"]["prometheus"]["query"]
        .replace("{{args.canary-hash}}", CANARY)
        .replace("{{args.stable-hash}}", STABLE)
        for m in spec["metrics"]
    }

    def case(series: list[dict[str, str]], name: str, breach: bool) -> dict[str, Any]:
        """A breach: the query returns one sample (counted); otherwise none."""
        check: dict[str, Any] = {"eval_time": "8m"}
        if breach:
            check |= {"expr": f"count({queries[name]})", "exp_samples": [{"value": 1}]}
        else:
            check |= {"expr": queries[name], "exp_samples": []}
        return {"interval": "1m", "input_series": series, "promql_expr_test": [check]}

    tests = [
        # 10% of the new pods' requests fail, none of the stable pods': a breach.
        case([*_requests(CANARY, 6), *_requests(STABLE, 0)], "error-ratio", True),
        # Both fail as often: the model's trouble, not the new version's.
        case([*_requests(CANARY, 6), *_requests(STABLE, 6)], "error-ratio", False),
        # The stable pods fail, the new ones do not.
        case([*_requests(CANARY, 0), *_requests(STABLE, 6)], "error-ratio", False),
        # The new pods' first token takes 0.5-1 s against a 300 ms bound; the stable's 0.1 s.
        case([*_ttft(CANARY, True), *_ttft(STABLE, False)], "ttft-p95-ms", True),
        case([*_ttft(CANARY, False), *_ttft(STABLE, False)], "ttft-p95-ms", False),
        # The new pods alone, at the last step (no stable pods left): judged on the bound.
        case(_ttft(CANARY, True), "ttft-p95-ms", True),
    ]
    run_tests(promtool, tmp_path, [], tests)


def _up(pod: str, version: str, values: str) -> dict[str, str]:
    labels = f'namespace="{NS}", pod="{pod}", job="chat", rollouts_pod_template_hash="x"'
    return {
        "series": f'up{{{labels}, inferplane_dev_revision="{version}"}}',
        "values": values,
    }


def _unlabelled(pod: str, values: str) -> dict[str, str]:
    labels = f'namespace="{NS}", pod="{pod}", job="chat", rollouts_pod_template_hash="y"'
    return {"series": f"up{{{labels}}}", "values": values}


def test_a_zone_gate_opens_once_the_zone_before_runs_the_new_version_alone(
    promtool: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    new, old = "0123456789", "9876543210"
    query = rollout.gate_query(NS, "chat-us-east-1a", new)

    def case(series: list[dict[str, str]], opens: bool) -> dict[str, Any]:
        check: dict[str, Any] = {"eval_time": "5m", "expr": query}
        check["exp_samples"] = [{"value": 1}] if opens else []
        return {"interval": "1m", "input_series": series, "promql_expr_test": [check]}

    tests = [
        # The zone before is still on the old version: closed.
        case([_up("chat-us-east-1a-5d8f6c7b9-abcde", old, "1x10")], False),
        # Its canary runs the new version beside the old: closed.
        case(
            [
                _up("chat-us-east-1a-5d8f6c7b9-abcde", old, "1x10"),
                _up("chat-us-east-1a-77c4d9e8f-fghij", new, "1x10"),
            ],
            False,
        ),
        # The new version alone, answering scrapes: open.
        case([_up("chat-us-east-1a-77c4d9e8f-fghij", new, "1x10")], True),
        # The new version's pod does not answer (still loading): closed.
        case([_up("chat-us-east-1a-77c4d9e8f-fghij", new, "0x10")], False),
        # Another zone's new pods do not open this gate, nor its old ones close it.
        case(
            [
                _up("chat-us-east-1b-77c4d9e8f-fghij", new, "1x10"),
                _up("chat-us-east-1a-5d8f6c7b9-abcde", old, "1x10"),
            ],
            False,
        ),
        case(
            [
                _up("chat-us-east-1a-77c4d9e8f-fghij", new, "1x10"),
                _up("chat-us-east-1b-5d8f6c7b9-abcde", old, "1x10"),
            ],
            True,
        ),
        # An old pod from before the version label (its Rollout's pods carried none): closed.
        case(
            [
                _unlabelled("chat-us-east-1a-5d8f6c7b9-abcde", "1x10"),
                _up("chat-us-east-1a-77c4d9e8f-fghij", new, "1x10"),
            ],
            False,
        ),
        # An old pod still there but no longer answering (terminating): closed.
        case(
            [
                _up("chat-us-east-1a-5d8f6c7b9-abcde", old, "0x10"),
                _up("chat-us-east-1a-77c4d9e8f-fghij", new, "1x10"),
            ],
            False,
        ),
        # Another scrape of the same pods (no template-hash label: not the model's own
        # ServiceMonitor) neither holds the gate nor opens it.
        case(
            [
                _up("chat-us-east-1a-77c4d9e8f-fghij", new, "1x10"),
                {
                    "series": f'up{{namespace="{NS}", pod="chat-us-east-1a-77c4d9e8f-fghij", '
                    'job="other"}',
                    "values": "1x10",
                },
            ],
            True,
        ),
    ]
    run_tests(promtool, tmp_path, [], tests)
