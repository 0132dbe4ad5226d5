"""What a blueprint may not make vLLM reveal: a file of the pod as its chat template, the
template and tokenizer at an unguarded route, or the model's output in the logs."""

from __future__ import annotations

import pytest
from test_semantic_vllm import chat, errors, validated

TOOL_OUTPUT = "the tool-call parsers log every streamed piece of output"


@pytest.mark.parametrize(
    "value",
    ["/var/run/secrets/eks.amazonaws.com/serviceaccount/token", "/proc/self/environ", "tool.jinja"],
)
def test_a_chat_template_that_is_a_path_is_refused_at_its_line(value: str) -> None:
    assert validated(chat(f"    vllm: {{chat_template: {value}}}\n")) == [
        "bp.yaml:27:27: error: models.chat.vllm.chat_template: this looks like a file path, "
        "not a template: it has no `{` or `}`, and vLLM reads such a value as a path of the "
        "serving pod; paste the template's text inline, not the path of its file"
    ]


def test_an_inline_chat_template_passes() -> None:
    text = chat('    vllm: {chat_template: "{% for m in messages %}{{ m.content }}{% endfor %}"}\n')
    assert validated(text) == [] and errors(text) == []


def test_the_tokenizer_info_route_is_refused() -> None:
    assert errors(chat('    vllm: {extra_args: ["--enable-tokenizer-info-endpoint"]}\n')) == [
        "bp.yaml:27:25: error: models.chat.vllm.extra_args[0]: "
        "`--enable-tokenizer-info-endpoint` is refused: serves the tokenizer's configuration "
        "and the chat template at /tokenizer_info, a route the API key does not guard; "
        "remove it"
    ]


@pytest.mark.parametrize("level", ["DEBUG", "debug", "NOTSET"])
def test_logging_levels_that_log_output_are_refused(level: str) -> None:
    assert errors(chat(f"    vllm: {{env: {{VLLM_LOGGING_LEVEL: {level}}}}}\n")) == [
        f"bp.yaml:27:38: error: models.chat.vllm.env.VLLM_LOGGING_LEVEL: `VLLM_LOGGING_LEVEL` "
        f"{level} is refused: DEBUG and NOTSET log what the model writes ({TOOL_OUTPUT}); "
        "use one of CRITICAL, ERROR, FATAL, INFO, WARN, WARNING, or remove it"
    ]


@pytest.mark.parametrize("level", ["INFO", "warning", "ERROR"])
def test_logging_levels_that_log_no_content_pass(level: str) -> None:
    assert errors(chat(f"    vllm: {{env: {{VLLM_LOGGING_LEVEL: {level}}}}}\n")) == []


def test_the_log_level_option_refuses_debug() -> None:
    assert errors(chat('    vllm: {extra_args: ["--log-level", "DEBUG"]}\n')) == [
        "bp.yaml:27:40: error: models.chat.vllm.extra_args[1]: `--log-level` DEBUG is refused: "
        f"logs what the model writes ({TOOL_OUTPUT}); use one of CRITICAL, ERROR, INFO, WARNING"
    ]
    assert errors(chat('    vllm: {extra_args: ["--log-level=WARNING"]}\n')) == []
