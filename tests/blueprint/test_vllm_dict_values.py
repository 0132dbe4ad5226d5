"""The plain-dict options of `vllm serve` (no config class): only the keys the release reads
of them, each value of its type, and `--hf-overrides` refused whole
(`scripts/facts/vllm_value_classes.py` DICT_FLAGS, `flag_values.txt`, `vllm_values`)."""

from __future__ import annotations

import pytest
from test_semantic_vllm import chat, errors

V0102 = "versions: {vllm: v0.10.2}\n"
AT = "bp.yaml:30:11: error: models.chat.vllm.extra_args[1]: "
AT_FLAG = "bp.yaml:29:11: error: models.chat.vllm.extra_args[0]: "
NAMES_ONLY = "give a name (letters, digits, `_`, `-`), as vLLM's choices for the key are"


def refused(*args: str, release: str = "v0.33.0") -> list[str]:
    """The errors of `args` as a block list under models.chat.vllm.extra_args (one line
    each, the first on line 29), on vLLM `release`."""
    lines = "".join(f"        - {a!r}\n" for a in args)
    text = chat(f"    vllm:\n      extra_args:\n{lines}")
    return errors(text + (V0102 if release == "v0.10.2" else ""))


def not_a_key(key: str, flag: str, release: str = "v0.33.0") -> str:
    return (
        f"`{key}` is not a key of `{flag}` inferplane passes; use a key "
        f"inferplane/facts/vllm/{release}/flag_values.txt lists for `{flag}` (the keys vLLM "
        f"{release} reads of it)"
    )


def typed(flag: str, key: str, value: str, takes: str) -> str:
    return (
        f"`{flag}` key `{key}` is given {value}: it takes {takes}; write {takes}, as vLLM "
        "reads this key"
    )


def names_only(flag: str, key: str, value: str) -> str:
    return (
        f"`{flag}` key `{key}` is given {value!r}: this key takes names and numbers, and a "
        f"path, URL or module is refused; {NAMES_ONLY}"
    )


HF_OVERRIDES = (
    "`--hf-overrides` is refused: overrides any key of the model's config: `architectures`, "
    "`model_type` and `auto_map` choose the code that loads, `quantization_config` and "
    "`torch_dtype` what models.chat.vllm.quantization and models.chat.precision set; remove it"
)
SCALARS = "numbers and true/false (in lists and objects too), no string"


@pytest.mark.parametrize("release", ["v0.10.2", "v0.33.0"])
@pytest.mark.parametrize(
    "value",
    [
        '{"architectures": ["EvilForCausalLM"]}',
        '{"auto_map": {"AutoModel": "modeling_evil.Evil"}}',
        '{"quantization_config": {"quant_method": "fp8"}}',
        '{"torch_dtype": "float32"}',
    ],
)
def test_hf_overrides_is_refused_whole(release: str, value: str) -> None:
    """A refused option is reported at the option, whatever its value."""
    assert refused("--hf-overrides", value, release=release) == [AT_FLAG + HF_OVERRIDES]


@pytest.mark.parametrize("release", ["v0.10.2", "v0.33.0"])
def test_hf_overrides_is_refused_one_key_at_a_time(release: str) -> None:
    assert refused("--hf-overrides.model_type", "evil", release=release) == [AT_FLAG + HF_OVERRIDES]


@pytest.mark.parametrize(
    ("flag", "value", "expected"),
    [
        pytest.param(
            "--mm-processor-kwargs",
            '{"num_crops": 4, "trust_remote_code": true}',
            "`--mm-processor-kwargs` key `trust_remote_code` is refused: loads and runs Python "
            "code named by the blueprint or a model repository (the model repository's "
            "processor .py files); remove it",
            id="processor-remote-code",
        ),
        pytest.param(
            "--mm-processor-kwargs",
            '{"cache_dir": "/models/chat"}',
            typed("--mm-processor-kwargs", "cache_dir", '"/models/chat"', SCALARS),
            id="processor-path",
        ),
        pytest.param(
            "--mm-processor-kwargs",
            '{"proxies": {"https": "http://evil.example:3128"}}',
            typed(
                "--mm-processor-kwargs", "proxies", '{"https": "http://evil.example:3128"}', SCALARS
            ),
            id="processor-url",
        ),
        pytest.param(
            "--mm-processor-kwargs",
            '{"transformers.models.evil:Processor": 1}',
            "`--mm-processor-kwargs` key 'transformers.models.evil:Processor' is no name; give "
            "a key of letters, digits and `_`",
            id="processor-key-naming-a-module",
        ),
        pytest.param(
            "--default-chat-template-kwargs",
            '{"chat_template": "{{ messages }}"}',
            "`--default-chat-template-kwargs` key `chat_template` is refused: the chat template "
            "is set by models.chat.vllm.chat_template; remove it",
            id="template-owned",
        ),
        pytest.param(
            "--default-chat-template-kwargs",
            '{"documents": "file:///etc/passwd"}',
            names_only("--default-chat-template-kwargs", "documents", "file:///etc/passwd"),
            id="template-url",
        ),
        pytest.param(
            "--limit-mm-per-prompt",
            '{"image": -1}',
            typed(
                "--limit-mm-per-prompt",
                "image",
                "-1",
                "a whole number of 0 or more, or an object of such numbers "
                '(e.g. {"count": 2, "width": 512})',
            ),
            id="limit-negative",
        ),
        pytest.param(
            "--limit-mm-per-prompt",
            '{"evil.module:Modality": 1}',
            not_a_key("evil.module:Modality", "--limit-mm-per-prompt"),
            id="limit-key-naming-a-class",
        ),
        pytest.param(
            "--override-generation-config",
            '{"temperature": "https://evil.example/t"}',
            typed(
                "--override-generation-config",
                "temperature",
                '"https://evil.example/t"',
                "a number or true/false",
            ),
            id="generation-url",
        ),
        pytest.param(
            "--override-generation-config",
            '{"chat_template": "x"}',
            not_a_key("chat_template", "--override-generation-config"),
            id="generation-not-sampling",
        ),
        pytest.param(
            "--reasoning-effort-map",
            '{"high": "../../etc/passwd"}',
            names_only("--reasoning-effort-map", "high", "../../etc/passwd"),
            id="effort-path",
        ),
        pytest.param(
            "--media-io-kwargs",
            '{"video": {"loader": "evil.mod:Loader"}}',
            names_only("--media-io-kwargs", "video", "evil.mod:Loader"),
            id="media-module",
        ),
        pytest.param(
            "--media-io-kwargs",
            '{"file": {"path": "x"}}',
            not_a_key("file", "--media-io-kwargs"),
            id="media-not-a-modality",
        ),
    ],
)
def test_a_hostile_dict_value_is_refused_at_its_line(flag: str, value: str, expected: str) -> None:
    assert refused(flag, value) == [AT + expected]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(
            ("--rope-scaling", '{"rope_type": "yarn", "auto_map": "evil.Rope"}'),
            not_a_key("auto_map", "--rope-scaling", "v0.10.2"),
            id="rope-key",
        ),
        pytest.param(
            ("--rope-scaling.rope_type", "evil.mod:Rope"),
            names_only("--rope-scaling", "rope_type", "evil.mod:Rope"),
            id="rope-module-one-key",
        ),
        pytest.param(
            ("--override-pooler-config", '{"pooling_type": "/models/pooler.py"}'),
            names_only("--override-pooler-config", "pooling_type", "/models/pooler.py"),
            id="pooler-path",
        ),
        pytest.param(
            # v0.10.2 takes only counts (EngineArgs.limit_mm_per_prompt: dict[str, int]).
            ("--limit-mm-per-prompt", '{"image": {"count": 2}}'),
            typed("--limit-mm-per-prompt", "image", '{"count": 2}', "a whole number of 0 or more"),
            id="limit-options-are-0.33",
        ),
    ],
)
def test_a_hostile_dict_value_of_v0_10_2_is_refused(args: tuple[str, str], expected: str) -> None:
    assert refused(*args, release="v0.10.2") == [AT + expected]


def test_the_values_vllm_documents_pass() -> None:
    """The examples of the fields' own documentation (v0.33.0 vllm/config/multimodal.py
    MultiModalConfig, vllm/config/model.py ModelConfig.override_generation_config,
    vllm/config/observability.py, vllm/entrypoints/common/cli_args.py BaseFrontendArgs)."""
    assert (
        refused(
            "--limit-mm-per-prompt",
            '{"image": 16, "video": {"count": 1, "num_frames": 32, "width": 512, "height": 512}}',
            "--limit-mm-per-prompt.audio",
            "0",
            "--media-io-kwargs",
            '{"video": {"num_frames": 40}}',
            "--mm-processor-kwargs",
            '{"num_crops": 4, "size": {"longest_edge": 1024}, "do_pan_and_scan": true}',
            "--default-chat-template-kwargs",
            '{"enable_thinking": false}',
            "--reasoning-effort-map",
            '{"medium": "low", "xhigh": "max"}',
            "--override-generation-config",
            '{"temperature": 0.5, "top_p": 0.9, "skip_special_tokens": false}',
        )
        == []
    )


def test_the_values_v0_10_2_documents_pass() -> None:
    """v0.10.2 vllm/config/__init__.py: ModelConfig.rope_scaling, override_pooler_config,
    limit_mm_per_prompt and override_generation_config examples."""
    assert (
        refused(
            "--rope-scaling",
            '{"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}',
            "--rope-scaling",
            '{"rope_type":"dynamic","factor":2.0}',
            "--override-pooler-config",
            '{"pooling_type": "mean", "normalize": false}',
            "--limit-mm-per-prompt",
            '{"image": 16, "video": 2}',
            "--override-generation-config",
            '{"temperature": 0.5}',
            "--mm-processor-kwargs",
            '{"num_crops": 4}',
            release="v0.10.2",
        )
        == []
    )


def test_one_key_at_a_time_is_judged_as_the_whole_object() -> None:
    """``--x.key value`` is {"key": value} to vLLM's parser (v0.33.0
    vllm/utils/argparse_utils.py, FlexibleArgumentParser.parse_args): a refused key is refused
    at the argument naming it, a value of the wrong type at the value."""
    assert refused("--mm-processor-kwargs.trust_remote_code", "true") == [
        AT_FLAG + "`--mm-processor-kwargs` key `trust_remote_code` is refused: loads and runs "
        "Python code named by the blueprint or a model repository (the model repository's "
        "processor .py files); remove it"
    ]
    # A key of an option inferplane owns is the option: refused as the blueprint's.
    assert refused("--custom-histogram-buckets.request_latency", "[0.1]") == [
        AT_FLAG + "`--custom-histogram-buckets` is set by the blueprint; set models.chat.slo "
        "instead: inferplane adds each SLO line to vLLM's default bounds, so the SLO alerts "
        "compare the p95 with a bound"
    ]
    assert refused("--limit-mm-per-prompt.video.count", "1") == []


def test_a_trailing_newline_and_not_a_number_are_refused() -> None:
    """A name is the whole string (a JSON "\\n" after it is not a name), and NaN, which
    Python's JSON reader accepts, is no number."""
    newline = refused("--attention-config", '{"backend": "FLASH_ATTN\\n"}')
    assert len(newline) == 1 and "give a name" in newline[0], newline
    nan = refused("--override-generation-config", '{"temperature": NaN}')
    assert len(nan) == 1 and "temperature" in nan[0], nan
    assert refused("--override-generation-config", '{"temperature": 0.7}') == []
    huge = refused("--override-generation-config", '{"max_new_tokens": ' + "9" * 400 + "}")
    assert all("Traceback" not in e for e in huge)  # an integer beyond a float: no crash
    scalar = refused("--mm-processor-kwargs", '{"a": NaN}')
    assert len(scalar) == 1, scalar


@pytest.mark.parametrize(
    "value",
    [
        pytest.param('{"a": ' + "[" * 2030 + "]" * 2030 + "}", id="arrays"),
        pytest.param("[" * 33 + "]" * 33, id="one-over"),
        pytest.param('{"a": {"b": ' * 20 + "1" + "}}" * 20, id="objects"),
    ],
)
def test_a_value_nested_past_the_yaml_bound_is_refused_before_it_is_decoded(value: str) -> None:
    # Decoded, 2,030 levels overflow Python's stack (RecursionError: exit 3).
    assert refused("--default-chat-template-kwargs", value) == [
        AT + "the value of `--default-chat-template-kwargs` nests deeper than 32 levels; "
        "vLLM's options are a few levels deep: give the keys the option takes"
    ]


def test_a_value_nested_by_dotted_keys_past_the_yaml_bound_is_refused() -> None:
    # ``--x.k.a.a...`` is {"k": {"a": {"a": ...}}}: 2,000 keys overflowed Python's stack
    # while its strings were walked (RecursionError: exit 3).
    deep = "--attention-config.backend" + ".a" * 2000
    assert refused(deep, "1") == [
        AT + "the value of `--attention-config` nests deeper than 32 levels; "
        "vLLM's options are a few levels deep: give the keys the option takes"
    ]
    assert refused("--attention-config.backend" + ".a" * 30, '"x"') == []


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    from inferplane.blueprint.upstream.vllm_values import json_depth

    assert json_depth('{"a": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}') == 1
    assert json_depth('{"a": "\\"[[[[", "b": [[1]]}') == 3
    assert json_depth("[" * 32 + "]" * 32) == 32
