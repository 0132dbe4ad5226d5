"""`inferplane plan BLUEPRINT --env ENV [--out DIR] [--policy-config FILE]`: what `pulumi up -s
ENV` would create.

Validates the whole blueprint, runs the stack program offline (`inferplane.app.offline`), and
prints the resource tree — each resource with the facts a reviewer looks for (zone,
instance type, GPUs, min/max, chart and version, replicas) — then the count per type, then
each model's scale-out budget (`inferplane.blueprint.derived.scale_out`; its estimates are the
``scale-out-budget`` rule's keys in the policy config).
With `--out DIR` it also writes plan.json, the Kubernetes manifests, the Helm releases and
the Triton model configs (`inferplane.app.plan_output`). Nothing is written unless the whole
plan succeeds.

Exit codes: 0 planned; 2 invalid blueprint, unknown environment or unusable --out;
3 internal error (handled by the CLI: one line, traceback with INFERPLANE_DEBUG=1).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inferplane.app.exits import EXIT_OK, print_diagnostics, usage_error
from inferplane.blueprint.errors import BlueprintError, counted, printable

if TYPE_CHECKING:  # importing the harness loads Pulumi: only when a plan actually runs
    from inferplane.app.offline import RecordedResource, Recording
    from inferplane.blueprint.capacity.planner import EnvPlan
    from inferplane.blueprint.capacity.prices import Price
    from inferplane.blueprint.derived.node_shape import NodeShape
    from inferplane.blueprint.derived.scale_out import Budget
    from inferplane.blueprint.model import Environment


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("blueprint", metavar="BLUEPRINT", help="blueprint YAML file")
    parser.add_argument(
        "--env", required=True, metavar="ENV", help="environment (= Pulumi stack) to plan"
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        type=Path,
        help="also write plan.json, manifests/, helm/ and triton/ to DIR (replaced whole)",
    )
    parser.add_argument(
        "--policy-config",
        metavar="FILE",
        help="policy config whose scale-out-budget keys correct the budget's estimates and "
        "whose capacity-estimate.prices price the nodes",
    )
    parser.add_argument(
        "--invokes",
        metavar="FILE",
        help="provider answers recorded from a real run (a YAML list of {token, args, "
        "answer}): the capacity preflight runs on them instead of saying not checked",
    )


def run(args: argparse.Namespace) -> int:
    from inferplane.app import plan_output, platform_scale_out, recorded_invokes
    from inferplane.blueprint.derived import scale_out
    from inferplane.blueprint.resolution.resolve import resolve_file
    from inferplane.policies import waivers

    try:
        scaling = platform_scale_out.of_file(args.policy_config)
        env = resolve_file(args.blueprint, args.env, scaling)
        budgets = scale_out.budgets(env, scaling.constants)
        platform = platform_prices(args.policy_config)
        if args.out is not None:  # fail before the run, and again at write time
            plan_output.check_out_dir(args.out)
        from inferplane.app.offline import run_program

        invokes = recorded_invokes.load(args.invokes) if args.invokes else []
        if invokes:
            # Judged as of today, or of $INFERPLANE_TODAY as `check` judges waivers.
            try:
                now = f"{waivers.today().isoformat()}T00:00:00Z"
            except ValueError as exc:  # $INFERPLANE_TODAY is not a date: it says which
                return usage_error("inferplane plan", str(exc))
            config = {"inferplane:preflightNow": now}
            recording = run_program(env, invokes=invokes, config=config).revealed()
        else:
            recording = run_program(env).revealed()
    except recorded_invokes.InvokesError as exc:
        return usage_error("inferplane plan", f"--invokes {exc}")
    except BlueprintError as exc:
        return print_diagnostics(exc.diagnostics)
    except plan_output.OutputDirError as exc:
        return usage_error("inferplane plan", f"--out {exc}")
    out = sys.stdout
    glyphs = _glyphs(out)
    zones = ", ".join(env.zones)
    header = f"Plan: {env.blueprint} / {env.name} ({env.cloud} {env.region}; zones {zones})"
    print(printable(header), file=out)
    print(file=out)
    for line in render_tree(recording, glyphs):
        print(printable(line), file=out)
    print(file=out)
    for line in render_counts(recording):
        print(line, file=out)
    shapes = node_shapes(env)
    if shapes is not None:
        print(file=out)
        for line in render_node_shapes(shapes):
            print(printable(line), file=out)
    from inferplane.app import plan_secrets

    secrets = plan_secrets.secret_references(env, recording)
    print(file=out)
    for line in plan_secrets.render(secrets):
        print(line, file=out)
    print(file=out)
    for line in render_budgets(budgets, env, scaling.bound_s):
        print(printable(line), file=out)
    print(file=out)
    for line in render_routing(env):
        print(printable(line), file=out)
    from inferplane.app import plan_sources

    sources = plan_sources.section(env, platform, plan_sources.preflight_of(recording.resources))
    if sources:
        print(file=out)
        for line in plan_sources.render(sources):
            print(printable(line), file=out)
    from inferplane.app import plan_capacity
    from inferplane.blueprint.capacity import planner

    capacity = planner.plan_env(env, platform)
    block = plan_capacity.render(env, capacity)
    if block:
        print(file=out)
    for line in block:
        print(printable(line), file=out)
    for message in recording.messages:
        if message.severity in {"warning", "error"}:
            print(printable(f"{message.severity}: {message.text}"), file=sys.stderr)
    if args.out is not None:
        try:
            written = plan_output.write_atomically(
                args.out,
                plan_output.files(
                    recording,
                    env.blueprint,
                    env.name,
                    secrets,
                    _with_capacity(model_entries(budgets), env, capacity),
                    [s.to_json() for s in shapes] if shapes is not None else None,
                    sources,
                ),
            )
        except plan_output.OutputDirError as exc:
            return usage_error("inferplane plan", f"--out {exc}")
        print(printable(f"Wrote {counted(len(written), 'file')} to {args.out}"), file=out)
    print(f"Planned offline in {recording.wall_time_s:.2f}s", file=out)
    return EXIT_OK


def _with_capacity(
    entries: dict[str, dict[str, Any]], env: Environment, capacity: EnvPlan
) -> dict[str, dict[str, Any]]:
    """plan.json's ``models`` with each planned model's ``capacity``."""
    from inferplane.app import plan_capacity

    for name, plan in capacity.plans.items():
        entries.setdefault(name, {})["capacity"] = plan_capacity.as_json(env, plan)
    return entries


# --- a kubernetes environment's nodes ---------------------------------------------------------
def node_shapes(env: Environment) -> tuple[NodeShape, ...] | None:
    """The GPU nodes a kubernetes environment's cluster must already have; None elsewhere
    (the stack creates them)."""
    from inferplane.blueprint.derived.node_shape import required_node_shape

    return required_node_shape(env) if env.kubernetes else None


def render_node_shapes(shapes: tuple[NodeShape, ...]) -> list[str]:
    """Per pool and zone: how many nodes, their GPUs, and the labels and taints they carry
    (nothing creates or labels them: the cluster's owner does)."""
    lines = ["GPU nodes the cluster must have (nothing creates them; label and taint them so):"]
    for s in shapes:
        lines.append(
            f"  pool {s.pool}, zone {s.zone}: {s.nodes_min} node(s), each with "
            f"{s.gpu_units_per_node} x {s.gpu_resource} ({s.gpus_per_node} GPU(s))"
        )
        lines.append("    labels: " + ", ".join(f"{k}={v}" for k, v in s.labels.items()))
        lines.append("    taints: " + ", ".join(f"{t.key}={t.value}:{t.effect}" for t in s.taints))
    return lines


# --- scale-out budget -------------------------------------------------------------------------
CAPACITY_RULE = "capacity-estimate"


def platform_prices(config_file: str | None) -> dict[tuple[str, str], Price]:
    """The platform's node prices from the policy config's ``capacity-estimate.prices``
    (none without a file): the cost uses them before the built-in table."""
    from inferplane.blueprint.capacity import prices
    from inferplane.policies import config
    from inferplane.policies.rules import rule

    if config_file is None:
        return {}
    values = config.load(config_file).values_for(rule(CAPACITY_RULE))
    return prices.platform_rows(values["prices"])


def model_entries(budgets: Mapping[str, Budget]) -> dict[str, dict[str, Any]]:
    """plan.json's ``models``: per model ``{"scale_out": {total_s, parts, dominant, notes}}``."""
    return {name: {"scale_out": b.as_json()} for name, b in sorted(budgets.items())}


def render_budgets(
    budgets: Mapping[str, Budget],
    env: Environment | None = None,
    platform_bound_s: int | None = None,
) -> list[str]:
    """One line per model: the budget, then its parts, largest first. With `env`, under each
    line its bound, the levers in effect with their monthly cost, and one row per part in
    the order a scale-out waits for them, with the lever that shortened it."""
    lines = ["Scale-out budget (traffic spike to one more ready replica):"]
    for name, b in sorted(budgets.items()):
        lines.append(f"  {b.line(name)}")
        if env is not None and name in env.models:
            lines += _budget_table(b, env, env.models[name], platform_bound_s)
    return lines


def _budget_table(
    b: Budget, env: Environment, model: Any, platform_bound_s: int | None
) -> list[str]:
    from inferplane.blueprint.derived import scale_out

    platform = platform_bound_s or scale_out.DEFAULT_BOUND_S
    own = model.scale_out.budget_s
    bound = scale_out.Platform(bound_s=platform).bound_for(own)
    whose = "its scale_out.budget_s" if own and own <= platform else "the platform's bound"
    verdict = "within" if b.total_s <= bound and not b.unknown else "over"
    if b.unknown and b.total_s <= bound:
        verdict = "at least, against"
    from inferplane.blueprint.derived import levers

    options = scale_out.inputs_of(env, model).options
    in_effect = model.scale_out.levers
    costs = [levers.Choice(in_effect, b, None, options).described] if in_effect else []
    asked = model.scale_out.requested
    how = (
        "chosen by levers: auto"
        if asked == "auto"
        else "as listed"
        if asked
        else "no scale_out stated"
    )
    rows = [
        f"    {b.total_s} s {verdict} {bound} s ({whose}); levers {', '.join(costs) or 'none'}"
        f" [{how}]"
    ]
    width = max(len(p.name) for p in b.parts)
    for p in b.parts:
        seconds = f"{int(p.seconds)} s" if p.known else "unknown"
        lever = f"[{p.lever}] " if p.lever else ""
        rows.append(f"      {p.name:<{width}} {seconds:>8}  {lever}{p.note}")
    return rows


def render_routing(env: Environment) -> list[str]:
    """One line per model: how requests reach its replicas and, at zero, what wakes it."""
    from inferplane.blueprint import wake

    lines = ["Routing (and the way back from zero replicas):"]
    for name, model in sorted(env.models.items()):
        routing = model.routing
        if routing.llm_aware:
            zones = ", ".join(env.pool_of(model).zones)
            flow = "on" if routing.flow_control else "off"
            how = (
                f"llm-aware, one InferencePool and llm-d router per zone ({zones}); prefix "
                f"cache {routing.prefix_cache}, flow control {flow}"
            )
        else:
            how = "round-robin through the zone-local load balancer"
        path = wake.wake_path(
            model.server,
            model.expose,
            model.replicas.min,
            llm_aware=routing.llm_aware,
            flow_control=routing.flow_control,
            scheduled=model.wake is not None or bool(model.schedule),
        )
        lines.append(f"  {name}: {how}" + (f"; at 0 replicas {path}" if path else ""))
    return lines


# --- rendering ------------------------------------------------------------------------------
def _glyphs(stream: Any) -> tuple[str, str, str, str]:
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "")
    if encoding in {"utf8", "utf16", "utf32"}:
        return "├─ ", "└─ ", "│  ", "   "
    return "|- ", "`- ", "|  ", "   "


def render_tree(recording: Recording, glyphs: tuple[str, str, str, str]) -> list[str]:
    """One line per resource, indented under its parent, siblings sorted by type and name."""
    from inferplane.app.plan_output import tree_order

    tee, last, bar, blank = glyphs
    ordered = tree_order(recording)
    # Backwards pass: does a later sibling follow (before the walk climbs above its level)?
    has_next = [False] * len(ordered)
    seen: list[bool] = []
    for i in range(len(ordered) - 1, -1, -1):
        depth = ordered[i][0]
        del seen[depth + 1 :]
        seen.extend([False] * (depth + 1 - len(seen)))
        has_next[i] = seen[depth]
        seen[depth] = True
    lines = []
    open_levels: list[bool] = []  # per depth: does the current ancestor have a next sibling?
    for i, (depth, res) in enumerate(ordered):
        del open_levels[depth:]
        prefix = "".join(bar if more else blank for more in open_levels[1:])
        branch = "" if depth == 0 else (tee if has_next[i] else last)
        text = f"{res.type}  {res.name}"
        facts = describe(res)
        if facts:
            text += f"  [{facts}]"
        lines.append(prefix + branch + text)
        open_levels.append(has_next[i])
    return lines


def render_counts(recording: Recording) -> list[str]:
    counts = recording.counts()
    width = len(str(len(recording)))
    lines = ["Resources by type:"]
    lines += [f"  {n:>{width}}  {type_}" for type_, n in counts.items()]
    lines.append(f"  {len(recording):>{width}}  total")
    return lines


def _num(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _gpu_requests(pod_spec: dict[str, Any]) -> str:
    found = []
    for container in pod_spec.get("containers") or []:
        limits = (container.get("resources") or {}).get("limits") or {}
        for key, value in sorted(limits.items()):
            if key.startswith("nvidia.com/"):
                found.append(f"{key}={_num(value)}")
    return ",".join(found)


def describe(res: RecordedResource) -> str:
    """The facts of one resource a reviewer checks first, as ``key=value`` pairs."""
    get = res.get
    facts: list[str] = []

    def add(key: str, value: Any) -> None:
        if value not in (None, "", [], {}):
            if isinstance(value, list):
                value = ",".join(_num(v) for v in value)
            facts.append(f"{key}={_num(value)}")

    if res.read:
        facts.append("existing, read only")
    kind = res.type.rsplit(":", 1)[-1]
    if res.type.startswith("kubernetes:helm.sh/"):
        add("chart", get("chart"))
        add("version", get("version"))
        add("namespace", get("namespace"))
    elif res.type.startswith("kubernetes:") and res.custom:
        add("namespace", get("metadata", "namespace"))
        add("name", get("metadata", "name"))
        spec = get("spec") or {}
        add("replicas", spec.get("replicas"))
        add("min", spec.get("minReplicaCount", spec.get("minReplicas")))
        add("max", spec.get("maxReplicaCount", spec.get("maxReplicas")))
        if kind == "Service":
            add("type", spec.get("type"))
        if kind == "NodePool":  # Karpenter's: the node group it stands for
            labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
            add("zone", labels.get("inferplane.dev/zone"))
            add("pool", labels.get("inferplane.dev/pool"))
            add("gpu limit", (spec.get("limits") or {}).get("nvidia.com/gpu"))
        pod = (spec.get("template") or {}).get("spec") or {}
        if kind == "CronJob":
            pod = ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template", {})
            pod = pod.get("spec") or {}
        selector = pod.get("nodeSelector") or {}
        add("zone", selector.get("topology.kubernetes.io/zone"))
        add("pool", selector.get("inferplane.dev/pool"))
        add("gpus", _gpu_requests(pod))
    elif res.type == "aws:eks/nodeGroup:NodeGroup":
        labels = get("labels") or {}
        add("zone", labels.get("inferplane.dev/zone"))
        add("instance", get("instanceTypes"))
        add("gpu", labels.get("inferplane.dev/gpu"))
        add("capacity", get("capacityType"))
        add("min", get("scalingConfig", "minSize"))
        add("max", get("scalingConfig", "maxSize"))
    elif res.type == "gcp:container/nodePool:NodePool":
        add("zone", get("nodeLocations"))
        add("machine", get("nodeConfig", "machineType"))
        for acc in get("nodeConfig", "guestAccelerators") or []:
            add("gpus", f"{_num(acc.get('count'))}x{acc.get('type')}")
        add(
            "min",
            get("autoscaling", "minNodeCount", default=get("autoscaling", "totalMinNodeCount")),
        )
        add(
            "max",
            get("autoscaling", "maxNodeCount", default=get("autoscaling", "totalMaxNodeCount")),
        )
    elif res.type in {"aws:eks/cluster:Cluster", "gcp:container/cluster:Cluster"}:
        add("name", get("name"))
        add("version", get("version", default=get("minMasterVersion")))
        add("location", get("location"))
    elif res.type == "aws:ec2/subnet:Subnet":
        add("zone", get("availabilityZone"))
        add("cidr", get("cidrBlock"))
    elif res.type == "aws:ec2/vpc:Vpc":
        add("cidr", get("cidrBlock"))
    elif res.type == "gcp:compute/subnetwork:Subnetwork":
        add("region", get("region"))
        add("cidr", get("ipCidrRange"))
    elif res.type == "aws:iam/role:Role":
        add("name", get("name"))
    elif res.type == "gcp:serviceaccount/account:Account":
        add("account", get("accountId"))
    return " ".join(facts)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m inferplane.app.plan ...`: the same as `inferplane plan ...`."""
    from inferplane.app import cli

    return cli.main(["plan", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
