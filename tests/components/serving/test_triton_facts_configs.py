"""Every config.pbtxt the bundled blueprints give their Triton models passes the facts of the
Triton release that model runs (no Triton environment needed), and the facts check refuses
what Triton's own ModelConfig parser (tritonclient, scripts/triton-config-check) refuses."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from serving_fixtures import serve
from test_triton_config import (
    CHECKER,
    parse,
    triton_python,  # noqa: F401 (a fixture)
)

from inferplane.app.plan_output import triton_configs
from inferplane.blueprint.resolve import resolve_file
from inferplane.blueprint.triton_facts import config_problems

ROOT = Path(__file__).resolve().parents[3]
BLUEPRINTS = sorted((ROOT / "blueprints").glob("*.yaml"))


def _triton_models() -> list[tuple[Path, str, str]]:
    from inferplane.blueprint.loader import load

    found = []
    for path in BLUEPRINTS:
        for env_name in load(path).data["environments"]:
            env = resolve_file(path, env_name)
            found += [(path, env_name, m.name) for m in env.models.values() if m.server == "triton"]
    return found


MODELS = _triton_models()


def test_the_bundled_blueprints_have_triton_models() -> None:
    assert {p.stem for p, _, _ in MODELS} == {"support-assistant", "llm-serving"}


@pytest.mark.parametrize(
    ("path", "env_name", "model"), MODELS, ids=[f"{p.stem}-{e}-{m}" for p, e, m in MODELS]
)
def test_every_config_of_a_bundled_triton_model_passes_its_release(
    path: Path, env_name: str, model: str
) -> None:
    env = resolve_file(path, env_name)
    release = env.models[model].triton_release or env.versions.triton
    configs = list(triton_configs(serve(env, [model])))
    assert configs, f"{model} has no config.pbtxt"
    for name, text in configs:
        assert config_problems(text, release) == [], name


REFUSED = {
    "unknown_field": 'nmae: "x"\n',
    "unknown_enum_value": "instance_group [ { kind: KIND_GPUS } ]\n",
    "string_for_int": 'max_batch_size: "8"\n',
    "ident_for_string": "name: pipeline\n",
    "negative_unsigned": "dynamic_batching { max_queue_delay_microseconds: -5 }\n",
    "message_for_scalar": "max_batch_size { }\n",
    "scalar_for_message": "dynamic_batching: 1\n",
    "twice": "max_batch_size: 1\nmax_batch_size: 2\n",
    "list_of_one": 'name: [ "a" ]\n',
    "two_of_a_oneof": "dynamic_batching { }\nsequence_batching { }\n",
    "unknown_map_value_field": 'parameters { key: "k" value { string_vlaue: "v" } }\n',
    "unknown_map_entry_field": 'parameters { kye: "k" }\n',
    "unclosed": 'input [ { name: "a" \n',
}
ACCEPTED = {
    "variants": (
        "# a comment\n"
        "name: \"con\" 'cat'\n"
        "max_batch_size: 0x10;\n"
        "instance_group: [ < kind: KIND_CPU count: 2 >, { kind: 1 } ],\n"
        "dynamic_batching: { preferred_batch_size: [ 4, 8 ] preserve_ordering: true }\n"
        'model_warmup { name: "w" batch_size: 1 inputs { key: "x" value { data_type: TYPE_FP32 '
        "dims: 4 random_data: t } } }\n"
        "optimization { cuda { graphs: True } priority: PRIORITY_MAX }\n"
        "version_policy { latest { num_versions: 2 } }\n"
    ),
    "ensemble": (
        'name: "pipeline"\nplatform: "ensemble"\n'
        'input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]\n'
        'ensemble_scheduling { step [ { model_name: "tok" model_version: -1 '
        'input_map { key: "TEXT" value: "TEXT" } } ] }\n'
    ),
}


def test_the_facts_check_agrees_with_tritons_parser(triton_python, tmp_path):  # noqa: F811
    """tritonclient 2.73.0 (scripts/setup-triton-venv.sh) is newer than every supported
    release; none of these cases involves a field that changed between them."""
    assert all(config_problems(text) for text in REFUSED.values())
    for name, text in REFUSED.items():
        path = tmp_path / f"{name}.pbtxt"
        path.write_text(text)
        done = subprocess.run(
            [str(triton_python), str(CHECKER), str(path)],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        assert done.returncode == 1, name
    assert all(config_problems(text) == [] for text in ACCEPTED.values())
    parsed = parse(triton_python, tmp_path, ACCEPTED)
    assert parsed["variants"]["name"] == "concat"
    assert parsed["variants"]["max_batch_size"] == 16
