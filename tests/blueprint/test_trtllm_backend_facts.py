"""The TensorRT-LLM backend facts (inferplane/facts/tensorrtllm_backend/<release>/) are what
scripts/facts/trtllm_backend_facts.py writes for each supported Triton release, and the names a
config writes are checked against the facts of the release that runs it."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from inferplane.blueprint import defaults, releases
from inferplane.blueprint.upstream import trtllm_backend_facts
from inferplane.blueprint.upstream.trtllm_backend_facts import (
    DOCUMENTATION,
    SOURCE,
    NamesCheck,
    backend_facts,
    check_names,
    input_name,
)

ROOT = Path(__file__).resolve().parents[2]
FACTS = ROOT / "inferplane" / "facts" / "tensorrtllm_backend"
RELEASES = [r.release for r in releases.engine_releases("triton")]


def script() -> ModuleType:
    sys.path.insert(0, str(ROOT / "scripts" / "facts"))
    import trtllm_backend_facts as script_module

    return script_module


def header(text: str) -> tuple[str, str, str, str, str]:
    """(release, branch, commit, script version, evidence) a file says it was written from."""
    release = re.search(r"`tensorrt_llm` model in Triton release (\S+)\.\n", text)
    branch = re.search(r"tensorrtllm_backend branch (r\S+) \(commit ([0-9a-f]{40})\)", text)
    version = re.search(r"scripts/facts/trtllm_backend_facts.py version (\S+) ", text)
    evidence = re.search(r"^# Evidence: (\w+)$", text, re.M)
    assert release and branch and version and evidence
    return (release.group(1), branch.group(1), branch.group(2), version.group(1),
            evidence.group(1))  # fmt: skip


def test_every_supported_release_has_facts() -> None:
    assert defaults.VERSIONS["triton"] in RELEASES
    assert script().triton_facts.releases() == RELEASES
    assert sorted(p.name for p in FACTS.iterdir()) == sorted(RELEASES)
    for release in RELEASES:
        assert sorted(p.name for p in (FACTS / release).iterdir()) == list(script().FILES)
        facts = backend_facts(release)
        assert facts.is_key("kv_cache_free_gpu_mem_fraction")
        assert ("input", "input_ids") in facts.tensors


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize("name", ["parameters.txt", "tensors.txt"])
def test_the_facts_are_of_their_release_branch_and_this_script(release: str, name: str) -> None:
    found, branch, _, version, evidence = header((FACTS / release / name).read_text())
    assert (found, branch, version) == (release, f"r{release}", script().SCRIPT_VERSION)
    assert evidence == backend_facts(release).evidence


def test_the_backend_source_is_read_where_the_branch_holds_it() -> None:
    """Triton 25.03 (TensorRT-LLM 0.18) holds inflight_batcher_llm/; from 25.06 (0.20) the
    backend is triton_backend/ of NVIDIA/TensorRT-LLM, named by the submodule pointer."""
    assert {r: backend_facts(r).evidence for r in RELEASES} == {
        "25.03": SOURCE, "25.06": DOCUMENTATION, "25.08": DOCUMENTATION,
        "25.10": DOCUMENTATION, "26.02": DOCUMENTATION, "26.07": DOCUMENTATION,
    }  # fmt: skip
    text = (FACTS / "25.08" / "parameters.txt").read_text()
    assert "submodule tensorrt_llm at commit b4b1185af320f109f4cb73b1505832dbc63042d7" in text
    source = backend_facts("25.03")
    assert source.parameters["gpt_model_path"] == ("reads", "template=${engine_dir}")
    assert source.parameters["worker_path"] == ("reads",)
    assert source.parameters["engine_dir"] == ("documented mandatory",)
    assert not source.is_key("engine_dir")
    seed = source.tensors[("input", "random_seed")]
    assert (seed.data_type, seed.dims, seed.flags) == (
        "TYPE_UINT64", "[1]", ("optional", "reshape=[]", "documented"),
    )  # fmt: skip


def test_the_facts_are_what_the_clone_gives_when_present() -> None:
    """Reading every release branch again gives the stored files (the same as `--check`)."""
    s = script()
    repo = s.git_dir()
    if not (repo / "HEAD").exists():
        pytest.skip(f"no clone of {s.REPOSITORY} at {repo} (scripts/facts/trtllm_backend_facts.py)")
    for release in RELEASES:
        for name, text in s.texts(s.read_release(repo, release)).items():
            assert text == (FACTS / release / name).read_text(), f"{release}/{name} is stale"
    assert s.main(["--check"]) == 0


def test_facts_of_another_script_version_are_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    s = script()
    read = s.Read("25.08", "0" * 40, SOURCE, ["x (git blob y)"], {"k": ["reads"]},
                  [("input", "a", "TYPE_INT32", "[1]")])  # fmt: skip
    before = s.texts(read)
    monkeypatch.setattr(s, "SCRIPT_VERSION", "0")
    after = s.texts(read)
    assert before != after
    assert header(after["parameters.txt"])[3] == "0"


def test_the_cpp_keys_are_read_however_written() -> None:
    cpp = """
        auto a = model_state_->GetParameter<std::string>("gpt_model_type");
        b = model_state_->GetParameter<std::vector<std::vector<int32_t>>>(
            "medusa_choices");
        std::string fieldName = "lora_cache_max_adapter_size";
        c = model_state_->GetParameter<SizeType32>(fieldName);
        fieldName = "lora_cache_host_memory_bytes";
        TLLM_LOG_WARNING("kv_cache_free_gpu_mem_fraction is not specified");
    """
    assert script().source_keys([cpp]) == {
        "gpt_model_type", "medusa_choices", "lora_cache_max_adapter_size",
        "lora_cache_host_memory_bytes",
    }  # fmt: skip


def test_the_template_is_read_with_its_placeholders() -> None:
    template = """\
name: "tensorrt_llm"
max_batch_size: ${triton_max_batch_size}
input [
  { name: "input_ids" data_type: TYPE_INT32 dims: [ -1 ] allow_ragged_batch: true
    optional: true },
  { name: "input_lengths" data_type: TYPE_INT32 dims: [ 1 ] reshape: { shape: [ ] } }
]
output [ { name: "context_logits" data_type: ${logits_datatype} dims: [ -1, -1 ] } ]
parameters: { key: "gpt_model_path" value: { string_value: "${engine_dir}" } }
parameters: { key: "FORCE_CPU_ONLY_INPUT_TENSORS" value: { string_value: "no" } }
# parameters: { key: "enable_trt_overlap" value: { string_value: "x" } }
"""
    parameters, tensors = script().template_facts(template)
    assert parameters == {
        "gpt_model_path": ["template=${engine_dir}"],
        "FORCE_CPU_ONLY_INPUT_TENSORS": ["template"],
    }
    assert tensors == [
        ("input", "input_ids", "TYPE_INT32", "[-1]", "optional,allow_ragged_batch"),
        ("input", "input_lengths", "TYPE_INT32", "[1]", "reshape=[]"),
        ("output", "context_logits", "${logits_datatype}", "[-1, -1]"),
    ]


def test_the_docs_tables_of_the_tensorrt_llm_model_are_read() -> None:
    docs = """\
### preprocessing model
*Mandatory parameters*
| Name | Description |
| `tokenizer_dir` | The path. |
### tensorrt_llm model
*Mandatory parameters*
| Name | Description |
| :---: | :---: |
| `engine_dir` | The path to the engine. |
*Optional parameters*
- General
| `exclude_input_in_output` | Set to `true`. |
#### Common Inputs
| Name | Shape | Type | Description |
| `seed` | [1] | `uint64_t` | Sampling Config param: `seed` |
#### Unique Outputs for tensorrt_llm model
| `output_ids` | [-1, -1] | `int32` | Output token IDs |
#### Unique Inputs for tensorrt_llm_bls model
| `text_input` | [-1] | `string` | Prompt text |
"""
    parameters, tensors = script().docs_facts(docs)
    assert parameters == {
        "engine_dir": ["documented mandatory"],
        "exclude_input_in_output": ["documented optional"],
    }
    assert tensors == [
        ("input", "seed", "uint64_t", "[1]", "documented"),
        ("output", "output_ids", "int32", "[-1,-1]", "documented"),
    ]


def test_a_source_release_refuses_what_its_backend_does_not_read() -> None:
    assert check_names(["gpt_model_path", "gpt_model_typ"], [("input", "seed")], "25.03") == (
        NamesCheck(
            (
                "parameter gpt_model_typ: the TensorRT-LLM backend of Triton 25.03 reads no "
                "such key",
                "input seed: the TensorRT-LLM backend of Triton 25.03 declares no such tensor",
            ),
            (),
        )
    )
    # A documented placeholder is no key.
    assert check_names(["engine_dir"], [], "25.03").problems


def test_a_documented_release_accepts_keys_by_their_placeholder_and_refuses_renames() -> None:
    assert check_names(["gpt_model_path", "gpt_model_type"], [], "25.08") == NamesCheck((), ())
    found = check_names(
        ["no_such_key"],
        [("input", "random_seed"), ("input", "seed"), ("output", "sequence_index")],
        "25.08",
    )
    assert found == NamesCheck(
        (
            "parameter no_such_key: the documentation of the TensorRT-LLM backend of Triton "
            "25.08 does not name it",
            "input random_seed: the documentation of the TensorRT-LLM backend of Triton 25.08 "
            "does not name it; Triton 25.03's source and docs knew it: renamed or removed",
        ),
        ("output sequence_index",),
    )


def test_renamed_inputs_take_the_name_of_the_release() -> None:
    n = len(RELEASES) - 1  # every release after 25.03
    assert [input_name("seed", r) for r in RELEASES] == ["random_seed"] + ["seed"] * n
    assert [input_name("min_tokens", r) for r in RELEASES] == ["min_length"] + ["min_tokens"] * n
    assert input_name("input_ids", "25.03") == "input_ids"
    for new, old in trtllm_backend_facts.RENAMED_INPUTS.items():
        assert ("input", old) in backend_facts("25.03").tensors
        assert ("input", new) not in backend_facts("25.03").tensors
        assert all(backend_facts(r).documents("input", new) for r in RELEASES[1:])
        assert not any(backend_facts(r).documents("input", old) for r in RELEASES[1:])


def test_a_release_without_facts_is_refused() -> None:
    with pytest.raises(ValueError, match=r"no TensorRT-LLM backend facts for Triton 24\.01"):
        check_names([], [], "24.01")


def _trtllm_line(release: str) -> str:
    text = (FACTS / release / "parameters.txt").read_text()
    found = re.search(r"^#   TensorRT-LLM: (.*)$", text, re.M)
    assert found
    return found.group(1)


def test_the_facts_name_the_tensorrt_llm_of_their_release() -> None:
    """The branch's Dockerfile and the tags sharing its submodule commit agree with NVIDIA's
    compatibility matrix, container trtllm-python-py3 (25.08: TensorRT-LLM 0.21.0, 25.10:
    1.0.0, 26.02: 1.1.0; https://docs.nvidia.com/deeplearning/triton-inference-server/user-guide/docs/
    introduction/compatibility.html), and the pinned release's facts are of the backend tag
    the release table bundles with it (a tag sharing the submodule commit, or the
    Dockerfile's version where no tag does)."""
    assert _trtllm_line("25.08").endswith("release/0.21; tags with this submodule commit: v0.21.0")
    assert "TENSORRTLLM_VER=1.0.0" in _trtllm_line("25.10")
    assert _trtllm_line("25.10").endswith("commit: v1.0.0")
    assert "TENSORRTLLM_VER=1.1.0" in _trtllm_line("26.02")
    # 26.07: TensorRT-LLM 1.2.1 (server r26.07 docs/introduction/compatibility.md)
    assert "TENSORRTLLM_VER=1.2.1" in _trtllm_line("26.07")
    bundled = releases.table()["bundled"]["tensorrtllm_backend"]
    assert bundled["with"] == "triton"
    assert bundled["version"].removeprefix("v") in _trtllm_line(defaults.VERSIONS["triton"])
