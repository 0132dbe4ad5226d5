"""The values of the allowed vLLM options that take free-form JSON or a choice: only the
keys of the option's config class in the pinned release, names as values (no path, URL or
module), and the choices inferplane does not refuse (`vllm_values`, `flag_values.txt`)."""

from __future__ import annotations

import pytest
from test_semantic_vllm import chat, errors

from inferplane.blueprint.upstream import vllm_owned, vllm_values

NAMES_ONLY = "give a name (letters, digits, `_`, `-`), as vLLM's choices for the key are"


def refused(*args: str) -> list[str]:
    """The errors of `args` as a block list under models.chat.vllm.extra_args (one line
    each, the first on line 29)."""
    lines = "".join(f"        - {a!r}\n" for a in args)
    return errors(chat(f"    vllm:\n      extra_args:\n{lines}"))


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(
            ("--block-size", "16", "--attention-config", '{"backend_cls": "evil.mod:Backend"}'),
            "bp.yaml:32:11: error: models.chat.vllm.extra_args[3]: `backend_cls` is not a key "
            "of `--attention-config` inferplane passes; use a key "
            "inferplane/facts/vllm/v0.33.0/flag_values.txt lists for `--attention-config` (the "
            "keys vLLM v0.33.0 reads of it)",
            id="a-key-naming-a-class",
        ),
        pytest.param(
            ("--attention-config", '{"backend": "evil.mod:Backend"}'),
            "bp.yaml:30:11: error: models.chat.vllm.extra_args[1]: `--attention-config` key "
            "`backend` is given 'evil.mod:Backend': this key takes names and numbers, and a "
            f"path, URL or module is refused; {NAMES_ONLY}",
            id="a-module-path",
        ),
        pytest.param(
            ("--attention-config.backend", "/models/chat/backend.so"),
            "bp.yaml:30:11: error: models.chat.vllm.extra_args[1]: `--attention-config` key "
            "`backend` is given '/models/chat/backend.so': this key takes names and numbers, "
            f"and a path, URL or module is refused; {NAMES_ONLY}",
            id="a-file-path-one-key-at-a-time",
        ),
        pytest.param(
            ('--kernel-config={"ir_op_priority": {"rms_norm": ["https://evil.example/k"]}}',),
            "bp.yaml:29:11: error: models.chat.vllm.extra_args[0]: `--kernel-config` key "
            "`ir_op_priority` is given 'https://evil.example/k': this key takes names and "
            f"numbers, and a path, URL or module is refused; {NAMES_ONLY}",
            id="a-url-nested",
        ),
        pytest.param(
            ("--reasoning-config", '{"reasoning_parser": "plugins.parser:Mine"}'),
            "bp.yaml:30:11: error: models.chat.vllm.extra_args[1]: `--reasoning-config` key "
            "`reasoning_parser` is given 'plugins.parser:Mine': this key takes names and "
            f"numbers, and a path, URL or module is refused; {NAMES_ONLY}",
            id="a-parser-module",
        ),
        pytest.param(
            ("--kv-offloading-backend", "lmcache"),
            "bp.yaml:30:11: error: models.chat.vllm.extra_args[1]: `--kv-offloading-backend` "
            "lmcache is refused: sends the KV cache to an LMCache server, a process inferplane "
            "does not run; use native",
            id="lmcache",
        ),
        pytest.param(
            ("--prefix-caching-hash-algo=xxhash",),
            "bp.yaml:29:11: error: models.chat.vllm.extra_args[0]: `--prefix-caching-hash-algo` "
            "xxhash is refused: a non-cryptographic hash, whose collisions can leak one "
            "client's cached prompt to another; use one of sha256, sha256_cbor",
            id="xxhash",
        ),
        pytest.param(
            ("--watchdog-config", '{"timeout": 60, "dump_dir": "/models"}'),
            "bp.yaml:30:11: error: models.chat.vllm.extra_args[1]: `--watchdog-config` key "
            "`dump_dir` is refused: writes stack dumps to a directory it names, a path of the "
            "serving pod; remove it",
            id="watchdog-dump-dir",
        ),
        pytest.param(
            ("--watermark-config.key", "12345"),
            "bp.yaml:29:11: error: models.chat.vllm.extra_args[0]: `--watermark-config` key "
            "`key` is refused: the watermark's secret key, and arguments are stored in plain "
            "text; remove it",
            id="watermark-secret-key",
        ),
        pytest.param(
            ("--kv-offloading-backend.connector", "LMCacheMPConnector"),
            "bp.yaml:30:11: error: models.chat.vllm.extra_args[1]: `--kv-offloading-backend` "
            "takes one value, not keys; write the value alone, e.g. --kv-offloading-backend=native",
            id="a-choice-given-keys",
        ),
        pytest.param(
            ("--attention-config", "FLASH_ATTN"),
            "bp.yaml:30:11: error: models.chat.vllm.extra_args[1]: `--attention-config` takes a "
            'JSON object; write it as --attention-config={"<key>": <value>}, with a key of its '
            "config class",
            id="not-json",
        ),
        pytest.param(
            ("--block-size", "16", "--kernel-config"),
            "bp.yaml:31:11: error: models.chat.vllm.extra_args[2]: `--kernel-config` needs a "
            'value; give it one, e.g. --kernel-config={"<key>": <value>}, with a key of its '
            "config class",
            id="no-value",
        ),
    ],
)
def test_a_hostile_value_is_refused_at_its_line(args: tuple[str, ...], expected: str) -> None:
    assert refused(*args) == [expected]


def test_the_values_vllm_documents_pass() -> None:
    assert (
        refused(
            "--attention-config",
            '{"backend": "FLASH_ATTN", "flash_attn_version": 3, '
            '"backend_per_kind": {"mla_attention": "FLASHINFER_MLA"}}',
            "--attention-config.hisparse_config.device_buffer_size=4096",
            "--kernel-config.moe_backend",
            "flashinfer_cutlass",
            "--kernel-config.linear_backend_per_quant",
            '{"nvfp4_w4a16": "humming"}',
            "--reasoning-config",
            '{"reasoning_parser": "deepseek_r1", "reasoning_end_str": "</think>"}',
            "--kv-offloading-backend=native",
            "--prefix-caching-hash-algo",
            "sha256_cbor",
        )
        == []
    )


def test_the_rules_are_those_of_the_release_that_runs() -> None:
    """v0.10.2 has no --attention-config, an EPLBConfig of four keys, and only the two
    sha256 choices; the plain-dict options of each release are restricted too."""
    assert set(vllm_values.rules("v0.10.2")) == {
        "--eplb-config",
        "--prefix-caching-hash-algo",
        "--limit-mm-per-prompt",
        "--media-io-kwargs",
        "--mm-processor-kwargs",
        "--override-generation-config",
        "--override-pooler-config",
        "--rope-scaling",
    }
    assert vllm_values.rules("v0.10.2")["--eplb-config"].keys == {
        "window_size",
        "step_interval",
        "num_redundant_experts",
        "log_balancedness",
    }
    assert vllm_values.rules("v0.10.2")["--prefix-caching-hash-algo"].choices == {
        "sha256",
        "sha256_cbor",
    }
    v033 = vllm_values.rules("v0.33.0")
    assert set(v033) == {
        "--attention-config",
        "--kernel-config",
        "--reasoning-config",
        "--eplb-config",
        "--aux-output-config",
        "--pooler-config",
        "--engram-config",
        "--watchdog-config",
        "--ir-op-priority",
        "--diffusion-config",
        "--watermark-config",
        "--kv-offloading-backend",
        "--prefix-caching-hash-algo",
        "--default-chat-template-kwargs",
        "--limit-mm-per-prompt",
        "--media-io-kwargs",
        "--mm-processor-kwargs",
        "--override-generation-config",
        "--reasoning-effort-map",
        # Its choices less DEBUG and NOTSET, at which tool-call parsers log the output.
        "--log-level",
    }
    assert v033["--watchdog-config"].keys == {"timeout", "check_interval"}
    assert v033["--reasoning-config"] == vllm_values.Rule(
        keys=frozenset({"reasoning_parser", "reasoning_start_str", "reasoning_end_str"}),
        text=frozenset({"reasoning_start_str", "reasoning_end_str"}),
    )
    assert "backend" in v033["--attention-config"].keys
    assert v033["--kv-offloading-backend"].refused.keys() == {"lmcache"}


def test_the_list_form_and_underscores_are_read_as_vllm_reads_them() -> None:
    """``--x.key+ a,b`` is the list ["a", "b"]; ``--x_y`` is ``--x-y``
    (v0.33.0 vllm/utils/argparse_utils.py, FlexibleArgumentParser.parse_args)."""
    found = list(
        vllm_owned.extra_args_problems(
            ["--kernel_config.ir_op_priority.rms_norm+", "native,/srv/evil"], "chat", "v0.33.0"
        )
    )
    assert [(i, m.split(":")[0]) for i, m, _ in found] == [
        (1, "`--kernel-config` key `ir_op_priority` is given '/srv/evil'")
    ]
    inner_key = ["--attention-config.backend_per_kind./etc/passwd", "FLASH_ATTN"]
    found = list(vllm_owned.extra_args_problems(inner_key, "chat", "v0.33.0"))
    assert [(i, m.split(":")[0]) for i, m, _ in found] == [
        (1, "`--attention-config` key `backend_per_kind` is given '/etc/passwd'")
    ]


def test_the_media_cache_directory_is_refused_at_its_variable() -> None:
    """VLLM_MEDIA_CACHE names a directory vLLM writes fetched media to and deletes entries
    of (v0.33.0 vllm/multimodal/media/connector.py, _maybe_evict): a path of the pod."""
    assert errors(chat("    vllm: {env: {VLLM_MEDIA_CACHE: /models/chat}}\n")) == [
        "bp.yaml:27:36: error: models.chat.vllm.env.VLLM_MEDIA_CACHE: `VLLM_MEDIA_CACHE` is "
        "refused: writes, and evicts by deleting, files at a path of the serving pod (a "
        "directory it names); remove it"
    ]
