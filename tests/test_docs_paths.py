"""The contributor pages under `docs/` name files of this repository in backticks; every such
path must exist, so a moved or renamed file fails here instead of misleading the reader.

A backticked span counts as a path when it holds a `/`, only the characters of a path
(no spaces, no `<placeholder>`, no `*`), and does not start with `/` (a URL path such as
`/health`) or `$`. A trailing `/` names a folder. Fenced code blocks are skipped: they
show commands and code, not references.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
SPAN = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.\-/]*/[A-Za-z0-9_.\-/]*")


def cited_paths(text: str) -> list[str]:
    """The backticked spans of `text`, outside fenced blocks, that are repository paths."""
    prose = FENCE.sub("", text)
    return [span for span in SPAN.findall(prose) if PATH.fullmatch(span)]


def test_there_are_pages() -> None:
    assert PAGES, "docs/ holds no page"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_backticked_path_exists(page: Path) -> None:
    missing = [p for p in cited_paths(page.read_text(encoding="utf-8")) if not (ROOT / p).exists()]
    assert not missing, f"{page.relative_to(ROOT)} names paths that do not exist: {missing}"


def test_the_path_pattern() -> None:
    text = (
        "`policies/rules/` `inferplane/model.py` `/health` `models.<m>.slo` "
        "`tests/<x>/y.py` `$defs/a/b` `a b/c` `hf://` `x`\n```\n`not/read.py`\n```\n"
    )
    assert cited_paths(text) == ["policies/rules/", "inferplane/model.py"]


def test_readme_links_every_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in PAGES:
        assert f"docs/{page.name}" in readme, f"README.md does not link docs/{page.name}"
