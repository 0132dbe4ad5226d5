"""The staging Job's download container: it sees no GPU of the node it runs on, and it
downloads what vLLM would load, without the ``original/`` duplicates vLLM skips."""

from __future__ import annotations

import json
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path

import pytest
from serving_fixtures import container, serve
from test_weights import SOURCE, _twins, staging_jobs

from inferplane.blueprint.model import Environment
from inferplane.components.serving.containers import NO_GPU
from inferplane.components.serving.store.jobs import hub_download
from inferplane.components.serving.store.store_job import job_source
from inferplane.components.serving.store.weights_job import IGNORE_PATTERNS

# Records the call instead of reaching the hub: the script's only import.
FAKE_HUB = """\
import json, os
def snapshot_download(**kwargs):
    with open(os.environ["CALL_FILE"], "w") as f:
        json.dump(kwargs, f)
"""


def test_the_download_container_sees_no_gpu(staging: Environment) -> None:
    (job,) = staging_jobs(serve(_twins(staging), ["chat", "chat-b"]))
    download = container(job, "download", init=True)
    # A CUDA image on a GPU node without a GPU request (containers.NO_GPU cites NVIDIA).
    assert NO_GPU == {"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}
    assert NO_GPU in download["env"]
    assert "nvidia.com/gpu" not in str(download["resources"])


def test_the_download_leaves_out_the_original_weights(staging: Environment) -> None:
    # vLLM's own default (vllm/config/load.py LoadConfig.ignore_patterns) and original/*,
    # see IGNORE_PATTERNS.
    assert IGNORE_PATTERNS == ("original/**/*", "original/*")
    (job,) = staging_jobs(serve(_twins(staging), ["chat", "chat-b"]))
    script = container(job, "download", init=True)["command"][2]
    assert '"$HF_REPO" "$HF_REVISION" "/build/snapshot" \'original/**/*\' \'original/*\'' in script


def test_the_script_passes_the_patterns_to_snapshot_download(tmp_path: Path) -> None:
    # The ConfigMap's copy, run as the container runs it, beside a stand-in huggingface_hub.
    (tmp_path / "hub_download.py").write_text(job_source("hub_download"))
    (tmp_path / "huggingface_hub.py").write_text(FAKE_HUB)
    call = tmp_path / "call.json"
    result = subprocess.run(
        [sys.executable, "-E", str(tmp_path / "hub_download.py"), SOURCE.repo, SOURCE.revision,
         "/snap", *IGNORE_PATTERNS],
        env={"CALL_FILE": str(call)},
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert json.loads(call.read_text()) == {
        "repo_id": SOURCE.repo,
        "revision": SOURCE.revision,
        "local_dir": "/snap",
        "ignore_patterns": ["original/**/*", "original/*"],
    }


def test_the_patterns_leave_out_the_original_weights_and_keep_the_rest() -> None:
    # huggingface_hub filters repository paths with fnmatch.fnmatch
    # (src/huggingface_hub/utils/_paths.py filter_repo_objects); meta-llama/Llama-3.1-8B-
    # Instruct's files, as its repository lists them.
    def ignored(path: str) -> bool:
        return any(fnmatch(path, pattern) for pattern in IGNORE_PATTERNS)

    for path in ("original/consolidated.00.pth", "original/params.json", "original/a/b.pth"):
        assert ignored(path), path
    for path in ("model-00001-of-00004.safetensors", "config.json", "tokenizer.json"):
        assert not ignored(path), path
    # vLLM's own pattern alone would keep the top-level original/ files.
    assert not fnmatch("original/consolidated.00.pth", "original/**/*")


def test_download_args_map_the_command_line_to_snapshot_download() -> None:
    assert hub_download.download_args(["org/m", "abc", "/d"]) == {
        "repo_id": "org/m",
        "revision": "abc",
        "local_dir": "/d",
        "ignore_patterns": None,
    }
    with pytest.raises(SystemExit) as stop:
        hub_download.download_args(["org/m", "abc"])
    assert stop.value.code == (
        "usage: hub_download.py <repo> <revision> <dir> [<ignore pattern> ...]"
    )
