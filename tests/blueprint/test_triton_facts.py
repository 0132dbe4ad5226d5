"""The Triton facts (inferplane/facts/triton/<release>/model_config.txt) are what
scripts/facts/triton_facts.py writes for each supported release, and a config.pbtxt is checked
against the facts of the release that runs it."""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from inferplane.blueprint import defaults, releases
from inferplane.blueprint.upstream import triton_facts
from inferplane.blueprint.upstream.triton_facts import Problem, config_problems

ROOT = Path(__file__).resolve().parents[2]
FACTS = ROOT / "inferplane" / "facts" / "triton"
RELEASES = [r.release for r in releases.engine_releases("triton")]


def script() -> ModuleType:
    sys.path.insert(0, str(ROOT / "scripts" / "facts"))
    import triton_facts as script_module

    return script_module


def header(text: str) -> tuple[str, str, str, str]:
    """(release, branch, blob sha, script version) the file says it was written from."""
    release = re.search(r"model configuration in release (\S+)\.\n", text)
    branch = re.search(r"triton-inference-server/common branch (r\S+),", text)
    blob = re.search(r"\(git blob ([0-9a-f]{40})\)", text)
    version = re.search(r"scripts/facts/triton_facts.py version (\S+) ", text)
    assert release and branch and blob and version
    return release.group(1), branch.group(1), blob.group(1), version.group(1)


def test_every_supported_release_has_facts() -> None:
    assert defaults.VERSIONS["triton"] in RELEASES
    assert script().releases() == RELEASES
    assert sorted(p.name for p in FACTS.iterdir()) == sorted(RELEASES)
    for release in RELEASES:
        assert triton_facts.has_facts(release)
        facts = triton_facts.model_config_facts(release)
        assert facts.messages["ModelConfig"]["instance_group"].label == "repeated"
        assert "KIND_GPU" in facts.enums["ModelInstanceGroup.Kind"]


@pytest.mark.parametrize("release", RELEASES)
def test_the_facts_are_of_their_release_branch_and_this_script(release: str) -> None:
    found, branch, _, version = header((FACTS / release / "model_config.txt").read_text())
    assert (found, branch) == (release, f"r{release}")
    assert version == script().SCRIPT_VERSION


@pytest.mark.parametrize("release", RELEASES)
def test_the_facts_are_what_the_script_writes_for_what_they_list(release: str) -> None:
    """Without the proto: the messages and enums the file lists, written again by this
    script's version, give the same file."""
    s = script()
    text = (FACTS / release / "model_config.txt").read_text()
    facts = triton_facts.read_facts(release, text)
    proto = s.triton_proto.Proto(
        package=re.search(r"package `(\w+)`", text).group(1),  # type: ignore[union-attr]
        messages={
            name: s.triton_proto.Message(
                name,
                [s.triton_proto.Field(f.name, f.type, f.label, f.oneof) for f in fields.values()],
            )
            for name, fields in facts.messages.items()
        },
        enums={name: list(values) for name, values in facts.enums.items()},
    )
    assert s.facts_text(release, header(text)[2], proto) == text


def test_facts_of_another_script_version_are_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    s = script()
    text = (FACTS / "25.08" / "model_config.txt").read_text()
    proto = s.triton_proto.Proto(
        "inference", {"ModelConfig": s.triton_proto.Message("ModelConfig")}, {}
    )
    before = s.facts_text("25.08", header(text)[2], proto)
    monkeypatch.setattr(s, "SCRIPT_VERSION", "0")
    after = s.facts_text("25.08", header(text)[2], proto)
    assert before != after
    assert header(after)[3] == "0"


def test_releases_with_one_proto_blob_have_one_body() -> None:
    bodies: dict[str, set[str]] = {}
    for release in RELEASES:
        text = (FACTS / release / "model_config.txt").read_text()
        body = "".join(line for line in text.splitlines(True) if not line.startswith("#"))
        bodies.setdefault(header(text)[2], set()).add(body)
    assert all(len(b) == 1 for b in bodies.values())


def _git_blob(data: bytes) -> str:
    """The id git gives a file's content (`git hash-object`)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


VENDORED = {
    _git_blob(p.read_bytes()): p
    for p in (ROOT / "tests" / "reference").glob("triton-common-*/model_config.proto")
}
"""The protos of the supported releases, vendored (tests/reference/README.md names their
branch and commit), by git blob id."""


@pytest.mark.parametrize("release", RELEASES)
def test_reading_the_proto_again_gives_the_same_facts(release: str) -> None:
    """The proto the facts name by blob id, read again by this script, gives the same file:
    the reader and the stored facts agree, with no clone of the repository."""
    s = script()
    text = (FACTS / release / "model_config.txt").read_text()
    blob = header(text)[2]
    assert blob in VENDORED, (
        f"vendor protobuf/model_config.proto of branch r{release} (git blob {blob}) under "
        "tests/reference/ and list it in its README"
    )
    proto = s.triton_proto.parse(VENDORED[blob].read_text())
    assert s.facts_text(release, blob, proto) == text


def test_a_clone_when_present_has_the_blobs_the_facts_name() -> None:
    """With a clone (scripts/facts/triton_facts.py says where), each release branch still holds
    the proto the facts were read from; without one the vendored copies above stand in."""
    s = script()
    repo = s.git_dir()
    if not (repo / "HEAD").exists():
        return
    for release in RELEASES:
        assert s.derive(repo, release) == (FACTS / release / "model_config.txt").read_text()


ENSEMBLE = """\
name: "pipeline"
platform: "ensemble"
max_batch_size: 8
input [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] } ]
output [ { name: "SCORES", data_type: TYPE_FP32, dims: [ -1 ] } ]
ensemble_scheduling {
  max_inflight_requests: 16
  step [
    {
      model_name: "tokenizer"
      model_version: -1
      input_map { key: "TEXT" value: "TEXT" }
      output_map { key: "input_ids" value: "ids" }
    }
  ]
}
"""


def test_a_field_of_a_newer_release_fails_against_an_older_one_by_name() -> None:
    """ModelEnsembling.max_inflight_requests is new in 25.11 (triton-inference-server/common
    commit 6a318ca, "Add support for `max_inflight_requests` parameter ...", PR #141;
    protobuf/model_config.proto `uint32 max_inflight_requests = 2;`): r26.02 has it, r25.08
    and r25.03 (one blob, 166cbb0e) do not."""
    assert config_problems(ENSEMBLE, "26.02") == []
    for release in ("25.03", "25.08"):
        assert config_problems(ENSEMBLE, release) == [
            Problem(
                7,
                3,
                "ensemble_scheduling.max_inflight_requests",
                f"ModelEnsembling has no field max_inflight_requests in Triton {release}",
            )
        ]
    assert config_problems(ENSEMBLE.replace("  max_inflight_requests: 16\n", ""), "25.08") == []


def test_the_releases_with_a_field_are_named_oldest_first() -> None:
    assert triton_facts.releases_with_field("ModelEnsembling", "max_inflight_requests") == (
        "26.02",
        "26.07",
    )
    assert triton_facts.releases_with_field("ModelConfig", "response_cache") == tuple(RELEASES)
    assert triton_facts.releases_with_field("ModelConfig", "no_such_field") == ()
    assert triton_facts.releases_with_field("NoSuchMessage", "name") == ()
    assert triton_facts.has_field("26.02", "ModelEnsembling", "step")
    assert not triton_facts.has_field("25.08", "ModelEnsembling", "max_inflight_requests")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('nmae: "x"', "1:1: nmae: ModelConfig has no field nmae in Triton 25.08"),
        (
            "instance_group [ { count: 1 kind: KIND_GPUS } ]",
            "1:35: instance_group[0].kind: KIND_GPUS is not a value of ModelInstanceGroup.Kind "
            "in Triton 25.08 (one of KIND_AUTO, KIND_CPU, KIND_GPU, KIND_MODEL)",
        ),
        ('max_batch_size: "8"', '1:17: max_batch_size: "8" is not of type int32'),
        ("name: pipeline", "1:7: name: pipeline is not of type string"),
        ("response_cache { enable: yes }", "1:26: response_cache.enable: yes is not of type bool"),
        ("dynamic_batching { max_queue_delay_microseconds: -5 }",
         "1:50: dynamic_batching.max_queue_delay_microseconds: -5 is not of type uint64"),
        ("max_batch_size { }", "1:16: max_batch_size: is an int32, not a message"),
        ("dynamic_batching: 1", "1:19: dynamic_batching: is a message ModelDynamicBatching: "
         "write { ... }, not 1"),
        ("max_batch_size: 1\nmax_batch_size: 2",
         "2:1: max_batch_size: ModelConfig.max_batch_size is not repeated: give one value"),
        ('name: [ "a" ]', "1:1: name: ModelConfig.name is not repeated: give one value"),
        ("dynamic_batching { }\nsequence_batching { }",
         "2:1: sequence_batching: sequence_batching and dynamic_batching are both of the oneof "
         "ModelConfig.scheduling_choice: give one of them"),
        ('parameters { key: "k" value { string_vlaue: "v" } }',
         "1:31: parameters.value.string_vlaue: ModelParameter has no field string_vlaue "
         "in Triton 25.08"),
        ('parameters { key: 1 value { string_value: "v" } }',
         "1:19: parameters.key: 1 is not of type string"),
        ('parameters { kye: "k" }', "1:14: parameters.kye: map<string, ModelParameter> has no "
         "field kye in Triton 25.08"),
        ('name: "x"\ninput [ { name: "a" ', "2:17: expected '}', found the end of the text"),
        ('name "x"', "1:6: expected ':' or '{' before '\"x\"'"),
    ],
)  # fmt: skip
def test_each_thing_tritonserver_refuses_is_named_where_it_is(text: str, problem: str) -> None:
    assert [str(p) for p in config_problems(text, "25.08")] == [problem]


def test_the_text_format_variants_protobuf_accepts_pass() -> None:
    text = """\
# a comment
name: "con" 'cat'   # adjacent strings concatenate
max_batch_size: 0x10;
instance_group: [ < kind: KIND_CPU count: 2 >, { kind: 1 } ],
dynamic_batching: { preferred_batch_size: [ 4, 8 ] preserve_ordering: true }
model_warmup { name: "w" batch_size: 1 inputs { key: "x"
  value { data_type: TYPE_FP32 dims: 4 random_data: t } } }
optimization { cuda { graphs: True } priority: PRIORITY_MAX }
version_policy { latest { num_versions: 2 } }
"""
    assert config_problems(text, "25.08") == []


def test_a_release_without_facts_is_refused() -> None:
    with pytest.raises(
        ValueError, match=r"no facts for Triton 24\.01: run scripts/facts/triton_facts.py"
    ):
        config_problems('name: "x"', "24.01")
    with pytest.raises(ValueError, match="1:1: nmae: ModelConfig has no field nmae"):
        triton_facts.check_config('nmae: "x"')
