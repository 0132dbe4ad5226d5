"""scale-out-budget: a realtime model gets one more ready replica within a bound."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from inferplane.blueprint.errors import YamlPath
from inferplane.blueprint.scale_out import (
    Budget,
    Constants,
    ScaleOutInputs,
    budget,
    constant_docs,
)
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.stack import Stack

MAX_TOTAL_S = 120


def _config_keys() -> tuple[ConfigKey, ...]:
    docs = constant_docs()
    keys = [
        ConfigKey(
            "max_total_s",
            MAX_TOTAL_S,
            {"type": "integer", "minimum": 1},
            "Seconds from a traffic spike to one more ready replica a realtime model may need.",
        )
    ]
    for f in dataclasses.fields(Constants):
        rate = f.name.endswith("_per_s")
        schema: dict[str, Any] = {"type": "number"}
        schema["exclusiveMinimum" if rate else "minimum"] = 0
        keys.append(ConfigKey(f.name, f.default, schema, docs.get(f.name, "")))
    return tuple(keys)


def judged(inputs: ScaleOutInputs, constants: Constants, node_autoscaler: bool = True) -> Budget:
    """The budget the rule judges: with an unknown model size counted as nothing, so the
    advisory rests on what the blueprint states (`inferplane plan` shows the assumed size)."""
    if inputs.weights_gb is None:
        constants = dataclasses.replace(
            constants, unknown_llm_parameters_billions=0, unknown_model_gb=0
        )
    return budget(inputs, constants, node_autoscaler=node_autoscaler)


def _blame(name: str, inputs: ScaleOutInputs, part: str) -> tuple[YamlPath, str]:
    """The value to change for the dominant part, and how."""
    model: YamlPath = ("models", name)
    if part in ("node", "image_pull"):
        return ("gpu_pools", inputs.pool, "spare_gpus"), (
            f"keep spare_gpus: {inputs.units_per_replica} (or more) on pool {inputs.pool}, so a "
            "new replica preempts a placeholder on a running node that already holds the image"
        )
    if part == "weights":
        return (*model, "source"), (
            "serve a smaller or quantized checkpoint, or keep more warm replicas "
            "(replicas.min) so that fewer scale-outs wait for it"
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
    constants = Constants.from_values(config)
    bound = config["max_total_s"]
    for name, inputs in sorted(stack.facts.models.items()):
        if inputs.latency_class != "realtime":
            continue
        view = stack.models.get(name)
        ref = view.workloads[0].ref if view and view.workloads else None
        if stack.fixed_nodes and inputs.spare_units < inputs.units_per_replica:
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
        found = judged(inputs, constants, node_autoscaler=not stack.fixed_nodes)
        if found.total_s <= bound:
            continue
        dominant = found.dominant
        part = found.part(dominant)
        assert part is not None
        field, fix = _blame(name, inputs, dominant)
        yield Finding(
            f"models.{name}",
            field,
            f"a scale-out of {name} needs about {found.total_s} s from a traffic spike to "
            f"one more ready replica, over the {bound} s bound; {dominant} dominates with "
            f"{int(part.seconds)} s ({part.note}); {fix}",
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
        "Fix the part that dominates: spare_gpus on the model's pool for `node` and "
        "`image_pull`, a smaller or quantized checkpoint for `weights`, more warm replicas "
        "(replicas.min) for `engine_load`, fewer warm-up batch sizes for `warmup`. The "
        "estimates behind each part are this rule's config keys; correct them with "
        "measurements from your clusters."
    ),
    links=(
        "https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/",
        "https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/FAQ.md",
    ),
    sources=(
        "The environment facts: each model's scale-out inputs (latency class, server, pool, "
        "GPU units per replica, the pool's spare GPU units, weights size, warm-up batches); "
        "the budget is `inferplane.blueprint.scale_out.budget`, the same one `inferplane "
        "plan` prints. A model whose size the blueprint does not state (a model-store source "
        "without model_info, an ONNX model) is judged without its weights; the plan shows "
        "the assumed size. Without the facts (preview before they are known) it is skipped."
    ),
    passing_example="""\
gpu_pools:
  l4: {gpu: nvidia-l4, spare_gpus: 1}   # a free GPU per zone: no node, no image pull
models:
  ranker: {pool: l4, gpus: 1, latency_class: realtime}
""",
    failing_example="""\
gpu_pools:
  l4: {gpu: nvidia-l4, spare_gpus: 0}   # a scale-out waits for a node and its image pull
models:
  ranker: {pool: l4, gpus: 1, latency_class: realtime}
""",
)
