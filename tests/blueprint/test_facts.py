"""The environment facts contract: what the stack writes the rules read back, exactly."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inferplane.blueprint.derived import facts
from inferplane.blueprint.derived.facts import EnvFacts, FactsError, PoolFacts
from inferplane.blueprint.derived.scale_out import RUNTIMES, ScaleOutInputs
from inferplane.blueprint.model import Environment, Waiver

text = st.text(max_size=12)
count = st.integers(min_value=0, max_value=2**31)


def pool(name: str) -> st.SearchStrategy[PoolFacts]:
    return st.builds(
        PoolFacts,
        name=st.just(name),
        gpu=text,
        gpus_per_node=count,
        gpu_resource=text,
        slices_per_gpu=count,
        units_per_node=count,
        sharing=text,
        zones=st.lists(text, max_size=3).map(tuple),
        nodes_min=count,
        nodes_max=count,
    )


waiver = st.builds(
    Waiver,
    rule=text,
    target=text,
    environments=st.none() | st.lists(text, max_size=3).map(tuple),
    reason=text,
    expires=text,
    path=st.lists(text | count, max_size=4).map(tuple),
)


size = st.none() | st.floats(min_value=0, max_value=1e4, allow_nan=False)
model = st.builds(
    ScaleOutInputs,
    latency_class=text,
    runtime=st.sampled_from(RUNTIMES),
    pool=text,
    units_per_replica=count,
    spare_units=count,
    idle_units=count,
    weights_gb=size,
    weights_basis=text,
    weights_precision_bytes=st.sampled_from([0.5, 1.0, 2.0, 4.0]),
    store=text,
    warmup_batches=count,
    from_zero=st.booleans(),
    compile_cache=st.booleans(),
    ort_trt_build=st.booleans(),
)


@st.composite
def env_facts(draw: st.DrawFn) -> EnvFacts:
    names = draw(st.lists(text, max_size=3, unique=True))
    return EnvFacts(
        blueprint=draw(text),
        environment=draw(text),
        cloud=draw(text),
        region=draw(text),
        zones=tuple(draw(st.lists(text, max_size=3))),
        pools={name: draw(pool(name)) for name in names},
        waivers=tuple(draw(st.lists(waiver, max_size=3))),
        models={name: draw(model) for name in draw(st.lists(text, max_size=3, unique=True))},
    )


@given(env_facts())
def test_facts_round_trip_through_the_config_map(value: EnvFacts) -> None:
    data = facts.to_config_map(value)
    assert all(isinstance(v, str) for v in data.values())  # ConfigMap data holds strings
    assert facts.from_config_map(data) == value


@pytest.mark.parametrize("name", ["staging", "prod"])
def test_reference_facts_round_trip(reference_env: Callable[[str], Environment], name: str) -> None:
    env = reference_env(name)
    built = facts.environment_facts(env)
    assert facts.from_config_map(facts.to_config_map(built)) == built
    for pool_name, pool_facts in built.pools.items():
        assert pool_facts.units_per_node == env.pools[pool_name].gpu_units_per_node


def test_only_the_environments_own_waivers_are_published(
    waived_env: Callable[[str], Environment],
) -> None:
    staging, prod = waived_env("staging"), waived_env("prod")
    assert [w.rule for w in facts.environment_facts(staging).waivers] == ["warm-replicas"]
    assert facts.environment_facts(prod).waivers == ()


def _data(reference_env: Callable[[str], Environment]) -> dict[str, str]:
    return facts.to_config_map(facts.environment_facts(reference_env("prod")))


def test_a_missing_key_is_named(reference_env: Callable[[str], Environment]) -> None:
    data = _data(reference_env)
    del data["zones"]
    with pytest.raises(FactsError) as err:
        facts.from_config_map(data)
    assert str(err.value) == "environment facts: missing zones (facts version 5)"


def test_an_unknown_key_is_named(reference_env: Callable[[str], Environment]) -> None:
    data = {**_data(reference_env), "units": "8"}
    with pytest.raises(FactsError) as err:
        facts.from_config_map(data)
    assert str(err.value) == "environment facts: unknown units (facts version 5)"


def test_a_pool_without_a_key_is_named(reference_env: Callable[[str], Environment]) -> None:
    data = _data(reference_env)
    pools = json.loads(data["pools"])
    del pools["l4"]["units_per_node"]
    pools["l4"]["slices"] = 1
    data["pools"] = json.dumps(pools)
    with pytest.raises(FactsError) as err:
        facts.from_config_map(data)
    assert str(err.value) == ("pools.l4: missing units_per_node; unknown slices (facts version 5)")


def test_a_wrong_type_is_named(reference_env: Callable[[str], Environment]) -> None:
    data = _data(reference_env)
    pools = json.loads(data["pools"])
    pools["l4"]["nodes_max"] = True
    data["pools"] = json.dumps(pools)
    with pytest.raises(FactsError) as err:
        facts.from_config_map(data)
    assert str(err.value) == "pools.l4.nodes_max: expected int, got bool"


def test_another_version_is_refused(reference_env: Callable[[str], Environment]) -> None:
    data = {**_data(reference_env), "version": "0"}
    with pytest.raises(FactsError) as err:
        facts.from_config_map(data)
    assert str(err.value) == (
        "version: '0' is not the version this inferplane reads ('5'); "
        "check with the inferplane that deployed the stack"
    )


def test_json_that_is_not_json_is_named(reference_env: Callable[[str], Environment]) -> None:
    data = {**_data(reference_env), "waivers": "[{"}
    with pytest.raises(FactsError, match=r"^waivers: not JSON \("):
        facts.from_config_map(data)


def test_the_reference_publishes_each_models_scale_out_inputs(
    reference_env: Callable[[str], Environment],
) -> None:
    data = _data(reference_env)
    chat = json.loads(data["models"])["chat"]
    assert chat == {
        "latency_class": "realtime",
        "runtime": "vllm",
        "pool": "l4",
        "units_per_replica": 1,
        "spare_units": 1,
        "idle_units": 0,
        # The source's name is the table's Llama 3.1 8B; fp8 is applied on load, so a
        # replica copies the 16-bit checkpoint.
        "weights_gb": 16.06,
        "weights_basis": "8.03B parameters x 2 B, a 16-bit checkpoint that vLLM quantizes to "
        "fp8 on load (the name 'llama-3.1-8b-instruct': "
        "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/config.json)",
        "weights_precision_bytes": 2.0,
        "store": "gs",
        "warmup_batches": 0,
        "from_zero": False,
        "compile_cache": True,
        "ort_trt_build": False,
        "cloud": "gcp",
        "budget_s": None,
        "levers": ["compile_cache"],
        # The pool keeps a spare GPU already: standby adds no node. vLLM's image is on
        # Docker Hub, which GKE image streaming serves, and v0.33.0 streams from gs://.
        "options": {
            "compile_cache": 0.0,
            "stream_weights": 0.0,
            "lazy_image_pull": 0.0,
            "standby": 0.0,
        },
    }


def test_a_model_with_an_unknown_runtime_is_named(
    reference_env: Callable[[str], Environment],
) -> None:
    data = _data(reference_env)
    models = json.loads(data["models"])
    models["chat"]["runtime"] = "tgi"
    data["models"] = json.dumps(models)
    with pytest.raises(FactsError) as err:
        facts.from_config_map(data)
    assert str(err.value) == "models.chat.runtime: 'tgi' is not one of vllm, triton, trtllm"


def test_a_model_size_that_is_no_number_is_named(
    reference_env: Callable[[str], Environment],
) -> None:
    data = _data(reference_env)
    models = json.loads(data["models"])
    models["ranker"]["weights_gb"] = "1 GB"
    data["models"] = json.dumps(models)
    with pytest.raises(FactsError) as err:
        facts.from_config_map(data)
    assert str(err.value) == "models.ranker.weights_gb: expected number, got str"
