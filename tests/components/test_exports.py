"""`inferplane.components` exports: the lazily loaded names, the typed names checkers see
(the TYPE_CHECKING imports) and `__all__` are the same set, and each resolves."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import inferplane.components as components


def typed_names() -> dict[str, str]:
    """name -> module of each import under ``if TYPE_CHECKING:``."""
    tree = ast.parse(Path(components.__file__).read_text())
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom) and imp.module
                found.update({alias.name: imp.module for alias in imp.names})
    return found


def test_typed_lazy_and_public_names_agree() -> None:
    typed = typed_names()
    assert typed == components._EXPORTS
    assert sorted(components.__all__) == sorted(typed)
    assert {"GpuNodePool", "EksCluster", "GkeCluster", "Ownership"} <= set(typed)


def test_every_export_resolves_to_its_module() -> None:
    for name, module in components._EXPORTS.items():
        value = getattr(components, name)
        assert value is getattr(importlib.import_module(module), name)
        assert value.__module__ == module
