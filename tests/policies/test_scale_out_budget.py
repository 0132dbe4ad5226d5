"""scale-out-budget on the reference blueprint: it reports realtime models that wait for a
node, names the dominant part and its fix, and follows the policy config."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from inferplane.blueprint.derived import facts as facts_module
from inferplane.blueprint.model import Environment
from inferplane.policies.rules import rule
from inferplane.policies.stack import Stack

RULE = rule("scale-out-budget")


def with_spare(env: Environment, pool: str, spare: int) -> Environment:
    """`spare` spare GPUs on `pool`, its nodes.min (one GPU per node) still holding the warm
    replicas and the spare GPUs and nothing more."""
    old = env.pools[pool]
    nodes = dataclasses.replace(old.nodes, min=old.nodes.min + spare - old.spare_gpus)
    pools = {**env.pools, pool: dataclasses.replace(old, spare_gpus=spare, nodes=nodes)}
    return dataclasses.replace(env, pools=pools)


def without_stream(env: Environment) -> Environment:
    """`env` whose models are offered no ``stream_weights`` (as where a release cannot
    stream): the rule then names the part that dominates and its fix."""
    models = {}
    for name, model in env.models.items():
        offered = {
            k: v for k, v in (model.scale_out.options or {}).items() if k != "stream_weights"
        }
        scale = dataclasses.replace(model.scale_out, options=offered)
        models[name] = dataclasses.replace(model, scale_out=scale)
    return dataclasses.replace(env, models=models)


def test_without_spare_gpus_every_realtime_model_is_reported(
    reference_env: Callable[[str], Environment],
) -> None:
    env = with_spare(reference_env("prod"), "l4", 0)
    found = RULE.run(Stack.of([], env))
    # chat, a vLLM model, is offered the stream: the rule names the free levers with it.
    assert found[0].field == ("models", "chat", "scale_out", "levers")
    assert found[0].message.endswith(
        "the levers compile_cache (free), stream_weights (free), standby (free) would take it "
        "to 116 s: write scale_out: {levers: [compile_cache, stream_weights, standby]} on model "
        "chat (or levers: auto, which chooses them)"
    )
    found = RULE.run(Stack.of([], without_stream(env)))
    assert [(f.target, f.field) for f in found] == [
        ("models.chat", ("gpu_pools", "l4", "spare_gpus")),
        ("models.ranker", ("gpu_pools", "l4", "spare_gpus")),
        ("models.toxicity", ("gpu_pools", "l4", "spare_gpus")),
    ]  # nightly-embed is a batch model: it may wait
    # Judged on what the blueprint states: the ONNX model's size is unknown, so "at least"
    # its known parts. The advisory names what the cheapest lever, a spare GPU, removes.
    assert found[1].message == (
        "a scale-out of ranker needs at least 832 s from a traffic spike to one more ready "
        "replica, over the 120 s bound (not counting weights: size unknown); keep "
        "spare_gpus: 1 (or more) on pool l4: a new replica then preempts a placeholder on a "
        "running node that holds the image already, which removes node 540 s (pool l4 keeps "
        "0 spare GPU unit(s) per zone, a replica needs 1) and image_pull 250 s (10 GB triton "
        "image at 40 MB/s on the new node), leaving 42 s"
    )
    assert found[0].message.endswith(
        "which removes node 540 s (pool l4 keeps 0 spare GPU unit(s) per zone, a replica "
        "needs 1) and image_pull 300 s (12 GB vllm image at 40 MB/s on the new node), "
        "leaving 158 s"
    )


def test_with_a_spare_gpu_only_the_reference_chat_waits_too_long_for_its_weights(
    reference_env: Callable[[str], Environment],
) -> None:
    for name in ("staging", "prod"):
        env = reference_env(name)
        assert env.pools["l4"].spare_gpus == 1
        [finding] = RULE.run(Stack.of([], env))
        assert finding.field == ("models", "chat", "scale_out", "levers")
        assert "stream_weights (free) would take it to 116 s" in finding.message
        [finding] = RULE.run(Stack.of([], without_stream(env)))
        assert (finding.target, finding.field) == ("models.chat", ("models", "chat", "source"))
    # The checkpoint's bytes, not the fp8 that vLLM makes of them on load.
    assert finding.message == (
        "a scale-out of chat needs about 158 s from a traffic spike to one more ready "
        "replica, over the 120 s bound; weights dominates with 81 s (16.06 GB from the gs "
        "model store at 200 MB/s; 8.03B parameters x 2 B, a 16-bit checkpoint that vLLM "
        "quantizes to fp8 on load (the name 'llama-3.1-8b-instruct': "
        "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/config.json)); "
        "serve a smaller or quantized checkpoint, or keep more warm replicas (replicas.min) "
        "so that fewer scale-outs wait for it"
    )


def test_a_large_known_model_is_reported_for_its_weights(
    reference_env: Callable[[str], Environment],
) -> None:
    from inferplane.blueprint import llm_catalog

    env = reference_env("prod")
    chat = dataclasses.replace(
        env.models["chat"], llm=llm_catalog.lookup("Qwen/Qwen3-8B"), precision="bf16"
    )
    env = dataclasses.replace(env, models={**env.models, "chat": chat})
    [finding] = RULE.run(Stack.of([], without_stream(env)))
    assert finding.field == ("models", "chat", "source")
    assert finding.message == (
        "a scale-out of chat needs about 159 s from a traffic spike to one more ready "
        "replica, over the 120 s bound; weights dominates with 82 s (16.38 GB from the gs "
        "model store at 200 MB/s; 8.19B parameters x 2 B, bf16 "
        "(https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json)); serve a smaller or "
        "quantized checkpoint, or keep more warm replicas (replicas.min) so that fewer "
        "scale-outs wait for it"
    )


def test_the_bound_and_the_estimates_come_from_the_config(
    reference_env: Callable[[str], Environment],
) -> None:
    env = with_spare(reference_env("prod"), "l4", 0)
    stack = Stack.of([], env)
    assert RULE.run(stack, {"max_total_s": 1100}) == []
    # Nodes that come up in 40 s and images that pull at 1 GB/s: only the triton models pass.
    fast = {"node_provision_s": 40, "image_pull_mb_per_s": 1000}
    assert [f.target for f in RULE.run(stack, fast)] == ["models.chat"]


def test_the_rule_reads_the_published_facts_online(
    reference_env: Callable[[str], Environment],
) -> None:
    env = with_spare(reference_env("prod"), "l4", 0)
    published = facts_module.from_config_map(
        facts_module.to_config_map(facts_module.environment_facts(env))
    )
    online = Stack(resources=(), env=None, facts=published)
    offline = [f.message for f in RULE.run(Stack.of([], env))]
    assert len(offline) == 3
    assert [f.message for f in RULE.run(online)] == offline


def test_without_facts_the_rule_is_skipped() -> None:
    assert RULE.run(Stack(resources=())) == []


def test_a_model_on_onnx_runtimes_tensorrt_provider_is_blamed_at_its_accelerator(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    ranker = dataclasses.replace(
        env.models["ranker"], backend="onnxruntime", tensorrt=None, accelerator="tensorrt"
    )
    env = dataclasses.replace(env, models={**env.models, "ranker": ranker})
    found = [f for f in RULE.run(Stack.of([], env)) if f.target == "models.ranker"]
    assert [(f.field, f.message) for f in found] == [
        (
            ("models", "ranker", "accelerator"),
            "a scale-out of ranker needs at least 342 s from a traffic spike to one more "
            "ready replica, over the 120 s bound (not counting weights: size unknown); "
            "engine_build dominates with 300 s (ONNX Runtime's TensorRT provider builds its "
            "engines in the new replica (its engine cache is the pod's own emptyDir)); build "
            "the engine once, in a Job, with backend: tensorrt (a pipeline step's shapes, a "
            "model's tensorrt.inputs are its profiles), or run on accelerator: cuda, which "
            "builds nothing",
        )
    ]
