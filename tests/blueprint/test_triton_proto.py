"""scripts/facts/triton_proto.py reads the proto subset of Triton's model_config.proto, and
scripts/facts/triton_facts.py writes facts from it (or refuses a release it cannot read)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def proto() -> ModuleType:
    sys.path.insert(0, str(ROOT / "scripts" / "facts"))
    import triton_proto

    return triton_proto


def facts_script() -> ModuleType:
    sys.path.insert(0, str(ROOT / "scripts" / "facts"))
    import triton_facts

    return triton_facts


NESTED = """\
// Copyright line with message and enum words { }
syntax = "proto3";
package inference;
option cc_enable_arenas = true;

enum DataType { TYPE_INVALID = 0; TYPE_BOOL = 1; }

/* a block comment
   message Fake { int32 x = 1; } */
message Group
{
  enum Kind {
    option allow_alias = true;
    KIND_AUTO = 0;
    KIND_GPU = 1 [deprecated = true];
  }
  message Secondary
  {
    enum SecondaryKind { KIND_NVDLA = 0; }
    SecondaryKind kind = 1;
    Kind outer_kind = 2;
  }
  reserved 10, 11;
  Kind kind = 4;
  repeated Secondary secondary = 8;
  repeated int32 gpus = 3 [packed = true];
  optional string host = 9;
  map<string, Secondary> by_name = 12;
  .inference.DataType wire = 13;
  inference.DataType named = 14;
}

message Policy
{
  message Latest { uint32 num_versions = 1; }
  message All {}
  oneof policy_choice
  {
    Latest latest = 1;
    All all = 2;
  }
  Group.Secondary.SecondaryKind deep = 5;
}
"""


def test_nested_messages_enums_oneof_and_maps_are_read_with_qualified_names() -> None:
    p = proto().parse(NESTED)
    F = proto().Field
    assert p.package == "inference"
    assert set(p.messages) == {
        "Group", "Group.Secondary", "Policy", "Policy.Latest", "Policy.All",
    }  # fmt: skip
    assert p.enums == {
        "DataType": ["TYPE_INVALID", "TYPE_BOOL"],
        "Group.Kind": ["KIND_AUTO", "KIND_GPU"],
        "Group.Secondary.SecondaryKind": ["KIND_NVDLA"],
    }
    assert p.messages["Group"].fields == [
        F("kind", "Group.Kind"),
        F("secondary", "Group.Secondary", "repeated"),
        F("gpus", "int32", "repeated"),
        F("host", "string"),
        F("by_name", "Group.Secondary", "map<string>"),
        F("wire", "DataType"),
        F("named", "DataType"),
    ]
    # A name resolves from the innermost scope outwards: Kind inside Secondary is Group.Kind.
    assert p.messages["Group.Secondary"].fields == [
        F("kind", "Group.Secondary.SecondaryKind"),
        F("outer_kind", "Group.Kind"),
    ]
    assert p.messages["Policy"].fields == [
        F("latest", "Policy.Latest", oneof="policy_choice"),
        F("all", "Policy.All", oneof="policy_choice"),
        F("deep", "Group.Secondary.SecondaryKind"),
    ]
    assert p.messages["Policy.All"].fields == []


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('syntax = "proto2"; message A {}', 'only proto3 is read, not "proto2"'),
        ('import "other.proto";', "line 1: 'import' is not read by this script"),
        ("message A {\n  extensions 100 to 200;\n}", "line 2: 'extensions' is not read"),
        ("message A { Missing m = 1; }", "type Missing (used in A) is not defined in this file"),
        ("message A { message B {} }\nmessage C { A.D d = 1; }", "type A.D (used in C)"),
        ("message A { int32 x = 1; string x = 2; }", "field x of A is defined twice"),
        ("message A {}\nenum A { X = 0; }", "A is defined twice"),
        ("message A { map<float, string> m = 1; }", "'float' cannot be a map key"),
        ("message A { int32 x = 1;", "unexpected end of file"),
        ("message A { int32 x = 1 }", "expected ';', found '}'"),
    ],
)
def test_what_the_reader_does_not_understand_is_an_error_with_its_line(
    text: str, error: str
) -> None:
    with pytest.raises(proto().ProtoError, match=re.escape(error)):
        proto().parse(text)


def test_the_facts_text_lists_every_field_sorted_with_its_labels() -> None:
    text = facts_script().facts_text("99.01", "0" * 40, proto().parse(NESTED))
    body = [line for line in text.splitlines() if not line.startswith("#")]
    assert "(git blob " + "0" * 40 + "), read by scripts/facts/triton_facts.py version" in text
    assert body[:9] == [
        "message Group",
        "\tby_name\tGroup.Secondary\tmap<string>",
        "\tgpus\tint32\trepeated",
        "\thost\tstring",
        "\tkind\tGroup.Kind",
        "\tnamed\tDataType",
        "\tsecondary\tGroup.Secondary\trepeated",
        "\twire\tDataType",
        "message Group.Secondary",
    ]
    assert "\tlatest\tPolicy.Latest\toneof policy_choice" in body
    assert body[-8:] == [
        "enum DataType", "\tTYPE_BOOL", "\tTYPE_INVALID",
        "enum Group.Kind", "\tKIND_AUTO", "\tKIND_GPU",
        "enum Group.Secondary.SecondaryKind", "\tKIND_NVDLA",
    ]  # fmt: skip


def _repo(tmp_path: Path, branches: dict[str, str]) -> Path:
    """A bare repository with one branch per release holding protobuf/model_config.proto."""
    work = tmp_path / "work"
    work.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(work), *args], check=True, capture_output=True, timeout=60)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "facts@example.com")
    git("config", "user.name", "facts")
    (work / "protobuf").mkdir()
    for branch, text in branches.items():
        git("checkout", "-q", "-B", branch)
        (work / "protobuf" / "model_config.proto").write_text(text)
        git("add", ".")
        git("commit", "-q", "-m", branch)
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], check=True, timeout=60)
    return bare


def test_a_release_without_a_branch_is_a_clear_error(tmp_path: Path) -> None:
    s = facts_script()
    repo = _repo(
        tmp_path, {"r99.01": 'syntax = "proto3";\nmessage ModelConfig { string name = 1; }\n'}
    )
    assert "\tname\tstring\n" in s.derive(repo, "99.01")
    with pytest.raises(s.FactsError) as err:
        s.derive(repo, "99.02")
    assert str(err.value) == (
        f"Triton release 99.02: triton-inference-server/common has no branch r99.02 in {repo}; "
        "fetch the clone, or check the release name in releases.json"
    )
    with pytest.raises(s.FactsError, match="no git repository at"):
        s.derive(tmp_path / "absent", "99.01")


def test_a_proto_without_model_config_or_outside_the_subset_is_refused(tmp_path: Path) -> None:
    s = facts_script()
    repo = _repo(tmp_path, {"r99.01": "message Other {}\n", "r99.02": 'import "x.proto";\n'})
    with pytest.raises(
        s.FactsError, match=r"99\.01: protobuf/model_config\.proto defines no ModelConfig"
    ):
        s.derive(repo, "99.01")
    with pytest.raises(
        s.FactsError, match=r"99\.02: protobuf/model_config\.proto: line 1: 'import'"
    ):
        s.derive(repo, "99.02")
