"""A model's rollout: its Rollout and AnalysisTemplate against the pinned Argo Rollouts
CRDs, the guard's queries, the ScaledObject that scales the Rollout, and the objects the
ModelServer records (one Rollout per Deployment, per zone for an llm-aware model)."""

from __future__ import annotations

import copy
import dataclasses
import itertools
from typing import Any

from crd_schema import errors
from promql_checks import metric_names, parse, single_element, unknown_metrics
from serving_fixtures import args_of, serve, with_model, with_pool

from inferplane.blueprint import releases
from inferplane.blueprint.model import Autoscaling, Environment, Rollout, RolloutGuard, Routing
from inferplane.blueprint.upstream import vllm_owned
from inferplane.components.serving import containers
from inferplane.components.serving.observability import monitoring
from inferplane.components.serving.scaling import autoscaling, rollout

NS = "support-assistant"
ROLLOUT = Rollout(
    steps=(10, 50, 100),
    step_s=300,
    guard=RolloutGuard(p95_ms=20000, ttft_p95_ms=800, itl_p95_ms=60, error_ratio=0.01),
)
ROLLOUT_TYPE = "kubernetes:argoproj.io/v1alpha1:Rollout"
TEMPLATE_TYPE = "kubernetes:argoproj.io/v1alpha1:AnalysisTemplate"


def with_rollout(env: Environment, **changes: Any) -> Environment:
    return with_model(env, "chat", rollout=ROLLOUT, **changes)


def one_zone(env: Environment) -> Environment:
    """`env` with chat's pool narrowed to its first zone."""
    pool = env.pool_of(env.models["chat"])
    return with_pool(env, pool.name, zones=pool.zones[:1])


def obj(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": rollout.API_VERSION, "kind": kind, "spec": spec}


def test_the_rollout_takes_the_deployment_through_the_steps(prod: Environment) -> None:
    _, model = args_of(with_rollout(prod), "chat")
    spec = rollout.rollout_spec(model, "chat")
    assert errors(obj("Rollout", spec)) == []
    assert spec["workloadRef"] == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "name": "chat",
        "scaleDown": "onsuccess",
    }
    assert spec["replicas"] == model.replicas.min
    assert spec["strategy"]["canary"]["steps"] == [
        {"setWeight": 10},
        {"pause": {"duration": "300s"}},
        {"setWeight": 50},
        {"pause": {"duration": "300s"}},
        {"setWeight": 100},
    ]
    assert spec["strategy"]["canary"]["analysis"] == {
        "templates": [{"templateName": "chat"}],
        "args": [
            {"name": "canary-hash", "valueFrom": {"podTemplateHashValue": "Latest"}},
            {"name": "stable-hash", "valueFrom": {"podTemplateHashValue": "Stable"}},
        ],
    }


def test_the_analysis_template_holds_one_metric_per_bound(prod: Environment) -> None:
    env, model = args_of(with_rollout(prod), "chat")
    spec = rollout.analysis_template_spec(env, model, NS, "chat")
    assert errors(obj("AnalysisTemplate", spec)) == []
    assert spec["args"] == [{"name": "canary-hash"}, {"name": "stable-hash"}]
    assert [m["name"] for m in spec["metrics"]] == [
        "p95-ms",
        "ttft-p95-ms",
        "itl-p95-ms",
        "error-ratio",
    ]
    for metric in spec["metrics"]:
        assert metric["failureCondition"] == "len(result) > 0"
        assert "successCondition" not in metric
        assert metric["provider"]["prometheus"]["address"] == env.prometheus_url


def test_the_guard_can_fail_twice_before_the_last_step(prod: Environment) -> None:
    """The controller cancels the background analysis once the last step is reached: the
    guard's measurements must fit in the pauses, or a bad version goes through."""
    for steps, step_s, interval in (
        ((10, 50, 100), 300, 60),
        ((50, 100), 300, 60),
        ((50, 100), 120, 30),
        ((50, 100), 60, 15),
        ((50, 100), 30, 10),
        ((100,), 30, 10),
    ):
        env, model = args_of(
            with_model(
                prod, "chat", rollout=dataclasses.replace(ROLLOUT, steps=steps, step_s=step_s)
            ),
            "chat",
        )
        assert rollout.guard_interval_s(model) == interval, (steps, step_s)
        spec = rollout.analysis_template_spec(env, model, NS, "chat")
        assert {m["interval"] for m in spec["metrics"]} == {f"{interval}s"}
        assert errors(obj("AnalysisTemplate", spec)) == []
        pauses = (len(steps) - 1) * step_s
        if pauses >= rollout.GUARD_MEASUREMENTS * rollout.MIN_INTERVAL_S:
            # The start, one that may miss the canary's first scrapes, and the two failures.
            assert (rollout.FAILURE_LIMIT + 3) * interval <= pauses


def test_each_guard_query_compares_the_new_pods_with_the_stable_ones(prod: Environment) -> None:
    env, model = args_of(with_rollout(prod), "chat")
    spec = rollout.analysis_template_spec(env, model, NS, "chat")
    queries = {m["name"]: m["provider"]["prometheus"]["query"] for m in spec["metrics"]}
    for name, query in queries.items():
        # Argo substitutes the arguments before it sends the query.
        sent = query.replace("{{args.canary-hash}}", "5d8f").replace("{{args.stable-hash}}", "77c4")
        parse(sent)
        assert unknown_metrics(sent) == set(), name
        assert single_element(sent), name
        assert 'rollouts_pod_template_hash="5d8f"' in sent
        assert 'rollouts_pod_template_hash="77c4"' in sent
    assert queries["ttft-p95-ms"].startswith(
        "(histogram_quantile(0.95, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket"
    )
    assert " > 800 unless " in queries["ttft-p95-ms"]
    assert "vllm:inter_token_latency_seconds_bucket" in queries["itl-p95-ms"]
    assert " > 0.01 unless " in queries["error-ratio"]


def test_only_the_bounds_in_effect_become_metrics(staging: Environment) -> None:
    guard = RolloutGuard(p95_ms=50, error_ratio=0.02)
    triton = next(m for m in staging.models.values() if m.server == "triton")
    env, model = args_of(
        with_model(staging, triton.name, rollout=dataclasses.replace(ROLLOUT, guard=guard)),
        triton.name,
    )
    spec = rollout.analysis_template_spec(env, model, NS, triton.name)
    assert errors(obj("AnalysisTemplate", spec)) == []
    assert [m["name"] for m in spec["metrics"]] == ["p95-ms", "error-ratio"]


def test_the_scaled_object_scales_the_rollout(prod: Environment) -> None:
    env, model = args_of(with_rollout(prod), "chat")
    spec = autoscaling.scaled_object_spec(env, model, NS, "chat")
    assert spec["scaleTargetRef"] == {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Rollout",
        "name": "chat",
    }
    assert errors({"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "spec": spec}) == []
    env, plain = args_of(prod, "chat")
    assert autoscaling.scaled_object_spec(env, plain, NS, "chat")["scaleTargetRef"]["kind"] == (
        "Deployment"
    )


def test_the_service_monitor_copies_the_template_hash(prod: Environment) -> None:
    env, model = args_of(with_rollout(prod), "chat")
    spec = monitoring.service_monitor_spec(env, model, NS, "chat")
    assert spec["podTargetLabels"] == ["rollouts-pod-template-hash", "inferplane.dev/revision"]
    body = {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "spec": spec}
    assert errors(body) == []
    env, plain = args_of(prod, "chat")
    assert "podTargetLabels" not in monitoring.service_monitor_spec(env, plain, NS, "chat")


def test_an_existing_controller_s_instance_id_labels_the_rollout(prod: Environment) -> None:
    env, _ = args_of(prod, "chat")
    assert rollout.rollout_labels(env, {"a": "b"}) == {"a": "b"}
    given = dataclasses.replace(env, argo_rollouts_instance_id="platform")
    assert rollout.rollout_labels(given, {"a": "b"}) == {
        "a": "b",
        "argo-rollouts.argoproj.io/controller-instance-id": "platform",
    }


def test_a_one_zone_model_rolls_out_its_one_deployment(prod: Environment) -> None:
    env = with_rollout(one_zone(prod))
    rec = serve(env, ["chat"])
    (ro,) = rec.of_type(ROLLOUT_TYPE)
    assert ro.get("metadata", "name") == "chat"
    assert [t.get("metadata", "name") for t in rec.of_type(TEMPLATE_TYPE)] == ["chat"]
    assert [s for s in ro.get("spec", "strategy", "canary", "steps") if "analysis" in s] == []
    (scaled,) = rec.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")
    assert scaled.get("spec", "scaleTargetRef", "kind") == "Rollout"
    (deployment,) = rec.of_type("kubernetes:apps/v1:Deployment")
    labels = deployment.get("spec", "template", "metadata", "labels")
    assert len(labels["inferplane.dev/revision"]) == 10


def test_the_rollout_s_pods_drain_as_the_deployment_s_do(prod: Environment) -> None:
    """A pod of an old ReplicaSet that a canary step replaces drains like a pod the
    Deployment would replace: the Rollout has no template of its own, and the controller
    copies the whole pod template of the Deployment its ``workloadRef`` names into every
    ReplicaSet it makes (argo-rollouts v1.10.1 rollout/templateref.go ``Resolve``:
    ``SetResolvedTemplate`` of the object at the Deployment's template path; rollout/sync.go
    ``createDesiredReplicaSet``: the ReplicaSet's template is ``rollout.Spec.Template``). So the
    ``preStop`` sleep and the grace period of the longest request are the Deployment's.
    The canary's scale-down delays (``scaleDownDelaySeconds``,
    ``abortScaleDownDelaySeconds``) apply only to a canary with ``trafficRouting``
    (utils/defaults/defaults.go ``GetScaleDownDelaySecondsOrDefault``,
    ``GetAbortScaleDownDelaySecondsOrDefault``: 0 and ignored without it), so the stack
    sets neither and no traffic router."""
    env = with_rollout(prod)
    rec = serve(env, ["chat"])
    _, model = args_of(env, "chat")
    rollouts = {r.get("metadata", "name"): r for r in rec.of_type(ROLLOUT_TYPE)}
    deployments = rec.of_type("kubernetes:apps/v1:Deployment")
    assert len(deployments) == len(rollouts) > 1
    for deployment in deployments:
        name = deployment.get("metadata", "name")
        spec = rollouts[name].get("spec")
        assert "template" not in spec
        assert spec["workloadRef"]["name"] == name
        canary = spec["strategy"]["canary"]
        for field in ("trafficRouting", "scaleDownDelaySeconds", "abortScaleDownDelaySeconds"):
            assert field not in canary, field
        # What the controller's ReplicaSets run: the Deployment's pod template, whole.
        pod = deployment.get("spec", "template", "spec")
        assert pod["terminationGracePeriodSeconds"] == containers.termination_grace_s(model)
        assert pod["terminationGracePeriodSeconds"] > containers.PRESTOP_SLEEP_S + (
            model.max_request_s
        )
        (server,) = pod["containers"]
        assert server["lifecycle"]["preStop"] == {
            "exec": {"command": ["sleep", str(containers.PRESTOP_SLEEP_S)]}
        }


def test_a_model_of_several_zones_rolls_out_one_zone_after_the_other(prod: Environment) -> None:
    env = with_rollout(prod)
    zones = env.pool_of(env.models["chat"]).zones
    assert len(zones) > 1
    rec = serve(env, ["chat"])
    deployments = {
        d.get("metadata", "name"): d for d in rec.of_type("kubernetes:apps/v1:Deployment")
    }
    assert sorted(deployments) == sorted(f"chat-{z}" for z in zones)
    # One version in every zone: the templates differ by their zone only.
    versions = {
        d.get("spec", "template", "metadata", "labels")["inferplane.dev/revision"]
        for d in deployments.values()
    }
    assert len(versions) == 1
    (version,) = versions
    # ... and each zone's own template, its version label taken off, gives that version:
    # the zones' templates differ by their zone's name alone.
    for zone in zones:
        template = copy.deepcopy(deployments[f"chat-{zone}"].get("spec", "template"))
        del template["metadata"]["labels"]["inferplane.dev/revision"]
        assert rollout.revision(template, zone) == version, zone
    rollouts = {r.get("metadata", "name"): r for r in rec.of_type(ROLLOUT_TYPE)}
    assert sorted(rollouts) == sorted(deployments)
    templates = {t.get("metadata", "name"): t for t in rec.of_type(TEMPLATE_TYPE)}
    # The first zone starts at once; each later one waits on a gate for the zone before it.
    first = rollouts[f"chat-{zones[0]}"].get("spec", "strategy", "canary")
    assert "analysis" not in first["steps"][0]
    assert "startingStep" not in first["analysis"]
    for before, zone in itertools.pairwise(zones):
        canary = rollouts[f"chat-{zone}"].get("spec", "strategy", "canary")
        gate = f"chat-{zone}-after-zone"
        assert canary["steps"][0] == {"analysis": {"templates": [{"templateName": gate}]}}
        assert canary["analysis"]["startingStep"] == 1
        assert canary["steps"][1] == {"setWeight": 10}
        assert templates[gate].get("metadata", "annotations") == {
            "inferplane.dev/after": f"chat-{before}"
        }
        (metric,) = templates[gate].get("spec", "metrics")
        query = metric["provider"]["prometheus"]["query"]
        parse(query)
        assert f'pod=~"chat-{before}-[a-z0-9]+-[a-z0-9]+"' in query
        assert f'inferplane_dev_revision="{version}"' in query
        assert metric["failureLimit"] == -1
        assert metric["consecutiveSuccessLimit"] == 2
        assert metric["consecutiveErrorLimit"] == metric["count"]
        assert metric["successCondition"] == "len(result) > 0"
        assert errors(obj("AnalysisTemplate", templates[gate].get("spec"))) == []
        assert errors(obj("Rollout", rollouts[f"chat-{zone}"].get("spec"))) == []
    scaled = rec.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")
    assert sorted(s.get("spec", "scaleTargetRef", "name") for s in scaled) == sorted(deployments)


def test_a_later_zone_waits_longer_than_the_zones_before_it_take(prod: Environment) -> None:
    env, model = args_of(with_rollout(prod), "chat")
    steps = len(ROLLOUT.steps)
    one_zone = (steps - 1) * ROLLOUT.step_s + steps * model.startup_timeout_s
    assert rollout.zone_wait_s(model, 0) == 0
    assert rollout.zone_wait_s(model, 1) == 2 * one_zone
    assert rollout.zone_wait_s(model, 2) == 4 * one_zone
    spec = rollout.gate_template_spec(env, model, NS, "chat-a", "0123456789", 2)
    (metric,) = spec["metrics"]
    assert metric["count"] * rollout.GATE_INTERVAL_S >= 4 * one_zone


def test_the_version_ignores_the_zone_and_follows_the_template() -> None:
    a = {"metadata": {"labels": {"z": "us-east-1a"}}, "spec": {"image": "x:1"}}
    b = {"metadata": {"labels": {"z": "us-east-1b"}}, "spec": {"image": "x:1"}}
    c = {"metadata": {"labels": {"z": "us-east-1b"}}, "spec": {"image": "x:2"}}
    assert rollout.revision(a, "us-east-1a") == rollout.revision(b, "us-east-1b")
    assert rollout.revision(b, "us-east-1b") != rollout.revision(c, "us-east-1b")
    assert rollout.revision(a) != rollout.revision(b)


def test_an_llm_aware_model_rolls_out_each_zone_s_deployment(prod: Environment) -> None:
    signals = Autoscaling.single("ttft_p95_ms", 800.0, 600)
    env = with_rollout(prod, routing=Routing(mode="llm_aware"), autoscaling=signals)
    rec = serve(env, ["chat"])
    zones = env.pool_of(env.models["chat"]).zones
    names = sorted(r.get("metadata", "name") for r in rec.of_type(ROLLOUT_TYPE))
    assert names == sorted(f"chat-{z}" for z in zones)
    for r in rec.of_type(ROLLOUT_TYPE):
        assert r.get("spec", "workloadRef", "name") == r.get("metadata", "name")
    for t in rec.of_type(TEMPLATE_TYPE):
        name = t.get("metadata", "name")
        if name.endswith("-after-zone"):
            continue
        query = t.get("spec", "metrics")[0]["provider"]["prometheus"]["query"]
        assert f'pod=~"{name}-[a-z0-9]+-[a-z0-9]+"' in query


def test_the_guard_reads_series_every_supported_vllm_release_exports(prod: Environment) -> None:
    """An engine upgrade under a rollout runs two releases side by side: the guard compares
    the new pods' series with the stable pods', so each series must exist in both (the
    families of each release's wheel, inferplane/facts/vllm/<release>/metrics.txt)."""
    env, model = args_of(with_rollout(prod), "chat")
    spec = rollout.analysis_template_spec(env, model, NS, "chat")
    used = {
        name
        for m in spec["metrics"]
        for name in metric_names(m["provider"]["prometheus"]["query"])
        if name.startswith("vllm:")
    }
    assert "vllm:time_to_first_token_seconds_bucket" in used
    for release in releases.engine_releases("vllm"):
        assert used - vllm_owned.metric_series(release.release) == set(), release.release


def test_each_zone_of_a_round_robin_rollout_scales_on_its_own_pods(prod: Environment) -> None:
    env = with_rollout(prod)
    zones = env.pool_of(env.models["chat"]).zones
    rec = serve(env, ["chat"])
    scaled = {
        s.get("metadata", "name"): s
        for s in rec.of_type("kubernetes:keda.sh/v1alpha1:ScaledObject")
    }
    templates = {t.get("metadata", "name"): t for t in rec.of_type(TEMPLATE_TYPE)}
    for zone in zones:
        own = f'pod=~"chat-{zone}-[a-z0-9]+-[a-z0-9]+"'
        for trigger in scaled[f"chat-{zone}"].get("spec", "triggers"):
            if trigger["type"] == "prometheus":
                assert own in trigger["metadata"]["query"], trigger["metadata"]["query"]
        for metric in templates[f"chat-{zone}"].get("spec", "metrics"):
            assert own in metric["provider"]["prometheus"]["query"]
