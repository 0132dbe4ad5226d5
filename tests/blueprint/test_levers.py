"""Scale-out levers: the cheapest set that meets a model's bound, what `levers: auto` puts in
effect, what a listed lever that cannot serve is told, and what the plan and the rule say."""

from __future__ import annotations

import dataclasses
import math
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from inferplane.blueprint import llm_catalog
from inferplane.blueprint.capacity import prices
from inferplane.blueprint.derived import facts as facts_module
from inferplane.blueprint.derived import lever_options, levers, scale_out
from inferplane.blueprint.errors import BlueprintError
from inferplane.blueprint.model import Environment
from inferplane.blueprint.resolution.resolve import resolve_file
from inferplane.policies.rules import rule
from inferplane.policies.stack import Stack

ROOT = Path(__file__).resolve().parents[2]
ALL_FREE = {"compile_cache": 0.0, "stream_weights": 0.0, "lazy_image_pull": 0.0}


def chat_8b_without_spare(env: Environment) -> scale_out.ScaleOutInputs:
    """The reference chat as a bf16 Llama 3.1 8B on an L4 pool that keeps no spare GPU and
    no idle one: a scale-out waits for a node (998 s, `test_scale_out`)."""
    chat = dataclasses.replace(
        env.models["chat"],
        llm=llm_catalog.lookup("meta-llama/Llama-3.1-8B-Instruct"),
        precision="bf16",
    )
    inputs = scale_out.inputs_of(env, chat)
    return dataclasses.replace(inputs, spare_units=0, idle_units=0)


def test_the_cheapest_set_that_meets_120_s_streams_the_weights_and_keeps_a_spare_gpu(
    reference_env: Callable[[str], Environment],
) -> None:
    inputs = dataclasses.replace(
        chat_8b_without_spare(reference_env("prod")), options={**ALL_FREE, "standby": 1234.5}
    )
    assert scale_out.budget(inputs).total_s == 998
    found = levers.cheapest(inputs, 120)
    assert found is not None
    # The lazy pull is free but changes nothing once no node is added: it is left out.
    assert found.levers == ("compile_cache", "stream_weights", "standby")
    # 5 + 15 + 0 + 0 + ceil(16.06 GB / 0.39 GB/s) = 42 + (60 - 16) + 10 = 116 s
    assert found.budget.as_json()["parts"] == {
        "prometheus_scrape": 5,
        "hpa_reaction": 15,
        "node": 0,
        "image_pull": 0,
        "weights": 42,
        "engine_load": 44,
        "readiness": 10,
    }
    assert found.budget.total_s == 116
    assert found.usd_month == 1234.5
    assert found.described == (
        "compile_cache (free), stream_weights (free), standby (+$1,234/month)"
    )
    assert found.budget.as_json()["levers"] == {
        "node": "standby",
        "image_pull": "standby",
        "weights": "stream_weights",
        "engine_load": "compile_cache",
    }


def test_free_levers_come_first_when_they_meet_the_bound(
    reference_env: Callable[[str], Environment],
) -> None:
    inputs = dataclasses.replace(
        chat_8b_without_spare(reference_env("prod")), options={**ALL_FREE, "standby": 1.0}
    )
    found = levers.cheapest(inputs, 700)
    assert found is not None
    # node 540 + a 20 s lazy pull + 42 s streamed + 44 + 30 of loops = 676 s: no spare GPU.
    assert (found.levers, found.budget.total_s, found.usd_month) == (
        ("compile_cache", "stream_weights", "lazy_image_pull"),
        676,
        0.0,
    )


def test_no_set_is_named_when_even_every_lever_misses_the_bound(
    reference_env: Callable[[str], Environment],
) -> None:
    inputs = dataclasses.replace(
        chat_8b_without_spare(reference_env("prod")), options={**ALL_FREE, "standby": 1.0}
    )
    assert levers.cheapest(inputs, 115) is None
    assert levers.cheapest(inputs, 116) is not None


def test_a_spare_gpu_whose_price_is_missing_is_dearer_than_any_priced_set(
    reference_env: Callable[[str], Environment],
) -> None:
    inputs = dataclasses.replace(
        chat_8b_without_spare(reference_env("prod")),
        options={"compile_cache": 0.0, "standby": None},
    )
    found = levers.cheapest(inputs, 200)
    assert found is not None
    assert (found.levers, found.usd_month) == (("compile_cache", "standby"), None)
    assert "standby (its node price is missing from the price table)" in found.described


def _blueprint(tmp_path: Path, scale_out_yaml: str, spare: int = 0) -> Path:
    """chat-minimal with the model's scale_out and the pool's spare GPUs."""
    text = (ROOT / "blueprints" / "chat-minimal.yaml").read_text()
    text = text.replace(
        "    slo: {p95_ms: 2000, ttft_p95_ms: 400}\n",
        f"    slo: {{p95_ms: 2000, ttft_p95_ms: 400}}\n    scale_out: {scale_out_yaml}\n",
    )
    text = text.replace(
        "    nodes: {min: 1, max: 4}", f"    nodes: {{min: 1, max: 4}}\n    spare_gpus: {spare}"
    )
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "chat-minimal.yaml"
    path.write_text(text)
    shutil.copytree(ROOT / "blueprints" / "schema", tmp_path / "schema")
    return path


def test_auto_keeps_a_spare_gpu_only_when_it_buys_the_bound(tmp_path: Path) -> None:
    # budget_s 160 cannot loosen the platform's 120 s, so auto chooses for 120 s. No free
    # set meets it (a new node alone is 540 s): standby is bought, and the free stream kept,
    # since it shortens the budget further.
    env = resolve_file(_blueprint(tmp_path, "{budget_s: 160}"), "prod")
    chat = env.models["chat"]
    assert chat.scale_out.requested == "auto"
    assert chat.scale_out.levers == ("compile_cache", "stream_weights", "standby")
    # Placeholders hold one replica's GPU per zone: the pool's spare GPUs, for everyone.
    assert env.pools["l4"].spare_gpus == 1
    found = scale_out.budgets(env)["chat"]
    assert found.total_s <= 120
    # What the spare GPU adds is priced before it was added: a whole node per zone.
    cost = chat.scale_out.options["standby"] if chat.scale_out.options else None
    row = prices.price(env.pools["l4"].instance_type, env.region)
    expected = None if row is None else round(2 * row.usd_per_hour * 730, 2)
    assert cost == expected


def test_auto_buys_no_spare_gpu_that_does_not_meet_the_bound(tmp_path: Path) -> None:
    # 90 s is out of reach: with a spare GPU and the weights streamed at the slow end, 114 s
    # (7.62B x 2 B = 15.24 GB at 0.39 GB/s = 40 s). The free levers are taken, no spare GPU
    # and no lazy pull (its faster root volumes are billed, and the price table has no gp3
    # row for eu-west-1: a missing price counts as dearer than any).
    env = resolve_file(_blueprint(tmp_path / "90", "{budget_s: 90}"), "prod")
    chat = env.models["chat"]
    assert chat.scale_out.levers == ("compile_cache", "stream_weights")
    assert chat.scale_out.options is not None
    assert chat.scale_out.options["lazy_image_pull"] is None
    assert env.pools["l4"].spare_gpus == 0
    # 120 s is met by the stream and a spare GPU, which makes the lazy pull useless.
    env = resolve_file(_blueprint(tmp_path / "120", "{budget_s: 120}"), "prod")
    chat = env.models["chat"]
    assert chat.scale_out.levers == ("compile_cache", "stream_weights", "standby")
    assert env.pools["l4"].spare_gpus == 1
    assert scale_out.budgets(env)["chat"].total_s == 114


def test_a_listed_lever_is_in_effect_as_listed(tmp_path: Path) -> None:
    env = resolve_file(_blueprint(tmp_path, "{levers: [standby]}"), "prod")
    assert env.models["chat"].scale_out.levers == ("compile_cache", "standby")
    assert env.pools["l4"].spare_gpus == 1
    parts = scale_out.budgets(env)["chat"].as_json()
    assert (parts["parts"]["node"], parts["levers"]["node"]) == (0, "standby")


def test_without_scale_out_a_model_keeps_todays_path(tmp_path: Path) -> None:
    env = resolve_file(ROOT / "blueprints" / "chat-minimal.yaml", "prod")
    chat = env.models["chat"]
    assert (chat.scale_out.requested, chat.scale_out.levers) == (None, ("compile_cache",))
    assert env.pools["l4"].spare_gpus == 0


def test_a_listed_lever_that_cannot_serve_is_a_located_error(tmp_path: Path) -> None:
    path = _blueprint(tmp_path, "{levers: [standby, lazy_image_pull]}")
    with pytest.raises(BlueprintError) as err:
        resolve_file(path, "prod")
    found = [d for d in err.value.diagnostics if "lazy_image_pull" in d.message]
    assert found, err.value.diagnostics
    first = found[0]
    assert first.path == ("models", "chat", "scale_out", "levers", 1)
    line = path.read_text().splitlines()[first.location.line - 1]
    assert "scale_out: {levers: [standby, lazy_image_pull]}" in line
    # prod (EKS) pulls in parallel; local's nodes are the cluster owner's.
    assert "in environment 'local' (kubernetes): a kubernetes environment's nodes" in (
        first.message
    )
    assert "levers: [standby]" in first.hint


@pytest.mark.parametrize(
    ("image", "cloud", "said"),
    [
        ("nvcr.io/nvidia/tritonserver:26.02-py3", "gcp", "is on NGC (nvcr.io)"),
        ("registry.internal:5000/vllm:1", "gcp", "is on registry.internal:5000"),
        ("registry.internal:5000/vllm:1", "kubernetes", "a kubernetes environment's nodes"),
    ],
)
def test_lazy_pulls_are_refused_where_they_cannot_act(image: str, cloud: str, said: str) -> None:
    why = lever_options.unavailable(
        "lazy_image_pull", cloud=cloud, server="vllm", compiles=True, image=image
    )
    assert why is not None and said in why


def test_an_ngc_image_is_not_streamable_on_gke_and_the_mirror_is_named() -> None:
    why = lever_options.unavailable(
        "lazy_image_pull",
        cloud="gcp",
        server="triton",
        compiles=False,
        image="nvcr.io/nvidia/tritonserver:26.02-py3",
    )
    assert why is not None and "Artifact Registry remote repository" in why
    for image in ("vllm/vllm-openai:v0.33.0", "us-docker.pkg.dev/p/hub/vllm/vllm-openai:v1"):
        assert (
            lever_options.unavailable(
                "lazy_image_pull", cloud="gcp", server="vllm", compiles=True, image=image
            )
            is None
        ), image


def test_triton_never_streams_weights_and_only_a_compiling_vllm_stages_a_cache() -> None:
    assert "only vLLM streams weights" in str(
        lever_options.unavailable(
            "stream_weights", cloud="gcp", server="triton", compiles=False, image="x/y:1"
        )
    )
    assert lever_options.unavailable(
        "compile_cache", cloud="gcp", server="vllm", compiles=False, image="x/y:1"
    )


RULE = rule("scale-out-budget")


def test_the_rule_judges_a_model_by_its_own_tighter_bound(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    assert [f.target for f in RULE.run(Stack.of([], env))] == ["models.chat"]  # 158 s
    ranker = env.models["ranker"]  # 42 s: within 120 s, not within its own 40 s
    tight = dataclasses.replace(
        ranker, scale_out=dataclasses.replace(ranker.scale_out, budget_s=40)
    )
    env = dataclasses.replace(env, models={**env.models, "ranker": tight})
    found = {f.target: f.message for f in RULE.run(Stack.of([], env))}
    assert "over the 40 s bound of its scale_out.budget_s" in found["models.ranker"]
    # A looser bound than the platform's is the platform's.
    chat = env.models["chat"]
    loose = dataclasses.replace(chat, scale_out=dataclasses.replace(chat.scale_out, budget_s=600))
    env = dataclasses.replace(env, models={**env.models, "chat": loose})
    found = {f.target: f.message for f in RULE.run(Stack.of([], env))}
    assert (
        "over the 120 s platform bound (scale_out.budget_s 600 s may only tighten it)"
        in found["models.chat"]
    )


def test_the_rule_names_the_cheapest_levers_with_their_cost(
    reference_env: Callable[[str], Environment],
) -> None:
    env = reference_env("prod")
    chat = env.models["chat"]
    offered = dataclasses.replace(
        chat.scale_out, options={"compile_cache": 0.0, "stream_weights": 0.0, "standby": 0.0}
    )
    env = dataclasses.replace(
        env, models={**env.models, "chat": dataclasses.replace(chat, scale_out=offered)}
    )
    [finding] = RULE.run(Stack.of([], env))
    assert finding.field == ("models", "chat", "scale_out", "levers")
    # 16.06 GB streamed at 0.39 GB/s = 42 s, no reload: 5 + 15 + 42 + 44 + 10 = 116 s.
    assert finding.message.endswith(
        "the levers compile_cache (free), stream_weights (free) would take it to 116 s: write "
        "scale_out: {levers: [compile_cache, stream_weights]} on model chat (or levers: "
        "auto, which chooses them)"
    )
    # Online, from the published facts, the same.
    published = facts_module.from_config_map(
        facts_module.to_config_map(facts_module.environment_facts(env))
    )
    assert published.models["chat"].options == offered.options
    online = RULE.run(Stack(resources=(), env=None, facts=published))
    assert [f.message for f in online] == [finding.message]


def test_a_streamed_8b_reads_its_weights_once(
    reference_env: Callable[[str], Environment],
) -> None:
    inputs = levers.with_levers(chat_8b_without_spare(reference_env("prod")), ["stream_weights"])
    found = scale_out.budget(inputs)
    assert found.part("weights").seconds == math.ceil(16.06 / 0.39)  # type: ignore[union-attr]
    # engine_load keeps vLLM's start only: 60 s less the staged compile cache's 16 s.
    assert found.part("engine_load").seconds == 44  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("release", "store", "image", "said"),
    [
        ("v0.33.0", "s3", "vllm/vllm-openai:v0.33.0", None),
        ("v0.33.0", "gs", "us-docker.pkg.dev/p/hub/vllm/vllm-openai:v0.33.0", None),
        ("v0.33.0", "s3", "registry.internal:5000/vllm:1", "runs its own image"),
        ("v0.10.2", "s3", "vllm/vllm-openai:v0.10.2", "compile cache"),
    ],
)
def test_vllm_streams_where_its_release_and_image_can(
    release: str, store: str, image: str, said: str | None
) -> None:
    why = lever_options.unavailable(
        "stream_weights",
        cloud="aws",
        server="vllm",
        compiles=True,
        image=image,
        vllm_release=release,
        weights_store=store,
    )
    assert why is None if said is None else (why is not None and said in why)


def test_a_listed_stream_on_a_release_that_cannot_is_a_located_error(tmp_path: Path) -> None:
    path = _blueprint(tmp_path, "{levers: [stream_weights]}")
    text = path.read_text()
    assert "\nversions:" not in text
    path.write_text(
        text.replace("\nenvironments:", "\nversions: {vllm: v0.10.2}\nenvironments:", 1)
    )
    with pytest.raises(BlueprintError) as err:
        resolve_file(path, "prod")
    found = [d for d in err.value.diagnostics if "stream_weights" in d.message]
    assert found, err.value.diagnostics
    assert found[0].path == ("models", "chat", "scale_out", "levers", 0)
    assert "torch.compile cache key" in found[0].message


def test_auto_chooses_against_the_platform_bound(tmp_path: Path) -> None:
    path = _blueprint(tmp_path, "{levers: auto}")
    # Without a policy config: the rule's default bound, 120 s, which only a spare GPU meets.
    default = resolve_file(path, "prod").models["chat"]
    assert levers.bound_of(default) == scale_out.DEFAULT_BOUND_S == 120
    assert default.scale_out.levers == ("compile_cache", "stream_weights", "standby")
    # A platform that allows 2,000 s: the free levers meet it, and no spare GPU is bought.
    loose = scale_out.Platform(bound_s=2000)
    env = resolve_file(path, "prod", loose)
    assert env.models["chat"].scale_out.levers == ("compile_cache", "stream_weights")
    assert env.pools["l4"].spare_gpus == 0
    assert scale_out.budgets(env)["chat"].total_s <= 2000
    # A platform tighter than any set (90 s): the free levers only, as the rule then advises.
    tight = scale_out.Platform(bound_s=90)
    env = resolve_file(path, "prod", tight)
    assert env.models["chat"].scale_out.levers == ("compile_cache", "stream_weights")
    assert env.pools["l4"].spare_gpus == 0


def test_a_models_budget_only_tightens_the_platform_bound_auto_chooses_for(
    tmp_path: Path,
) -> None:
    path = _blueprint(tmp_path, "{budget_s: 1500, levers: auto}")
    # 1,500 s is looser than the default 120 s: auto still chooses for 120 s.
    env = resolve_file(path, "prod")
    assert levers.bound_of(env.models["chat"]) == 120
    assert env.models["chat"].scale_out.levers == ("compile_cache", "stream_weights", "standby")
    # Under a 2,000 s platform the model's 1,500 s is the tighter bound; the free set meets it.
    loose = scale_out.Platform(bound_s=2000)
    env = resolve_file(path, "prod", loose)
    assert levers.bound_of(env.models["chat"], loose) == 1500
    assert env.models["chat"].scale_out.levers == ("compile_cache", "stream_weights")


def test_auto_chooses_with_the_platform_estimates(tmp_path: Path) -> None:
    path = _blueprint(tmp_path, "{levers: auto}")
    # A platform whose clusters add a node in 20 s, pull images at 2 GB/s and start vLLM in
    # 30 s: the free levers meet 120 s (5 + 15 + 20 + 6 + 40 + 14 + 10 = 110 s) without a
    # spare GPU.
    fast = scale_out.Platform(
        constants=scale_out.Constants(
            node_provision_s=20, image_pull_mb_per_s=2000, engine_init_s_vllm=30
        )
    )
    env = resolve_file(path, "prod", fast)
    assert env.models["chat"].scale_out.levers == ("compile_cache", "stream_weights")
    assert env.pools["l4"].spare_gpus == 0
    assert scale_out.budgets(env, fast.constants)["chat"].total_s == 110
    # The same set under the default estimates misses 120 s: what plan would print, wrongly,
    # if auto chose with one set of estimates and the budget used another.
    assert scale_out.budgets(env)["chat"].total_s > 120


def test_the_platform_is_read_from_the_rules_config() -> None:
    values = rule("scale-out-budget").defaults() | {"max_total_s": 75, "node_provision_s": 30}
    platform = scale_out.Platform.from_values(values)
    assert platform.bound_s == 75
    assert platform.constants.node_provision_s == 30
    assert platform.constants.image_pull_mb_per_s == scale_out.Constants().image_pull_mb_per_s
    assert platform.bound_for(None) == 75
    assert platform.bound_for(60) == 60
    assert platform.bound_for(600) == 75
