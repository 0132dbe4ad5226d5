"""one-model-per-gpu: whole GPUs (or MIG slices), one model per serving pod, no time-slicing."""

from __future__ import annotations

import re
from collections.abc import Iterator

from inferplane.policies.framework import Finding, Rule, RuleConfig
from inferplane.policies.resources import Container, Resource, as_number, is_triton
from inferplane.policies.stack import ModelView, Stack


def _requests(stack: Stack, model: ModelView, w: Resource) -> Iterator[Finding]:
    target = f"models.{model.name}"
    field = ("models", model.name, "gpus")
    pool = stack.pool(model.pool)
    gpu_containers = [c for c in w.containers if c.gpu_requests]
    if len(gpu_containers) > 1:
        yield Finding(
            target,
            ("models", model.name, "server"),
            f"{w.k8s_name} runs {len(gpu_containers)} GPU containers ("
            + ", ".join(c.name for c in gpu_containers)
            + "); a serving pod runs one model server",
            w.ref,
        )
    for c in gpu_containers:
        for name, (request, limit) in c.gpu_requests.items():
            lim, req = as_number(limit), as_number(request)
            if limit is None:
                yield Finding(
                    target,
                    field,
                    f"container {c.name} of {w.k8s_name} requests {name} without a limit; "
                    "set limits equal to requests",
                    w.ref,
                )
                continue
            if request is not None and req != lim:
                yield Finding(
                    target,
                    field,
                    f"container {c.name} of {w.k8s_name} requests {request} {name} but is "
                    f"limited to {limit}; requests must equal limits",
                    w.ref,
                )
            if lim is None or lim < 1 or lim != int(lim):
                yield Finding(
                    target,
                    field,
                    f"container {c.name} of {w.k8s_name} asks for {limit} {name}; request "
                    "whole GPUs (or whole MIG slices)",
                    w.ref,
                )
            if pool is not None and name != pool.gpu_resource:
                yield Finding(
                    target,
                    ("models", model.name, "pool"),
                    f"container {c.name} of {w.k8s_name} requests {name}, but pool "
                    f"{pool.name} offers {pool.gpu_resource}",
                    w.ref,
                )
        if is_triton(c):
            yield from _triton_loads_one(model, w, c)


_STEP_CONFIG = re.compile(r"^step-([a-z]([-a-z0-9]*[a-z0-9])?)\.pbtxt$")


def pipeline_models(model: ModelView) -> set[str]:
    """The composing models of `model`'s pipeline: ``<model>-<step>`` for every step config
    (``step-<step>.pbtxt``) in its ConfigMaps (`components.serving.triton.triton_pipeline`); empty
    for one model."""
    found = set()
    for cm in model.config_maps:
        data = cm.props.get("data")
        for key in data if isinstance(data, dict) else ():
            match = _STEP_CONFIG.match(str(key))
            if match:
                found.add(f"{model.name}-{match.group(1)}")
    return found


def _loads_one(model: ModelView, loads: list[str]) -> bool:
    """One model (not ``*``), or a pipeline: the ensemble and exactly its own steps."""
    steps = pipeline_models(model)
    if steps:
        return sorted(loads) == sorted({model.name, *steps})
    return len(loads) == 1 and loads[0] != "*"


def _triton_loads_one(model: ModelView, w: Resource, c: Container) -> Iterator[Finding]:
    target = f"models.{model.name}"
    field = ("models", model.name, "server")
    mode = (c.flag("--model-control-mode") or ["none"])[-1]
    loads = c.flag("--load-model")
    if mode != "explicit":
        yield Finding(
            target,
            field,
            f"Triton in {w.k8s_name} runs with --model-control-mode={mode}, which loads every "
            "model in the repository; use --model-control-mode=explicit --load-model=<model>",
            w.ref,
        )
    elif not _loads_one(model, loads):
        yield Finding(
            target,
            field,
            f"Triton in {w.k8s_name} loads {', '.join(loads) or 'no model'}; load exactly one "
            "model per serving pod (--load-model=<model>, and a pipeline's own steps)",
            w.ref,
        )


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    for model in stack.iter_models():
        for w in model.workloads:
            yield from _requests(stack, model, w)
        pool = stack.pool(model.pool)
        if model.realtime and pool is not None and pool.sharing == "time_slicing":
            yield Finding(
                f"models.{model.name}",
                ("models", model.name, "pool"),
                f"realtime model {model.name} runs on pool {pool.name}, which time-slices its "
                "GPUs: no memory or fault isolation and unpredictable tail latency; use an "
                "exclusive or MIG pool",
                model.workloads[0].ref if model.workloads else None,
            )


RULE = Rule(
    id="one-model-per-gpu",
    title="Serving pods hold whole GPUs and serve one model each",
    level="mandatory",
    scope="stack",
    check=check,
    rationale=(
        "Time-slicing and fractional GPUs give no memory or fault isolation, and one "
        "model's burst becomes another's tail latency. Whole-GPU integer requests (or MIG "
        "slices, which are isolated in hardware) with requests equal to limits give each "
        "replica its own device; one model per serving pod keeps one model's load from "
        "evicting another's memory and makes scaling per model."
    ),
    remediation=(
        "Request whole GPUs: `nvidia.com/gpu: 1` (or the MIG pool's `nvidia.com/mig-<profile>`) "
        "in both requests and limits. Move realtime models off time_slicing pools to an "
        "exclusive or MIG pool. Run Triton with --model-control-mode=explicit and one "
        "--load-model (a pipeline adds one per step, `<model>-<step>`, each with its "
        "config in the model's ConfigMap)."
    ),
    links=(
        "https://github.com/NVIDIA/k8s-device-plugin/issues/461",
        "https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-mig.html",
    ),
    sources=(
        "Resources only: serving pods' GPU requests and limits and Triton flags; a pool's "
        "sharing mode and GPU resource from the environment ConfigMap (without it, the "
        "time-slicing and resource-name checks are skipped)."
    ),
    passing_example="""\
gpu_pools:
  l4: {gpu: nvidia-l4, sharing: exclusive}
  shared: {gpu: nvidia-l4, sharing: time_slicing}
models:
  chat: {pool: l4, gpus: 1}
  nightly: {pool: shared, latency_class: batch}
""",
    failing_example="""\
gpu_pools:
  l4: {gpu: nvidia-l4, sharing: exclusive}
  shared: {gpu: nvidia-l4, sharing: time_slicing}
models:
  chat: {pool: shared, gpus: 1}   # realtime on a time-sliced GPU
""",
)
