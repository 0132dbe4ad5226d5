"""Reads the options of `vllm serve` and the variables of `vllm/envs.py` from the source of a
vLLM wheel, as text (ast): importing vLLM needs torch and a GPU stack. See
`vllm_serve_flags.py` for how the parser is built.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

CLI_ARGS = ("entrypoints/openai/cli_args.py", "entrypoints/common/cli_args.py")
FRONTEND_CLASSES = ("BaseFrontendArgs", "FrontendArgs")


def cli_args(root: Path) -> Path:
    """The module of `make_arg_parser` in the wheel at `root`."""
    for rel in CLI_ARGS:
        path = root / rel
        if path.exists() and "def make_arg_parser" in path.read_text():
            return path
    raise SystemExit(f"{root}: no make_arg_parser in {', '.join(CLI_ARGS)}")


def _annotations(root: Path) -> dict[tuple[str, str], str]:
    """(class, field) -> annotation source, over every class of the config and arg modules."""
    out: dict[tuple[str, str], str] = {}
    files = [
        *sorted((root / "config").glob("*.py")),
        root / "engine" / "arg_utils.py",
        cli_args(root),
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


def _subscript(v: ast.expr) -> tuple[str, str] | None:
    if (
        isinstance(v, ast.Subscript)
        and isinstance(v.value, ast.Name)
        and isinstance(v.slice, ast.Constant)
    ):
        return v.value.id, str(v.slice.value)
    return None


def _field_of(call: ast.Call) -> tuple[str, str] | None:
    """``**model_kwargs["dtype"]`` -> ("model_kwargs", "dtype"); also the spread inside a
    dict literal, ``**{**cache_kwargs["enable_prefix_caching"], "default": None}`` (0.33.0
    vllm/engine/arg_utils.py), whose kwargs keep the field's BooleanOptionalAction."""
    for k in call.keywords:
        if k.arg is not None:
            continue
        found = _subscript(k.value)
        if found is None and isinstance(k.value, ast.Dict):
            spread = [v for key, v in zip(k.value.keys, k.value.values, strict=True) if key is None]
            found = next((f for f in map(_subscript, spread) if f is not None), None)
        if found is not None:
            return found
    return None


def options(root: Path) -> tuple[set[str], dict[str, str]]:
    """(every long option, short option -> its long option) of `vllm serve`."""
    annotations = _annotations(root)
    found: set[str] = {"--help"}
    shorts: dict[str, str] = {"-h": "--help"}
    for path in (root / "engine" / "arg_utils.py", cli_args(root)):
        tree = ast.parse(path.read_text())
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
            for n in names:
                if n.startswith("-") and not n.startswith("--"):
                    shorts[n] = longs[0]
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
    # FrontendArgs (and its base): one option per field, added in a loop (add_cli_args).
    tree = ast.parse(cli_args(root).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name in FRONTEND_CLASSES:
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    name = item.target.id.replace("_", "-")
                    found.add(f"--{name}")
                    if _is_bool(ast.unparse(item.annotation)):
                        found.add(f"--no-{name}")
    for short, long in _rewritten_short(root).items():
        shorts.setdefault(short, long)
    return found, shorts


def _rewritten_short(root: Path) -> dict[str, str]:
    """Short options that `FlexibleArgumentParser.parse_args` rewrites before argparse reads
    them: 0.33.0 turns ``-O3`` / ``-O=3`` into ``--optimization-level 3``
    (vllm/utils/argparse_utils.py, ``elif arg.startswith("-O")``)."""
    path = root / "utils" / "argparse_utils.py"
    if not path.exists():
        return {}
    out: dict[str, str] = {}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.If) and "startswith('-O')" in ast.unparse(node.test):
            for item in node.body:
                if (
                    isinstance(item, ast.AugAssign)
                    and isinstance(item.value, ast.List)
                    and item.value.elts
                    and isinstance(item.value.elts[0], ast.Constant)
                ):
                    out["-O"] = str(item.value.elts[0].value)
    return out


def env_vars(root: Path) -> set[str]:
    """The keys of ``environment_variables`` in `vllm/envs.py`."""
    tree = ast.parse((root / "envs.py").read_text())
    for node in ast.walk(tree):
        target = (
            node.targets[0]
            if isinstance(node, ast.Assign)
            else node.target
            if isinstance(node, ast.AnnAssign)
            else None
        )
        if (
            isinstance(target, ast.Name)
            and target.id == "environment_variables"
            and isinstance(node.value, ast.Dict)  # type: ignore[union-attr]
        ):
            return {
                k.value
                for k in node.value.keys  # type: ignore[union-attr]
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
    raise SystemExit("vllm/envs.py: no environment_variables dict")


def tool_parsers(root: Path) -> set[str]:
    """The names `--tool-call-parser` accepts: ``@ToolParserManager.register_module("x")``
    decorators (0.10.2: vllm/entrypoints/openai/tool_parsers/*.py) and the keys of
    ``_TOOL_PARSERS_TO_REGISTER`` (0.33.0: vllm/tool_parsers/__init__.py, registered lazily
    by ``register_lazy_tool_parsers``)."""
    found: set[str] = set()
    for folder in (root / "entrypoints" / "openai" / "tool_parsers", root / "tool_parsers"):
        for path in sorted(folder.glob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if (
                    isinstance(node, ast.Call)
                    and ast.unparse(node.func).endswith("ToolParserManager.register_module")
                    and node.args
                ):
                    arg = node.args[0]
                    items = arg.elts if isinstance(arg, ast.List | ast.Tuple) else [arg]
                    found |= {i.value for i in items if isinstance(i, ast.Constant)}
                target = (
                    node.targets[0]
                    if isinstance(node, ast.Assign)
                    else node.target
                    if isinstance(node, ast.AnnAssign)
                    else None
                )
                if (
                    isinstance(target, ast.Name)
                    and target.id == "_TOOL_PARSERS_TO_REGISTER"
                    and isinstance(node.value, ast.Dict)  # type: ignore[union-attr]
                ):
                    found |= {
                        k.value
                        for k in node.value.keys  # type: ignore[union-attr]
                        if isinstance(k, ast.Constant) and isinstance(k.value, str)
                    }
    if not found:
        raise SystemExit(f"{root}: no tool parsers found")
    return found


def engine_defaults(root: Path) -> dict[str, str]:
    """The defaults of vLLM that inferplane's checks model: ``gpu_memory_utilization`` of
    ``CacheConfig`` (vllm/config/cache.py; ``= 0.9`` in 0.10.2,
    ``= Field(default=0.92, ...)`` in 0.33.0), the fraction of GPU memory the fit budgets."""
    tree = ast.parse((root / "config" / "cache.py").read_text())
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ClassDef) and node.name == "CacheConfig"):
            continue
        for item in node.body:
            if (
                isinstance(item, ast.AnnAssign)
                and isinstance(item.target, ast.Name)
                and item.target.id == "gpu_memory_utilization"
                and item.value is not None
            ):
                value = item.value
                if isinstance(value, ast.Call):
                    value = next(k.value for k in value.keywords if k.arg == "default")
                assert isinstance(value, ast.Constant), ast.unparse(item)
                return {"gpu_memory_utilization": str(value.value)}
    raise SystemExit(f"{root}: no CacheConfig.gpu_memory_utilization")


METRIC = re.compile(r"vllm:[a-z0-9_]+")
KINDS = {"counter": "counter", "gauge": "gauge", "histogram": "histogram"}
RENAMED = re.compile(r"Use (vllm:[a-z0-9_]+) instead")


def _kind(call: ast.Call) -> str | None:
    """counter | gauge | histogram of a metric constructor (``self._gauge_cls(...)``,
    ``prometheus_client.Counter(...)``), None for any other call."""
    func = ast.unparse(call.func).lower()
    return next((k for k in KINDS if k in func.rsplit(".", 1)[-1]), None)


def metrics(root: Path) -> dict[str, tuple[str, str]]:
    """Every Prometheus metric family of the v1 engine (vllm/v1/**/*.py): name -> (kind, the
    metric it was renamed to, from a ``DEPRECATED: Use vllm:x instead`` documentation, or
    ""). A name passed as ``name=`` takes the kind of its constructor; a name assigned or
    listed in a function (``name = "vllm:cache_config_info"``, ``counter_specs``) takes the
    kind of the one constructor that function calls."""
    out: dict[str, tuple[str, str]] = {}
    for path in sorted((root / "v1").rglob("*.py")):
        if path.relative_to(root).as_posix() == "v1/metrics/reader.py":
            continue  # reads the registry back (get_metrics_snapshot), defines no metric
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call) and _kind(n)]
            direct: dict[str, tuple[str, str]] = {}
            for call in calls:
                name = next((k.value for k in call.keywords if k.arg == "name"), None)
                if isinstance(name, ast.Constant) and METRIC.fullmatch(str(name.value)):
                    doc = next((k.value for k in call.keywords if k.arg == "documentation"), None)
                    renamed = RENAMED.search(ast.unparse(doc)) if doc is not None else None
                    kind = _kind(call)
                    assert kind is not None
                    direct[str(name.value)] = (kind, renamed.group(1) if renamed else "")
            kinds = {_kind(c) for c in calls}
            for node in ast.walk(fn):
                if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                    continue
                if not METRIC.fullmatch(node.value) or node.value in direct:
                    continue
                if len(kinds) != 1:
                    raise SystemExit(f"{path}: cannot tell the kind of {node.value}")
                (kind,) = kinds
                assert kind is not None
                out.setdefault(node.value, (kind, ""))
            out.update(direct)
    if not out:
        raise SystemExit(f"{root}: no vllm: metrics under v1/")
    return out


def config_keys(root: Path, module: str, cls: str) -> list[str]:
    """The keys a JSON value of config class `cls` (in `module`, relative to `root`) takes:
    its fields a caller may set. ``@config`` makes each class a pydantic dataclass with
    ``extra="forbid"`` (vllm/config/utils.py, `config`), so no other key parses; a field named
    ``_x`` or declared ``field(..., init=False)`` is no constructor argument."""
    tree = ast.parse((root / module).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            keys = []
            for item in node.body:
                if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                    continue
                init = not (
                    isinstance(item.value, ast.Call)
                    and any(
                        k.arg == "init" and isinstance(k.value, ast.Constant) and not k.value.value
                        for k in item.value.keywords
                    )
                )
                if init and not item.target.id.startswith("_"):
                    keys.append(item.target.id)
            return sorted(keys)
    raise SystemExit(f"{module}: no class {cls}")


def literal_values(root: Path, module: str, alias: str) -> list[str]:
    """The values of ``alias = Literal["a", "b"]`` in `module`: the choices argparse gives
    an option typed with it (vllm/engine/arg_utils.py, `_compute_kwargs`: ``choices`` of a
    Literal)."""
    tree = ast.parse((root / module).read_text())
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and [ast.unparse(t) for t in node.targets] == [alias]
            and isinstance(node.value, ast.Subscript)
            and ast.unparse(node.value.value) == "Literal"
        ):
            elts = (
                node.value.slice.elts
                if isinstance(node.value.slice, ast.Tuple)
                else [node.value.slice]
            )
            return sorted(str(e.value) for e in elts if isinstance(e, ast.Constant))
    raise SystemExit(f"{module}: no Literal {alias}")


def keys_read(root: Path, module: str, name: str) -> list[str]:
    """The keys of dict `name` that `module` reads: ``name["k"]``, ``name.get("k")``, and
    the keys a comprehension over ``name.items()`` keeps (``if k in ("a", "b")``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse((root / module).read_text())):
        if (
            isinstance(node, ast.Subscript)
            and ast.unparse(node.value) == name
            and isinstance(node.slice, ast.Constant)
        ):
            found.add(str(node.slice.value))
        elif (
            isinstance(node, ast.Call)
            and ast.unparse(node.func) == f"{name}.get"
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            found.add(str(node.args[0].value))
        elif isinstance(node, ast.comprehension) and ast.unparse(node.iter) == f"{name}.items()":
            for test in node.ifs:
                if isinstance(test, ast.Compare) and isinstance(test.comparators[0], ast.Tuple):
                    elts = test.comparators[0].elts
                    found |= {str(e.value) for e in elts if isinstance(e, ast.Constant)}
    if not found:
        raise SystemExit(f"{module}: reads no key of {name}")
    return sorted(found)


def listed(root: Path, module: str, name: str) -> list[str]:
    """The strings of the list or set literal assigned to `name` in `module` (the
    ``available_params`` of ``ModelConfig.get_diff_sampling_param``)."""
    for node in ast.walk(ast.parse((root / module).read_text())):
        if (
            isinstance(node, ast.Assign)
            and [ast.unparse(t) for t in node.targets] == [name]
            and isinstance(node.value, ast.List | ast.Set | ast.Tuple)
        ):
            return sorted(str(e.value) for e in node.value.elts if isinstance(e, ast.Constant))
    raise SystemExit(f"{module}: no list {name}")


def field_annotation(root: Path, cls: str, name: str) -> str:
    """The annotation of field `name` of class `cls` in the config and arg modules."""
    return _annotations(root).get((cls, name), "")


_DEPRECATED = re.compile(
    r"""[`'"]?(--[a-z0-9][a-z0-9-]*|[A-Z][A-Z0-9]*_[A-Z0-9_]+)[`'"]? """
    r"(?:environment variable )?is deprecated"
)
_REPLACEMENT = re.compile(
    r"""(?:replaced with|[Pp]lease use) [`'"]?(--[a-z0-9][a-z0-9.-]*(?: [a-z0-9]+)?)"""
)


def deprecations(root: Path) -> dict[str, tuple[str, str]]:
    """Option or variable -> (what the release's own deprecation notice names instead, the
    file and line of that notice), over every string of the wheel's sources: "argument
    '--disable-log-requests' is deprecated and replaced with '--enable-log-requests'"
    (v0.10.2 ``vllm/utils/__init__.py``). Adjacent literals are one string to `ast`; an
    f-string's fields read as ``{}``. A notice that names no replacement is left out."""
    out: dict[str, tuple[str, str]] = {}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.JoinedStr):
                text = "".join(
                    str(v.value) if isinstance(v, ast.Constant) else "{}" for v in node.values
                )
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                text = node.value
            else:
                continue
            old, new = _DEPRECATED.search(text), _REPLACEMENT.search(text)
            if old and new and old.group(1) not in out:
                where = f"vllm/{path.relative_to(root).as_posix()}:{node.lineno}"
                out[old.group(1)] = (new.group(1), where)
    return out


def histogram_buckets(
    root: Path,
) -> tuple[dict[str, tuple[float, ...]], dict[str, str], dict[str, tuple[float, ...]]]:
    """The histogram bucket bounds of a release: (the default bounds of each bucket family,
    the family of each histogram, the fixed bounds of each histogram of a release without
    families).

    A release with families (0.33.0): vllm/v1/metrics/buckets.py ``_STATIC_FAMILY_DEFAULTS``
    maps each family to a module-level tuple of numbers, and vllm/v1/metrics/loggers.py gives
    a histogram ``buckets=<var>`` where ``<var> = histogram_buckets("<family>", ...)``;
    ``--custom-histogram-buckets`` replaces a family's bounds. ``request_tokens`` has no
    static default (its bounds follow ``max_model_len``) and is left out.

    A release without (0.10.2): vllm/v1/metrics/loggers.py writes each histogram's bounds
    inline, ``buckets=[...]`` or ``buckets=<var>`` where ``<var> = [...]`` in the same
    function; they are fixed. Bounds built from ``max_model_len`` are left out."""
    loggers = ast.parse((root / "v1" / "metrics" / "loggers.py").read_text())
    path = root / "v1" / "metrics" / "buckets.py"
    if not path.exists():
        return {}, {}, _inline_buckets(loggers)
    tree = ast.parse(path.read_text())
    tuples: dict[str, tuple[float, ...]] = {}
    families: dict[str, str] = {}
    for node in tree.body:
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        if isinstance(node.value, ast.Tuple):
            tuples[node.target.id] = tuple(float(ast.literal_eval(e)) for e in node.value.elts)
        elif node.target.id == "_STATIC_FAMILY_DEFAULTS" and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                assert isinstance(key, ast.Constant) and isinstance(value, ast.Name)
                families[str(key.value)] = value.id
    bounds = {family: tuples[name] for family, name in families.items()}
    uses: dict[str, str] = {}
    for fn in ast.walk(loggers):
        if not isinstance(fn, ast.FunctionDef):
            continue
        var_family: dict[str, str] = {}
        for node in ast.walk(fn):
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and ast.unparse(node.value.func) == "histogram_buckets"
                and isinstance(node.value.args[0], ast.Constant)
            ):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        var_family[target.id] = str(node.value.args[0].value)
        for name, buckets in _histogram_calls(fn):
            if isinstance(buckets, ast.Name) and var_family.get(buckets.id) in bounds:
                uses[name] = var_family[buckets.id]
    return bounds, uses, {}


def _histogram_calls(fn: ast.FunctionDef) -> list[tuple[str, ast.expr]]:
    """(metric name, the ``buckets=`` expression) of every call in `fn` with both."""
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call):
            kw = {k.arg: k.value for k in node.keywords}
            name, buckets = kw.get("name"), kw.get("buckets")
            if isinstance(name, ast.Constant) and buckets is not None:
                out.append((str(name.value), buckets))
    return out


def _inline_buckets(loggers: ast.Module) -> dict[str, tuple[float, ...]]:
    """Each histogram's bounds written as a list literal, directly or through a variable of
    the same function."""
    out: dict[str, tuple[float, ...]] = {}
    for fn in ast.walk(loggers):
        if not isinstance(fn, ast.FunctionDef):
            continue
        lists: dict[str, ast.List] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        lists[target.id] = node.value
        for name, buckets in _histogram_calls(fn):
            found = lists.get(buckets.id) if isinstance(buckets, ast.Name) else buckets
            if isinstance(found, ast.List):
                out[name] = tuple(float(ast.literal_eval(e)) for e in found.elts)
    return out
