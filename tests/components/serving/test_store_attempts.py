"""Retries of the Jobs that write to the model store, run for real: the generated container
scripts under ``sh``, against a stand-in ``aws``/``gcloud`` over a folder
(`fake_store_cli`) that, like GCS for ``roles/storage.objectCreator``, refuses to overwrite
an object, and that can kill an upload part-way, as a pod dies mid-upload.

A Job's pod is replaced after such a death (a new pod, a new UID); the new attempt must
publish, and the readers must read only a complete attempt."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from fake_store_cli import install
from serving_fixtures import DEPLOYMENT, JOB, args_of, container, k8s_object, serve, with_model
from test_weights import HF, staging_jobs

from inferplane.blueprint.model import Environment
from inferplane.components.serving.serving_pod import serving_pod_spec
from inferplane.components.serving.store.store_cli import ATTEMPT_ENV, ATTEMPT_MARKER
from inferplane.components.serving.vllm.weight_streaming import MODEL_CONFIG_FILE

SH = shutil.which("sh")
pytestmark = pytest.mark.skipif(
    SH is None and os.environ.get("CI") != "true", reason="needs a POSIX shell"
)
# The pod's absolute paths, moved under the test's folder.
POD_PATHS = ("/build", "/models", "/vllm-cache", "/config", "/etc/inferplane/weights")


class Pod:
    """One pod's local folders and the store it reaches."""

    def __init__(self, root: Path, store: Path, uid: str) -> None:
        self.root, self.store, self.uid = root, store, uid
        self.bin = root / "bin"
        self.bin.mkdir(parents=True)
        install(self.bin)
        for path in POD_PATHS:
            (root / path.lstrip("/")).mkdir(parents=True)

    def local(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def run(
        self, spec: dict[str, Any], *, no_overwrite: bool, writes_left: int | None = None
    ) -> subprocess.CompletedProcess[str]:
        """Runs container `spec`'s script as its pod would, with its environment."""
        assert spec["command"][:2] == ["/bin/sh", "-c"]
        script = spec["command"][2]
        for path in POD_PATHS:
            # Only where a path starts (after a quote, a space or "="), never mid-path.
            script = re.sub(rf'(?<=["\s=]){path}(?=["/\s]|$)', str(self.local(path)), script)
        env = {"PATH": f"{self.bin}:/usr/bin:/bin", "FAKE_STORE": str(self.store)}
        for entry in spec["env"]:
            if entry == ATTEMPT_ENV:
                env["POD_UID"] = self.uid
            elif "value" in entry:
                env[entry["name"]] = entry["value"]
        env["HOME"] = str(self.root)
        if no_overwrite:
            env["FAKE_NO_OVERWRITE"] = "1"
        if writes_left is not None:
            budget = self.root / "writes-left"
            budget.write_text(str(writes_left))
            env["FAKE_WRITES_LEFT"] = str(budget)
        assert SH is not None
        return subprocess.run(
            [SH, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False
        )


def objects(store: Path) -> dict[str, bytes]:
    return {str(p.relative_to(store)): p.read_bytes() for p in store.rglob("*") if p.is_file()}


def _snapshot(pod: Pod, content: str) -> None:
    snapshot = pod.local("/build/snapshot")
    for name in ("config.json", "model-00001.safetensors", "model-00002.safetensors"):
        (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
        (snapshot / name).write_text(f"{name}: {content}")


@pytest.mark.parametrize(("env_name", "no_overwrite"), [("prod", True), ("staging", False)])
def test_a_staging_job_retried_after_a_partial_upload_publishes_and_replicas_read_it(
    env_name: str, no_overwrite: bool, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    env: Environment = request.getfixturevalue(env_name)
    rec = serve(with_model(env, "chat", source=HF), ["chat"])
    (job,) = staging_jobs(rec)
    check, upload = container(job, "check-staged", init=True), container(job, "upload")
    store = tmp_path / "store"
    store.mkdir()

    # Attempt 1 dies after two of its three files.
    first = Pod(tmp_path / "pod-1", store, "0b1c2d3e-1111-4aaa-8bbb-000000000001")
    assert first.run(check, no_overwrite=no_overwrite).returncode == 0
    _snapshot(first, "attempt one")
    died = first.run(upload, no_overwrite=no_overwrite, writes_left=2)
    assert died.returncode == 137, died.stderr
    written = objects(store)
    assert len(written) == 2 and not [k for k in written if k.endswith(ATTEMPT_MARKER)]

    # Attempt 2, a new pod: not yet staged, so it downloads (other bytes) and uploads.
    second = Pod(tmp_path / "pod-2", store, "0b1c2d3e-2222-4aaa-8bbb-000000000002")
    assert second.run(check, no_overwrite=no_overwrite).returncode == 0
    assert not second.local("/build/already-staged").exists()
    _snapshot(second, "attempt two")
    done = second.run(upload, no_overwrite=no_overwrite)
    assert done.returncode == 0, done.stderr
    (marker,) = [k for k in objects(store) if k.endswith(ATTEMPT_MARKER)]
    assert objects(store)[marker] == b"attempt-0b1c2d3e-2222-4aaa-8bbb-000000000002\n"
    prefix = marker[: -len(ATTEMPT_MARKER)]
    assert sorted(k for k in objects(store) if k.startswith(f"{prefix}attempt-0b1c2d3e-2222")) == [
        f"{prefix}attempt-0b1c2d3e-2222-4aaa-8bbb-000000000002/{name}"
        for name in ("config.json", "model-00001.safetensors", "model-00002.safetensors")
    ]
    assert "staged copy published at " in done.stdout

    # A third pod finds it staged and skips everything.
    third = Pod(tmp_path / "pod-3", store, "0b1c2d3e-3333-4aaa-8bbb-000000000003")
    assert third.run(check, no_overwrite=no_overwrite).returncode == 0
    assert third.local("/build/already-staged").exists()

    # A replica copies the complete attempt, and only it.
    replica = Pod(tmp_path / "replica", store, "0b1c2d3e-4444-4aaa-8bbb-000000000004")
    fetch = container(k8s_object(rec, DEPLOYMENT, "chat"), "fetch-weights", init=True)
    fetched = replica.run(fetch, no_overwrite=no_overwrite)
    assert fetched.returncode == 0, fetched.stderr
    copied = replica.local("/models/chat")
    assert {p.name: p.read_text() for p in copied.iterdir()} == {
        name: f"{name}: attempt two"
        for name in ("config.json", "model-00001.safetensors", "model-00002.safetensors")
    }


def test_an_attempt_that_loses_the_race_to_the_marker_ends_well(
    prod: Environment, tmp_path: Path
) -> None:
    """Two pods finish one after the other without the skip file (the second started
    before the first published): the creator may not overwrite the marker, and the prefix
    is complete, so the second ends well and the marker still names the first."""
    rec = serve(with_model(prod, "chat", source=HF), ["chat"])
    (job,) = staging_jobs(rec)
    upload = container(job, "upload")
    store = tmp_path / "store"
    store.mkdir()
    for uid, content in (("aaaa-1", "one"), ("bbbb-2", "two")):
        pod = Pod(tmp_path / uid, store, uid)
        _snapshot(pod, content)
        done = pod.run(upload, no_overwrite=True)
        assert done.returncode == 0, done.stderr
    assert "403" in done.stderr
    assert "staged copy already published at $STAGED_URI" not in done.stdout
    assert "staged copy already published at gs://" in done.stdout
    (marker,) = [k for k in objects(store) if k.endswith(ATTEMPT_MARKER)]
    assert objects(store)[marker] == b"attempt-aaaa-1\n"


def test_a_replica_refuses_a_prefix_without_a_complete_attempt(
    prod: Environment, tmp_path: Path
) -> None:
    rec = serve(with_model(prod, "chat", source=HF), ["chat"])
    fetch = container(k8s_object(rec, DEPLOYMENT, "chat"), "fetch-weights", init=True)
    store = tmp_path / "store"
    store.mkdir()
    replica = Pod(tmp_path / "replica", store, "r")
    uri = next(e["value"] for e in fetch["env"] if e["name"] == "MODEL_URI")
    missing = replica.run(fetch, no_overwrite=True)
    assert missing.returncode == 1
    assert missing.stderr.strip().endswith(
        f"error: no complete staged copy under {uri} (no {ATTEMPT_MARKER})"
    )
    # A marker naming anything but an attempt folder is not followed.
    marker = store / uri.removeprefix("gs://") / ATTEMPT_MARKER
    marker.parent.mkdir(parents=True)
    for content in ("../../other-blueprint\n", "attempt-../x\n", "attempt-\n"):
        marker.write_text(content)
        refused = replica.run(fetch, no_overwrite=True)
        assert refused.returncode == 1, content
        assert (
            refused.stderr == f"error: the marker {ATTEMPT_MARKER} under {uri} names no attempt\n"
        )


def test_an_engine_build_retried_after_its_upload_died_publishes_and_triton_reads_it(
    prod: Environment, tmp_path: Path
) -> None:
    rec = serve(prod, ["ranker"])
    (job,) = [j for j in rec.of_type(JOB) if j.get("metadata", "name").startswith("ranker-engine-")]
    upload = container(job, "upload-engine")
    store = tmp_path / "store"
    store.mkdir()
    first = Pod(tmp_path / "pod-1", store, "1111")
    first.local("/build/model.plan").write_text("engine one")
    assert first.run(upload, no_overwrite=True, writes_left=0).returncode == 137
    second = Pod(tmp_path / "pod-2", store, "2222")
    second.local("/build/model.plan").write_text("engine two")
    done = second.run(upload, no_overwrite=True)
    assert done.returncode == 0, done.stderr
    triton = Pod(tmp_path / "replica", store, "r")
    triton.local("/config/config.pbtxt").write_text("name: ranker")
    fetch = container(k8s_object(rec, DEPLOYMENT, "ranker"), "fetch-model", init=True)
    fetched = triton.run(fetch, no_overwrite=True)
    assert fetched.returncode == 0, fetched.stderr
    assert triton.local("/models/ranker/1/model.plan").read_text() == "engine two"


def test_a_compile_cache_retried_after_a_partial_upload_publishes_and_replicas_read_it(
    prod: Environment, tmp_path: Path
) -> None:
    rec = serve(prod, ["chat"])
    (job,) = [j for j in rec.of_type(JOB) if j.get("metadata", "name").startswith("chat-compile-")]
    upload = container(job, "upload")
    fetch = container(k8s_object(rec, DEPLOYMENT, "chat"), "fetch-weights", init=True)
    store = tmp_path / "store"
    store.mkdir()
    # No cache staged yet: the replica copies the weights and lets vLLM compile.
    early = Pod(tmp_path / "early", store, "e")
    weights = next(e["value"] for e in fetch["env"] if e["name"] == "MODEL_URI")
    (store / weights.removeprefix("gs://") / "config.json").parent.mkdir(parents=True)
    (store / weights.removeprefix("gs://") / "config.json").write_text("{}")
    skipped = early.run(fetch, no_overwrite=True)
    assert skipped.returncode == 0, skipped.stderr
    assert "no staged torch.compile cache at" in skipped.stdout
    for uid, writes, status in (("1111", 1, 137), ("2222", None, 0)):
        pod = Pod(tmp_path / uid, store, uid)
        cache = pod.local("/vllm-cache/torch_compile_cache/abc")
        cache.mkdir(parents=True)
        (cache / "a.bin").write_text(f"graph a {uid}")
        (cache / "b.bin").write_text(f"graph b {uid}")
        assert pod.run(upload, no_overwrite=True, writes_left=writes).returncode == status
    replica = Pod(tmp_path / "replica", store, "r")
    fetched = replica.run(fetch, no_overwrite=True)
    assert fetched.returncode == 0, fetched.stderr
    local = replica.local("/vllm-cache/torch_compile_cache/abc")
    assert {p.name: p.read_text() for p in local.iterdir()} == {
        "a.bin": "graph a 2222",
        "b.bin": "graph b 2222",
    }


@pytest.mark.parametrize(("env_name", "no_overwrite"), [("prod", True), ("staging", False)])
def test_a_streaming_replica_hands_vllm_the_published_attempt(
    env_name: str, no_overwrite: bool, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """A staged source streams from the folder its marker names, which only the pod can
    read: the init container writes it as vLLM's ``--config`` file and copies no weights."""
    env = with_model(request.getfixturevalue(env_name), "chat", source=HF)
    (job,) = staging_jobs(serve(env, ["chat"]))
    store = tmp_path / "store"
    store.mkdir()
    stager = Pod(tmp_path / "stager", store, "0b1c2d3e-2222-4aaa-8bbb-000000000002")
    _snapshot(stager, "published")
    assert stager.run(container(job, "upload"), no_overwrite=no_overwrite).returncode == 0

    serving_env, model = args_of(env, "chat")
    model = dataclasses.replace(model, stream_weights=True)
    spec = serving_pod_spec(serving_env, model, model.source.uri, with_secrets=False)
    (fetch,) = spec["initContainers"]
    replica = Pod(tmp_path / "replica", store, "r")
    done = replica.run(fetch, no_overwrite=no_overwrite)
    assert done.returncode == 0, done.stderr
    uri = next(e["value"] for e in fetch["env"] if e["name"] == "MODEL_URI")
    attempt = f"{uri}attempt-0b1c2d3e-2222-4aaa-8bbb-000000000002/"
    assert replica.local(MODEL_CONFIG_FILE).read_text() == f'model: "{attempt}"\n'
    assert not [p for p in replica.local("/models").rglob("*") if p.is_file()]
