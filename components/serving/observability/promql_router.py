"""The llm-d router's queries (llm-d-router v0.10.0 ``pkg/epp/metrics/llm_d_router_metrics.go``);
`inferplane.components.serving.observability.promql` re-exports them beside the server's own."""

from __future__ import annotations

from collections.abc import Sequence

from inferplane.components.serving.observability.promql_scope import Scope, selector


def _agg(op: str, expr: str, by: Sequence[str] = ()) -> str:
    return f"{op} by ({', '.join(by)}) ({expr})" if by else f"{op}({expr})"


def router_queue(scope: Scope, by: Sequence[str] = ()) -> str:
    """Requests the router holds in its flow-control queue (``flowControl`` gate)."""
    return _agg("sum", f"llm_d_epp_flow_control_queue_size{scope.router_selector()}", by)


def router_running(scope: Scope, by: Sequence[str] = ()) -> str:
    """Requests the router has running on the model's replicas."""
    return _agg("sum", f"llm_d_epp_request_running{scope.router_selector()}", by)


def pool_saturation(scope: Scope, by: Sequence[str] = ()) -> str:
    """The pool's saturation (1.0 = flow control's gating point; an empty pool reads 1.0).
    Only the leader dispatches, so the highest reading of the picker's replicas."""
    return _agg("max", f"llm_d_epp_flow_control_pool_saturation{scope.router_selector()}", by)


def router_ready_endpoints(scope: Scope, by: Sequence[str] = ()) -> str:
    """Ready endpoints the router sees in its pool."""
    return _agg("max", f"llm_d_epp_ready_endpoints{scope.router_selector()}", by)


def router_ready_pickers(scope: Scope) -> str:
    """Ready endpoint-picker pods per zone. Under leader election only the leader reports
    ready (llm-d-router v0.10.0 ``routerlib/templates/_deployment.yaml``: with more than
    one replica the readiness probe asks the ``readiness`` gRPC service), so below 1 no
    picker routes and the proxy passes requests unscored (``failOpen``)."""
    if scope.router_service is None:
        raise ValueError(f"model {scope.model!r} has no router (routing.mode: llm_aware)")
    pickers = selector(namespace=scope.namespace, deployment=scope.router_service)
    return _agg("min", f"kube_deployment_status_replicas_ready{pickers}", ["deployment"])
