# ruff: noqa: E501  (exact diagnostics read best unwrapped)
"""The ``lazy_image_pull`` lever: which models and pools can pull serving images lazily (GKE
image streaming, SOCI parallel pull on EKS), what a new node's pull then costs, what the
stack builds, and every refusal with its exact diagnostic."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from test_semantic import BASE, diagnostics, edit

from inferplane.blueprint.addons import resolve_addons
from inferplane.blueprint.capacity import prices
from inferplane.blueprint.derived import lazy_pull, lever_options, levers, scale_out
from inferplane.blueprint.derived.lazy_pull import (
    image_host,
    lazy_pull_support,
    lever_problem,
    node_problem,
    serving_image,
    streaming_problem,
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


KARPENTER_OLD = "al2023@v20250819"


def test_where_the_lever_can_act() -> None:
    assert lever_problem("gcp", VLLM) is None
    assert lever_problem("gcp", MIRRORED) is None
    assert lever_problem("gcp", TRITON) == streaming_problem(TRITON)
    # EKS: SOCI parallel pull serves any registry; the budget counts the whole image at its
    # rate.
    assert node_problem("aws", None) is None
    assert node_problem("aws", "al2023@v20250821") is None
    assert lever_problem("aws", TRITON) is None
    assert node_problem("aws", KARPENTER_OLD) == (
        "the cluster's Karpenter launches the GPU nodes from al2023@v20250819, whose nodeadm "
        "has no FastImagePull feature gate (SOCI parallel pull): pin al2023@v20250821 or later "
        "in cluster.addons.karpenter.ami_alias"
    )
    assert lever_problem("aws", VLLM, KARPENTER_OLD) == node_problem("aws", KARPENTER_OLD)
    assert lever_problem("kubernetes", VLLM) == (
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
    # GKE: l4 serves vLLM (streams) beside Triton (pulled whole on the same nodes); h100
    # serves Triton from NGC only.
    assert lazy_pull_support(prod, prod.pools["l4"]) is None
    assert lazy_pull_support(prod, prod.pools["h100"]) == (
        f"model nightly-embed: {streaming_problem(TRITON)}"
    )
    staging = reference_env("staging")
    assert lazy_pull_support(staging, staging.pools["l4"]) is None
    old = dataclasses.replace(
        staging.cluster,
        addons=resolve_addons(
            {"karpenter": {"mode": "existing", "node_role": "r", "ami_alias": KARPENTER_OLD}}
        ),
    )
    on_old = dataclasses.replace(staging, cluster=old)
    assert lazy_pull_support(on_old, on_old.pools["l4"]) == node_problem("aws", KARPENTER_OLD)


def test_no_bundled_blueprint_pulls_lazily(reference_env: Callable[[str], Environment]) -> None:
    for name in ("staging", "prod", "local"):
        env = reference_env(name)
        assert not any(lazy_pull.enabled(env, p) for p in env.pools.values())


def test_what_a_new_node_s_pull_costs_with_the_lever() -> None:
    c = scale_out.Constants()
    assert c.lazy_image_pull_s == 20
    assert c.soci_parallel_pull_mb_per_s == 180
    assert c.lazy_pull_s("gcp", "vllm") == 20
    assert c.lazy_pull_s("gcp", "trtllm") == 20
    # 12 GB of vLLM at 180 MB/s, against 300 s at the whole-pull bound of 40 MB/s.
    assert c.lazy_pull_s("aws", "vllm") == pytest.approx(66.67, abs=0.01)
    assert c.image_gb("vllm") * 1000 / c.image_pull_mb_per_s == 300
    faster = scale_out.Constants.from_values({"soci_parallel_pull_mb_per_s": 400})
    assert faster.lazy_pull_s("aws", "vllm") == 30
    docs = scale_out.constant_docs()
    assert "20s, instead of 3m50s" in docs["lazy_image_pull_s"]
    assert "59.813 s" in docs["soci_parallel_pull_mb_per_s"]


# --- validation ---------------------------------------------------------------------------
def listing(model: str, levers: str, text: str = BASE) -> str:
    """BASE with `model` (``chat``: vLLM; ``rank``: Triton from NGC; both on pool l4)
    listing `levers`."""
    if model == "chat":
        old = "    pool: l4\n    replicas: {min: 2, max: 4}\n"
    else:
        old = "    pool: l4\n    tensorrt: {}\n"
    return edit(old, old + f"    scale_out: {{levers: {levers}}}\n", text)


def lever_errors(text: str) -> list[str]:
    return [d for d in diagnostics(text) if "lazy_image_pull" in d]


def test_vllm_from_docker_hub_pulls_lazily_on_gke_and_eks() -> None:
    assert lever_errors(listing("chat", "[standby, lazy_image_pull]")) == []


def test_an_ngc_image_refuses_the_lever_on_gke_at_the_lever() -> None:
    found = [d for d in lever_errors(listing("rank", "[lazy_image_pull]")) if "'prod'" in d]
    assert found == [
        "bp.yaml:34:26: error: models.rank.scale_out.levers[0]: lever lazy_image_pull cannot serve model 'rank' in environment 'prod' (gcp): nvcr.io/nvidia/tritonserver:26.02-py3 is on NGC (nvcr.io), which GKE image streaming does not serve: the platform creates an Artifact Registry remote repository whose upstream is https://nvcr.io (with the NGC API key in Secret Manager) and the model names its image through it (image: <region>-docker.pkg.dev/<project>/<repo>/<path>, with base_release for Triton); remove it (levers: []), or write levers: auto, which chooses among the levers that can"
    ]


def test_an_image_mirrored_through_artifact_registry_streams() -> None:
    text = listing("rank", "[lazy_image_pull]")
    text = edit(
        "    tensorrt: {}\n",
        f"    image: {MIRRORED}\n    base_release: '26.02'\n    tensorrt: {{}}\n",
        text,
    )
    assert [d for d in lever_errors(text) if "'prod'" in d] == []


def test_an_old_karpenter_ami_refuses_the_lever_on_eks() -> None:
    text = edit(
        "cluster: {create: true}",
        "cluster:\n      existing: shared-eks\n      addons:\n        karpenter: {mode: existing, node_role: R, ami_alias: al2023@v20250813}\n",
        listing("chat", "[lazy_image_pull]"),
    )
    (found,) = lever_errors(text)
    assert (
        "in environment 'stg' (aws): the cluster's Karpenter launches the GPU nodes from al2023@v20250813, whose nodeadm has no FastImagePull feature gate"
        in found
    )


def test_the_kubernetes_environment_refuses_the_lever() -> None:
    text = edit(
        "  prod:\n",
        "  local:\n    cloud: kubernetes\n    region: local\n    zones: [zone-a]\n    model_store: s3://models/\n    model_store_endpoint: http://store.s.svc:9000\n    model_store_secrets: {reader: r}\n    cluster: {context: c}\n  prod:\n",
        listing("chat", "[lazy_image_pull]"),
    )
    found = [d for d in lever_errors(text) if "'local'" in d]
    assert len(found) == 1
    assert "(kubernetes): a kubernetes environment's nodes exist already" in found[0]


def test_levers_auto_is_never_refused() -> None:
    assert diagnostics(listing("chat", "auto")) == []


def test_auto_on_gke_takes_the_lazy_pull_where_a_new_node_is_waited_for() -> None:
    """A platform's 700 s bound: a new node's whole pull misses it (540 s node + 300 s pull +
    the rest), a streamed one (20 s) meets it, for free; the stack then streams on the pool.
    (A model's own budget_s of 700 would not do: it may only tighten the platform's bound.)"""
    text = listing("chat", "auto")
    platform = scale_out.Platform(bound_s=700)
    env = resolve(load_text(text, "bp.yaml"), "prod", platform)
    chat = env.models["chat"]
    assert chat.scale_out.levers == ("compile_cache", "lazy_image_pull")
    found = scale_out.budgets(env)["chat"]
    assert found.as_json()["parts"]["image_pull"] == 20
    assert found.as_json()["levers"]["image_pull"] == "lazy_image_pull"
    assert lazy_pull.enabled(env, env.pools["l4"])
    # On EKS (stg, us-east-1) the lever brings a faster gp3 root volume to every GPU node:
    # $400/month on the pool's 4 floor nodes, less than the spare GPU's whole g6.2xlarge
    # per zone ($1,427.30/month), and SOCI parallel pull meets the bound too: auto takes it.
    stg = resolve(load_text(text, "bp.yaml"), "stg", platform)
    options = stg.models["chat"].scale_out.options
    assert options is not None
    assert options["lazy_image_pull"] == 400.0
    assert options["standby"] == round(2 * 0.9776 * 730, 2) == 1427.3  # g6.2xlarge, us-east-1
    assert stg.models["chat"].scale_out.levers == ("compile_cache", "lazy_image_pull")
    assert scale_out.budgets(stg)["chat"].total_s <= 700
    assert lazy_pull.enabled(stg, stg.pools["l4"])
    assert stg.pools["l4"].spare_gpus == 0
    found = levers.cheapest(scale_out.inputs_of(stg, stg.models["chat"]), 700, platform.constants)
    assert found is not None
    assert found.described == "compile_cache (free), lazy_image_pull (+$400/month)"


def _stg(region: str | None = None) -> Environment:
    env = resolve(load_text(listing("chat", "[lazy_image_pull]"), "bp.yaml"), "stg")
    return env if region is None else dataclasses.replace(env, region=region)


def test_the_eks_lazy_pull_is_priced_from_the_regions_gp3_row() -> None:
    """stg's l4 pool keeps nodes.min 2 per zone in 2 zones: 4 GPU nodes at the floor, each
    with a root volume of 1,000 MiB/s and 16,000 IOPS, the same size as without the lever.
    us-east-1 (`prices.GP3_VOLUMES`): (1,000 - 125) MiB/s x $0.04 = $35 and
    (16,000 - 3,000) IOPS x $0.005 = $65, $100 a node, $400 a month. eu-central-1:
    875 x $0.048 = $42 and 13,000 x $0.006 = $78, $120 a node, $480 a month."""
    env = _stg()
    chat = env.models["chat"]
    assert env.region == "us-east-1"
    assert lever_options.floor_nodes_per_zone(env, chat, 0) * len(env.pools["l4"].zones) == 4
    assert lever_options.lazy_pull_usd_month(env, chat) == 400.0
    assert lever_options.options(env, chat)["lazy_image_pull"] == 400.0
    assert lever_options.lazy_pull_unpriced(env) is None
    frankfurt = _stg("eu-central-1")
    assert lever_options.lazy_pull_usd_month(frankfurt, frankfurt.models["chat"]) == 480.0
    # Every row names its page and the date that page states.
    for row in prices.GP3_VOLUMES.values():
        assert row.source.startswith("https://")
        assert row.read_on[:2] == "20"
        assert row.read_on in row.basis


def test_a_pool_already_pulling_lazily_charges_a_second_model_nothing() -> None:
    """The volume is the pool's: with chat's lever in effect on l4, every l4 node has it, so
    another model on l4 adds no dollar by asking for it too."""
    env = _stg()
    chat = env.models["chat"]
    assert "lazy_image_pull" in chat.scale_out.levers
    other = dataclasses.replace(
        chat, name="chat-2", scale_out=dataclasses.replace(chat.scale_out, levers=())
    )
    env = dataclasses.replace(env, models={**env.models, "chat-2": other})
    assert lever_options.lazy_pull_usd_month(env, other) == 0.0
    # chat's own lever is not another model's: it pays for every floor node of the pool,
    # which chat-2's warm replicas now raise to 6 ($100 each in us-east-1).
    floor = lever_options.floor_nodes_per_zone(env, chat, 0) * len(env.pools["l4"].zones)
    assert floor == 6
    assert lever_options.lazy_pull_usd_month(env, chat) == 100.0 * floor


def test_a_region_without_a_gp3_row_leaves_the_lazy_pull_unpriced() -> None:
    env = _stg("eu-west-1")
    chat = env.models["chat"]
    assert prices.gp3_volume("eu-west-1") is None
    assert lever_options.lazy_pull_usd_month(env, chat) is None
    assert lever_options.options(env, chat)["lazy_image_pull"] is None
    assert lever_options.lazy_pull_unpriced(env) == (
        "the price table has no gp3 row for eu-west-1: AWS's EBS pricing page renders its "
        "regional rates from dynamic tokens that no stored copy resolves, and no page read "
        "states gp3's charges in eu-west-1"
    )
    # GKE image streaming is free: nothing to price, no reason.
    prod = resolve(load_text(listing("chat", "[lazy_image_pull]"), "bp.yaml"), "prod")
    assert lever_options.options(prod, prod.models["chat"])["lazy_image_pull"] == 0.0
    assert lever_options.lazy_pull_unpriced(prod) is None
