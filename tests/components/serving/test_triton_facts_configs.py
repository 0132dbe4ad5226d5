"""Every config.pbtxt the bundled blueprints give their Triton models passes the facts of the
Triton release that model runs (no Triton environment needed); the facts check refuses what
Triton's own ModelConfig parser (tritonclient, scripts/dev/triton-config-check) refuses; and the
proto reader of scripts/facts/triton_facts.py reads what protoc compiled into tritonclient."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from serving_fixtures import serve
from test_triton_config import (
    CHECKER,
    parse,
    triton_python,  # noqa: F401 (a fixture)
)

from inferplane.app.plan_output import triton_configs
from inferplane.blueprint.resolution.resolve import resolve_file
from inferplane.blueprint.upstream.triton_facts import config_problems

ROOT = Path(__file__).resolve().parents[3]
BLUEPRINTS = sorted((ROOT / "blueprints").glob("*.yaml"))


def _triton_models() -> list[tuple[Path, str, str]]:
    from inferplane.blueprint.loading.loader import load

    found = []
    for path in BLUEPRINTS:
        for env_name in load(path).data["environments"]:
            env = resolve_file(path, env_name)
            found += [(path, env_name, m.name) for m in env.models.values() if m.server == "triton"]
    return found


MODELS = _triton_models()


def test_the_bundled_blueprints_have_triton_models() -> None:
    assert {p.stem for p, _, _ in MODELS} == {
        "support-assistant",
        "llm-serving",
        "bge-search",
        "whisper-triton",
    }


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
    """tritonclient 2.73.0 (scripts/dev/setup-triton-venv.sh) is newer than every supported
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


# Run in the Triton environment: ModelConfig's file as protoc compiled it into tritonclient,
# as JSON {package, messages: {name: [[field, type, label, oneof]]}, enums: {name: [values]}}.
DESCRIBE = """\
import json
from google.protobuf.descriptor import FieldDescriptor as F
from tritonclient.grpc import model_config_pb2

SCALARS = {getattr(F, "TYPE_" + n.upper()): n for n in (
    "double float int32 int64 uint32 uint64 sint32 sint64 fixed32 fixed64 sfixed32 sfixed64 "
    "bool string bytes").split()}
package = model_config_pb2.DESCRIPTOR.package
messages, enums = {}, {}


def name_of(desc):
    return desc.full_name.removeprefix(package + ".")


def type_of(f):
    if f.type in SCALARS:
        return SCALARS[f.type]
    return name_of(f.message_type or f.enum_type)


def walk(desc):
    fields = []
    for f in desc.fields:
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            entry = f.message_type.fields_by_name
            typ, label = type_of(entry["value"]), "map<" + type_of(entry["key"]) + ">"
        else:
            typ, label = type_of(f), "repeated" if f.is_repeated else ""
        oneof = f.containing_oneof.name if f.containing_oneof is not None else ""
        fields.append([f.name, typ, label, oneof])
    messages[name_of(desc)] = fields
    for nested in desc.nested_types:
        if not nested.GetOptions().map_entry:
            walk(nested)
    for enum in desc.enum_types:
        enums[name_of(enum)] = [v.name for v in enum.values]


for desc in model_config_pb2.DESCRIPTOR.message_types_by_name.values():
    walk(desc)
for enum in model_config_pb2.DESCRIPTOR.enum_types_by_name.values():
    enums[name_of(enum)] = [v.name for v in enum.values]
print(json.dumps({"package": package, "messages": messages, "enums": enums}))
"""


def test_the_proto_reader_agrees_with_protoc(triton_python):  # noqa: F811
    """tritonclient 2.73.0 ships model_config_pb2, which protoc compiled from
    protobuf/model_config.proto of its release; every message, field (type, label, oneof)
    and enum value in it is what scripts/facts/triton_proto.py read from r26.02's proto, whose
    messages and enums have not changed since (r26.04 to r26.07 differ from it in comments
    only, blob 58754167 against 2ce5cc0a)."""
    sys.path.insert(0, str(ROOT / "scripts" / "facts"))
    import triton_facts as script
    import triton_proto

    done = subprocess.run(
        [str(triton_python), "-c", DESCRIBE],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    described = json.loads(done.stdout)
    proto = triton_proto.Proto(
        package=described["package"],
        messages={
            name: triton_proto.Message(name, [triton_proto.Field(*f) for f in fields])
            for name, fields in described["messages"].items()
        },
        enums=described["enums"],
    )
    stored = (ROOT / "inferplane" / "facts" / "triton" / "26.02" / "model_config.txt").read_text()
    blob = re.search(r"\(git blob ([0-9a-f]{40})\)", stored)
    assert blob is not None
    assert script.facts_text("26.02", blob.group(1), proto) == stored
