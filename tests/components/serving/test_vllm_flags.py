"""The `vllm serve` command line: every flag the tool writes exists in the pinned vLLM and
is owned by the blueprint (so `extra_args` cannot set it twice)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re

import pytest
from serving_fixtures import args_of, container, k8s_object, serve, with_model

from inferplane.blueprint import defaults, releases
from inferplane.blueprint.model import Lora, LoraAdapter, ModelSource, Speculative, VllmSettings
from inferplane.blueprint.upstream import vllm_owned
from inferplane.components.serving.vllm.vllm import vllm_args, vllm_env, vllm_fetch_container
from inferplane.components.serving.vllm.vllm_flags import (
    HISTOGRAM_FLAG,
    speculative_config,
    vllm_flags,
)

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
TEMPLATE_SHA = hashlib.sha256(b"{{ messages }}").hexdigest()[:12]


def everything() -> list[str]:
    """A command line with every option set, booleans both ways."""
    out = []
    for on in (True, False):
        out += vllm_flags(
            weights="/models/chat", port=8000, served_names=["chat", "alias"],
            tensor_parallel_size=2, revision="abc", dtype="bfloat16", quantization="fp8",
            max_model_len=8192, max_num_seqs=64, max_num_batched_tokens=4096,
            gpu_memory_utilization=0.9, kv_cache_dtype="fp8", enable_prefix_caching=on,
            enable_chunked_prefill=on, enforce_eager=on,
            speculative=speculative_config("ngram", 3), lora_modules=[("tone", "/models/x")],
            max_loras=2, max_lora_rank=16, chat_template="{{ x }}", tool_call_parser="hermes",
        )  # fmt: skip
    return out


RELEASES = [r.release for r in releases.engine_releases("vllm")]


def test_the_flag_list_is_the_pinned_version() -> None:
    pinned = defaults.VERSIONS["vllm"]
    text = (
        (vllm_owned.resources.files("inferplane") / "facts" / "vllm" / pinned)
        .joinpath("serve_flags.txt")
        .read_text()
    )
    assert f"vLLM {pinned}, " in text.splitlines()[0]
    assert len(vllm_owned.serve_flags()) > 200


@pytest.mark.parametrize("release", RELEASES)
def test_every_flag_written_is_a_real_option_owned_by_the_blueprint(release: str) -> None:
    flags = {a for a in everything() if a.startswith("--")}
    assert flags - vllm_owned.serve_flags(release) == set()
    owned = {f for f in flags if vllm_owned.flag_table(release)[f].kind == "owned"}
    assert owned == flags


def test_every_owned_flag_names_the_field_or_the_fix() -> None:
    owned = vllm_owned.owned_flags()
    assert {"--model", "--port", "--tensor-parallel-size", "--config", "--api-key"} <= set(owned)
    assert all(hint.startswith(("set models.", "remove it", "pin ", "the model's key", "write ",
                                "scale with")) for hint in owned.values())  # fmt: skip


def test_speculative_config_json() -> None:
    assert speculative_config(
        "eagle3", 3, draft_repo="yuhuili/EAGLE3-LLaMA3.1-Instruct-8B", draft_revision="main"
    ) == {
        "method": "eagle3",
        "num_speculative_tokens": 3,
        "model": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B",
        "revision": "main",
    }
    assert speculative_config("ngram", 4, prompt_lookup_max=4, prompt_lookup_min=2) == {
        "method": "ngram",
        "num_speculative_tokens": 4,
        "prompt_lookup_max": 4,
        "prompt_lookup_min": 2,
    }


def test_latency_features_become_flags(staging) -> None:
    settings = VllmSettings(
        speculative=Speculative("ngram", 3, prompt_lookup_max=4),
        lora=Lora(
            adapters=(LoraAdapter("tone", ModelSource("s3://b/tone/", "s3", "b", "tone/")),),
            max_loras=1,
            max_lora_rank=32,
        ),
        chat_template="{{ messages }}",
        tool_call_parser="llama3_json",
        served_model_aliases=("gpt-small",),
        extra_args=("--swap-space", "8"),
    )
    env = with_model(staging, "chat", vllm=settings)
    args = vllm_args(args_of(env, "chat")[1])
    assert args[:5] == ["/models/chat", "--port", "8000", "--served-model-name", "chat"]
    assert args[5] == "gpt-small"
    spec = args[args.index("--speculative-config") + 1]
    assert json.loads(spec) == {"method": "ngram", "num_speculative_tokens": 3,
                                "prompt_lookup_max": 4}  # fmt: skip
    tail = args[args.index("--enable-lora") :]
    assert tail == [
        "--enable-lora", "--max-loras", "1", "--max-lora-rank", "32",
        "--lora-modules", "tone=/models/.lora/tone",
        "--chat-template", f"/etc/inferplane/chat-template/chat-template-{TEMPLATE_SHA}.jinja",
        "--tool-call-parser", "llama3_json", "--enable-auto-tool-choice",
        HISTOGRAM_FLAG, args[args.index(HISTOGRAM_FLAG) + 1],
        "--middleware", "inferplane_route_guard.RouteGuard",
        "--swap-space", "8",
    ]  # fmt: skip
    # The model's slo.ttft_p95_ms of 300 ms as a bound of vLLM's TTFT histogram.
    assert 0.3 in json.loads(args[args.index(HISTOGRAM_FLAG) + 1])["time_to_first_token"]


def test_weights_given_without_their_slash_are_copied_as_folders(staging) -> None:
    """The identities are granted the folder (``tone/``, never the bare prefix ``tone``,
    which would also match ``tone-finance/``): the copy reads that folder."""
    tone = LoraAdapter("tone", ModelSource("s3://b/tone", "s3", "b", "tone"))
    weights = ModelSource("s3://b/llama", "s3", "b", "llama")
    env = with_model(
        staging, "chat", source=weights, vllm=VllmSettings(lora=Lora((tone,), 1, None))
    )
    fetch = vllm_fetch_container(*args_of(env, "chat"))
    assert {"name": "MODEL_URI", "value": "s3://b/llama/"} in fetch["env"]
    assert {"name": "LORA_URI_0", "value": "s3://b/tone/"} in fetch["env"]


def test_lora_adapters_are_copied_by_the_fetch_container(staging) -> None:
    hf = ModelSource("hf://a/b@main", "hf", None, None, hf_repo="a/b", hf_revision="main")
    tone = LoraAdapter("tone", ModelSource("s3://b/tone/", "s3", "b", "tone/"))
    style = LoraAdapter(
        "style",
        ModelSource("hf://c/style@v1", "hf", None, None, hf_repo="c/style", hf_revision="v1"),
    )
    lora = Lora((tone, style), 2, None)
    env = with_model(staging, "chat", source=hf, vllm=VllmSettings(lora=lora))
    fetch = vllm_fetch_container(*args_of(env, "chat"))
    store = env.model_store
    assert {"name": "LORA_URI_0", "value": "s3://b/tone/"} in fetch["env"]
    # hf:// weights and adapters: their staged copies, never the hub.
    assert {
        "name": "MODEL_URI",
        "value": f"{store}.inferplane/hub/support-assistant/a/b/main/",
    } in fetch["env"]
    assert {
        "name": "LORA_URI_1",
        "value": f"{store}.inferplane/hub/support-assistant/c/style/v1/",
    } in fetch["env"]
    lines = fetch["command"][-1].splitlines()
    # a store URI as given; a staged copy from the attempt folder its marker names
    assert 'aws s3 sync --only-show-errors "$LORA_URI_0" "/models/.lora/tone"' in lines
    for variable, target in (("MODEL_URI", "/models/chat"), ("LORA_URI_1", "/models/.lora/style")):
        at = lines.index(f'ATTEMPT_URI="${{{variable}}}$attempt/"')
        assert lines[at + 1] == f'aws s3 sync --only-show-errors "$ATTEMPT_URI" "{target}"'
        assert lines[at - 9] == (
            f'if ! attempt="$(aws s3 cp --only-show-errors "${{{variable}}}'
            'inferplane-complete-attempt" -)"; then'
        )


def test_env_passes_through_and_a_hub_draft_is_read_from_its_staged_copy(staging) -> None:
    settings = VllmSettings(
        env=(("VLLM_ATTENTION_BACKEND", "FLASHINFER"),),
        speculative=Speculative("eagle3", 3, draft_repo="a/draft", draft_revision="main"),
    )
    env = with_model(staging, "chat", vllm=settings)
    names = {e["name"]: e["value"] for e in vllm_env(env.models["chat"])}
    assert names["VLLM_ATTENTION_BACKEND"] == "FLASHINFER"
    assert names["HF_HUB_OFFLINE"] == "1"
    d = k8s_object(serve(env, ["chat"]), DEPLOYMENT, "chat")
    c = container(d, "vllm")
    models = next(m for m in c["volumeMounts"] if m["name"] == "models")
    assert models["readOnly"] is True
    config = json.loads(c["args"][c["args"].index("--speculative-config") + 1])
    assert config == {"method": "eagle3", "num_speculative_tokens": 3, "model": "/models/.draft"}
    fetch = container(d, "fetch-weights", init=True)
    draft = f"{env.model_store}.inferplane/hub/support-assistant/a/draft/main/"
    assert {"name": "DRAFT_URI", "value": draft} in fetch["env"]
    assert not any("hf://" in a for a in c["args"])


@pytest.mark.parametrize("env_name", ["staging"])
def test_rendered_deployment_carries_the_flags(staging, env_name) -> None:
    settings = VllmSettings(
        max_model_len=8192, tool_call_parser="hermes", extra_args=("--swap-space", "8")
    )
    env = with_model(staging, "chat", vllm=settings)
    c = container(k8s_object(serve(env, ["chat"]), DEPLOYMENT, "chat"), "vllm")
    assert c["args"][-9:] == ["--tool-call-parser", "hermes", "--enable-auto-tool-choice",
                              HISTOGRAM_FLAG, c["args"][-5],
                              "--middleware", "inferplane_route_guard.RouteGuard",
                              "--swap-space", "8"]  # fmt: skip


@pytest.mark.parametrize("name", ["draft", "lora"])
def test_a_model_named_like_the_draft_or_adapter_directory_keeps_its_own(staging, name) -> None:
    # /models/<model> is the model's copy; drafts and adapters live under dot directories
    # that no DNS-1123 model name can produce, so neither overwrites the model's files.
    tone = LoraAdapter("tone", ModelSource("s3://b/tone/", "s3", "b", "tone/"))
    settings = VllmSettings(
        speculative=Speculative("eagle3", 3, draft_repo="a/draft", draft_revision="main"),
        lora=Lora((tone,), 1, None),
    )
    model = dataclasses.replace(staging.models["chat"], name=name, vllm=settings)
    env = dataclasses.replace(staging, models={name: model})
    script = vllm_fetch_container(*args_of(env, name))["command"][-1]
    targets = re.findall(r'sync --only-show-errors "\$\w+" "([^"]+)"', script)
    assert f"/models/{name}" in targets
    assert len(targets) == len(set(targets)) == 3
