"""The ``tensorrtllm`` config.pbtxt and the text ensemble write only names the TensorRT-LLM
backend of the model's Triton release knows (inferplane/facts/tensorrtllm_backend/), by the
names of that release, and still parse as that release's ModelConfig."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from serving_fixtures import args_of_mf
from test_triton_config import (
    parse,
    triton_python,  # noqa: F401 (a fixture)
)

from inferplane.blueprint import releases
from inferplane.blueprint.loading.loader import load
from inferplane.blueprint.model import Environment
from inferplane.blueprint.resolution.resolve import resolve
from inferplane.blueprint.upstream.triton_facts import config_problems
from inferplane.blueprint.upstream.trtllm_backend_facts import (
    SOURCE,
    backend_facts,
    check_names,
    input_name,
)
from inferplane.components.serving.spec import ServingArgsError
from inferplane.components.serving.trtllm import trtllm
from inferplane.components.serving.trtllm.trtllm_text import ensemble_config, pipeline_files

ROOT = Path(__file__).resolve().parents[3]
MODEL = "chat-70b"
RELEASES = [r.release for r in releases.engine_releases("triton")]


@pytest.fixture(scope="session")
def llm_env() -> Environment:
    return resolve(load(ROOT / "blueprints" / "llm-serving.yaml"), "prod")


def _names(release: str) -> list[tuple[str, str]]:
    return [("input", input_name(name, release)) for name, *_ in trtllm.INPUTS] + [
        ("output", name) for name, *_ in trtllm.OUTPUTS
    ]


@pytest.mark.parametrize("release", RELEASES)
def test_every_name_written_is_known_to_the_release(llm_env: Environment, release: str) -> None:
    """Source releases know every name; documented ones know all but three the docs never
    named (Triton 25.03's docs left them out too, its template declares them)."""
    model, _ = args_of_mf(llm_env, MODEL)
    found = check_names(trtllm.parameters(model), _names(release), release)
    assert found.problems == ()
    expected = () if backend_facts(release).evidence == SOURCE else (
        "input encoder_input_features", "input exclude_input_in_output", "output sequence_index",
    )  # fmt: skip
    assert found.unconfirmed == expected


def test_the_tensors_are_declared_as_the_source_template_declares_them() -> None:
    """Data type, dims, reshape, optional and ragged batching of every tensor written agree
    with the template of the release whose source the facts hold; a ``${...}`` type is one
    fill_template fills, as inferplane does."""
    facts = next(backend_facts(r) for r in RELEASES if backend_facts(r).evidence == SOURCE)
    for name, dtype, dims, scalar, optional, ragged in trtllm.INPUTS:
        fact = facts.tensors[("input", input_name(name, facts.release))]
        assert dtype.startswith("${") == fact.data_type.startswith("${"), name
        assert dtype.startswith("${") or dtype == fact.data_type, name
        assert " ".join(dims.split()) == fact.dims.replace("[", "[ ").replace("]", " ]"), name
        flags = ("reshape=[]" in fact.flags, "optional" in fact.flags,
                 "allow_ragged_batch" in fact.flags)  # fmt: skip
        assert (scalar, optional, ragged) == flags, name
    for name, dtype, dims in trtllm.OUTPUTS:
        fact = facts.tensors[("output", name)]
        assert dtype == fact.data_type or fact.data_type == "${logits_datatype}", name
        assert " ".join(dims.split()) == fact.dims.replace("[", "[ ").replace("]", " ]"), name


@pytest.mark.parametrize(
    ("release", "seed", "min_tokens"),
    [("25.03", "random_seed", "min_length"), ("25.08", "seed", "min_tokens")],
)
def test_a_model_on_an_older_release_gets_that_releases_input_names(
    llm_env: Environment, release: str, seed: str, min_tokens: str
) -> None:
    """TensorRT-LLM 0.18 (Triton 25.03) reads ``random_seed`` and ``min_length``; a ``seed``
    it would ignore without a word. The ensemble feeds the same name."""
    model, env = args_of_mf(llm_env, MODEL)
    env = dataclasses.replace(env, triton_release=release)
    assert model.release(env) == release
    text = trtllm.render_config_pbtxt(model, env)
    assert f'name: "{seed}"' in text and f'name: "{min_tokens}"' in text
    assert config_problems(text, release) == []
    other = {"random_seed": "seed", "seed": "random_seed"}[seed]
    assert f'name: "{other}"' not in text
    ensemble = ensemble_config(model, release)
    assert f'input_map {{ key: "{seed}" value: "random_seed" }}' in ensemble
    assert config_problems(ensemble, release) == []
    assert pipeline_files(model, release)["ensemble.pbtxt"] == ensemble


def test_the_configs_of_an_older_release_parse_as_model_config(
    llm_env: Environment,
    triton_python: Path,  # noqa: F811
    tmp_path: Path,
) -> None:
    model, env = args_of_mf(llm_env, MODEL)
    env = dataclasses.replace(env, triton_release="25.03")
    parsed = parse(
        triton_python,
        tmp_path,
        {
            "llm": trtllm.render_config_pbtxt(model, env),
            "ensemble": ensemble_config(model, "25.03"),
        },
    )
    names = {t["name"] for t in parsed["llm"]["input"]}
    assert {"random_seed", "min_length"} <= names and not {"seed", "min_tokens"} & names
    step = parsed["ensemble"]["ensemble_scheduling"]["step"][1]
    assert step["input_map"]["random_seed"] == "random_seed"


def test_a_key_the_backend_does_not_know_is_refused_by_name(
    llm_env: Environment, monkeypatch: pytest.MonkeyPatch
) -> None:
    model, env = args_of_mf(llm_env, MODEL)
    keys = trtllm.parameters(model)
    monkeypatch.setattr(trtllm, "parameters", lambda _: {**keys, "enable_kv_reuse": "true"})
    with pytest.raises(ServingArgsError) as err:
        trtllm.render_config_pbtxt(model, dataclasses.replace(env, triton_release="25.03"))
    assert (
        "parameter enable_kv_reuse: the TensorRT-LLM backend of Triton 25.03 reads no such key"
        in str(err.value)
    )
