"""Environment resolution of the bundled reference blueprint."""

from __future__ import annotations

from pathlib import Path

import pytest

from inferplane.blueprint.errors import BlueprintError
from inferplane.blueprint.model import ResponseCache, Signal, Wake
from inferplane.blueprint.resolution.resolve import load_blueprint, resolve, resolve_file
from inferplane.blueprint.resolution.resolve_model import parse_source

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "blueprints" / "support-assistant.yaml"


@pytest.fixture(scope="session")
def envs() -> dict:
    doc, names = load_blueprint(REFERENCE)
    assert names == ("staging", "prod", "local")
    return {name: resolve(doc, name) for name in names}


def line_of(text: str, occurrence: int = 1) -> int:
    lines = REFERENCE.read_text().splitlines()
    hits = [i + 1 for i, line in enumerate(lines) if text in line]
    return hits[occurrence - 1]


def test_staging_overrides_are_merged_and_located(envs: dict) -> None:
    staging = envs["staging"]
    chat = staging.models["chat"]
    assert (chat.replicas.min, chat.replicas.max) == (1, 2)
    loc = staging.locate(("models", "chat", "replicas", "min"))
    assert loc.line == line_of("replicas: {min: 1, max: 2}   # min 0")
    assert staging.source_path(("models", "chat", "replicas", "min")) == (
        "environments",
        "staging",
        "overrides",
        "models",
        "chat",
        "replicas",
        "min",
    )
    # untouched fields keep the base value and location
    assert chat.precision == "fp8"
    assert staging.locate(("models", "chat", "precision")).line == line_of("precision: fp8")
    assert staging.pools["l4"].nodes.min == 4
    assert staging.pools["l4"].spare_gpus == 1


def test_prod_keeps_base_values(envs: dict) -> None:
    prod = envs["prod"]
    assert prod.models["chat"].replicas.min == 2
    assert prod.locate(("models", "chat", "replicas", "min")).line == line_of(
        "replicas: {min: 2, max: 8}"
    )
    assert prod.pools["h100"].zones == ("us-central1-a",)
    assert prod.pools["l4"].zones == ("us-central1-a", "us-central1-b")


def test_catalog_and_defaults(envs: dict) -> None:
    staging, prod = envs["staging"], envs["prod"]
    assert staging.pools["l4"].instance_type == "g6.2xlarge"
    assert prod.pools["l4"].instance_type == "g2-standard-8"
    assert prod.pools["h100"].instance_type == "a3-highgpu-8g"
    # MIG on AWS only (staging's overrides): GKE's autoscaler cannot scale MIG pools.
    assert prod.pools["h100"].gpu_resource == "nvidia.com/gpu"
    assert prod.pools["h100"].mig_config is None
    h100 = staging.pools["h100"]
    assert h100.instance_type == "p5.48xlarge"
    assert h100.gpu_resource == "nvidia.com/mig-3g.40gb"
    assert h100.slices_per_gpu == 2 and h100.gpu_units_per_node == 16
    assert h100.mig_config == "all-3g.40gb"
    assert staging.pools["l4"].gpu_resource == "nvidia.com/gpu"
    assert staging.load_balancer.scheme == "internal"
    assert staging.versions.triton == "26.02"
    assert staging.cluster.create and staging.cluster.kubernetes_version == "1.33"
    assert prod.cluster.existing == "prod-gke" and prod.cluster.location == "us-central1"
    ranker = prod.models["ranker"]
    assert ranker.expose == "grpc"
    assert ranker.autoscaling.signals == (Signal("p95_latency_ms", 20.0),)
    embed = prod.models["nightly-embed"]
    assert embed.wake == Wake(schedule="0 2 * * *", duration_s=3 * 3600, timezone="UTC")
    assert prod.models["chat"].wake is None
    assert ranker.batching is not None and ranker.batching.max_queue_delay_us == 2000
    assert ranker.tensorrt is not None and ranker.tensorrt.inputs[0].max == (32, 512)


def test_relative_sources_resolve_under_the_store(envs: dict) -> None:
    assert (
        envs["staging"].models["ranker"].source.uri == "s3://acme-models-use1/reranker/model.onnx"
    )
    src = envs["prod"].models["ranker"].source
    assert (src.scheme, src.bucket, src.key) == ("gs", "acme-models-usc1", "reranker/model.onnx")


def test_response_cache_backend_defaults_to_local(envs: dict) -> None:
    cache = envs["prod"].models["ranker"].response_cache
    assert (cache.enabled, cache.backend, cache.redis) == (True, "local", False)
    toxicity = resolve_file(ROOT / "blueprints" / "llm-serving.yaml", "prod").models["toxicity"]
    assert toxicity.response_cache == ResponseCache(enabled=True, size_mb=512, backend="redis")
    assert toxicity.response_cache.redis


def test_parse_hf_source() -> None:
    src = parse_source("hf://meta-llama/Llama-3.1-8B@abc123", "s3://b/")
    assert (src.scheme, src.hf_repo, src.hf_revision) == ("hf", "meta-llama/Llama-3.1-8B", "abc123")


def test_default_replicas_are_one_warm_per_zone(tmp_path: Path) -> None:
    text = REFERENCE.read_text().replace(
        "    replicas: {min: 2, max: 8} # min > 0 keeps replicas warm\n", ""
    )
    path = tmp_path / "bp.yaml"
    path.write_text(text)
    prod = resolve_file(path, "prod")
    assert (prod.models["chat"].replicas.min, prod.models["chat"].replicas.max) == (2, 4)


def test_the_model_is_immutable(envs: dict) -> None:
    with pytest.raises(AttributeError):
        envs["prod"].models["chat"].gpus = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        envs["prod"].models["other"] = None  # type: ignore[index]


def test_unknown_environment_is_a_located_error() -> None:
    with pytest.raises(BlueprintError) as info:
        resolve_file(REFERENCE, "qa")
    (diag,) = info.value.diagnostics
    assert diag.format() == (
        f"{REFERENCE}:{line_of('environments:')}:1: error: environments: no environment "
        "named 'qa'; use one of: staging, prod, local"
    )


def test_every_bundled_blueprint_validates() -> None:
    for path in sorted((ROOT / "blueprints").glob("*.yaml")):
        load_blueprint(path)


def test_an_override_replaces_a_secret_reference_whole(tmp_path: Path) -> None:
    line = "replicas: {min: 1, max: 2}   # min 0 (cold starts) would need a waiver: see below\n"
    text = REFERENCE.read_text()
    assert line in text
    text = text.replace(
        line, line + "          secrets:\n            hf_token: {from_pulumi_config: hfToken}\n"
    )
    path = tmp_path / "bp.yaml"
    path.write_text(text)
    (secret,) = resolve_file(path, "staging").models["chat"].secrets
    assert (secret.from_env, secret.from_pulumi_config) == (None, "hfToken")
    (base,) = resolve_file(path, "prod").models["chat"].secrets
    assert (base.from_env, base.from_pulumi_config) == ("HF_TOKEN", None)
