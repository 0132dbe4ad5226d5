"""Lists every option `vllm serve` accepts, read from the source of a vLLM wheel.

    pip download vllm==0.10.2 --no-deps -d build/vllm
    unzip -q build/vllm/vllm-0.10.2-*.whl -d build/vllm/x
    python scripts/vllm_serve_flags.py build/vllm/vllm-0.10.2-*.whl build/vllm/x/vllm \
        > inferplane/blueprint/vllm_serve_flags.txt

The parser of `vllm serve` is built by `vllm/entrypoints/openai/cli_args.py`
(`make_arg_parser`: its own options, then `FrontendArgs.add_cli_args`, one `--<field>` per
dataclass field) and `vllm/engine/arg_utils.py` (`EngineArgs.add_cli_args`: explicit
`add_argument` calls). A field typed ``bool`` (or ``Optional[bool]``) gets
``argparse.BooleanOptionalAction`` in `arg_utils._compute_kwargs`, i.e. also ``--no-<name>``.
Importing vLLM needs torch and a GPU stack, so the source is read as text (ast) instead.
"""

from __future__ import annotations

import ast
import hashlib
import re
import sys
from pathlib import Path


def _annotations(root: Path) -> dict[tuple[str, str], str]:
    """(class, field) -> annotation source, over every class of the config and arg modules."""
    out: dict[tuple[str, str], str] = {}
    files = [
        *sorted((root / "config").glob("*.py")),
        root / "engine" / "arg_utils.py",
        root / "entrypoints" / "openai" / "cli_args.py",
    ]
    for path in files:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        out[(node.name, item.target.id)] = ast.unparse(item.annotation)
    return out


def _is_bool(annotation: str) -> bool:
    """`contains_type(type_hints, bool)`: bool among the top-level types (Optional, Union,
    Annotated/SkipValidation unwrapped); not bool nested in a container."""
    top = re.sub(r"\b(list|dict|set|tuple|Sequence|Mapping)\[[^\]]*\]", "", annotation)
    return re.search(r"\bbool\b", top) is not None


def _kwargs_classes(tree: ast.AST) -> dict[str, str]:
    """``x_kwargs = get_kwargs(XConfig)`` -> ``{"x_kwargs": "XConfig"}``."""
    out = {}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and ast.unparse(node.value.func) == "get_kwargs"
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            out[node.targets[0].id] = ast.unparse(node.value.args[0])
    return out


def _field_of(call: ast.Call) -> tuple[str, str] | None:
    """``**model_kwargs["dtype"]`` -> ("model_kwargs", "dtype")."""
    for k in call.keywords:
        v = k.value
        if (
            k.arg is None
            and isinstance(v, ast.Subscript)
            and isinstance(v.value, ast.Name)
            and isinstance(v.slice, ast.Constant)
        ):
            return v.value.id, str(v.slice.value)
    return None


def flags(root: Path) -> set[str]:
    annotations = _annotations(root)
    found: set[str] = set()
    for rel in ("engine/arg_utils.py", "entrypoints/openai/cli_args.py"):
        tree = ast.parse((root / rel).read_text())
        classes = _kwargs_classes(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr != "add_argument":
                continue
            names = [
                a.value
                for a in node.args
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            ]
            longs = [n for n in names if n.startswith("--")]
            if not longs:
                continue
            found.update(longs)
            boolean = any(
                k.arg == "action" and "BooleanOptionalAction" in ast.unparse(k.value)
                for k in node.keywords
            )
            field = _field_of(node)
            annotation = ""
            if field is not None and field[0] in classes:
                annotation = annotations.get((classes[field[0]], field[1]), "")
            if boolean or _is_bool(annotation):
                found.update(f"--no-{n[2:]}" for n in longs)
    # FrontendArgs: one option per field, added in a loop (cli_args.add_cli_args).
    tree = ast.parse((root / "entrypoints/openai/cli_args.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == "FrontendArgs":
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    name = item.target.id.replace("_", "-")
                    found.add(f"--{name}")
                    if _is_bool(ast.unparse(item.annotation)):
                        found.add(f"--no-{name}")
    return found


HEADER = """\
# Every option of `vllm serve` in vLLM {version} (the pinned VERSIONS["vllm"]).
# Source: PyPI wheel {wheel}
# (sha256 {sha256}), files
# vllm/engine/arg_utils.py, vllm/entrypoints/openai/cli_args.py, vllm/config/*.py,
# read by scripts/vllm_serve_flags.py (see its docstring to regenerate). One flag a line."""


if __name__ == "__main__":
    wheel, root = Path(sys.argv[1]), Path(sys.argv[2])
    version = wheel.name.split("-")[1]
    sha256 = hashlib.sha256(wheel.read_bytes()).hexdigest()
    print(HEADER.format(version=version, wheel=wheel.name, sha256=sha256))
    for flag in sorted(flags(root)):
        print(flag)
