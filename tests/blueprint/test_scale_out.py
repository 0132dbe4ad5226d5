"""The scale-out budget: parts and totals computed by hand for the cases the issue names."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from inferplane.blueprint import llm_catalog, scale_out, timing
from inferplane.blueprint.model import Environment, GpuPool, Model
from inferplane.blueprint.resolve import resolve_file
from inferplane.blueprint.scale_out import Constants, budget, inputs_of

ROOT = Path(__file__).resolve().parents[2]


def with_pool(env: Environment, name: str, **changes: object) -> Environment:
    pools = {**env.pools, name: dataclasses.replace(env.pools[name], **changes)}
    return dataclasses.replace(env, pools=pools)


def with_model(env: Environment, name: str, **changes: object) -> Environment:
    models = {**env.models, name: dataclasses.replace(env.models[name], **changes)}
    return dataclasses.replace(env, models=models)


def llama_8b(env: Environment, spare: int) -> Environment:
    """The reference chat model as a vLLM Llama 3.1 8B in bf16 on an L4 pool."""
    llm = llm_catalog.lookup("meta-llama/Llama-3.1-8B-Instruct")
    env = with_model(env, "chat", llm=llm, precision="bf16")
    return with_pool(env, "l4", spare_gpus=spare)


def parts(env: Environment, model: str, c: Constants | None = None) -> dict[str, int]:
    return budget(inputs_of(env, env.models[model]), c).as_json()["parts"]


def test_vllm_8b_on_l4_without_a_spare_gpu_waits_for_a_node_and_its_image(
    reference_env: Callable[[str], Environment],
) -> None:
    env = llama_8b(reference_env("prod"), spare=0)
    # 8.03e9 weights x 2 B = 16.06 GB: 16.06 GB / 200 MB/s = 80.3 s -> 81;
    # 16.06 GB / 2 GB/s + (60 - 16) s with the staged compile cache = 52.03 s -> 53;
    # 12 GB image / 100 MB/s = 120 s.
    assert parts(env, "chat") == {
        "prometheus_scrape": 5,
        "hpa_reaction": 15,
        "node": 300,
        "image_pull": 120,
        "weights": 81,
        "engine_load": 53,
        "readiness": 10,
    }
    found = budget(inputs_of(env, env.models["chat"]))
    assert (found.total_s, found.dominant) == (584, "node")


def test_vllm_8b_on_l4_with_a_spare_gpu_has_no_node_and_no_image_part(
    reference_env: Callable[[str], Environment],
) -> None:
    env = llama_8b(reference_env("prod"), spare=1)
    found = budget(inputs_of(env, env.models["chat"]))
    assert found.as_json()["parts"] == {
        "prometheus_scrape": 5,
        "hpa_reaction": 15,
        "weights": 81,
        "engine_load": 53,
        "readiness": 10,
    }
    assert (found.total_s, found.dominant) == (164, "weights")
    assert found.line("chat") == (
        "scale-out chat: 164 s (weights 81 s, engine_load 53 s, hpa_reaction 15 s, "
        "readiness 10 s, prometheus_scrape 5 s)"
    )
    assert found.part("weights") is not None
    assert found.as_json()["notes"]["weights"] == (
        "16.06 GB from the gs model store at 200 MB/s; 8.03B parameters x 2 B "
        "(https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/config.json)"
    )


def test_triton_onnx_model_of_unknown_size_assumes_one_gigabyte(
    reference_env: Callable[[str], Environment],
) -> None:
    env = with_pool(reference_env("prod"), "l4", spare_gpus=1)
    found = budget(inputs_of(env, env.models["ranker"]))
    # 1 GB / 200 MB/s = 5 s; 1 GB / 2 GB/s + 10 s = 10.5 -> 11 s; two warm-up batch sizes.
    assert found.as_json()["parts"] == {
        "prometheus_scrape": 5,
        "hpa_reaction": 15,
        "weights": 5,
        "engine_load": 11,
        "warmup": 2,
        "readiness": 10,
    }
    assert found.total_s == 48
    assert found.dominant == "hpa_reaction"
    assert found.as_json()["notes"]["weights"].endswith(
        "size unknown (an ONNX/TensorRT model): assumed 1 GB"
    )


@pytest.fixture(scope="module")
def llm_serving() -> Environment:
    return resolve_file(ROOT / "blueprints" / "llm-serving.yaml", "prod")


def test_tensorrt_llm_70b_copies_its_fp8_engine(llm_serving: Environment) -> None:
    # 70.55e9 weights x 1 B (fp8 engine) = 70.55 GB: 352.75 s -> 353 from the store;
    # 70.55 / 2 + 30 = 65.3 s -> 66; 16 GB image / 100 MB/s = 160 s; 4 GPUs, no spare.
    assert parts(llm_serving, "chat-70b") == {
        "prometheus_scrape": 5,
        "hpa_reaction": 15,
        "node": 300,
        "image_pull": 160,
        "weights": 353,
        "engine_load": 66,
        "readiness": 10,
    }
    found = budget(inputs_of(llm_serving, llm_serving.models["chat-70b"]))
    assert (found.total_s, found.dominant) == (909, "weights")


@pytest.mark.parametrize(("spare", "node"), [(0, True), (3, True), (4, False), (8, False)])
def test_a_spare_covers_a_replica_only_with_all_its_gpu_units(
    llm_serving: Environment, spare: int, node: bool
) -> None:
    env = with_pool(llm_serving, "h100x4", spare_gpus=spare)
    names = parts(env, "chat-70b")
    assert ("node" in names, "image_pull" in names) == (node, node)


def test_spare_units_count_in_the_pools_own_units(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("staging")  # h100: MIG 3g.40gb, nightly-embed asks for one slice
    pool: GpuPool = env.pools["h100"]
    assert pool.gpu_resource == "nvidia.com/mig-3g.40gb"
    assert "node" in parts(env, "nightly-embed")
    assert "node" not in parts(with_pool(env, "h100", spare_gpus=1), "nightly-embed")
    sliced = with_pool(env, "l4", sharing="time_slicing", time_slices=4, spare_gpus=2)
    sliced = with_model(sliced, "ranker", gpus=3)  # three time slices per replica
    assert "node" in parts(sliced, "ranker")
    assert "node" not in parts(with_pool(sliced, "l4", spare_gpus=3), "ranker")


def test_a_model_at_zero_waits_for_kedas_poll_not_the_hpa(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    model: Model = env.models["nightly-embed"]
    assert model.replicas.min == 0
    names = list(parts(env, "nightly-embed"))
    assert names[:2] == ["metrics_poll", "prometheus_scrape"]
    assert "hpa_reaction" not in names
    assert parts(env, "nightly-embed")["metrics_poll"] == timing.POLLING_INTERVAL_S


def test_constants_from_a_policy_config_replace_the_defaults(
    reference_env: Callable[[str], Environment],
) -> None:
    env = llama_8b(reference_env("prod"), spare=0)
    c = Constants.from_values(
        {"node_provision_s": 90, "image_pull_mb_per_s": 400, "max_total_s": 60, "x": 1}
    )
    got = parts(env, "chat", c)
    assert (got["node"], got["image_pull"]) == (90, 30)  # 12 GB at 400 MB/s
    assert budget(inputs_of(env, env.models["chat"]), c).total_s == 584 - 210 - 90


def test_a_staged_compile_cache_takes_the_compile_off_a_vllm_start(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")  # chat: vLLM, 8B fp8 assumed (8 GB), a spare L4
    inputs = inputs_of(env, env.models["chat"])
    assert inputs.compile_cache
    # 8 GB / 2 GB/s + 60 s cold start = 64 s; with the cache 60 - 16 = 44 s: 48 s.
    cold = budget(dataclasses.replace(inputs, compile_cache=False))
    warm = budget(inputs)
    assert (cold.as_json()["parts"]["engine_load"], cold.total_s) == (64, 134)
    assert (warm.as_json()["parts"]["engine_load"], warm.total_s) == (48, 118)
    assert warm.as_json()["notes"]["engine_load"] == (
        "8 GB at 2 GB/s + 44 s vllm start with the staged torch.compile cache"
    )
    c = Constants.from_values({"vllm_compile_cache_saved_s": 100})
    assert budget(inputs, c).as_json()["parts"]["engine_load"] == 4  # never below zero


def test_an_eager_vllm_model_has_no_compile_cache(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    chat = env.models["chat"]
    assert chat.vllm is not None
    eager = dataclasses.replace(chat, vllm=dataclasses.replace(chat.vllm, enforce_eager=True))
    env = with_model(env, "chat", vllm=eager.vllm)
    assert not inputs_of(env, env.models["chat"]).compile_cache
    assert parts(env, "chat")["engine_load"] == 64
    assert not inputs_of(env, env.models["ranker"]).compile_cache  # Triton: no torch.compile


def test_an_unknown_llm_is_sized_by_its_precision(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")  # chat: a model-store source, fp8, no model_info
    notes = budget(inputs_of(env, env.models["chat"])).as_json()["notes"]
    assert notes["weights"] == (
        "8 GB from the gs model store at 200 MB/s; size unknown (a model-store source "
        "without model_info): assumed 8B parameters x 1 B"
    )


def test_the_readiness_part_is_the_stacks_probe_periods() -> None:
    inputs = scale_out.ScaleOutInputs(
        latency_class="realtime",
        runtime="triton",
        pool="p",
        units_per_replica=1,
        spare_units=1,
        weights_gb=0,
        weights_basis="b",
        weights_precision_bytes=2,
        store="s3",
        warmup_batches=0,
        from_zero=False,
    )
    ready = budget(inputs).part("readiness")
    assert ready is not None and ready.seconds == (
        timing.STARTUP_PERIOD_S + timing.READINESS_PERIOD_S * timing.READINESS_SUCCESS_THRESHOLD
    )


def test_every_constant_is_documented_with_a_source() -> None:
    docs = scale_out.constant_docs()
    assert set(docs) == {f.name for f in dataclasses.fields(Constants)}
    for name, text in docs.items():
        assert "http" in text or "Assumption" in text or "#" in text, name
