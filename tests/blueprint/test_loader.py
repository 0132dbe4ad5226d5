"""The strict blueprint loader: what it accepts, where it says values are, and exactly how it
refuses everything else."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from inferplane.blueprint.errors import BlueprintError, Location
from inferplane.blueprint.loading.loader import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_DIAGNOSTICS,
    load,
    load_text,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "blueprints" / "support-assistant.yaml"

NO_REUSE = (
    "blueprints do not use anchors, aliases or merge keys: write the values out in full "
    "(per-environment differences go in environments.<env>.overrides)"
)
START = "a blueprint is a YAML mapping that starts with 'apiVersion: inferplane/v1'"
TAG_HINT = (
    "remove it: blueprint values are plain strings, numbers, booleans, lists and mappings "
    "(quote a value to make it a string)"
)


def error(text: str | bytes, file: str = "bp.yaml") -> str:
    """The formatted BlueprintError that loading `text` raises."""
    with pytest.raises(BlueprintError) as raised:
        load_text(text, file)
    return str(raised.value)


def position(text: str, needle: str, occurrence: int = 1) -> tuple[int, int]:
    """1-based line and column of the `occurrence`-th `needle` in `text`."""
    offset = -1
    for _ in range(occurrence):
        offset = text.index(needle, offset + 1)
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


# --- what loads -----------------------------------------------------------------------------


def test_example_blueprint_loads_with_locations() -> None:
    text = EXAMPLE.read_text(encoding="utf-8")
    doc = load(EXAMPLE, display_name="blueprints/support-assistant.yaml")
    ranker = doc.data["models"]["ranker"]
    assert ranker["batching"] == {
        "max_batch_size": 32,
        "max_queue_delay_us": 2000,
        "preferred_batch_sizes": [8, 16],
    }
    assert doc.data["versions"]["triton"] == "26.02"
    assert "policies" not in doc.data  # no waiver: its expiry would date the example

    path = ("models", "ranker", "batching", "max_queue_delay_us")
    line, key_col = position(text, "max_queue_delay_us: 2000")
    assert doc.source.value(path) == Location(
        "blueprints/support-assistant.yaml", line, key_col + len("max_queue_delay_us: ")
    )
    assert doc.source.key(path) == Location("blueprints/support-assistant.yaml", line, key_col)

    # A list item inside a flow mapping inside a flow sequence.
    line, col = position(text, "[32, 512]")
    max_shape = ("models", "ranker", "tensorrt", "inputs", "input_ids", "max")
    assert doc.source.value((*max_shape, 1)).line == line
    assert doc.source.value((*max_shape, 1)).column == col + len("[32, ")
    # The second zone of prod, and a key inside environments.<env>.overrides.
    line, col = position(text, "us-central1-b")
    assert doc.source.value(("environments", "prod", "zones", 1)).line == line
    assert doc.source.value(("environments", "prod", "zones", 1)).column == col
    line, col = position(text, "h100: {zones")  # the prod override
    assert doc.source.key(("environments", "prod", "overrides", "gpu_pools", "h100")) == (
        Location("blueprints/support-assistant.yaml", line, col)
    )


def test_example_loads_in_milliseconds() -> None:
    load(EXAMPLE)
    started = time.perf_counter()
    for _ in range(10):
        load(EXAMPLE)
    # Pure-Python parsing of ~7 KB; a generous bound that still catches accidental
    # quadratic behaviour on a loaded 2-core machine.
    assert (time.perf_counter() - started) / 10 < 0.25


def test_locations_of_nested_values_keys_and_list_items() -> None:
    text = (
        "apiVersion: inferplane/v1\n"
        "models:\n"
        "  chat:\n"
        "    replicas: {min: 2, max: 8}\n"
        "    empty:\n"
        "    zones:\n"
        "      - us-east-1a\n"
        "      - - nested\n"
        "    flow: [a, {b: 'c'}]\n"
    )
    doc = load_text(text, "x.yaml")
    assert doc.data["models"]["chat"] == {
        "replicas": {"min": 2, "max": 8},
        "empty": None,
        "zones": ["us-east-1a", ["nested"]],
        "flow": ["a", {"b": "c"}],
    }
    values, keys = doc.source.values, doc.source.keys
    assert values[()] == Location("x.yaml", 1, 1)
    assert values[("models",)] == Location("x.yaml", 3, 3)  # a block mapping starts at its key
    assert keys[("models",)] == Location("x.yaml", 2, 1)
    assert keys[("models", "chat")] == Location("x.yaml", 3, 3)
    assert values[("models", "chat", "replicas")] == Location("x.yaml", 4, 15)
    assert values[("models", "chat", "replicas", "max")] == Location("x.yaml", 4, 29)
    assert keys[("models", "chat", "replicas", "max")] == Location("x.yaml", 4, 24)
    assert values[("models", "chat", "empty")] == Location("x.yaml", 5, 11)  # after the ':'
    assert values[("models", "chat", "zones")] == Location("x.yaml", 7, 7)
    assert values[("models", "chat", "zones", 0)] == Location("x.yaml", 7, 9)
    assert values[("models", "chat", "zones", 1)] == Location("x.yaml", 8, 9)
    assert values[("models", "chat", "zones", 1, 0)] == Location("x.yaml", 8, 11)
    assert values[("models", "chat", "flow", 1, "b")] == Location("x.yaml", 9, 19)
    assert keys[("models", "chat", "flow", 1, "b")] == Location("x.yaml", 9, 16)
    assert ("models", "chat", "zones", 0) not in keys  # list items have no key
    assert doc.source.file == "x.yaml"


def test_crlf_line_endings_and_a_bom_keep_editor_positions() -> None:
    doc = load_text(b"\xef\xbb\xbfa: 1\r\nb:\r\n  c: x\r\n", "crlf.yaml")
    assert doc.data == {"a": 1, "b": {"c": "x"}}
    assert doc.source.values[()] == Location("crlf.yaml", 1, 1)
    assert doc.source.values[("b", "c")] == Location("crlf.yaml", 3, 6)
    assert load_text("\ufeffa: 1\n", "s.yaml").data == {"a": 1}


@pytest.mark.parametrize(
    ("plain", "value"),
    [
        ("~", None),
        ("null", None),
        ("Null", None),
        ("NULL", None),
        ("", None),
        ("true", True),
        ("True", True),
        ("TRUE", True),
        ("false", False),
        ("False", False),
        ("FALSE", False),
        ("0", 0),
        ("-0", 0),
        ("+12", 12),
        ("-12", -12),
        ("0o17", 15),
        ("0x1F", 31),
        ("0xff", 255),
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("1.33", 1.33),
        ("-.5", -0.5),
        ("1.", 1.0),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("1.5E-3", 0.0015),
        ("+2.5e+2", 250.0),
        ("0.90", 0.9),
        ("012.5", 12.5),
        ("2027-03-31", "2027-03-31"),
        ("v0.10.2", "v0.10.2"),
        ("25.08.1", "25.08.1"),
        ("1.2.3", "1.2.3"),
        ("10.0.0.0/8", "10.0.0.0/8"),
        ("00:30", "00:30"),
        ("nvidia-l4", "nvidia-l4"),
        ("yesterday", "yesterday"),
        ("nulls", "nulls"),
        ("0o", "0o"),
        ("0x", "0x"),
        ("+0o17", "+0o17"),
        ("1:2:3:4:5:x", "1:2:3:4:5:x"),
        ("a b  c", "a b  c"),
        ("- x", None),
    ],
)
def test_plain_scalars_follow_the_yaml_1_2_core_schema(plain: str, value: object) -> None:
    if plain == "- x":  # a one-item list, to show that block syntax is not a string
        assert load_text("a:\n  - x\n", "f.yaml").data == {"a": ["x"]}
        return
    loaded = load_text(f"a: {plain}\n", "f.yaml").data["a"]
    assert loaded == value
    assert type(loaded) is type(value)


@pytest.mark.parametrize(
    "text",
    ['"yes"', "'012'", '"1.5"', "'~'", "'22:22'", '"true"', "|-\n  yes\n", '">\n  1_000"', '""'],
)
def test_quoted_and_block_scalars_are_always_strings(text: str) -> None:
    assert isinstance(load_text(f"a: {text}\n", "f.yaml").data["a"], str)


def test_quoted_keys_that_look_like_other_types_are_strings() -> None:
    doc = load_text("'1': a\n\"on\": b\n'<<': c\n'': d\n", "f.yaml")
    assert doc.data == {"1": "a", "on": "b", "<<": "c", "": "d"}


def test_nesting_up_to_the_limit_loads() -> None:
    text = "a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    value = load_text(text, "f.yaml").data["a"]
    for _ in range(MAX_DEPTH - 2):
        value = value[0]
    assert value == []


# --- what is refused, with the exact message ------------------------------------------------


def test_duplicate_key_points_at_the_second_and_names_the_first_line() -> None:
    assert error("models:\n  chat:\n    gpus: 1\n  chat:\n    gpus: 2\n") == (
        "bp.yaml:4:3: error: models.chat: duplicate key 'chat' (first defined at line 2); "
        "remove one of the two, or merge them into one"
    )
    assert error("a: {b: 1, 'b': 2}\n") == (
        "bp.yaml:1:11: error: a.b: duplicate key 'b' (first defined at line 1); "
        "remove one of the two, or merge them into one"
    )


def test_anchor_and_alias_are_refused() -> None:
    assert error("base: &defaults {gpus: 1}\nchat: *defaults\n") == (
        f"bp.yaml:1:7: error: base: anchor '&defaults' is not allowed; {NO_REUSE}\n"
        f"bp.yaml:2:7: error: chat: alias '*defaults' is not allowed; {NO_REUSE}"
    )


def test_merge_key_is_refused() -> None:
    assert error("chat:\n  <<: {gpus: 1}\n") == (
        f"bp.yaml:2:3: error: chat.<<: merge key '<<' is not allowed; {NO_REUSE}"
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("!!python/object/apply:os.system ['true']", "!!python/object/apply:os.system"),
        ("!!binary aGVsbG8=", "!!binary"),
        ("!Ref Something", "!Ref"),
        ("!!str 012", "!!str"),
        ("! x", "!"),
        ("!<tag:example.com,2000:x> y", "!<tag:example.com,2000:x>"),
        ("!!map {a: 1}", "!!map"),
    ],
)
def test_any_explicit_tag_is_refused(value: str, shown: str) -> None:
    assert error(f"a: {value}\n") == (
        f"bp.yaml:1:4: error: a: tag '{shown}' is not allowed; {TAG_HINT}"
    )


def test_a_second_document_is_refused() -> None:
    assert error("a: 1\n---\nb: 2\n") == (
        "bp.yaml:2:1: error: <document>: a second YAML document starts here; a blueprint is "
        "one document: remove this '---' and what follows it, or move that to a file of its own"
    )
    assert load_text("---\na: 1\n...\n", "f.yaml").data == {"a": 1}  # one explicit document


def test_directives_are_refused() -> None:
    hint = "remove it: blueprints are read as YAML 1.2 and need no directives"
    assert error("%YAML 1.1\n---\na: 1\n") == (
        f"bp.yaml:1:1: error: <document>: directive '%YAML 1.1' is not allowed; {hint}"
    )
    assert error("%TAG !e! tag:example.com,2000:\n---\na: 1\n") == (
        f"bp.yaml:1:1: error: <document>: directive '%TAG' is not allowed; {hint}"
    )
    assert error("%YAML 1." + "9" * 5000 + "\n---\na: 1\n") == (
        f"bp.yaml:1:9: error: <document>: invalid YAML directive; {hint}"
    )


@pytest.mark.parametrize(
    ("text", "what"),
    [("", "empty"), ("\n  \n", "empty"), ("# only a comment\n\n# another\n", "only comments")],
)
def test_empty_file_is_refused(text: str, what: str) -> None:
    assert error(text) == (
        f"bp.yaml:1:1: error: <document>: the file has no YAML content ({what}); {START}"
    )


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ("- a\n- b\n", "1:1", "a list"),
        ("# c\n[a, b]\n", "2:1", "a list"),
        ("just text\n", "1:1", "a single value"),
        ("'quoted'\n", "1:1", "a single value"),
        ("~\n", "1:1", "empty (null)"),
        ("---\n", "2:1", "empty (null)"),
    ],
)
def test_top_level_must_be_a_mapping(text: str, where: str, what: str) -> None:
    assert error(text) == (
        f"bp.yaml:{where}: error: <document>: the top level is {what}, not a mapping; {START}"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1: a\n", "1:1: error: 1: mapping key '1' is an integer, not a string; quote it (\"1\")"),
        (
            "a:\n  true: x\n",
            "2:3: error: a.true: mapping key 'true' is a boolean, not a string; "
            'quote it ("true")',
        ),
        ("~: x\n", "1:1: error: ~: mapping key '~' is null, not a string; quote it (\"~\")"),
        (
            "1.5: x\n",
            "1:1: error: 1.5: mapping key '1.5' is a number, not a string; quote it (\"1.5\")",
        ),
        ("? \n: x\n", "1:2: error: <document>: mapping key is empty; write a name before the ':'"),
        (
            "? {a: 1}\n: x\n",
            "1:3: error: <document>: mapping key is a mapping, not a string; "
            "write keys as plain names: 'name: value'",
        ),
        (
            "a:\n  ? [x, y]\n  : z\n",
            "2:5: error: a: mapping key is a list, not a string; "
            "write keys as plain names: 'name: value'",
        ),
        (
            "off: 1\n",
            "1:1: error: off: ambiguous key 'off': YAML 1.1 reads it as a boolean, "
            'YAML 1.2 as a string; write true/false, or quote it ("off")',
        ),
    ],
)
def test_mapping_keys_must_be_strings(text: str, expected: str) -> None:
    assert error(text) == f"bp.yaml:{expected}"


def test_tabs_in_indentation_are_refused_with_their_column() -> None:
    hint = "indent with spaces only: YAML does not allow tabs for indentation"
    assert error("a:\n  \tb: 1\nc: |\n\tliteral\n") == (
        f"bp.yaml:2:3: error: <document>: tab character in indentation; {hint}\n"
        f"bp.yaml:4:1: error: <document>: tab character in indentation; {hint}"
    )
    # Not indentation, but still refused: every blueprint string is one line of text.
    assert error("a: 'x\ty'\n") == (
        "bp.yaml:1:4: error: a: tab in the value is not allowed; write a space instead"
    )


def test_a_no_break_space_in_indentation_is_named_at_its_line() -> None:
    # Pasted from a web page: YAML would read it as text and blame the mapping's shape.
    text = "models:\n  chat:\n  \u00a0 server: vllm\n  list:\n    -\u00a0a\n\u3000x: 1\n"
    assert error(text) == (
        "bp.yaml:3:3: error: <document>: line 3 has a no-break space (U+00A0) in its "
        "indentation; indent with plain spaces\n"
        "bp.yaml:5:6: error: <document>: line 5 has a no-break space (U+00A0) in its "
        "indentation; indent with plain spaces\n"
        "bp.yaml:6:1: error: <document>: line 6 has an ideographic space (U+3000) in its "
        "indentation; indent with plain spaces"
    )
    # Within a value it is text like any other.
    assert load_text("a: 'x\u00a0y'\n", "bp.yaml").data == {"a": "x\u00a0y"}


def test_invalid_utf8_is_located_at_the_bad_byte() -> None:
    text = "a: 1\nname: caf\u00e9 \u00e9".encode() + b"\xff\n"
    assert error(text) == (
        "bp.yaml:2:13: error: <document>: the file is not valid UTF-8 (byte 0xff: invalid start "
        "byte); save the file as UTF-8"
    )
    assert error(b"a: \xe2\x82\n") == (
        "bp.yaml:1:4: error: <document>: the file is not valid UTF-8 (byte 0xe2: invalid "
        "continuation byte); save the file as UTF-8"
    )
    assert error("a: x\n".encode("utf-16")) == (
        "bp.yaml:1:1: error: <document>: the file is UTF-16 encoded, not UTF-8; "
        "save the file as UTF-8"
    )


@pytest.mark.parametrize(
    ("char", "message"),
    [
        (
            "\x00",
            "control character U+0000 is not allowed; remove it: only tab, line feed and "
            "carriage return may appear",
        ),
        (
            "\x1b",
            "control character U+001B is not allowed; remove it: only tab, line feed and "
            "carriage return may appear",
        ),
        (
            "\x7f",
            "control character U+007F is not allowed; remove it: only tab, line feed and "
            "carriage return may appear",
        ),
        (
            "\x85",
            "control character U+0085 is not allowed; remove it: only tab, line feed and "
            "carriage return may appear",
        ),
        (
            "\x9f",
            "control character U+009F is not allowed; remove it: only tab, line feed and "
            "carriage return may appear",
        ),
        (
            "\u202e",
            "Unicode bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) is not "
            "allowed; remove it: it makes the text display differently from how it is read",
        ),
        (
            "\u2066",
            "Unicode bidirectional control U+2066 (LEFT-TO-RIGHT ISOLATE) is not "
            "allowed; remove it: it makes the text display differently from how it is read",
        ),
        (
            "\u200f",
            "Unicode bidirectional control U+200F (RIGHT-TO-LEFT MARK) is not "
            "allowed; remove it: it makes the text display differently from how it is read",
        ),
        (
            "\u061c",
            "Unicode bidirectional control U+061C (ARABIC LETTER MARK) is not "
            "allowed; remove it: it makes the text display differently from how it is read",
        ),
        (
            "\u2028",
            "invisible character U+2028 (LINE SEPARATOR) is not allowed; remove it: "
            "editors and tools disagree about how it displays",
        ),
        (
            "\ufeff",
            "invisible character U+FEFF (ZERO WIDTH NO-BREAK SPACE) is not allowed; "
            "remove it: editors and tools disagree about how it displays",
        ),
        (
            "\ufffe",
            "U+FFFE is not a valid Unicode character; remove it, and save the file as UTF-8",
        ),
        (
            "\ud800",
            "U+D800 is not a valid Unicode character; remove it, and save the file as UTF-8",
        ),
    ],
)
def test_control_and_bidirectional_characters_are_refused_even_in_comments(
    char: str, message: str
) -> None:
    assert error(f"a: 1\nb: x{char}y\n") == f"bp.yaml:2:5: error: <document>: {message}"
    assert error(f"a: 1\n# a comment {char}\n") == f"bp.yaml:2:13: error: <document>: {message}"


@pytest.mark.parametrize(
    ("tail", "line", "column"),
    [("\r\n", 3, 4), ("\r", 3, 4), ("\n", 3, 4)],
)
def test_character_positions_follow_every_line_ending(tail: str, line: int, column: int) -> None:
    text = f"a: 1{tail}b: 2{tail}c: \x07{tail}"
    assert error(text).startswith(f"bp.yaml:{line}:{column}: error: <document>: control character")


def test_files_over_one_mebibyte_are_refused_before_reading(tmp_path: Path) -> None:
    hint = "check that this is the right file: a blueprint is a few KiB"
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" + b"#" * (2 * 1024 * 1024 - 5))
    with pytest.raises(BlueprintError) as raised:
        load(big, display_name="big.yaml")
    assert str(raised.value) == (
        "big.yaml:1:1: error: <document>: the file is 2097152 bytes, more than the 1048576 bytes "
        f"(1 MiB) a blueprint may have; {hint}"
    )
    assert error(b"#" * (MAX_BYTES + 1)) == (
        "bp.yaml:1:1: error: <document>: the file is 1048577 bytes, more than the 1048576 bytes "
        f"(1 MiB) a blueprint may have; {hint}"
    )
    assert error("\u00e9" * (MAX_BYTES // 2 + 1)).startswith(
        "bp.yaml:1:1: error: <document>: the file is 1048578 bytes"
    )  # counted in UTF-8 bytes


def test_unreadable_paths_are_reported(tmp_path: Path) -> None:
    with pytest.raises(BlueprintError) as raised:
        load(tmp_path / "missing.yaml", display_name="missing.yaml")
    assert str(raised.value) == (
        "missing.yaml:1:1: error: <document>: cannot read the file: No such file or directory; "
        "check the path and its permissions"
    )
    with pytest.raises(BlueprintError) as raised:
        load("bad\x00name.yaml")
    assert str(raised.value) == (  # the NUL is shown escaped, never written raw
        "bad\\x00name.yaml:1:1: error: <document>: cannot read the file: embedded null byte; "
        "check the path and its permissions"
    )
    with pytest.raises(BlueprintError) as raised:
        load(tmp_path, display_name="dir")
    assert str(raised.value) == (
        "dir:1:1: error: <document>: cannot read the file: it is a directory; "
        "name a blueprint YAML file"
    )


def test_nesting_deeper_than_the_limit_is_located_at_the_crossing_node() -> None:
    hint = "a blueprint needs only a few levels: check the indentation or the brackets here"
    text = "".join("  " * i + f"k{i}:\n" for i in range(MAX_DEPTH + 5))
    path = ".".join(f"k{i}" for i in range(MAX_DEPTH))
    assert error(text) == (
        f"bp.yaml:{MAX_DEPTH + 1}:{2 * MAX_DEPTH + 1}: error: {path}: nesting is deeper than "
        f"{MAX_DEPTH} levels; {hint}"
    )
    flow = "a: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert error(flow) == (
        f"bp.yaml:1:{3 + MAX_DEPTH}: error: a{'[0]' * (MAX_DEPTH - 1)}: nesting is deeper than "
        f"{MAX_DEPTH} levels; {hint}"
    )


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 100_000 + "]" * 100_000 + "\n",
        "a: " + "{a: " * 100_000 + "}" * 100_000 + "\n",
        "a:\n" + "- " * 100_000 + "x\n",
        "? " + "[" * 100_000 + "\n: x\n",  # inside a refused key, still counted
    ],
    ids=["flow-lists", "flow-mappings", "block-lists", "in-a-key"],
)
def test_100000_levels_fail_fast_with_the_depth_error(text: str) -> None:
    started = time.perf_counter()
    message = error(text)
    assert time.perf_counter() - started < 5
    assert f"nesting is deeper than {MAX_DEPTH} levels" in message


@pytest.mark.parametrize(
    ("plain", "message", "hint"),
    [
        (
            "yes",
            "ambiguous value 'yes': YAML 1.1 reads it as a boolean, YAML 1.2 as a string",
            'write true/false, or quote it ("yes")',
        ),
        (
            "N",
            "ambiguous value 'N': YAML 1.1 reads it as a boolean, YAML 1.2 as a string",
            'write true/false, or quote it ("N")',
        ),
        (
            "Off",
            "ambiguous value 'Off': YAML 1.1 reads it as a boolean, YAML 1.2 as a string",
            'write true/false, or quote it ("Off")',
        ),
        (
            "012",
            "ambiguous value '012': YAML 1.1 reads it as the octal number 10, YAML 1.2 as "
            "the decimal number 12",
            'write 12 (or 0o12 for an octal number), or quote it ("012")',
        ),
        (
            "-012",
            "ambiguous value '-012': YAML 1.1 reads it as the octal number -10, YAML 1.2 "
            "as the decimal number -12",
            'write -12, or quote it ("-012")',
        ),
        (
            "09",
            "ambiguous value '09': YAML 1.1 reads it as a string, YAML 1.2 as the decimal number 9",
            'write 9, or quote it ("09")',
        ),
        (
            "22:22",
            "ambiguous value '22:22': YAML 1.1 reads it as the base-60 number 1342, "
            "YAML 1.2 as a string",
            'quote it ("22:22")',
        ),
        (
            "1:20:30",
            "ambiguous value '1:20:30': YAML 1.1 reads it as the base-60 number 4830, "
            "YAML 1.2 as a string",
            'quote it ("1:20:30")',
        ),
        (
            "1:30.5",
            "ambiguous value '1:30.5': YAML 1.1 reads it as the base-60 number 90.5, "
            "YAML 1.2 as a string",
            'quote it ("1:30.5")',
        ),
        (
            "0b101",
            "ambiguous value '0b101': YAML 1.1 reads it as the number 5, YAML 1.2 as a string",
            'write 5, or quote it ("0b101")',
        ),
        (
            "1_000",
            "ambiguous value '1_000': YAML 1.1 reads it as the number 1000, YAML 1.2 as a string",
            'write 1000, or quote it ("1_000")',
        ),
        (
            "1_000.5",
            "ambiguous value '1_000.5': YAML 1.1 reads it as the number 1000.5, YAML "
            "1.2 as a string",
            'write 1000.5, or quote it ("1_000.5")',
        ),
        (
            "-0x1F",
            "ambiguous value '-0x1F': YAML 1.1 reads it as the number -31, YAML 1.2 as a string",
            'write -31, or quote it ("-0x1F")',
        ),
        (
            ".inf",
            "value '.inf' is not a finite number",
            'write a finite number, or quote it (".inf") if it is text',
        ),
        (
            "-.Inf",
            "value '-.Inf' is not a finite number",
            'write a finite number, or quote it ("-.Inf") if it is text',
        ),
        (
            ".NaN",
            "value '.NaN' is not a finite number",
            'write a finite number, or quote it (".NaN") if it is text',
        ),
        (
            "1e999",
            "number '1e999' is too large: it overflows to infinity",
            'write a smaller number, or quote it ("1e999") if it is text',
        ),
        (
            "9223372036854775808",
            "integer '9223372036854775808' is out of range",
            "use a value from -9223372036854775808 to 9223372036854775807, or quote it "
            '("9223372036854775808") if it is text',
        ),
        (
            "0x" + "f" * 17,
            "integer '0xfffffffffffffffff' is out of range",
            "use a value from -9223372036854775808 to 9223372036854775807, or quote it "
            '("0xfffffffffffffffff") if it is text',
        ),
        (
            "1" * 5000,
            "integer '1111111111111111111111111111111111111...' is out of range",
            "use a value from -9223372036854775808 to 9223372036854775807, or quote it "
            '("1111111111111111111111111111111111111...") if it is text',
        ),
    ],
)
def test_ambiguous_and_unrepresentable_plain_scalars_are_refused(
    plain: str, message: str, hint: str
) -> None:
    assert error(f"model:\n  value: {plain}\n") == (
        f"bp.yaml:2:10: error: model.value: {message}; {hint}"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "a: b: c\n",
            "1:5: error: <document>: invalid YAML: mapping values are not allowed "
            "here; quote the value if it contains ': ', or check the indentation of "
            "this line",
        ),
        (
            "env:\n  zones: [a, b\n",
            "3:1: error: env.zones: invalid YAML: expected ',' or ']', but "
            "got '<stream end>' (while parsing a flow sequence started at "
            "line 2); check the brackets and commas; quote values that "
            "contain ',', '[', ']', '{' or '}'",
        ),
        (
            "a:\n  b: 'open\n",
            "3:1: error: a.b: invalid YAML: found unexpected end of stream "
            "(while scanning a quoted scalar started at line 2); close the "
            "quote or bracket that is still open",
        ),
        (
            "a:\n  - b\n - c\n",
            "3:2: error: <document>: invalid YAML: expected <block end>, "
            "but found '<block sequence start>' (while parsing a block "
            "mapping started at line 1); check the indentation: the entries "
            "of one mapping or list start in the same column",
        ),
        (
            "a: @x\n",
            "1:4: error: a: invalid YAML: found character '@' that cannot start any "
            "token; quote the value: this character cannot start a plain value",
        ),
        (
            "a: 1\t# c\n",
            "1:5: error: <document>: invalid YAML: found character '\\t' that "
            "cannot start any token; replace the tab with spaces",
        ),
    ],
)
def test_syntax_errors_are_located_with_a_hint(text: str, expected: str) -> None:
    assert error(text) == f"bp.yaml:{expected}"


def test_every_problem_is_reported_in_order_up_to_a_limit() -> None:
    assert error("a: yes\nb: &x 1\nc: 1\nc: 2\n") == (
        "bp.yaml:1:4: error: a: ambiguous value 'yes': YAML 1.1 reads it as a boolean, YAML 1.2 "
        'as a string; write true/false, or quote it ("yes")\n'
        f"bp.yaml:2:4: error: b: anchor '&x' is not allowed; {NO_REUSE}\n"
        "bp.yaml:4:1: error: c: duplicate key 'c' (first defined at line 3); remove one of the "
        "two, or merge them into one"
    )
    with pytest.raises(BlueprintError) as raised:
        load_text("".join(f"k: {i}\n" for i in range(100)), "bp.yaml")
    assert len(raised.value.diagnostics) == MAX_DIAGNOSTICS
    with pytest.raises(BlueprintError) as raised:
        load_text("a: \x01\n" * 100, "bp.yaml")
    assert len(raised.value.diagnostics) == MAX_DIAGNOSTICS


def test_the_value_of_a_refused_key_is_not_kept_or_checked() -> None:
    # Only the key is reported: the duplicate's value would otherwise report again.
    assert error("a: 1\na: {b: yes, c: *x}\n") == (
        "bp.yaml:2:1: error: a: duplicate key 'a' (first defined at line 1); remove one of the "
        "two, or merge them into one"
    )


def test_a_dense_file_is_refused_quickly_at_the_value_cap() -> None:
    from inferplane.blueprint.loading.loader import MAX_NODES

    text = "items:\n" + "".join(f"  - {i}\n" for i in range(MAX_NODES + 10))
    started = time.perf_counter()
    with pytest.raises(BlueprintError) as info:
        load_text(text, "big.yaml")
    elapsed = time.perf_counter() - started
    (diag,) = info.value.diagnostics
    assert diag.format() == (
        f"big.yaml:{MAX_NODES - 1}:5: error: items: the blueprint holds more than {MAX_NODES} "
        "values; split it into several blueprints (one per application)"
    )
    assert elapsed < 30  # stops at the cap instead of parsing the whole file


# --- every parsed key and value is one line of visible text ----------------------------------
# Escapes of double-quoted YAML produce characters the raw-text check never sees.
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            'name: "chat\\u202eexe"\n',
            "1:7: error: name: Unicode bidirectional control U+202E (RIGHT-TO-LEFT OVERRIDE) "
            "in the value is not allowed; remove it: it makes the text display differently "
            'from how it is read (escapes in double quotes, such as "\\x07", count too)',
        ),
        (
            'name: "bell\\x07"\n',
            "1:7: error: name: control character U+0007 in the value is not allowed; remove it: "
            "only tab, line feed and carriage return may appear (escapes in double quotes, "
            'such as "\\x07", count too)',
        ),
        (
            'name: "\\ud800"\n',
            "1:7: error: name: U+D800 in the value is not a valid Unicode character; remove it, "
            'and save the file as UTF-8 (escapes in double quotes, such as "\\x07", count too)',
        ),
        (
            'models:\n  "ranker\\n": {server: vllm}\n',
            "2:3: error: models: line break in the key is not allowed; write the key on one line",
        ),
        (
            'models:\n  "r\\u2066x": {server: vllm}\n',
            "2:3: error: models: Unicode bidirectional control U+2066 (LEFT-TO-RIGHT ISOLATE) in "
            "the key is not allowed; remove it: it makes the text display differently from how "
            'it is read (escapes in double quotes, such as "\\x07", count too)',
        ),
        (
            'models:\n  ranker:\n    source: "llm/\\r"\n',
            "3:13: error: models.ranker.source: line break in the value is not allowed; "
            "write the value on one line",
        ),
        (
            "name: |\n  two\n  lines\n",
            "1:7: error: name: line break in the value is not allowed; write the value on one line",
        ),
    ],
    ids=["bidi-value", "bell", "surrogate", "newline-key", "isolate-key", "cr-value", "block"],
)
def test_escaped_characters_are_refused_after_parsing(text: str, expected: str) -> None:
    assert error(text) == f"bp.yaml:{expected}"


def test_folded_and_stripped_block_scalars_stay_allowed() -> None:
    assert load_text("a: >-\n  one\n  line\nb: |-\n  x\n", "f.yaml").data == {
        "a": "one line",
        "b": "x",
    }
