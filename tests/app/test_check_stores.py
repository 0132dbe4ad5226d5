"""`inferplane check` over several blueprints whose model stores share a bucket
(`inferplane.app.shared_stores`): no store holds another's, and no source reads another
blueprint's store from outside its own."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from inferplane.app.check import check_files

CHAT = Path("blueprints/chat-minimal.yaml").read_text()
SEARCH = Path("blueprints/bge-search.yaml").read_text()
ROUTING = Path("blueprints/llm-routing.yaml").read_text()
TODAY = dt.date(2026, 12, 1)
ROOT_STORE = "    model_store: s3://example-models-euw1/\n"

# Bundled blueprints changed in a place or two: an environment the session has planned
# already is not planned again.
pytestmark = pytest.mark.usefixtures("plans_by_environment")


def invalid(tmp_path: Path, **texts: str) -> list[str]:
    paths = []
    for name, text in texts.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(text)
        paths.append(str(path))
    report = check_files(paths, today=TODAY)
    return [d.format().replace(str(tmp_path) + "/", "") for d in report.invalid]


def edit(old: str, new: str, text: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


def at_root(text: str) -> str:
    """`text` with its prod store at the root of the bucket bge-search keeps its store in."""
    line = next(x for x in text.splitlines(keepends=True) if "s3://example-models-euw1/" in x)
    return edit(line, ROOT_STORE, text)


NESTED = (
    "the outer one's grants would read the inner one's models and .inferplane areas; give "
    "each blueprint a store beside the other's (s3://bucket/<blueprint>/), or the very same "
    "store if they share their models"
)


def test_a_store_at_the_root_of_another_blueprint_s_bucket_is_refused(tmp_path: Path) -> None:
    assert invalid(tmp_path, a=SEARCH, b=at_root(CHAT)) == [
        "b.yaml:14:18: error: environments.prod.model_store: model store "
        "s3://example-models-euw1/ holds s3://example-models-euw1/bge-search/, the model store "
        "of blueprint 'bge-search' environment 'prod' (a.yaml): " + NESTED
    ]


def test_the_later_file_is_blamed_when_it_is_the_inner_store(tmp_path: Path) -> None:
    assert invalid(tmp_path, a=at_root(CHAT), b=SEARCH) == [
        "b.yaml:24:18: error: environments.prod.model_store: model store "
        "s3://example-models-euw1/bge-search/ is inside s3://example-models-euw1/, the model "
        "store of blueprint 'chat-minimal' environment 'prod' (a.yaml): " + NESTED
    ]


def test_two_blueprints_may_share_one_store_but_not_nest(tmp_path: Path) -> None:
    """chat-minimal and llm-routing at one root share it (each reads its own areas of it);
    both hold bge-search's store."""
    found = invalid(tmp_path, a=at_root(CHAT), b=at_root(ROUTING), c=SEARCH)
    assert [f.split(": error: ")[0] for f in found] == ["c.yaml:24:18"]


def test_a_source_in_another_blueprint_s_store_is_refused(tmp_path: Path) -> None:
    routing = edit(
        "    source: llama-3.1-8b-instruct/\n",
        "    source: s3://example-models-euw1/bge-search/embed/\n",
        ROUTING,
    )
    assert invalid(tmp_path, a=SEARCH, b=routing) == [
        "b.yaml:55:13: error: models.chat.source: s3://example-models-euw1/bge-search/embed/ "
        "reads the model store s3://example-models-euw1/bge-search/ of blueprint 'bge-search' "
        "environment 'prod' (a.yaml) from outside this environment's own store; copy the "
        "files into s3://example-models-euw1/llm-routing/ and give their path relative to it"
    ]
