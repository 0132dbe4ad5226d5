"""The scale-out budget: parts and totals computed by hand for the cases the issue names."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from inferplane.blueprint import llm_catalog
from inferplane.blueprint.derived import scale_out, timing
from inferplane.blueprint.derived.scale_out import Constants, budget, inputs_of
from inferplane.blueprint.model import Environment, GpuPool, Model, ModelSource, VllmSettings
from inferplane.blueprint.resolution.resolve import resolve_file

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
    # nodes.min holds the warm replicas and the spare GPUs (one GPU per node): a spare GPU
    # fewer is a node fewer, or the GPU it leaves idle takes the next replica.
    pool = env.pools["l4"]
    nodes = dataclasses.replace(pool.nodes, min=pool.nodes.min + spare - pool.spare_gpus)
    return with_pool(env, "l4", spare_gpus=spare, nodes=nodes)


def parts(env: Environment, model: str, c: Constants | None = None) -> dict[str, int]:
    return budget(inputs_of(env, env.models[model]), c).as_json()["parts"]


def test_vllm_8b_on_l4_without_a_spare_gpu_waits_for_a_node_and_its_image(
    reference_env: Callable[[str], Environment],
) -> None:
    env = llama_8b(reference_env("prod"), spare=0)
    # 8.03e9 weights x 2 B = 16.06 GB: 16.06 GB / 200 MB/s = 80.3 s -> 81;
    # 16.06 GB / 6.4 GB/s + (60 - 16) s with the staged compile cache = 46.51 s -> 47;
    # a node in 30 + 90 + 420 s; 12 GB image / 40 MB/s = 300 s.
    assert parts(env, "chat") == {
        "prometheus_scrape": 5,
        "hpa_reaction": 15,
        "node": 540,
        "image_pull": 300,
        "weights": 81,
        "engine_load": 47,
        "readiness": 10,
    }
    found = budget(inputs_of(env, env.models["chat"]))
    assert (found.total_s, found.dominant) == (998, "node")


def test_vllm_8b_on_l4_with_a_spare_gpu_has_no_node_and_no_image_part(
    reference_env: Callable[[str], Environment],
) -> None:
    env = llama_8b(reference_env("prod"), spare=1)
    found = budget(inputs_of(env, env.models["chat"]))
    assert found.as_json()["parts"] == {
        "prometheus_scrape": 5,
        "hpa_reaction": 15,
        "weights": 81,
        "engine_load": 47,
        "readiness": 10,
    }
    assert (found.total_s, found.dominant) == (158, "weights")
    assert found.line("chat") == (
        "scale-out chat: 158 s (weights 81 s, engine_load 47 s, hpa_reaction 15 s, "
        "readiness 10 s, prometheus_scrape 5 s); levers compile_cache"
    )
    assert found.part("weights") is not None
    assert found.as_json()["notes"]["weights"] == (
        "16.06 GB from the gs model store at 200 MB/s; 8.03B parameters x 2 B, bf16 "
        "(https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/config.json)"
    )


def test_triton_onnx_model_of_unknown_size_is_reported_as_unknown(
    reference_env: Callable[[str], Environment],
) -> None:
    env = with_pool(reference_env("prod"), "l4", spare_gpus=1)
    found = budget(inputs_of(env, env.models["ranker"]))
    # No size is guessed: the weights part is unknown, the engine load is the start alone
    # (10 s), two warm-up batch sizes; the total is a lower bound.
    assert found.as_json()["parts"] == {
        "prometheus_scrape": 5,
        "hpa_reaction": 15,
        "weights": None,
        "engine_load": 10,
        "warmup": 2,
        "readiness": 10,
    }
    assert (found.total_s, found.unknown, found.dominant) == (42, ("weights",), "hpa_reaction")
    assert found.as_json()["notes"]["weights"] == (
        "from the gs model store at 200 MB/s; size unknown (an ONNX/TensorRT model: the "
        "blueprint does not say its size)"
    )
    assert found.line("ranker") == (
        "scale-out ranker: at least 42 s, weights unknown (hpa_reaction 15 s, "
        "engine_load 10 s, readiness 10 s, prometheus_scrape 5 s, warmup 2 s)"
    )


@pytest.fixture(scope="session")
def llm_serving() -> Environment:
    return resolve_file(ROOT / "blueprints" / "llm-serving.yaml", "prod")


def test_tensorrt_llm_70b_copies_its_fp8_engine(llm_serving: Environment) -> None:
    # 70.55e9 weights x 1 B (fp8 engine) = 70.55 GB: 352.75 s -> 353 from the store;
    # 70.55 / 6.4 + 30 = 41.02 s -> 42; 16 GB image / 40 MB/s = 400 s; 4 GPUs, no spare.
    assert parts(llm_serving, "chat-70b") == {
        "prometheus_scrape": 5,
        "hpa_reaction": 15,
        "node": 540,
        "image_pull": 400,
        "weights": 353,
        "engine_load": 42,
        "readiness": 10,
    }
    found = budget(inputs_of(llm_serving, llm_serving.models["chat-70b"]))
    assert (found.total_s, found.dominant) == (1365, "node")


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
    # 2 nodes x 4 slices = 8 units: 6 for the warm replicas (ranker's 4), 2 spare, none idle
    nodes = dataclasses.replace(env.pools["l4"].nodes, min=2)
    sliced = with_pool(env, "l4", sharing="time_slicing", time_slices=4, spare_gpus=2, nodes=nodes)
    sliced = with_model(sliced, "ranker", gpus=4)  # four time slices per replica
    assert "node" in parts(sliced, "ranker")
    assert "node" not in parts(with_pool(sliced, "l4", spare_gpus=4), "ranker")


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
    assert budget(inputs_of(env, env.models["chat"]), c).total_s == 998 - 450 - 270


def test_a_staged_compile_cache_takes_the_compile_off_a_vllm_start(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")  # chat: vLLM, a 16-bit 8B checkpoint (16.06 GB), a spare L4
    inputs = inputs_of(env, env.models["chat"])
    assert inputs.compile_cache
    # 16.06 GB / 6.4 GB/s + 60 s cold start = 62.51 -> 63 s; with the cache 60 - 16 = 44 s: 47 s.
    cold = budget(dataclasses.replace(inputs, compile_cache=False))
    warm = budget(inputs)
    assert (cold.as_json()["parts"]["engine_load"], cold.total_s) == (63, 174)
    assert (warm.as_json()["parts"]["engine_load"], warm.total_s) == (47, 158)
    assert warm.as_json()["notes"]["engine_load"] == (
        "16.06 GB at 6.4 GB/s + 44 s vllm start with the staged torch.compile cache"
    )
    c = Constants.from_values({"vllm_compile_cache_saved_s": 100})
    assert budget(inputs, c).as_json()["parts"]["engine_load"] == 3  # never below zero


def test_an_eager_vllm_model_has_no_compile_cache(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    chat = env.models["chat"]
    assert chat.vllm is not None
    eager = dataclasses.replace(chat, vllm=dataclasses.replace(chat.vllm, enforce_eager=True))
    env = with_model(env, "chat", vllm=eager.vllm)
    assert not inputs_of(env, env.models["chat"]).compile_cache
    assert parts(env, "chat")["engine_load"] == 63
    assert not inputs_of(env, env.models["ranker"]).compile_cache  # Triton: no torch.compile


def test_an_fp8_model_is_copied_at_its_checkpoints_bytes_not_its_loaded_ones(
    reference_env: Callable[[str], Environment],
) -> None:
    # chat: precision fp8, which vLLM applies on load to the 16-bit checkpoint it copies; its
    # model-store source llama-3.1-8b-instruct/ is the table's Llama 3.1 8B by name.
    env = reference_env("prod")
    notes = budget(inputs_of(env, env.models["chat"])).as_json()["notes"]
    assert notes["weights"] == (
        "16.06 GB from the gs model store at 200 MB/s; 8.03B parameters x 2 B, a 16-bit "
        "checkpoint that vLLM quantizes to fp8 on load (the name 'llama-3.1-8b-instruct': "
        "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/config.json)"
    )


def _from(env: Environment, uri: str, **changes: object) -> scale_out.ScaleOutInputs:
    """chat's inputs with its weights at `uri` (a known model no more) and `changes`."""
    chat = env.models["chat"]
    scheme, _, rest = uri.partition("://")
    if scheme == "hf":
        repo, _, rev = rest.partition("@")
        source = ModelSource(uri, "hf", None, None, repo, rev)
    else:
        bucket, _, key = rest.partition("/")
        source = ModelSource(uri, scheme, bucket, key)  # type: ignore[arg-type]
    model = dataclasses.replace(chat, source=source, llm=None, **changes)
    return inputs_of(env, model)


@pytest.mark.parametrize(
    ("uri", "changes", "gb", "basis"),
    [
        (
            "hf://Qwen/Qwen2.5-1.5B-Instruct@main",
            {"precision": "bf16"},
            3.0,
            "1.5B parameters x 2 B, bf16 (read from the name 'Qwen/Qwen2.5-1.5B-Instruct')",
        ),
        (
            # The name is a repository of the built-in table (its own config.json).
            "gs://acme-models-usc1/neuralmagic/Qwen3-30B-A3B-FP8/",
            {},
            30.53,
            "30.53B parameters x 1 B, an FP8 checkpoint (the name 'Qwen3-30B-A3B-FP8': "
            "https://huggingface.co/Qwen/Qwen3-30B-A3B-FP8/blob/main/config.json)",
        ),
        (
            "s3://models/mistral-7b-awq/",
            {"precision": "int4", "vllm": VllmSettings(quantization="awq")},
            3.5,
            "7B parameters x 0.5 B, awq (read from the name 'mistral-7b-awq')",
        ),
    ],
)
def test_a_size_is_read_from_the_sources_name(
    reference_env: Callable[[str], Environment],
    uri: str,
    changes: dict[str, object],
    gb: float,
    basis: str,
) -> None:
    inputs = _from(reference_env("prod"), uri, **changes)
    assert (inputs.weights_gb, inputs.weights_basis) == (gb, basis)


@pytest.mark.parametrize(
    "uri", ["gs://acme-models-usc1/house-chat/", "hf://mistralai/Mixtral-8x7B-custom@main"]
)
def test_a_model_whose_size_nothing_states_is_unknown_never_eight_billion(
    reference_env: Callable[[str], Environment], uri: str
) -> None:
    found = budget(_from(reference_env("prod"), uri))
    assert found.unknown == ("weights",)
    assert found.as_json()["notes"]["weights"] == (
        "from the gs model store at 200 MB/s; size unknown (neither model_info, the built-in "
        "table nor the source's name gives it)"
    )
    # 5 + 15 + engine start 44 s + 10: the known parts, a lower bound.
    assert found.line("chat") == (
        "scale-out chat: at least 74 s, weights unknown (engine_load 44 s, hpa_reaction 15 s, "
        "readiness 10 s, prometheus_scrape 5 s); levers compile_cache"
    )


def test_a_one_and_a_half_billion_model_no_longer_gets_an_eight_billion_budget(
    tmp_path: Path,
) -> None:
    """chat-minimal's local environment serving Qwen2.5-1.5B (not in the built-in table):
    once 162 s made of an assumed 8B x 2 B = 16 GB; now 3 GB, from its name."""
    text = (ROOT / "blueprints" / "chat-minimal.yaml").read_text(encoding="utf-8")
    small = text.replace("Qwen/Qwen2.5-7B-Instruct@", "Qwen/Qwen2.5-1.5B-Instruct@")
    assert small != text
    blueprint = tmp_path / "small.yaml"
    blueprint.write_text(small, encoding="utf-8")
    env = resolve_file(blueprint, "local")
    # 3 GB / 200 MB/s = 15 s; 3 GB / 6.4 GB/s + 44 s = 44.47 -> 45 s.
    assert scale_out.budgets(env)["chat"].line("chat") == (
        "scale-out chat: 90 s (engine_load 45 s, hpa_reaction 15 s, weights 15 s, "
        "readiness 10 s, prometheus_scrape 5 s); levers compile_cache"
    )


def test_the_readiness_part_is_the_stacks_probe_periods() -> None:
    inputs = scale_out.ScaleOutInputs(
        latency_class="realtime",
        runtime="triton",
        pool="p",
        units_per_replica=1,
        spare_units=1,
        idle_units=0,
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
        assert any(s in text for s in ("http", "Assumption", "#", "scripts/calibration/")), name


def test_onnx_runtimes_tensorrt_provider_builds_its_engines_in_every_new_replica(
    reference_env: Callable[[str], Environment],
) -> None:
    env = with_pool(reference_env("prod"), "l4", spare_gpus=1)
    # The ranker's ONNX model on ONNX Runtime instead of an engine a Job builds.
    env = with_model(env, "ranker", backend="onnxruntime", tensorrt=None, accelerator="tensorrt")
    inputs = inputs_of(env, env.models["ranker"])
    assert inputs.ort_trt_build
    found = budget(inputs)
    # The ranker's budget above (42 s) plus the provider's build (300 s), which dominates.
    assert found.as_json()["parts"] == {
        "prometheus_scrape": 5,
        "hpa_reaction": 15,
        "weights": None,
        "engine_build": 300,
        "engine_load": 10,
        "warmup": 2,
        "readiness": 10,
    }
    assert (found.total_s, found.dominant) == (342, "engine_build")
    assert found.as_json()["notes"]["engine_build"] == (
        "ONNX Runtime's TensorRT provider builds its engines in the new replica (its engine "
        "cache is the pod's own emptyDir)"
    )
    c = Constants.from_values({"ort_trt_engine_build_s": 45})
    assert budget(inputs, c).as_json()["parts"]["engine_build"] == 45


def test_a_pipeline_step_on_the_tensorrt_provider_builds_in_every_new_replica() -> None:
    env = resolve_file(ROOT / "blueprints" / "bge-search.yaml", "prod")
    assert inputs_of(env, env.models["embed"]).ort_trt_build
    steps = env.models["embed"].pipeline.steps  # type: ignore[union-attr]
    on_cuda = tuple(dataclasses.replace(s, accelerator="cuda") for s in steps)
    pipeline = dataclasses.replace(env.models["embed"].pipeline, steps=on_cuda)
    env = with_model(env, "embed", pipeline=pipeline)
    assert not inputs_of(env, env.models["embed"]).ort_trt_build
    assert "engine_build" not in budget(inputs_of(env, env.models["embed"])).as_json()["parts"]


def test_a_model_whose_engine_a_job_builds_has_no_build_part(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    assert env.models["ranker"].backend == "tensorrt"  # the build Job's engine is copied
    assert not inputs_of(env, env.models["ranker"]).ort_trt_build
    env = with_model(env, "ranker", backend="onnxruntime", tensorrt=None)
    assert not inputs_of(env, env.models["ranker"]).ort_trt_build  # the CUDA provider


def test_an_idle_gpu_on_the_minimum_nodes_takes_a_replica_without_a_new_node(
    reference_env: Callable[[str], Environment],
) -> None:
    """A pool without spare_gpus whose nodes.min holds more GPUs than its warm replicas use:
    the next replica starts on the idle GPU, no node start or image pull is counted."""
    env = with_pool(reference_env("prod"), "l4", spare_gpus=0)
    pool = env.pools["l4"]
    warm = sum(
        -(-m.replicas.min // len(pool.zones)) * m.gpus
        for m in env.models.values()
        if m.pool == "l4"
    )
    idle = pool.nodes.min * pool.gpu_units_per_node - warm
    assert scale_out.idle_units_of(env, "l4") == idle
    busy = with_pool(env, "l4", nodes=dataclasses.replace(pool.nodes, min=warm))
    assert scale_out.idle_units_of(busy, "l4") == 0
    waits = budget(inputs_of(busy, busy.models["chat"]))
    assert waits.part("node") is not None
    roomy = with_pool(env, "l4", nodes=dataclasses.replace(pool.nodes, min=warm + 1))
    found = budget(inputs_of(roomy, roomy.models["chat"]))
    assert found.part("node") is None and found.part("image_pull") is None
    assert waits.total_s - found.total_s == 540 + 300  # node start + 12 GB vLLM image pull
