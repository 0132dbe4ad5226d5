"""The allowlists of `vllm.extra_args` and `vllm.env` are what scripts/facts/vllm_serve_flags.py
generates for each supported vLLM release: same release, same wheel, same script version,
same classification. The names in the stored tables stand for the wheels (reading them
again needs a 336-436 MB download each, which CI makes: scripts/facts/vllm_wheels.py fetches
them, checks their sha256 and reads the facts again); everything else is recomputed here."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from inferplane.blueprint import defaults, releases
from inferplane.blueprint.upstream import vllm_owned, vllm_values

ROOT = Path(__file__).resolve().parents[2]
TABLES = ROOT / "inferplane" / "blueprint" / "loading"
FACTS = ROOT / "inferplane" / "facts" / "vllm"
RELEASES = [r.release for r in releases.engine_releases("vllm")]


def script() -> ModuleType:
    sys.path.insert(0, str(ROOT / "scripts" / "facts"))
    import vllm_serve_flags

    return vllm_serve_flags


def header(text: str) -> tuple[str, str, str, str]:
    """(release, wheel, sha256, script version) the table says it was generated from."""
    release = re.search(r"of vLLM (v[0-9.]*[0-9])", text)
    wheel = re.search(r"PyPI wheel (\S+)", text)
    sha = re.search(r"sha256 ([0-9a-f]{64})", text)
    version = re.search(r"scripts/facts/vllm_serve_flags.py version (\S+) ", text)
    assert release and wheel and sha and version
    return release.group(1), wheel.group(1), sha.group(1), version.group(1)


def rows(text: str) -> list[list[str]]:
    return [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]


def flags_of(release: str) -> tuple[set[str], dict[str, str]]:
    text = (FACTS / release / "serve_flags.txt").read_text()
    longs = {r[0] for r in rows(text) if r[1] != "short"}
    return longs, {r[0]: r[2] for r in rows(text) if r[1] == "short"}


def env_of(release: str) -> set[str]:
    return {r[0] for r in rows((FACTS / release / "env_vars.txt").read_text())} - (
        script().env_classes.OTHER_ENV
    )


def test_every_supported_release_has_tables_and_a_wheel() -> None:
    assert defaults.VERSIONS["vllm"] in RELEASES
    assert sorted(p.name for p in FACTS.iterdir()) == sorted(RELEASES)
    for release in RELEASES:
        assert vllm_owned.has_facts(release)
        assert "hermes" in vllm_owned.tool_parsers(release)
        assert 0 < vllm_owned.engine_defaults(release)["gpu_memory_utilization"] < 1
    assert set(script().WHEELS) == set(RELEASES)


@pytest.mark.parametrize("release", RELEASES)
@pytest.mark.parametrize(
    "name",
    [
        "serve_flags.txt",
        "env_vars.txt",
        "tool_parsers.txt",
        "defaults.txt",
        "metrics.txt",
        "flag_values.txt",
        "routes.txt",
    ],
)
def test_the_table_is_of_its_release_wheel_and_this_script(release: str, name: str) -> None:
    s = script()
    found, wheel, sha256, version = header((FACTS / release / name).read_text())
    assert found == release
    assert s.WHEELS[release] == (wheel, sha256)
    assert version == s.SCRIPT_VERSION


@pytest.mark.parametrize("release", RELEASES)
def test_the_flag_table_is_what_the_script_generates(release: str) -> None:
    s = script()
    longs, shorts = flags_of(release)
    every = set().union(*(flags_of(r)[0] for r in RELEASES))
    text = (FACTS / release / "serve_flags.txt").read_text()
    assert s.flags_table(release, longs, shorts, every) == text


@pytest.mark.parametrize("release", RELEASES)
def test_the_env_table_is_what_the_script_generates(release: str) -> None:
    s = script()
    every = set().union(*(env_of(r) for r in RELEASES))
    text = (FACTS / release / "env_vars.txt").read_text()
    assert s.env_table(release, env_of(release), every) == text


def values_of(
    release: str,
) -> tuple[dict[str, list[str]], dict[str, list[str]], dict[str, str], dict[str, list[str]]]:
    """(flag -> keys, flag -> every choice, refused ones included, flag -> the type of a
    key's value, flag -> the modules its keys are read from) the stored table lists: what
    `derived_values` read from the wheel."""
    keys: dict[str, list[str]] = {}
    choices: dict[str, list[str]] = {}
    types: dict[str, str] = {}
    sources: dict[str, list[str]] = {}
    dicts = script().value_classes.DICT_FLAGS
    for row in rows((FACTS / release / "flag_values.txt").read_text()):
        if row[1] == "keys":
            keys.setdefault(row[0], []).extend(row[2].split())
            if row[0] in dicts:
                types.setdefault(row[0], "names")
        elif row[1] == "values":
            types[row[0]] = row[2]
        elif row[1] == "source":
            sources[row[0]] = [m.removeprefix("vllm/") for m in row[2].split()]
        elif row[1] == "refused-key":
            if keys[row[0]] != ["*"]:
                keys[row[0]].append(row[2])
        else:
            choices.setdefault(row[0], []).extend(
                row[2].split() if row[1] == "choices" else [row[2]]
            )
    return keys, choices, types, sources


@pytest.mark.parametrize("release", RELEASES)
def test_the_values_table_is_what_the_script_generates(release: str) -> None:
    s = script()
    keys, choices, types, sources = values_of(release)
    text = (FACTS / release / "flag_values.txt").read_text()
    assert s.values_table(release, keys, choices, types, sources) == text
    # Every restricted option is an allowed option of the release (the rest take no value
    # rule, or are refused whole).
    restricted = {*keys, *choices}
    assert restricted <= {
        f for f, e in vllm_owned.flag_table(release).items() if e.kind == "allowed"
    }
    c = s.value_classes
    assert restricted == {
        f for f in {*c.JSON_CONFIG_FLAGS, *c.CHOICE_FLAGS, *c.DICT_FLAGS}
        if f in vllm_owned.flag_table(release)
    }  # fmt: skip


@pytest.mark.needs_tools
def test_every_allowed_option_taking_a_dict_is_restricted() -> None:
    """An allowed option whose EngineArgs or FrontendArgs field is a dict (``dict[...]``,
    ``HfOverrides``) has a value rule, so no JSON object reaches vLLM unread; read from the
    annotations of the wheel when it is unpacked."""
    s = script()
    for release in RELEASES:
        root = Path.home() / ".cache" / "inferplane" / "vllm" / release[1:] / "vllm"
        if not root.exists():
            message = f"{root} is not unpacked: run scripts/facts/vllm_wheels.py"
            if os.environ.get("CI") == "true":  # CI fetches the wheels first
                pytest.fail(message)
            pytest.skip(message)
        notes = s.vllm_read._annotations(root)
        dict_fields = {
            "--" + name.replace("_", "-")
            for (cls, name), text in notes.items()
            if cls in {"EngineArgs", "FrontendArgs", "BaseFrontendArgs"}
            and ("dict[" in text.lower() or "HfOverrides" in text)
        }
        table = vllm_owned.flag_table(release)
        allowed = {f for f in dict_fields if f in table and table[f].kind == "allowed"}
        assert allowed - set(vllm_values.rules(release)) <= WHOLE, release


# Dict options allowed whole, and why. LoadConfig.pt_load_map_location (v0.33.0
# vllm/config/load.py: ``str | dict[str, str]``) is torch.load's map_location, a device or
# a device -> device map (``{"cuda:1": "cuda:0"}``): no key or value of it names code, a
# path or a place.
WHOLE = {"--pt-load-map-location"}


def test_a_new_key_or_choice_of_vllm_is_written_and_a_refused_one_says_why() -> None:
    s = script()
    keys, choices, types, sources = values_of("v0.33.0")
    text = s.values_table(
        "v0.33.0",
        {**keys, "--attention-config": [*keys["--attention-config"], "new_key"]},
        {**choices, "--kv-offloading-backend": ["native", "lmcache", "other"]},
        types,
        sources,
    )
    assert " mla_prefill_backend new_key sparse_mla_force_mqa " in text
    assert "--kv-offloading-backend\tchoices\tnative other\n" in text
    assert "--kv-offloading-backend\trefused\tlmcache\tsends the KV cache to an LMCache" in text
    # A refused choice a release lacks is not written (v0.10.2 has no xxhash).
    assert "xxhash" not in (FACTS / "v0.10.2" / "flag_values.txt").read_text()


def test_the_media_cache_directory_is_refused() -> None:
    """VLLM_MEDIA_CACHE names a directory whose entries vLLM deletes past their TTL or size
    cap (v0.33.0 vllm/multimodal/media/connector.py, _maybe_evict); its size and TTL alone
    do nothing."""
    table = vllm_owned.env_table("v0.33.0")
    assert table["VLLM_MEDIA_CACHE"].kind == "refused"
    assert table["VLLM_MEDIA_CACHE_MAX_SIZE_MB"].kind == "allowed"


def test_a_table_of_another_script_version_is_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    s = script()
    every = set().union(*(flags_of(r)[0] for r in RELEASES))
    longs, shorts = flags_of("v0.33.0")
    text = (FACTS / "v0.33.0" / "serve_flags.txt").read_text()
    assert s.flags_table("v0.33.0", longs, shorts, every) == text
    monkeypatch.setattr(s, "SCRIPT_VERSION", "0")
    assert s.flags_table("v0.33.0", longs, shorts, every) != text


def test_a_new_option_or_variable_must_be_classified_first() -> None:
    s = script()
    every = set().union(*(flags_of(r)[0] for r in RELEASES))
    longs, _ = flags_of("v0.33.0")
    with pytest.raises(SystemExit, match="--brand-new-flag"):
        s.flags_table("v0.33.0", longs | {"--brand-new-flag"}, {}, every)
    # --swap-space is an option of v0.10.2 only: classified names must exist in a release.
    with pytest.raises(SystemExit, match=r"remove them here.*--swap-space"):
        s.flags_table("v0.33.0", longs, {}, every - {"--swap-space"})
    with pytest.raises(SystemExit, match="VLLM_BRAND_NEW"):
        s.env_table("v0.33.0", {"VLLM_BRAND_NEW", *env_of("v0.33.0")}, set())


@pytest.mark.parametrize("release", RELEASES)
def test_every_long_option_and_variable_is_classified_and_every_refusal_says_why(
    release: str,
) -> None:
    flags, env = vllm_owned.flag_table(release), vllm_owned.env_table(release)
    assert {e.kind for e in flags.values()} == {"allowed", "owned", "refused"}
    # A variable some of whose values are refused lists the others and says why.
    assert {e.kind for e in env.values()} == {"allowed", "owned", "refused", "values"}
    assert env["VLLM_LOGGING_LEVEL"].text.split("\t")[0].split() == [
        "CRITICAL", "ERROR", "FATAL", "INFO", "WARN", "WARNING"
    ]  # fmt: skip
    for table in (flags, env):
        assert all(e.text for e in table.values() if e.kind != "allowed")
        # The reason or hint is the tail of a `<what>; <how to fix>` message.
        assert all(";" not in e.text for e in table.values() if e.kind == "refused")
    assert vllm_owned.short_options(release)["-tp"] == "--tensor-parallel-size"
    assert vllm_owned.short_options(release)["-asc"] == "--api-server-count"


def test_the_schema_offers_the_tool_parsers_of_every_supported_release() -> None:
    schema = json.loads((TABLES / "blueprint.schema.json").read_text())
    offered = schema["$defs"]["vllm"]["properties"]["tool_call_parser"]["enum"]
    assert offered == sorted(offered)
    assert set(offered) == set().union(*(vllm_owned.tool_parsers(r) for r in RELEASES))
    assert schema["$defs"]["partial.vllm"]["properties"]["tool_call_parser"]["enum"] == offered


def test_the_metric_renames_v0_10_2_announced_happened_in_v0_33_0() -> None:
    """v0.10.2 documents vllm:gpu_cache_usage_perc as "DEPRECATED: Use
    vllm:kv_cache_usage_perc instead" (vllm/v1/metrics/loggers.py); v0.33.0 has only the new
    name. Every rename recorded for an older release lands on a family of the pinned one."""
    old = (FACTS / "v0.10.2" / "metrics.txt").read_text()
    renamed = {r[0]: r[2].removeprefix("renamed ") for r in rows(old) if len(r) > 2}
    assert renamed["vllm:gpu_cache_usage_perc"] == "vllm:kv_cache_usage_perc"
    new = vllm_owned.metric_families("v0.33.0")
    assert set(renamed.values()) <= set(new)
    assert not set(renamed) & set(new)
    assert new["vllm:kv_cache_usage_perc"] == "gauge"
    assert "vllm:generation_tokens_total" in vllm_owned.metric_series("v0.33.0")
    assert "vllm:iteration_tokens_total_bucket" in vllm_owned.metric_series("v0.33.0")


def test_the_releases_differ_where_vllm_changed() -> None:
    """v0.33.0 dropped --swap-space and VLLM_ATTENTION_BACKEND (now --attention-backend /
    --attention-config) and added the gRPC frontend, refused like every other endpoint."""
    assert "--swap-space" in vllm_owned.serve_flags("v0.10.2")
    assert "--swap-space" not in vllm_owned.serve_flags("v0.33.0")
    assert "VLLM_ATTENTION_BACKEND" in vllm_owned.env_table("v0.10.2")
    assert "VLLM_ATTENTION_BACKEND" not in vllm_owned.env_table("v0.33.0")
    assert vllm_owned.flag_table("v0.33.0")["--grpc-port"].kind == "refused"
    assert vllm_owned.flag_table("v0.33.0")["--model-class-overrides"].kind == "refused"
    assert vllm_owned.env_table("v0.33.0")["VLLM_RUST_FRONTEND_PATH"].kind == "refused"


@pytest.mark.parametrize(
    "flag",
    ["--trust-remote-code", "--tool-parser-plugin", "--allowed-local-media-path",
     "--disable-log-stats", "--api-server-count", "--middleware", "--worker-cls",
     "--logits-processors", "--enable-log-requests", "--kv-transfer-config", "--headless"],
)  # fmt: skip
def test_the_reproduced_flags_are_not_allowed(flag: str) -> None:
    for release in RELEASES:
        assert vllm_owned.flag_table(release)[flag].kind != "allowed"


@pytest.mark.parametrize(
    "var",
    ["LD_PRELOAD", "PYTHONPATH", "HTTPS_PROXY", "VLLM_SERVER_DEV_MODE",
     "VLLM_ALLOW_RUNTIME_LORA_UPDATING", "VLLM_USE_MODELSCOPE", "VLLM_CACHE_ROOT"],
)  # fmt: skip
def test_the_reproduced_variables_are_not_allowed(var: str) -> None:
    for release in RELEASES:
        assert vllm_owned.env_table(release)[var].kind != "allowed"


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
        # A Python step's warm-up text: data for the model's own model.py, which reaches
        # the fetch container's shell only as a variable (test_triton_pipeline,
        # test_the_sample_files_are_in_tritons_string_layout).
        "/$defs/pipelineStep/properties/warmup_sample",
        "/$defs/partial.pipelineStep/properties/warmup_sample",
        "/$defs/vllm/properties/extra_args",
        "/$defs/vllm/properties/env",
        "/$defs/partial.vllm/properties/extra_args",
        "/$defs/partial.vllm/properties/env",
        # AWS tags that select the GPU nodes' security groups (never `*`): data for
        # Karpenter's selector, granted term by term by the mandatory rule
        # karpenter-security-groups (tests/policies/test_karpenter_security_groups.py).
        "/$defs/karpenterSecurityGroupTerm/properties/tags",
    }
