"""The allowlists of `vllm.extra_args` and `vllm.env` are what scripts/vllm_serve_flags.py
generates for the pinned vLLM wheel: same version, same wheel, same classification. The
names in the committed tables stand for the wheel (reading it again needs a 436 MB
download); everything else is recomputed here."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from inferplane.blueprint import defaults, vllm_owned

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "inferplane" / "blueprint"


def script() -> ModuleType:
    path = ROOT / "scripts" / "vllm_serve_flags.py"
    spec = importlib.util.spec_from_file_location("vllm_serve_flags", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def header(text: str) -> tuple[str, str, str]:
    """(version, wheel, sha256) the table says it was generated from."""
    version = re.search(r"of vLLM (\S+) \(", text)
    wheel = re.search(r"PyPI wheel (\S+)", text)
    sha = re.search(r"sha256 ([0-9a-f]{64})", text)
    assert version and wheel and sha
    return version.group(1), wheel.group(1), sha.group(1)


def rows(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


@pytest.mark.parametrize("name", ["vllm_serve_flags.txt", "vllm_env_vars.txt"])
def test_the_table_is_of_the_pinned_wheel(name: str) -> None:
    version, wheel, sha256 = header((TABLES / name).read_text())
    assert version == defaults.VERSIONS["vllm"].removeprefix("v")
    assert script().WHEELS[version] == (wheel, sha256)


def test_the_flag_table_is_what_the_script_generates() -> None:
    text = (TABLES / "vllm_serve_flags.txt").read_text()
    longs = {r[0] for r in rows(text) if r[1] != "short"}
    shorts = {r[0]: r[2] for r in rows(text) if r[1] == "short"}
    assert script().flags_table(*header(text), longs, shorts) == text


def test_the_env_table_is_what_the_script_generates() -> None:
    s = script()
    text = (TABLES / "vllm_env_vars.txt").read_text()
    names = {r[0] for r in rows(text)} - s.OTHER_ENV
    assert s.env_table(*header(text), names) == text


def test_a_new_option_or_variable_must_be_classified_first() -> None:
    s = script()
    text = (TABLES / "vllm_serve_flags.txt").read_text()
    longs = {r[0] for r in rows(text) if r[1] != "short"}
    with pytest.raises(SystemExit, match="--brand-new-flag"):
        s.flags_table(*header(text), longs | {"--brand-new-flag"}, {})
    with pytest.raises(SystemExit, match=r"remove them here.*--swap-space"):
        s.flags_table(*header(text), longs - {"--swap-space"}, {})
    with pytest.raises(SystemExit, match="VLLM_BRAND_NEW"):
        s.env_table(*header(text), {"VLLM_BRAND_NEW", *s.ALLOWED_VLLM_ENV})


def test_every_long_option_and_variable_is_classified_and_every_refusal_says_why() -> None:
    for table in (vllm_owned.flag_table(), vllm_owned.env_table()):
        assert {e.kind for e in table.values()} == {"allowed", "owned", "refused"}
        assert all(e.text for e in table.values() if e.kind != "allowed")
        # The reason or hint is the tail of a `<what>; <how to fix>` message.
        assert all(";" not in e.text for e in table.values() if e.kind == "refused")
    assert vllm_owned.short_options()["-tp"] == "--tensor-parallel-size"
    assert vllm_owned.short_options()["-asc"] == "--api-server-count"


@pytest.mark.parametrize(
    "flag",
    ["--trust-remote-code", "--tool-parser-plugin", "--allowed-local-media-path",
     "--disable-log-stats", "--api-server-count", "--middleware", "--worker-cls",
     "--logits-processors", "--enable-log-requests", "--kv-transfer-config", "--headless"],
)  # fmt: skip
def test_the_reproduced_flags_are_not_allowed(flag: str) -> None:
    assert vllm_owned.flag_table()[flag].kind != "allowed"


@pytest.mark.parametrize(
    "var",
    ["LD_PRELOAD", "PYTHONPATH", "HTTPS_PROXY", "VLLM_SERVER_DEV_MODE",
     "VLLM_ALLOW_RUNTIME_LORA_UPDATING", "VLLM_USE_MODELSCOPE", "VLLM_CACHE_ROOT"],
)  # fmt: skip
def test_the_reproduced_variables_are_not_allowed(var: str) -> None:
    assert vllm_owned.env_table()[var].kind != "allowed"


def _free_string(schema: dict[str, Any], node: Any) -> bool:
    """Whether `node` (a $ref followed) is a string with no enum and no pattern."""
    if isinstance(node, dict) and "$ref" in node:
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return (
        isinstance(node, dict)
        and node.get("type") == "string"
        and "enum" not in node
        and "pattern" not in node
    )


def _pass_throughs(schema: dict[str, Any], node: Any, path: str, out: set[str]) -> None:
    """Schema paths of free-form string lists and string maps (values the blueprint passes
    to a program verbatim)."""
    if isinstance(node, dict):
        if node.get("type") == "array" and _free_string(schema, node.get("items")):
            out.add(path)
        if _free_string(schema, node.get("additionalProperties")):
            out.add(path)
        for key, value in node.items():
            _pass_throughs(schema, value, f"{path}/{key}", out)
    elif isinstance(node, list):
        for value in node:
            _pass_throughs(schema, value, path, out)


def test_the_only_pass_throughs_are_the_classified_ones() -> None:
    """A new verbatim pass-through (a Triton flag list, another env map) must get its own
    allowlist: this fails until it is added here beside vLLM's."""
    schema = json.loads((TABLES / "blueprint.schema.json").read_text())
    found: set[str] = set()
    _pass_throughs(schema, schema, "", found)
    assert found == {
        "/$defs/vllm/properties/extra_args",
        "/$defs/vllm/properties/env",
        "/$defs/partial.vllm/properties/extra_args",
        "/$defs/partial.vllm/properties/env",
    }
