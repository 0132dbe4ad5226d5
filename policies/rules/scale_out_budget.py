"""scale-out-budget: a realtime model gets one more ready replica within a bound."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from inferplane.blueprint.derived import levers
from inferplane.blueprint.derived.scale_out import (
    DEFAULT_BOUND_S,
    Budget,
    Constants,
    Platform,
    ScaleOutInputs,
    budget,
    constant_docs,
)
from inferplane.blueprint.errors import YamlPath
from inferplane.policies.framework import ConfigKey, Finding, ResourceRef, Rule, RuleConfig
from inferplane.policies.stack import Stack

MAX_TOTAL_S = DEFAULT_BOUND_S


def _config_keys() -> tuple[ConfigKey, ...]:
    docs = constant_docs()
    keys = [
        ConfigKey(
            "max_total_s",
            MAX_TOTAL_S,
            {"type": "integer", "minimum": 1},
            "Seconds from a traffic spike to one more ready replica a realtime model may need "
            "(a model's scale_out.budget_s may only tighten it).",
        )
    ]
    for f in dataclasses.fields(Constants):
        rate = f.name.endswith("_per_s")
        schema: dict[str, Any] = {"type": "number"}
        schema["exclusiveMinimum" if rate else "minimum"] = 0
        keys.append(ConfigKey(f.name, f.default, schema, docs.get(f.name, "")))
    return tuple(keys)


NEW_NODE_PARTS = ("node", "image_pull")
"""The parts a spare GPU on a running node removes at once: the cheapest lever."""


def _blame(name: str, part: str) -> tuple[YamlPath, str]:
    """The value to change for `part` (not a new node's), and how."""
    model: YamlPath = ("models", name)
    if part == "weights":
        return (*model, "source"), (
            "serve a smaller or quantized checkpoint, or keep more warm replicas "
            "(replicas.min) so that fewer scale-outs wait for it"
        )
    if part == "engine_build":
        return (*model, "accelerator"), (
            "build the engine once, in a Job, with backend: tensorrt (a pipeline step's "
            "shapes, a model's tensorrt.inputs are its profiles), or run on accelerator: "
            "cuda, which builds nothing"
        )
    if part == "engine_load":
        return (*model, "server"), (
            "keep more warm replicas (replicas.min): every new replica loads the engine and "
            "starts the server again"
        )
    if part == "warmup":
        return (*model, "warmup", "batch_sizes"), "warm up fewer batch sizes"
    if part == "metrics_poll":
        return (*model, "replicas", "min"), "keep one warm replica (replicas.min: 1)"
    return (*model, "replicas", "min"), "keep more warm replicas (replicas.min)"


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    if stack.facts is None:
        return  # preview without the facts yet: nothing to compute from
    platform = Platform.from_values(config)
    constants, bound = platform.constants, platform.bound_s
    for name, inputs in sorted(stack.facts.models.items()):
        if inputs.latency_class != "realtime" and inputs.budget_s is None:
            continue
        view = stack.models.get(name)
        ref = view.workloads[0].ref if view and view.workloads else None
        free = inputs.spare_units + inputs.idle_units
        if stack.fixed_nodes and free < inputs.units_per_replica:
            # Nothing adds a node: the next replica is ready only on a GPU already free.
            yield Finding(
                f"models.{name}",
                ("gpu_pools", inputs.pool, "spare_gpus"),
                f"nothing adds nodes in environment {stack.environment!r}, and pool "
                f"{inputs.pool} keeps {inputs.spare_units} spare GPU unit(s) per zone while a "
                f"replica of {name} needs {inputs.units_per_replica}: a scale-out waits for "
                "a GPU another pod frees, or never becomes ready; keep spare_gpus: "
                f"{inputs.units_per_replica} (or more) on pool {inputs.pool}",
                ref,
            )
            continue
        own = inputs.budget_s
        limit = platform.bound_for(own)
        found = budget(inputs, constants, node_autoscaler=not stack.fixed_nodes)
        if found.total_s <= limit:
            continue
        choice = levers.cheapest(inputs, limit, constants, node_autoscaler=not stack.fixed_nodes)
        yield _finding(name, inputs, found, limit, ref, choice, whose=_whose(own, bound))


def _whose(own: int | None, platform: int) -> str:
    if own is None:
        return "bound"
    if own <= platform:
        return "bound of its scale_out.budget_s"
    return f"platform bound (scale_out.budget_s {own} s may only tighten it)"


def _finding(
    name: str,
    inputs: ScaleOutInputs,
    found: Budget,
    bound: int,
    ref: ResourceRef | None,
    choice: levers.Choice | None = None,
    *,
    whose: str = "bound",
) -> Finding:
    """Names the cheapest set of levers that would meet the bound, with what it adds per
    month; when none would, what the cheapest lever removes: a spare GPU, when the budget
    waits for a new node (both that node and its image pull go); otherwise the dominant
    part and its fix."""
    needs = "at least" if found.unknown else "about"
    head = (
        f"a scale-out of {name} needs {needs} {found.total_s} s from a traffic spike to one "
        f"more ready replica, over the {bound} s {whose}"
    )
    if found.unknown:
        head += f" (not counting {', '.join(found.unknown)}: size unknown)"
    if choice is not None and set(choice.levers) - set(inputs.levers) - {"standby"}:
        listed = ", ".join(choice.levers)
        return Finding(
            f"models.{name}",
            ("models", name, "scale_out", "levers"),
            f"{head}; the levers {choice.described} would take it to "
            f"{choice.budget.total_s} s: write scale_out: {{levers: [{listed}]}} on model "
            f"{name} (or levers: auto, which chooses them)",
            ref,
        )
    new_node = [p for p in found.parts if p.name in NEW_NODE_PARTS]
    if new_node:
        removed = " and ".join(f"{p.name} {int(p.seconds)} s ({p.note})" for p in new_node)
        rest = found.total_s - int(sum(p.seconds for p in new_node))
        return Finding(
            f"models.{name}",
            ("gpu_pools", inputs.pool, "spare_gpus"),
            f"{head}; keep spare_gpus: {inputs.units_per_replica} (or more) on pool "
            f"{inputs.pool}: a new replica then preempts a placeholder on a running node "
            f"that holds the image already, which removes {removed}, leaving {rest} s",
            ref,
        )
    dominant = found.dominant
    part = found.part(dominant)
    assert part is not None
    field, fix = _blame(name, dominant)
    return Finding(
        f"models.{name}",
        field,
        f"{head}; {dominant} dominates with {int(part.seconds)} s ({part.note}); {fix}",
        ref,
    )


RULE = Rule(
    id="scale-out-budget",
    title="A realtime model gets one more ready replica within a bounded time",
    level="advisory",
    scope="stack",
    check=check,
    config=_config_keys(),
    rationale=(
        "Autoscaling helps users only as fast as a new replica becomes ready. For a GPU "
        "model that is a chain of waits: the signal's scrape, the HPA's sync, a new node "
        "when the pool has no free GPU, the image pull on that node, the weights' copy, "
        "the engine's load and warm-up, and the readiness probe. When the chain is longer "
        "than a traffic spike, the spike is over (or users gave up) before help arrives. "
        "On a kubernetes environment nothing adds nodes: a replica that finds no free GPU "
        "never becomes ready, so there a realtime model's pool must keep spare_gpus for "
        "one more replica."
    ),
    remediation=(
        "Start with the cheapest lever: spare_gpus on the model's pool removes both `node` "
        "and `image_pull` (a new replica preempts a placeholder on a running node that "
        "holds the image). Then fix the part that dominates: a smaller or quantized "
        "checkpoint for `weights`, more warm replicas (replicas.min) for `engine_load`, "
        "backend: tensorrt (a build Job) instead of ONNX Runtime's TensorRT provider for "
        "`engine_build`, "
        "fewer warm-up batch sizes for `warmup`. The estimates behind each part are this "
        "rule's config keys; correct them with measurements from your clusters."
    ),
    links=(
        "https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/",
        "https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md",
    ),
    sources=(
        "The environment facts: each model's scale-out inputs (latency class, server, pool, "
        "GPU units per replica, the pool's spare GPU units, weights size, warm-up batches); "
        "the budget is `inferplane.blueprint.derived.scale_out.budget`, the same one `inferplane "
        "plan` prints. A model whose size nothing states (no model_info, no row of the "
        "built-in table, no size in the source's name; an ONNX model) is judged without its "
        "weights, as at least its known parts. Without the facts (preview before they are "
        "known) it is skipped."
    ),
    passing_example="""\
gpu_pools:
  l4: {gpu: nvidia-l4, spare_gpus: 1}   # a free GPU per zone: no node, no image pull
models:
  ranker: {pool: l4, gpus: 1, latency_class: realtime}
""",
    failing_example="""\
gpu_pools:
  # No spare GPU, and no GPU idle on the kept nodes: a scale-out waits for a node and its
  # image pull.
  l4: {gpu: nvidia-l4, spare_gpus: 0, nodes: {min: 0, max: 6}}
models:
  ranker: {pool: l4, gpus: 1, latency_class: realtime}
""",
)
