# ruff: noqa: E501  (exact diagnostics read best unwrapped)
"""The ``lazy_image_pull`` lever: which pools can pull serving images lazily (GKE image
streaming, SOCI parallel pull on EKS), what a new node's pull then costs, and every refusal
with its exact diagnostic."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from test_semantic import BASE, diagnostics, edit

from inferplane.blueprint.addons import resolve_addons
from inferplane.blueprint.derived import lazy_pull, scale_out
from inferplane.blueprint.derived.lazy_pull import (
    image_host,
    lazy_image_pull_s,
    lazy_pull_support,
    serving_image,
    streaming_problem,
    support_reason,
)
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.model import Environment
from inferplane.blueprint.resolution.resolve import resolve

VLLM = "vllm/vllm-openai:v0.33.0"
TRITON = "nvcr.io/nvidia/tritonserver:26.02-py3"
MIRRORED = "us-central1-docker.pkg.dev/acme/ngc/nvidia/tritonserver:26.02-py3"


@pytest.mark.parametrize(
    ("image", "host", "streams"),
    [
        (VLLM, "docker.io", True),
        ("docker.io/vllm/vllm-openai:v0.33.0", "docker.io", True),
        ("registry-1.docker.io/library/ubuntu:24.04", "registry-1.docker.io", True),
        (MIRRORED, "us-central1-docker.pkg.dev", True),
        (TRITON, "nvcr.io", False),
        ("ghcr.io/acme/server:1", "ghcr.io", False),
        ("gcr.io/google.com/cloudsdktool/google-cloud-cli:530.0.0-slim", "gcr.io", False),
        ("localhost:5000/server:1", "localhost:5000", False),
    ],
)
def test_gke_streams_artifact_registry_and_docker_hub_images_only(
    image: str, host: str, streams: bool
) -> None:
    assert image_host(image) == host
    assert (streaming_problem(image) is None) is streams


def test_an_ngc_image_says_what_the_platform_sets_up() -> None:
    assert streaming_problem(TRITON) == (
        "nvcr.io/nvidia/tritonserver:26.02-py3 is on NGC (nvcr.io), which GKE image streaming "
        "does not serve: the platform creates an Artifact Registry remote repository whose "
        "upstream is https://nvcr.io (with the NGC API key in Secret Manager) and the model "
        "names its image through it (image: <region>-docker.pkg.dev/<project>/<repo>/<path>, "
        "with base_release for Triton)"
    )


def test_support_per_cloud() -> None:
    assert support_reason("gcp", {"chat": VLLM, "rank": MIRRORED}, None) is None
    assert support_reason("gcp", {"chat": VLLM, "rank": TRITON}, None) == (
        f"model rank: {streaming_problem(TRITON)}"
    )
    # EKS: every registry; managed node groups run the newest AL2023 NVIDIA AMI.
    assert support_reason("aws", {"rank": TRITON}, None) is None
    assert support_reason("aws", {"rank": TRITON}, "al2023@v20250821") is None
    assert support_reason("aws", {"rank": TRITON}, "al2023@v20250819") == (
        "the cluster's Karpenter launches the GPU nodes from al2023@v20250819, whose nodeadm "
        "has no FastImagePull feature gate (SOCI parallel pull): pin al2023@v20250821 or later "
        "in cluster.addons.karpenter.ami_alias"
    )
    assert support_reason("kubernetes", {"chat": VLLM}, None) == (
        "a kubernetes environment's nodes exist already: no new node joins on scale-out, and "
        "inferplane configures no node's container runtime there"
    )


def test_the_serving_image_is_the_pods(reference_env: Callable[[str], Environment]) -> None:
    env = reference_env("staging")
    assert serving_image(env, env.models["chat"]) == "vllm/vllm-openai:v0.33.0"
    assert serving_image(env, env.models["ranker"]) == "nvcr.io/nvidia/tritonserver:26.02-py3"
    own = dataclasses.replace(env.models["ranker"], image=MIRRORED)
    assert serving_image(env, own) == MIRRORED


def test_pool_support_of_the_reference_blueprint(
    reference_env: Callable[[str], Environment],
) -> None:
    prod = reference_env("prod")
    # GKE: the l4 pool serves Triton models from NGC; h100 too.
    assert lazy_pull_support(prod, prod.pools["l4"]) == (
        f"model ranker: {streaming_problem(TRITON)}"
    )
    # EKS managed node groups: any image.
    staging = reference_env("staging")
    assert lazy_pull_support(staging, staging.pools["l4"]) is None
    old = dataclasses.replace(
        staging.cluster,
        addons=resolve_addons(
            {"karpenter": {"mode": "existing", "node_role": "r", "ami_alias": "al2023@v20250715"}}
        ),
    )
    on_old = dataclasses.replace(staging, cluster=old)
    assert "al2023@v20250715" in (lazy_pull_support(on_old, on_old.pools["l4"]) or "")


def test_nothing_chooses_the_lever_yet(reference_env: Callable[[str], Environment]) -> None:
    env = reference_env("staging")
    assert not any(lazy_pull.enabled(env, p) for p in env.pools.values())


def test_what_a_new_node_s_pull_costs_with_the_lever() -> None:
    c = scale_out.Constants()
    assert c.image_streaming_s == 20
    assert c.soci_parallel_pull_mb_per_s == 180
    assert lazy_image_pull_s("gcp", "vllm") == 20
    assert lazy_image_pull_s("gcp", "trtllm") == 20
    # 12 GB of vLLM at 180 MB/s, against 300 s at the whole-pull bound of 40 MB/s.
    assert lazy_image_pull_s("aws", "vllm") == pytest.approx(66.67, abs=0.01)
    assert c.image_gb("vllm") * 1000 / c.image_pull_mb_per_s == 300
    faster = scale_out.Constants.from_values({"soci_parallel_pull_mb_per_s": 400})
    assert lazy_image_pull_s("aws", "vllm", faster) == 30
    docs = scale_out.constant_docs()
    assert "20s, instead of 3m50s" in docs["image_streaming_s"]
    assert "59.813 s" in docs["soci_parallel_pull_mb_per_s"]


# --- validation ---------------------------------------------------------------------------
LEVER = "    replicas: {min: 2, max: 4}\n    scale_out: {levers: [standby, lazy_image_pull]}\n"
CHAT = "    pool: l4\n    replicas: {min: 2, max: 4}\n"


def chosen(text: str = BASE) -> str:
    """`chat` (vLLM, on pool l4 with the Triton model `rank`) names the lever."""
    return edit(CHAT, "    pool: l4\n" + LEVER, text)


def test_a_gke_pool_with_an_ngc_image_refuses_the_lever_at_the_lever() -> None:
    assert diagnostics(chosen()) == [
        "bp.yaml:29:35: error: models.chat.scale_out.levers[1]: lazy_image_pull cannot act on pool l4 in environment prod: model rank: nvcr.io/nvidia/tritonserver:26.02-py3 is on NGC (nvcr.io), which GKE image streaming does not serve: the platform creates an Artifact Registry remote repository whose upstream is https://nvcr.io (with the NGC API key in Secret Manager) and the model names its image through it (image: <region>-docker.pkg.dev/<project>/<repo>/<path>, with base_release for Triton); remove lazy_image_pull from levers (or use levers: auto, which chooses only what the pool supports), or make the pool's nodes and images fit as said"
    ]


def test_a_mirrored_image_or_another_pool_is_accepted() -> None:
    mirrored = edit(
        "    tensorrt: {}\n",
        f"    image: {MIRRORED}\n    base_release: '26.02'\n    tensorrt: {{}}\n",
        chosen(),
    )
    assert diagnostics(mirrored) == []
    alone = edit(
        "    source: rank/model.onnx\n    pool: l4\n",
        "    source: rank/model.onnx\n    pool: t4\n",
        chosen(),
    )
    alone = edit(
        "gpu_pools:\n",
        "gpu_pools:\n  t4:\n    gpu: nvidia-t4\n    nodes: {min: 1, max: 2}\n",
        alone,
    )
    assert [d for d in diagnostics(alone) if "lazy_image_pull" in d] == []


def test_an_old_karpenter_ami_refuses_the_lever_on_eks() -> None:
    text = edit(
        "cluster: {create: true}",
        "cluster:\n      existing: shared-eks\n      addons:\n        karpenter: {mode: existing, node_role: R, ami_alias: al2023@v20250813}\n",
        chosen(),
    )
    text = edit(
        "cluster: {existing: prod-gke}",
        "cluster: {existing: prod-gke}\n    overrides: {models: {rank: {image: "
        + MIRRORED
        + ", base_release: '26.02'}}}",
        text,
    )
    found = [d for d in diagnostics(text) if "lazy_image_pull" in d]
    assert found == [
        "bp.yaml:34:35: error: models.chat.scale_out.levers[1]: lazy_image_pull cannot act on pool l4 in environment stg: the cluster's Karpenter launches the GPU nodes from al2023@v20250813, whose nodeadm has no FastImagePull feature gate (SOCI parallel pull): pin al2023@v20250821 or later in cluster.addons.karpenter.ami_alias; remove lazy_image_pull from levers (or use levers: auto, which chooses only what the pool supports), or make the pool's nodes and images fit as said"
    ]


def test_the_kubernetes_environment_refuses_the_lever() -> None:
    text = edit(
        "  prod:\n",
        "  local:\n    cloud: kubernetes\n    region: local\n    zones: [zone-a]\n    model_store: s3://models/\n    model_store_endpoint: http://store.s.svc:9000\n    model_store_secrets: {reader: r}\n    cluster: {context: c}\n  prod:\n",
        chosen(),
    )
    found = [d for d in diagnostics(text) if "lazy_image_pull" in d and "environment local" in d]
    assert len(found) == 1
    assert "a kubernetes environment's nodes exist already" in found[0]


def test_levers_auto_is_never_refused() -> None:
    auto = edit(
        CHAT, "    pool: l4\n    replicas: {min: 2, max: 4}\n    scale_out: {levers: auto}\n"
    )
    assert diagnostics(auto) == []


def test_resolution_ignores_nothing_it_should_see() -> None:
    """The base blueprint resolves with pools that pull whole images."""
    env = resolve(load_text(BASE, "bp.yaml"), "prod")
    assert lazy_pull_support(env, env.pools["l4"]) == f"model rank: {streaming_problem(TRITON)}"
