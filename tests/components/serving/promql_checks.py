"""Checks of PromQL expressions on the real parser's syntax tree (``promql_parser``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import promql_parser as pp

from inferplane.components.serving.observability import promql

# Functions that return one element per element of their (first) vector argument.
_ELEMENTWISE = {
    "abs",
    "ceil",
    "floor",
    "round",
    "exp",
    "ln",
    "log2",
    "log10",
    "sqrt",
    "sgn",
    "clamp",
    "clamp_min",
    "clamp_max",
    "label_replace",
    "label_join",
    "sort",
    "sort_desc",
    "timestamp",
}
# Functions whose result has exactly one element.
_ONE = {"vector", "scalar", "time", "pi", "absent", "absent_over_time"}
# Aggregations that may return several elements even without grouping.
_MANY_AGG = {"topk", "bottomk", "count_values", "limitk", "limit_ratio"}


def parse(expr: str) -> Any:
    return pp.parse(expr)


def walk(node: Any) -> Iterator[Any]:
    """Every node of the tree, depth first."""
    yield node
    if isinstance(node, pp.BinaryExpr):
        yield from walk(node.lhs)
        yield from walk(node.rhs)
    elif isinstance(node, pp.AggregateExpr):
        if node.param is not None:
            yield from walk(node.param)
        yield from walk(node.expr)
    elif isinstance(node, pp.Call):
        for arg in node.args:
            yield from walk(arg)
    elif isinstance(node, (pp.ParenExpr, pp.UnaryExpr, pp.SubqueryExpr)):
        yield from walk(node.expr)
    elif isinstance(node, pp.MatrixSelector):
        yield from walk(node.vector_selector)


def selectors(expr: str) -> list[Any]:
    return [n for n in walk(parse(expr)) if isinstance(n, pp.VectorSelector)]


def metric_names(expr: str) -> set[str]:
    names = set()
    for sel in selectors(expr):
        name = sel.name or next(
            (m.value for m in sel.matchers.matchers if m.name == "__name__"), None
        )
        assert name, f"selector without a metric name in {expr}"
        names.add(name)
    return names


def unknown_metrics(expr: str) -> set[str]:
    """Names neither an exporter emits nor a recording rule records."""
    return metric_names(expr) - set(promql.KNOWN_METRICS) - promql.RECORDED_METRICS


def matchers(sel: Any) -> dict[str, tuple[str, str]]:
    """label -> (operator, value) of one selector."""
    ops = {
        "MatchOp.Equal": "=",
        "MatchOp.NotEqual": "!=",
        "MatchOp.Re": "=~",
        "MatchOp.NotRe": "!~",
    }
    return {m.name: (ops[str(m.op)], m.value) for m in sel.matchers.matchers}


def _by_labels(node: Any) -> list[str] | None:
    """Grouping labels of an aggregation: [] for none, None for `without`."""
    if node.modifier is None:
        return []
    if str(node.modifier.type).endswith("By"):
        return list(node.modifier.labels)
    return None


def single_element(node: Any) -> bool:
    """True when the expression can return at most one element, whatever the data."""
    if isinstance(node, str):
        node = parse(node)
    if isinstance(node, pp.NumberLiteral):
        return True
    if isinstance(node, (pp.ParenExpr, pp.UnaryExpr)):
        return single_element(node.expr)
    if isinstance(node, pp.AggregateExpr):
        return str(node.op) not in _MANY_AGG and _by_labels(node) == []
    if isinstance(node, pp.Call):
        name = node.func.name
        if name in _ONE:
            return True
        if name == "histogram_quantile":
            inner = node.args[1]
            while isinstance(inner, pp.ParenExpr):
                inner = inner.expr
            if isinstance(inner, pp.AggregateExpr):
                labels = _by_labels(inner)
                return labels is not None and set(labels) <= {"le"}
            return False
        if name in _ELEMENTWISE:
            vectors = [
                a for a in node.args if not isinstance(a, (pp.NumberLiteral, pp.StringLiteral))
            ]
            return bool(vectors) and single_element(vectors[0])
        return False
    if isinstance(node, pp.BinaryExpr):
        op = str(node.op)
        if op in ("and", "unless"):
            return single_element(node.lhs)
        return single_element(node.lhs) and single_element(node.rhs)
    return False
