"""Whatever the input, the loader returns a Document or raises BlueprintError: never another
exception, never a crash. Successful loads are checked for shape; failures for location."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inferplane.blueprint.errors import BlueprintError
from inferplane.blueprint.loading.loader import MAX_DEPTH, load_text

EXAMPLE_TEXT = (
    Path(__file__).resolve().parents[2] / "blueprints" / "support-assistant.yaml"
).read_text(encoding="utf-8")
FILE = "fuzz.yaml"
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Characters that mean something to YAML; random text covers the ones the loader refuses.
YAML_ALPHABET = list(" \n\r\t-:?,[]{}#&*!|>'\"%@`~.0123456789abexyonTFN_+\\<=\u00e9")


def check(text: str | bytes) -> None:
    """Load `text`; fail the test on anything but a Document or a located BlueprintError."""
    try:
        doc = load_text(text, FILE)
    except BlueprintError as exc:
        assert exc.diagnostics
        for diagnostic in exc.diagnostics:
            assert diagnostic.location.file == FILE
            assert diagnostic.location.line >= 1
            assert diagnostic.location.column >= 1
            assert diagnostic.message
            assert diagnostic.hint
            diagnostic.format()
        return
    assert isinstance(doc.data, dict)
    assert doc.source.values[()].line >= 1
    _check_plain(doc.data, 1)
    for path in doc.source.values:
        _walk(doc.data, path)  # every recorded location belongs to a value that exists
    for path in doc.source.keys:
        assert isinstance(path[-1], str)
        _walk(doc.data, path)


def _check_plain(value: Any, depth: int) -> None:
    if isinstance(value, dict):
        assert depth <= MAX_DEPTH
        for key, item in value.items():
            assert isinstance(key, str)
            _check_plain(item, depth + 1)
    elif isinstance(value, list):
        assert depth <= MAX_DEPTH
        for item in value:
            _check_plain(item, depth + 1)
    else:
        assert value is None or isinstance(value, (str, int, float, bool))
        if isinstance(value, float):
            assert value == value and value not in (float("inf"), float("-inf"))


def _walk(data: Any, path: tuple[str | int, ...]) -> None:
    for part in path:
        data = data[part]


@FUZZ
@given(st.text(max_size=400))
def test_random_text(text: str) -> None:
    check(text)


@FUZZ
@given(st.text(alphabet=YAML_ALPHABET, max_size=300))
def test_random_yaml_like_text(text: str) -> None:
    check(text)


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes(data: bytes) -> None:
    check(data)


def _mutations() -> st.SearchStrategy[list[tuple[str, int, int, str]]]:
    kind = st.sampled_from(
        [
            "insert",
            "delete",
            "swap-chars",
            "swap-lines",
            "dup-line",
            "insert-line",
            "delete-line",
            "indent",
            "dedent",
        ]
    )
    snippet = st.text(alphabet=YAML_ALPHABET, min_size=1, max_size=6)
    where = st.integers(min_value=0, max_value=len(EXAMPLE_TEXT))
    return st.lists(st.tuples(kind, where, where, snippet), min_size=1, max_size=4)


def _mutate(text: str, mutations: list[tuple[str, int, int, str]]) -> str:
    for kind, first, second, snippet in mutations:
        lines = text.split("\n")
        i, j = first % max(len(text), 1), second % max(len(text), 1)
        a, b = first % len(lines), second % len(lines)
        if kind == "insert":
            text = text[:i] + snippet + text[i:]
        elif kind == "delete":
            text = text[:i] + text[i + second % 20 + 1 :]  # up to 20 characters
        elif kind == "swap-chars" and text:
            chars = list(text)
            chars[i], chars[j] = chars[j], chars[i]
            text = "".join(chars)
        else:
            if kind == "swap-lines":
                lines[a], lines[b] = lines[b], lines[a]
            elif kind == "dup-line":
                lines.insert(b, lines[a])
            elif kind == "insert-line":
                lines.insert(a, "  " * (b % 5) + snippet)
            elif kind == "delete-line":
                del lines[a]
            elif kind == "indent":
                lines[a] = "  " + lines[a]
            elif kind == "dedent":
                lines[a] = lines[a][1:]
            text = "\n".join(lines)
    return text


@FUZZ
@given(_mutations())
def test_mutated_example_blueprint(mutations: list[tuple[str, int, int, str]]) -> None:
    mutated = _mutate(EXAMPLE_TEXT, mutations)
    check(mutated)
    check(mutated.encode("utf-8", "surrogatepass"))


def test_the_unmutated_example_passes_the_same_checks() -> None:
    check(EXAMPLE_TEXT)
    load_text(EXAMPLE_TEXT, FILE)  # and it loads


# JSON is YAML 1.2 flow syntax: any JSON object the loader accepts must read back unchanged.
def _visible_text(max_size: int) -> st.SearchStrategy[str]:
    # Without the characters the loader refuses (tested above): control, format, unassigned,
    # surrogates, line and paragraph separators.
    chars = st.characters(codec="utf-8", exclude_categories=("Cc", "Cf", "Cn", "Cs", "Zl", "Zp"))
    return st.text(chars, max_size=max_size)


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _visible_text(20)
)
_KEYS = _visible_text(10)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=25,
)


@FUZZ
@given(st.dictionaries(_KEYS, _JSON, max_size=5))
def test_json_documents_read_back_unchanged(data: dict[str, Any]) -> None:
    assert load_text(json.dumps(data, ensure_ascii=False), FILE).data == data
