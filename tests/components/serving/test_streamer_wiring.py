"""The streaming wiring, run on CPU: the Run:ai model streamer (the wheel vLLM's
``--load-format runai_streamer`` uses) streams a small safetensors checkpoint from a local
S3-compatible server with the arguments and variables inferplane generates for a
kubernetes environment's vLLM container, and the credentials, the endpoint and the
concurrency reach it (`scripts/dev/streamer-check`, in ``.venv-streamer``:
`scripts/dev/setup-streamer-venv.sh`)."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from serving_fixtures import args_of

from inferplane.blueprint import naming
from inferplane.blueprint.model import Environment
from inferplane.components.serving.serving_pod import serving_pod_spec
from inferplane.components.serving.vllm.weight_streaming import CONCURRENCY

ROOT = Path(__file__).resolve().parents[3]
CHECK = ROOT / "scripts" / "dev" / "streamer-check"
FACTS = ROOT / "inferplane" / "facts" / "vllm"
pytestmark = pytest.mark.needs_tools

READER_KEY = "READERKEY0123456789"


def streamer_python() -> Path:
    python = Path(os.environ.get("STREAMER_VENV", ROOT / ".venv-streamer")) / "bin" / "python"
    if not python.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("the streamer environment is required under CI (.ci/run sets it up)")
        pytest.skip("streamer environment missing: run scripts/dev/setup-streamer-venv.sh")
    return python


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def streamed(
    reference_env: Callable[[str], Environment], tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the generated vLLM container, streamer-check's report) for the local environment's
    chat model with its store endpoint on loopback."""
    python = streamer_python()
    serving_env, model = args_of(reference_env("local"), "chat")
    endpoint = f"http://127.0.0.1:{free_port()}"
    serving_env = dataclasses.replace(serving_env, store_endpoint=endpoint)
    model = dataclasses.replace(model, stream_weights=True)
    spec = serving_pod_spec(serving_env, model, model.source.uri, with_secrets=False)
    (vllm,) = [c for c in spec["containers"] if c["name"] == "vllm"]
    release = serving_env.vllm_version
    facts = json.loads((FACTS / release / "weight_streaming.json").read_text())
    secret = serving_env.store_secrets[naming.MODEL_READER_SA]
    check = {
        "args": vllm["args"],
        "env": vllm["env"],
        "secrets": {
            secret: {"AWS_ACCESS_KEY_ID": READER_KEY, "AWS_SECRET_ACCESS_KEY": "reader-secret"}
        },
        "loader_sets": facts["loader_sets"],
        "model_files": facts["pulled"]["model_files"],
        "tensor_mib": 64,
    }
    path = tmp_path_factory.mktemp("streamer") / "spec.json"
    path.write_text(json.dumps(check))
    done = subprocess.run(
        [str(python), str(CHECK), str(path)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-4000:]
    report: dict[str, Any] = json.loads(done.stdout)
    print(
        f"streamed {report['bytes']} bytes in {report['seconds']:.2f} s "
        f"({report['mb_per_s']:.0f} MB/s), concurrency {report['streamer_concurrency']}, "
        f"{len(report['clients_created'])} clients"
    )
    return vllm, report


def test_the_tensors_arrive_whole(streamed) -> None:
    vllm, report = streamed
    assert report["uri"] == vllm["args"][0]
    assert report["tensors_match"] and all(report["tensors_match"].values())
    assert report["pulled"] == ["config.json", "tokenizer.json"]


def test_every_request_carries_the_readers_key_to_the_endpoint(streamed) -> None:
    vllm, report = streamed
    endpoint = next(e["value"] for e in vllm["env"] if e["name"] == "AWS_ENDPOINT_URL")
    requests = report["requests"]
    assert len(requests) > 4
    assert {r["access_key"] for r in requests} == {READER_KEY}
    assert {r["host"] for r in requests} == {endpoint.removeprefix("http://")}
    bucket = report["uri"].removeprefix("s3://").split("/")[0]
    # Path-style addressing (RUNAI_STREAMER_S3_USE_VIRTUAL_ADDRESSING=0): the bucket in the path.
    assert all(r["path"].startswith(f"/{bucket}") for r in requests)
    assert report["virtual_addressing"] == ["0"]
    ranged = [r for r in requests if r["range"]]
    assert len(ranged) >= 4 and all(r["method"] == "GET" for r in ranged)


def test_the_concurrency_generated_is_the_streamers(streamed) -> None:
    vllm, report = streamed
    extra = json.loads(vllm["args"][vllm["args"].index("--model-loader-extra-config") + 1])
    assert extra["concurrency"] == CONCURRENCY
    assert report["loader_env"]["RUNAI_STREAMER_CONCURRENCY"] == str(CONCURRENCY)
    assert report["streamer_concurrency"] and all(
        c == [CONCURRENCY, CONCURRENCY] for c in report["streamer_concurrency"]
    )
    endpoint = report["loader_env"]["AWS_ENDPOINT_URL"]
    clients = report["clients_created"]
    assert 1 < len(clients) <= CONCURRENCY and set(clients) == {endpoint}
