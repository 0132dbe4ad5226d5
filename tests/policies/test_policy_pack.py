"""The CrossGuard pack: its policy list, its validators driven as Pulumi drives them, and the
pack process itself spoken to over gRPC as the Pulumi CLI does."""

from __future__ import annotations

import datetime as dt
import json
import os
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import shapes as S
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc
from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.proxy import UNKNOWN_NUMBER_VALUE, unknown_checking_proxy

from inferplane.policies.engine import Result
from inferplane.policies.pack import PACK_NAME, message, plain, policies
from inferplane.policies.resources import Resource
from inferplane.policies.rules import all_rules

ROOT = Path(__file__).resolve().parents[2]


def _opts() -> PolicyResourceOptions:
    return PolicyResourceOptions(False, [], False, [], PolicyCustomTimeouts(0, 0, 0), [])


def _policy_resource(r: Resource) -> PolicyResource:
    props = unknown_checking_proxy(json.loads(json.dumps(r.props)))
    return PolicyResource(r.type, props, r.urn, r.name, _opts(), None, None, [], {})


def _by_name() -> dict[str, Any]:
    return {p.name: p for p in policies()}


def test_one_policy_per_rule_with_level_scope_and_config() -> None:
    pack = _by_name()
    assert sorted(pack) == [r.id for r in all_rules()]
    for rule in all_rules():
        policy = pack[rule.id]
        kind = ResourceValidationPolicy if rule.scope == "resource" else StackValidationPolicy
        assert isinstance(policy, kind)
        level = (
            EnforcementLevel.MANDATORY if rule.level == "mandatory" else EnforcementLevel.ADVISORY
        )
        assert policy.enforcement_level == level
        assert policy.remediation_steps == rule.remediation
        keys = set(policy.config_schema.properties) if policy.config_schema else set()
        assert keys == {k.name for k in rule.config}


def _stack_violations(
    policy_name: str, resources: list[Resource], config: dict[str, Any] | None = None
) -> list[tuple[str, str | None]]:
    found: list[tuple[str, str | None]] = []
    args = StackValidationArgs([_policy_resource(r) for r in resources], config or {})
    _by_name()[policy_name].validate(args, lambda msg, urn=None: found.append((msg, urn)))
    return found


def test_stack_validation_reports_target_field_and_urn() -> None:
    assert _stack_violations("warm-replicas", S.compliant()) == []
    resources = S.compliant()
    resources[4] = S.scaled_object("chat", lo=0.0)
    [(message, urn)] = _stack_violations("warm-replicas", resources)
    assert message.startswith("[prod] models.chat: keeps 0 warm replicas")
    assert message.endswith("[blueprint field: models.chat.replicas.min]")
    assert urn == resources[4].urn


def test_stack_validation_reads_crossguard_config() -> None:
    found = _stack_violations("warm-replicas", S.compliant(), {"min_warm_replicas_per_zone": 2})
    assert len(found) == 1 and "needs at least 4" in found[0][0]


def test_resource_validation_judges_one_resource() -> None:
    svc = S.lb_service(
        "chat", {"service.beta.kubernetes.io/aws-load-balancer-scheme": "internet-facing"}
    )
    found: list[str] = []
    args = ResourceValidationArgs(
        svc.type, unknown_checking_proxy(svc.props), svc.urn, svc.name, _opts(), None, {}
    )
    _by_name()["public-endpoint"].validate(args, lambda msg, urn=None: found.append(msg))
    assert found and found[0].startswith("load_balancer: Service chat-lb gets an internet-facing")


def test_values_unknown_during_preview_are_dropped() -> None:
    proxy = unknown_checking_proxy({"spec": {"minReplicaCount": UNKNOWN_NUMBER_VALUE, "x": [1]}})
    assert plain(proxy) == {"spec": {"x": [1]}}


def test_published_waivers_apply_online() -> None:
    resources = S.compliant()
    resources[4] = S.scaled_object("chat", lo=0.0)
    data = resources[0].props["data"]
    soon = (dt.date.today() + dt.timedelta(days=30)).isoformat()  # within the 90-day limit
    waiver = {
        "rule": "warm-replicas",
        "target": "models.chat",
        "environments": None,
        "reason": "Cold starts are acceptable while this stack has no traffic.",
        "expires": soon,
        "path": ["policies", "waivers", 0],
    }
    data["waivers"] = json.dumps([waiver])
    # A blueprint's waiver of a mandatory rule does not waive online either.
    [(message, _)] = _stack_violations("warm-replicas", resources)
    assert "a blueprint may waive advisory rules only" in message
    # An expiry beyond the limit does not waive online either.
    data["waivers"] = json.dumps(
        [
            {
                "rule": "warm-replicas",
                "target": "models.chat",
                "environments": None,
                "reason": "r",
                "expires": "2999-01-01",
                "path": ["policies", "waivers", 0],
            }
        ]
    )
    [(message, _)] = _stack_violations("warm-replicas", resources)
    assert message.startswith("[prod] models.chat: keeps 0 warm replicas")


def test_facts_the_pack_cannot_read_are_a_violation() -> None:
    resources = S.compliant()
    resources[0].props["data"]["waivers"] = json.dumps([{"rule": "warm-replicas"}])
    assert _stack_violations("warm-replicas", resources) == [
        (
            "inferplane-environment ConfigMap: waivers[0]: missing target, environments, "
            "reason, expires, path (facts version 5)",
            None,
        )
    ]


# --- the pack process, as the Pulumi CLI runs it ------------------------------------------
def _read_line(proc: subprocess.Popen[str], timeout_s: float) -> str:
    """The pack's first stdout line, or a failure after `timeout_s` (never a hang)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout_s)
    if not ready:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        pytest.fail(f"the pack wrote no port within {timeout_s} s; stderr:\n{err}")
    return proc.stdout.readline().strip()


@pytest.fixture(scope="session")
def analyzer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    # As the Pulumi CLI runs a Python pack: `python <pack directory>` with the virtualenv of
    # PulumiPolicy.yaml (pulumi/pulumi sdk/python/cmd/pulumi-language-python/main.go,
    # RunPlugin), from another directory, in a user's environment (no PYTHONUNBUFFERED, no
    # PYTHONPATH): the port must arrive through a pipe, and the rules must import as installed.
    env = {k: os.environ[k] for k in ("HOME", "PATH") if k in os.environ}
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "policies")],
        cwd=tmp_path_factory.mktemp("pack"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**env, "LANG": "C.UTF-8"},
    )
    try:
        port = _read_line(proc, timeout_s=120)
        assert port.isdigit(), port
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        yield analyzer_pb2_grpc.AnalyzerStub(channel)
        channel.close()
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _struct(value: Any) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    s.update(json.loads(json.dumps(value)))
    return s


def _analyzer_resource(r: Resource) -> Any:
    return analyzer_pb2.AnalyzerResource(
        type=r.type, properties=_struct(r.props), urn=r.urn, name=r.name
    )


def test_pack_process_describes_every_policy(analyzer: Any) -> None:
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty())
    assert info.name == PACK_NAME and info.supportsConfig
    levels = {p.name: p.enforcementLevel for p in info.policies}
    assert levels["warm-replicas"] == analyzer_pb2.MANDATORY
    assert levels["batching-window"] == analyzer_pb2.ADVISORY
    assert set(levels) == {r.id for r in all_rules()}


def test_pack_process_analyzes_a_stack_and_a_resource(analyzer: Any) -> None:
    resources = S.compliant()
    resources[4] = S.scaled_object("chat", lo=1.0)
    response = analyzer.AnalyzeStack(
        analyzer_pb2.AnalyzeStackRequest(resources=[_analyzer_resource(r) for r in resources])
    )
    [diagnostic] = [d for d in response.diagnostics if d.policyName == "warm-replicas"]
    assert diagnostic.enforcementLevel == analyzer_pb2.MANDATORY
    assert diagnostic.urn == resources[4].urn and "models.chat" in diagnostic.message
    svc = S.lb_service("chat", {}, loadBalancerSourceRanges=["0.0.0.0/0"])
    response = analyzer.Analyze(
        analyzer_pb2.AnalyzeRequest(
            type=svc.type, properties=_struct(svc.props), urn=svc.urn, name=svc.name
        )
    )
    assert sorted(d.policyName for d in response.diagnostics) == ["public-endpoint"] * 2


def test_pack_process_takes_the_policy_config(analyzer: Any) -> None:
    config = analyzer_pb2.PolicyConfig(
        enforcementLevel=analyzer_pb2.DISABLED, properties=_struct({})
    )
    analyzer.Configure(
        analyzer_pb2.ConfigureAnalyzerRequest(policyConfig={"warm-replicas": config})
    )
    resources = S.compliant()
    resources[4] = S.scaled_object("chat", lo=1.0)
    response = analyzer.AnalyzeStack(
        analyzer_pb2.AnalyzeStackRequest(resources=[_analyzer_resource(r) for r in resources])
    )
    assert [d for d in response.diagnostics if d.policyName == "warm-replicas"] == []


def test_crossguard_messages_escape_user_text() -> None:
    result = Result(
        "warm-replicas",
        "mandatory",
        "violation",
        "prod",
        "models.chat\x1b[2J\u202e",
        ("models", "chat"),
        "keeps 0\r\nwarm replicas",
        None,
    )
    assert message(result) == (
        "[prod] models.chat\\x1b[2J\\u202e: keeps 0\\x0d\\x0awarm replicas "
        "[blueprint field: models.chat]"
    )
