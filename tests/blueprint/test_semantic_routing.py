"""Semantic checks of `models.<m>.routing` and the router's autoscaling signals. Exact
diagnostics, each at the value to blame (the override's line when an override set it)."""

from __future__ import annotations

from test_semantic import diagnostics, schema_errors
from test_semantic import edit as edit_base

from inferplane.blueprint import wake
from inferplane.blueprint.checks.semantic_vllm import advisories
from inferplane.blueprint.loading.loader import load_text
from inferplane.blueprint.resolution.resolve import resolve
from inferplane.blueprint.upstream.vllm_owned import extra_args_problems

BASE = """\
apiVersion: inferplane/v1
kind: Blueprint
name: demo
environments:
  prod:
    cloud: aws
    region: us-east-1
    zones: [us-east-1a, us-east-1b]
    model_store: s3://models-use1/
    cluster: {create: true}
gpu_pools:
  l4:
    gpu: nvidia-l4
    nodes: {min: 2, max: 4}
models:
  chat:
    server: vllm
    source: llama/
    pool: l4
    replicas: {min: 2, max: 4}
    routing:
      mode: llm_aware
      flow_control: true
      priorities: {interactive: 10, batch: -1}
    autoscaling:
      - {metric: router_queue, target: 2}
      - {metric: ttft_p95_ms, target: 800}
  embed:
    server: triton
    source: embed/model.onnx
    pool: l4
    replicas: {min: 2, max: 2}
"""


def edit(old: str, new: str, text: str = BASE) -> str:
    return edit_base(old, new, text)


def test_base_is_valid_and_resolves_the_routing() -> None:
    assert schema_errors(BASE) == []
    assert diagnostics(BASE) == []
    routing = resolve(load_text(BASE, "bp.yaml"), "prod").models["chat"].routing
    assert (routing.mode, routing.prefix_cache, routing.flow_control) == (
        "llm_aware",
        "approximate",
        True,
    )
    assert routing.priorities == (("batch", -1), ("interactive", 10))


def test_round_robin_is_the_default() -> None:
    embed = resolve(load_text(BASE, "bp.yaml"), "prod").models["embed"]
    assert embed.routing.mode == "round_robin"
    assert not embed.routing.llm_aware


def test_llm_aware_on_a_triton_model_is_refused_at_its_mode() -> None:
    text = edit(
        "    replicas: {min: 2, max: 2}\n",
        "    replicas: {min: 2, max: 2}\n    routing: {mode: llm_aware}\n",
    )
    assert diagnostics(text) == [
        "bp.yaml:33:21: error: models.embed.routing.mode: LLM-aware routing scores vLLM "
        "replicas by their own metrics and prompts; this model is served by triton; remove "
        "routing (Triton models are balanced round-robin), or serve with vllm"
    ]


def test_router_options_without_the_router_are_refused_each_at_its_key() -> None:
    text = edit("      mode: llm_aware\n", "      mode: round_robin\n")
    assert diagnostics(text) == [
        "bp.yaml:23:21: error: models.chat.routing.flow_control: `flow_control` configures "
        "the LLM-aware router, and this model is routed round-robin; set routing.mode: "
        "llm_aware, or remove it",
        "bp.yaml:24:19: error: models.chat.routing.priorities: `priorities` configures the "
        "LLM-aware router, and this model is routed round-robin; set routing.mode: "
        "llm_aware, or remove it",
        "bp.yaml:26:18: error: models.chat.autoscaling[0].metric: router_queue is a signal of "
        "the LLM-aware router, and this model has none; set routing.mode: llm_aware (vLLM "
        "models), or use queue_depth or ttft_p95_ms",
    ]


def test_flow_control_signals_need_flow_control() -> None:
    text = edit("      flow_control: true\n", "")
    text = edit("{metric: ttft_p95_ms, target: 800}", "{metric: pool_saturation, target: 1}", text)
    assert diagnostics(text) == [
        "bp.yaml:25:18: error: models.chat.autoscaling[0].metric: router_queue exists only "
        "while the router's flow control holds requests, and routing.flow_control is off; "
        "set routing.flow_control: true, or use router_running",
        "bp.yaml:26:18: error: models.chat.autoscaling[1].metric: pool_saturation exists only "
        "while the router's flow control holds requests, and routing.flow_control is off; "
        "set routing.flow_control: true, or use router_running",
    ]
    running = edit("{metric: router_queue, target: 2}", "{metric: router_running, target: 8}")
    assert diagnostics(edit("      flow_control: true\n", "", running)) == []


def test_precise_prefix_scoring_needs_vllm_prefix_caching() -> None:
    text = edit(
        "      mode: llm_aware\n",
        "      mode: llm_aware\n      prefix_cache: precise\n",
    )
    text = edit("    pool: l4\n", "    pool: l4\n    vllm: {enable_prefix_caching: false}\n", text)
    assert diagnostics(text) == [
        "bp.yaml:24:21: error: models.chat.routing.prefix_cache: precise prefix scoring needs "
        "each prompt's exact tokens from a vLLM render endpoint (llm-d-router v0.10.0 "
        "token-producer), and vLLM v0.33.0 serves one on a replica only with "
        "--enable-scale-out, which also lets every client generate from raw token ids and "
        "abort requests by id, while the router's render sidecar reads the model from the "
        "Hugging Face hub with a token; inferplane deploys neither; use prefix_cache: "
        "approximate (the default), which scores the prefixes the router has routed itself",
        "bp.yaml:24:21: error: models.chat.routing.prefix_cache: precise prefix scoring reads "
        "the KV-cache events of vLLM's prefix cache, which vllm.enable_prefix_caching: false "
        "turns off; remove vllm.enable_prefix_caching: false, or use prefix_cache: approximate",
    ]


def test_replicas_split_evenly_over_the_zones() -> None:
    text = edit("replicas: {min: 2, max: 4}", "replicas: {min: 3, max: 5}")
    assert diagnostics(text) == [
        "bp.yaml:20:21: error: models.chat.replicas.min: replicas.min 3 does not split evenly "
        "over the pool's 2 zones: an llm-aware model runs one Deployment per zone; give "
        "replicas.min as a multiple of 2",
        "bp.yaml:20:29: error: models.chat.replicas.max: replicas.max 5 does not split evenly "
        "over the pool's 2 zones: an llm-aware model runs one Deployment per zone; give "
        "replicas.max as a multiple of 2",
    ]


def test_an_override_to_zero_without_flow_control_is_refused_at_the_override() -> None:
    text = edit(
        "    cluster: {create: true}\n",
        "    cluster: {create: true}\n    overrides:\n      models:\n        chat:\n"
        "          replicas: {min: 0, max: 4}\n          routing: {flow_control: false}\n"
        "          autoscaling: {metric: router_running, target: 8}\n",
    )
    assert diagnostics(text) == [
        "bp.yaml:14:27: error: environments.prod.overrides.models.chat.replicas.min: at 0 "
        "replicas an llm-aware model wakes through the router's queue, which holds requests "
        "only with flow control on; set routing.flow_control: true, or keep replicas.min at "
        "1 per zone or more"
    ]


def test_the_wake_path_of_a_model_at_zero() -> None:
    assert wake.wake_path("vllm", "http", 0, llm_aware=True, flow_control=True) == (
        "the router's flow-control queue holds its requests and KEDA scales on it"
    )
    assert not wake.wakes_on_traffic("vllm", "http", 0, llm_aware=True)
    assert wake.wake_path("vllm", "http", 0) == (
        "the KEDA HTTP add-on's interceptor holds its HTTP requests and scales on them"
    )
    assert wake.wake_path("vllm", "http", 2, llm_aware=True, flow_control=True) is None


def test_kv_events_stay_refused_while_precise_scoring_is() -> None:
    """Nothing subscribes to vLLM's KV events while precise scoring is refused, so their
    endpoint stays closed in every supported release."""
    for release in ("v0.10.2", "v0.33.0"):
        problems = list(extra_args_problems(["--kv-events-config", "{}"], "chat", release, True))
        assert problems == [
            (
                0,
                "`--kv-events-config` is refused: opens an endpoint no NetworkPolicy or API "
                "key guards",
                "remove it",
            )
        ]


def test_the_replicas_render_routes_stay_refused() -> None:
    """The refusal of precise scoring rests on this: vLLM v0.33.0 registers the render routes
    the router's token-producer calls only with ``--enable-scale-out``, beside raw-token
    generation and abort by id (``semantic_routing`` module docstring)."""
    problems = list(extra_args_problems(["--enable-scale-out"], "chat", "v0.33.0", True))
    assert problems == [
        (
            0,
            "`--enable-scale-out` is refused: adds routes that generate from raw token ids and "
            "abort requests by id (/inference/v1/abort_requests)",
            "remove it",
        )
    ]


def test_priorities_without_flow_control_warn_naming_those_that_do_nothing() -> None:
    def warned(text: str) -> list[str]:
        found = advisories(load_text(text, "bp.yaml"))
        return [d.format() for d in found if "routing" in d.format()]

    assert warned(BASE) == []  # flow control on: the queue serves by priority
    text = edit("      flow_control: true\n", "")
    text = edit("{metric: router_queue, target: 2}", "{metric: router_running, target: 2}", text)
    assert diagnostics(text) == []
    assert warned(text) == [
        "bp.yaml:23:19: warning: models.chat.routing.priorities: without routing.flow_control "
        "the router sheds only requests of negative priority, and only while the pool is "
        "saturated (llm-d-router v0.10.0 LegacyAdmissionController): objective interactive "
        "(priority 10) is admitted exactly like a request without an objective; set "
        "routing.flow_control: true, so the router queues requests while the pool is "
        "saturated and serves higher priorities first, or remove the objectives at priority "
        "0 or above"
    ]
    both = edit("{interactive: 10, batch: -1}", "{interactive: 10, standard: 0, batch: -1}", text)
    (found,) = warned(both)
    assert "objectives interactive (priority 10), standard (priority 0) are admitted" in found
    shed_only = edit("{interactive: 10, batch: -1}", "{batch: -1}", text)
    assert warned(shed_only) == []  # negative priorities are shed without flow control
