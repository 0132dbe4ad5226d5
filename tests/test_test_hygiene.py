"""Rules for the test suite itself: a test that starts a process bounds how long it waits.

A child process that never answers (a pipe never flushed, a server that never starts) must
fail the run, not hang it: every `subprocess.run`/`check_output`/`check_call`/`call` in the
tests and scripts passes `timeout=`, and every `Popen` is waited on with a timeout.
"""

from __future__ import annotations

import ast
import concurrent.futures
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(
    p
    for d in ("tests", "scripts", "examples", "e2e")
    for p in (ROOT / d).rglob("*.py")
    # scripts/calibration keeps the GPU measurements' scripts exactly as they ran there
    if p.is_file() and not p.is_relative_to(ROOT / "scripts" / "calibration")
)
BLOCKING = {"run", "check_output", "check_call", "call"}


def _calls(tree: ast.AST, names: set[str]) -> list[ast.Call]:
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in names
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "subprocess"
    ]


def _parse(text: str) -> ast.Module:
    """`ast.parse` on a thread of its own: CPython 3.11's AST builder compares the calling
    thread's recursion depth before and after (``ast2obj_mod``), and a worker whose earlier
    tests moved the recursion limit (hypothesis does) fails with "AST constructor recursion
    depth mismatch" although the file is fine. A new thread starts at depth 0."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        try:
            return pool.submit(ast.parse, text).result()
        except SystemError:
            pass
    # Still mismatched (the limit is the interpreter's, not the thread's): parse in a fresh
    # interpreter; AST nodes pickle with their positions.
    done = subprocess.run(
        [sys.executable, "-c", PARSE_ELSEWHERE],
        input=text.encode(),
        capture_output=True,
        timeout=60,
        check=True,
    )
    tree: ast.Module = pickle.loads(done.stdout)
    return tree


PARSE_ELSEWHERE = (
    "import ast, pickle, sys; sys.stdout.buffer.write(pickle.dumps(ast.parse(sys.stdin.read())))"
)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_child_process_is_waited_on_with_a_timeout(path: Path) -> None:
    tree = _parse(path.read_text(encoding="utf-8"))
    missing = [
        f"{path.relative_to(ROOT)}:{call.lineno}: subprocess.{call.func.attr}(...) without timeout="  # type: ignore[attr-defined]
        for call in _calls(tree, BLOCKING)
        if not any(k.arg == "timeout" for k in call.keywords)
    ]
    for call in _calls(tree, {"Popen"}):
        # A Popen is fine when the function that starts it also waits with a timeout.
        text = ast.get_source_segment(path.read_text(encoding="utf-8"), _enclosing(tree, call))
        if "timeout" not in (text or ""):
            missing.append(f"{path.relative_to(ROOT)}:{call.lineno}: Popen never waited on")
    assert missing == []


def _enclosing(tree: ast.AST, target: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(
            child is target for child in ast.walk(node)
        ):
            return node
    return tree


def test_the_hygiene_check_sees_a_missing_timeout(tmp_path: Path) -> None:
    tree = ast.parse("import subprocess\nsubprocess.run(['x'], check=False)\n")
    assert len(_calls(tree, BLOCKING)) == 1
