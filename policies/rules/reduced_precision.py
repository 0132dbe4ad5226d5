"""reduced-precision: realtime models serve in fp16/bf16/fp8/int8, not fp32."""

from __future__ import annotations

from collections.abc import Iterator

from inferplane.blueprint import naming
from inferplane.blueprint.catalog import tensorrt_major
from inferplane.policies.framework import ConfigKey, Finding, Rule, RuleConfig
from inferplane.policies.resources import TRT_PRECISION_FLAGS, ImageRef
from inferplane.policies.stack import ModelView, Stack

VLLM_FP32 = ("float32", "float")


def precision_seen(stack: Stack, model: ModelView) -> tuple[str, str] | None:
    """(precision, where it was seen) when the resources or the blueprint say fp32."""
    for w in model.workloads:
        for c in w.containers:
            dtype = c.flag("--dtype")
            if dtype and dtype[-1] in VLLM_FP32:
                return "fp32", f"{w.k8s_name} runs vLLM with --dtype {dtype[-1]}"
    for job in model.jobs:
        for c in (*job.init_containers, *job.containers):
            if not any("trtexec" in a for a in c.args):
                continue
            release = ImageRef.parse(c.image).ngc_release
            # TensorRT 10 builds fp32 unless told otherwise; 11 takes precision from the model.
            if (
                release
                and tensorrt_major(release) < 11
                and not any(a.split("=", 1)[0] in TRT_PRECISION_FLAGS for a in c.args)
            ):
                return "fp32", f"engine build {job.k8s_name} passes no precision flag to trtexec"
    if stack.env is not None and model.name in stack.env.models:
        precision = stack.env.models[model.name].precision
        return precision, "the blueprint"
    # Online: the precision the stack wrote on the model's Deployments.
    for w in model.workloads:
        stated = w.annotations.get(naming.PRECISION_ANNOTATION)
        if stated:
            return stated, f"{w.k8s_name}'s annotation {naming.PRECISION_ANNOTATION}"
    return None


def check(stack: Stack, config: RuleConfig) -> Iterator[Finding]:
    slow = set(config["slow_precisions"])
    for model in stack.iter_models():
        if not model.realtime:
            continue
        seen = precision_seen(stack, model)
        if seen and seen[0] in slow:
            yield Finding(
                f"models.{model.name}",
                ("models", model.name, "precision"),
                f"realtime model {model.name} serves in {seen[0]} ({seen[1]}); fp16 or bf16 "
                "halves memory traffic and uses tensor cores, usually with no loss that "
                "matters",
                model.workloads[0].ref if model.workloads else None,
            )


RULE = Rule(
    id="reduced-precision",
    title="Realtime models serve in reduced precision",
    level="advisory",
    scope="stack",
    check=check,
    rationale=(
        "fp32 inference moves twice the bytes of fp16/bf16 and does not use the tensor "
        "cores' fast paths, roughly doubling latency and GPU count for the same traffic. "
        "Reduced precision (fp16, bf16, fp8, int8) is the norm for serving."
    ),
    remediation=(
        "Set models.<m>.precision to fp16 or bf16 (fp8 on Ada/Hopper and newer; int8 with a "
        "quantised ONNX model). Keep fp32 only for a model measured to need it, with a waiver."
    ),
    links=(
        "https://docs.nvidia.com/deeplearning/tensorrt/latest/inference-library/work-with-reduced-precision.html",
    ),
    config=(
        ConfigKey(
            "slow_precisions",
            ["fp32"],
            {
                "type": "array",
                "items": {"enum": ["fp32", "fp16", "bf16", "fp8", "int8", "int4"]},
            },
            "Precisions a realtime model should not serve in.",
        ),
    ),
    sources=(
        "vLLM's --dtype on the serving container and, for TensorRT 10 engines, the "
        "trtexec flags of the engine build Job; then the model's precision: offline the "
        "blueprint's, online the Deployment's annotation inferplane.dev/precision (the only "
        "source for a Triton model without an engine build)."
    ),
    passing_example="""\
models:
  chat: {server: vllm, precision: bf16}
""",
    failing_example="""\
models:
  chat: {server: vllm, precision: fp32}
""",
)
