"""What the rollout run (e2e/rehearse_rollout_run.py) applies, taken from the stack's own
functions, and how it reads the timeline back; no I/O here.

`model_objects` builds, for one model of a blueprint with a `rollout` over several zones, what
the stack builds per zone (components/serving/zone_deployments.py): the Deployment
``<model>-<zone>`` (its replicas, selector, strategy and labels from `deployment_spec` of
`router.zone_model`, with `rollout.with_revision` of one version for every zone), the Rollout
(`rollout.rollout_spec`, the gate named for every zone but the first), the guard
(`rollout.analysis_template_spec`) and the gate (`rollout.gate_template_spec`), and the
model's Service and ServiceMonitor (`monitoring.service_monitor_spec`, with its
``podTargetLabels``). Two changes, both the rehearsal's: the pods are STAND-INS (one
container that KWOK "runs", pinned to the zone by ``nodeSelector``; the annotations
`VERSION_ANNOTATION` and `SLOWER_ANNOTATION` tell the harness which stand-in to start at the
pod's IP), and the Prometheus address of the analyses is the rehearsal's Prometheus.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

HTTP_PORT = 8000
VERSION_ANNOTATION = "inferplane.dev/stand-in-version"
SLOWER_ANNOTATION = "inferplane.dev/stand-in-slower"
POD_HASH = "rollouts-pod-template-hash"
API = "/apis/argoproj.io/v1alpha1/namespaces"


def model_objects(
    prometheus_url: str, blueprint: Path, env_name: str, name: str, version: str, slower: float
) -> dict[str, Any]:
    """The objects of model `name` at stand-in `version` (served `slower` times slower):
    ``namespace``, ``zones`` (in rollout order), ``revision``, ``service``, ``monitor``,
    and per zone ``deployments``, ``rollouts``, ``guards`` and ``gates`` (the first zone
    has none)."""
    from inferplane.blueprint import naming
    from inferplane.blueprint.resolution.resolve import load_blueprint, resolve
    from inferplane.components import stack_serving
    from inferplane.components.serving import serving_pod
    from inferplane.components.serving.observability import monitoring
    from inferplane.components.serving.routing.router import release_name, zone_model
    from inferplane.components.serving.scaling import rollout

    doc, _ = load_blueprint(blueprint)
    env = resolve(doc, env_name)
    serving_env = dataclasses.replace(
        stack_serving.serving_environment(env), prometheus_url=prometheus_url
    )
    model = stack_serving.served_model(env, env.models[name])
    ns = naming.namespace(env.blueprint)
    zones = rollout.zone_order(model)
    specs = {
        zone: standin_spec(
            serving_pod.deployment_spec(
                serving_env, zone_model(model, zone), "s3://stand-in/", False, None, zone=zone
            ),
            zone,
            version,
            slower,
        )
        for zone in zones
    }
    version_label = rollout.revision(specs[zones[0]]["template"], zones[0])
    labels = naming.model_labels(env.blueprint, env.name, name)
    out: dict[str, Any] = {
        "namespace": ns,
        "zones": list(zones),
        "revision": version_label,
        "selector": naming.model_selector(env.blueprint, name),
        "deployments": {},
        "rollouts": {},
        "guards": {},
        "gates": {},
    }
    for position, zone in enumerate(zones):
        zoned = zone_model(model, zone)
        dep = release_name(model, zone)
        zone_labels = {**labels, naming.ZONE_LABEL: zone}
        meta = {"name": dep, "namespace": ns, "labels": zone_labels}
        out["deployments"][zone] = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta,
            "spec": rollout.with_revision(specs[zone], version_label),
        }
        gate = None
        if position > 0:
            gate = rollout.gate_name(dep)
            previous = release_name(model, zones[position - 1])
            out["gates"][zone] = _analysis(
                {**meta, "name": gate},
                rollout.gate_template_spec(
                    serving_env, zoned, ns, previous, version_label, position
                ),
            )
        out["guards"][zone] = _analysis(
            meta, rollout.analysis_template_spec(serving_env, zoned, ns, dep, zone)
        )
        out["rollouts"][zone] = {
            "apiVersion": rollout.API_VERSION,
            "kind": "Rollout",
            "metadata": {**meta, "labels": rollout.rollout_labels(serving_env, zone_labels)},
            "spec": rollout.rollout_spec(zoned, dep, gate),
        }
    out["service"] = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": serving_pod.cluster_service_spec(serving_env, model),
    }
    out["monitor"] = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": monitoring.release_labels(serving_env, model),
        },
        "spec": monitoring.service_monitor_spec(serving_env, model, ns, name),
    }
    return out


def _analysis(meta: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "AnalysisTemplate",
        "metadata": meta,
        "spec": spec,
    }


def standin_spec(spec: dict[str, Any], zone: str, version: str, slower: float) -> dict[str, Any]:
    """The stack's Deployment `spec` with a stand-in pod: the same replicas, selector,
    strategy and template labels; one container KWOK never runs, pinned to `zone`'s nodes;
    the version and its speed in annotations (part of the template: a new version is a new
    template, and a new revision)."""
    from inferplane.blueprint import naming

    metadata = dict(spec["template"]["metadata"])
    metadata["annotations"] = {
        **(metadata.get("annotations") or {}),
        VERSION_ANNOTATION: version,
        SLOWER_ANNOTATION: f"{slower:g}",
    }
    pod = {
        "nodeSelector": {naming.TOPOLOGY_ZONE_LABEL: zone},
        "containers": [
            {
                "name": "vllm",
                "image": f"stand-in.invalid/vllm:{version}",
                "ports": [{"name": "http", "containerPort": HTTP_PORT}],
            }
        ],
    }
    return {**spec, "template": {"metadata": metadata, "spec": pod}}


def template_patch(deployment: dict[str, Any]) -> dict[str, Any]:
    """The merge patch that gives a Deployment `deployment`'s pod template."""
    return {"spec": {"template": deployment["spec"]["template"]}}


def guard_side(query: str, pod_hash: str) -> str:
    """The canary side of a guard query (`rollout.guard_queries`: ``(new) > bound unless
    (new) <= (stable)``) for the pod template `pod_hash`: its p95 alone."""
    new = query.split(") > ", 1)[0]
    if not new.startswith("("):
        raise ValueError(f"not a guard query: {query[:80]}")
    return new[1:].replace("{{args.canary-hash}}", pod_hash)


def zone_state(rollout: dict[str, Any], pods: list[dict[str, Any]]) -> dict[str, Any]:
    """What the timeline follows of one zone's Rollout: phase, step, abort, the stable and
    current hashes, and the pods on each and on neither (an older template's, or the
    Deployment's own before the Rollout takes over)."""
    status = rollout.get("status") or {}
    stable, current = status.get("stableRS"), status.get("currentPodHash")
    live = [p for p in pods if not p["metadata"].get("deletionTimestamp")]

    def on(h: str | None) -> int:
        return sum(1 for p in live if h and (p["metadata"].get("labels") or {}).get(POD_HASH) == h)

    return {
        "phase": status.get("phase"),
        "step": status.get("currentStepIndex"),
        "abort": bool(status.get("abort")),
        "stable": stable,
        "current": current,
        "stable_pods": on(stable),
        "canary_pods": on(current) if current != stable else 0,
        "other_pods": sum(
            1
            for p in live
            if (p["metadata"].get("labels") or {}).get(POD_HASH) not in (stable, current)
        ),
    }


def analysis_state(run: dict[str, Any]) -> dict[str, Any]:
    """One AnalysisRun: its kind (``gate`` or ``guard``, by its metrics), phase and every
    measurement's phase and value."""
    names = [m["name"] for m in run["spec"].get("metrics") or []]
    results = (run.get("status") or {}).get("metricResults") or []
    return {
        "kind": "gate" if names == ["zone-before"] else "guard",
        "phase": (run.get("status") or {}).get("phase"),
        "measurements": {
            r["name"]: [(m.get("phase"), m.get("value")) for m in r.get("measurements") or []]
            for r in results
        },
    }


def milestones(events: list[dict[str, Any]], zone: str, old: str | None) -> dict[str, Any]:
    """From one run's events (``t``, ``zone`` and either the zone's whole `zone_state` or
    an AnalysisRun's ``analysis`` kind and ``analysis_phase``), the seconds at which `zone`
    first had a canary pod, changed steps, saw its gate pass, aborted, and was Healthy on a
    hash other than `old`."""
    out: dict[str, Any] = {"steps": []}
    step = None
    for e in events:
        if e.get("zone") != zone:
            continue
        t = e["t"]
        if "analysis" in e:
            if e["analysis"] == "gate" and e.get("analysis_phase") == "Successful":
                out.setdefault("gate_passed", t)
            continue
        if e.get("canary_pods"):
            out.setdefault("canary_start", t)
        if e.get("step") != step:
            step = e.get("step")
            out["steps"].append([t, step])
        if e.get("abort"):
            out.setdefault("aborted", t)
        if (
            e.get("phase") == "Healthy"
            and e.get("stable") not in (None, old)
            and e.get("stable") == e.get("current")
        ):
            out.setdefault("healthy_on_new", t)
    return out
