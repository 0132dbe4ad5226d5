"""How long a request may take on its way through the serving path, and the timers derived
from `max_request_s` so that none of them cuts it.

A request passes (on AWS) the NLB, then, for a model that wakes on its own HTTP traffic,
the KEDA HTTP add-on's interceptor, then the server. Each hop has a timer of its own:

- **The interceptor's response-header timeout.** The interceptor answers 504 when the
  server's response headers take longer than ``KEDA_HTTP_RESPONSE_HEADER_TIMEOUT``, 300 s
  by default (kedacore/http-add-on v0.15.0 ``interceptor/config/timeouts.go``
  ``Timeouts.ResponseHeader``; ``interceptor/handler/upstream.go`` takes a route's own
  ``timeouts.responseHeader`` instead when set, and its ``ErrorHandler`` maps a timeout to
  ``http.StatusGatewayTimeout``). A response that is not streamed sends its headers with
  its last byte, so the HTTPScaledObject's ``timeouts.responseHeader`` is
  `response_header_timeout_s`. A zero there means "unset" (``pkg/routing/table.go`` copies
  it only when ``> 0``), so the value is always positive.
- **The interceptor's drain.** A stopping interceptor waits ``drainTimeout`` for requests in
  flight after its listener closes (chart ``keda-add-ons-http`` 0.15.0 values.yaml:
  ``interceptor.drainTimeout``, default 30 s, ``terminationGracePeriodSeconds`` at least
  ``shutdownDelay + drainTimeout``). It is one setting for the whole add-on, which every
  blueprint on the cluster shares: an installing blueprint sets `interceptor_drain_s` from
  its longest request; a blueprint that uses an ``existing`` add-on says what drain it runs
  with (``cluster.addons.keda_http_add_on.drain_s``, default the chart's 30 s) and is
  refused when a model's `max_request_s` is longer.
- **The AWS NLB's idle timeout.** An NLB closes a TCP flow on which neither side sent
  anything for ``tcp.idle_timeout.seconds``: 350 s by default, 60 to 6000 s
  (https://docs.aws.amazon.com/elasticloadbalancing/latest/network/update-idle-timeout.html;
  the API's ``ListenerAttribute``: "The valid range is 60-6000 seconds. The default is 350
  seconds."). A response that is not streamed is silent for the whole request, and a
  request to a model at zero is also silent while the interceptor holds it for the first
  replica (``timeouts.conditionWait`` = `startup_timeout_s`). `nlb_idle_timeout_s` covers
  both; a model whose silence cannot fit in 6000 s is refused (`path_limit_problem`).
- **GKE's internal passthrough load balancer** has no idle timer that cuts a flow: it keeps
  a connection-tracking entry at least 10 minutes (the Compute API's
  ``BackendServiceConnectionTrackingPolicy.idleTimeoutSec``: "For internal passthrough
  Network Load Balancers: The minimum (default) is 10 minutes"), and a packet that finds no
  entry goes through backend selection again ("Traffic distribution for internal
  passthrough Network Load Balancers", https://cloud.google.com/load-balancing/docs/internal/
  int-netlb-traffic-distribution, "Backend selection and connection tracking"), whose
  consistent hash of the same 5-tuple picks the same backend while the backends stay the
  same. Nothing to derive or refuse there.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

HEADROOM_S: Final = 30
"""Added to `max_request_s` in every timer derived from it: a request that takes exactly
its limit, plus the moments before its first and after its last byte, is not cut."""

RESPONSE_HEADER_DEFAULT_S: Final = 300
"""``KEDA_HTTP_RESPONSE_HEADER_TIMEOUT``'s default (http-add-on v0.15.0 timeouts.go)."""

INTERCEPTOR_DRAIN_FLOOR_S: Final = 300
"""The shortest drain an installed interceptor gets, whatever the installing blueprint's
longest request: other blueprints on the cluster use it too (as ``existing``), and a drain
is a bound, not a wait (it ends when the last request in flight does)."""
CHART_DRAIN_S: Final = 30
"""``interceptor.drainTimeout`` of an add-on installed with the chart's own values (chart
``keda-add-ons-http`` 0.15.0 values.yaml: ``drainTimeout: 30s``)."""
INTERCEPTOR_SHUTDOWN_DELAY_S: Final = 5
"""The chart's ``shutdownDelay`` default: time for endpoint removal to propagate before the
listener closes."""
INTERCEPTOR_GRACE_MARGIN_S: Final = 10
"""Beyond shutdown delay + drain, before the kubelet's SIGKILL."""

NLB_IDLE_DEFAULT_S: Final = 350
NLB_IDLE_MIN_S: Final = 60
NLB_IDLE_MAX_S: Final = 6000
"""``tcp.idle_timeout.seconds`` of an NLB TCP listener: default, minimum and maximum."""


def response_header_timeout_s(max_request_s: int) -> int:
    """The HTTPScaledObject's ``timeouts.responseHeader``: a response that is not streamed
    has its headers only when it is done."""
    return max_request_s + HEADROOM_S


def interceptor_drain_s(max_requests_s: Iterable[int]) -> int:
    """``interceptor.drainTimeout`` of an add-on the blueprint installs: its longest request
    through the interceptor, at least `INTERCEPTOR_DRAIN_FLOOR_S`."""
    return max([INTERCEPTOR_DRAIN_FLOOR_S, *(s + HEADROOM_S for s in max_requests_s)])


def interceptor_grace_s(drain_s: int) -> int:
    """``interceptor.terminationGracePeriodSeconds``: the chart asks for at least
    ``shutdownDelay + drainTimeout``."""
    return INTERCEPTOR_SHUTDOWN_DELAY_S + drain_s + INTERCEPTOR_GRACE_MARGIN_S


def silent_s(max_request_s: int, startup_timeout_s: int, wakes_on_traffic: bool) -> int:
    """The longest a connection may carry no byte: a whole request that is not streamed,
    after (for a model that wakes on its own traffic) the interceptor held it for as long
    as a first replica may take to start."""
    held = startup_timeout_s if wakes_on_traffic else 0
    return held + max_request_s


def nlb_idle_timeout_s(max_request_s: int, startup_timeout_s: int, wakes_on_traffic: bool) -> int:
    """``tcp.idle_timeout.seconds`` of the model's NLB listeners: its longest silence plus
    headroom, never below the NLB's own default (a short request changes nothing)."""
    wanted = silent_s(max_request_s, startup_timeout_s, wakes_on_traffic) + HEADROOM_S
    return max(NLB_IDLE_DEFAULT_S, wanted)


def path_limit_problem(
    cloud: str, max_request_s: int, startup_timeout_s: int, wakes_on_traffic: bool
) -> tuple[str, str] | None:
    """(problem, fix) when the cloud's load balancer cannot keep the model's longest
    silence open; None when it can. Only AWS's NLB has such a limit (module docstring)."""
    if cloud != "aws":
        return None
    needed = nlb_idle_timeout_s(max_request_s, startup_timeout_s, wakes_on_traffic)
    if needed <= NLB_IDLE_MAX_S:
        return None
    budget = NLB_IDLE_MAX_S - HEADROOM_S
    if wakes_on_traffic:
        problem = (
            f"a request to this model at zero replicas may be silent for startup_timeout_s "
            f"({startup_timeout_s} s, held while the first replica starts) plus max_request_s "
            f"({max_request_s} s), {startup_timeout_s + max_request_s} s, and an AWS NLB "
            f"closes a connection idle for more than {NLB_IDLE_MAX_S} s (its "
            f"tcp.idle_timeout.seconds maximum)"
        )
        fix = (
            f"keep startup_timeout_s + max_request_s at most {budget} s, or keep "
            "replicas.min at 1 or more so that no request waits for a replica to start"
        )
    else:
        problem = (
            f"max_request_s ({max_request_s} s) is longer than an AWS NLB keeps an idle "
            f"connection open ({NLB_IDLE_MAX_S} s, its tcp.idle_timeout.seconds maximum)"
        )
        fix = f"keep max_request_s at most {budget} s, or stream the response"
    return problem, fix


__all__ = [
    "CHART_DRAIN_S",
    "HEADROOM_S",
    "INTERCEPTOR_DRAIN_FLOOR_S",
    "INTERCEPTOR_SHUTDOWN_DELAY_S",
    "NLB_IDLE_DEFAULT_S",
    "NLB_IDLE_MAX_S",
    "RESPONSE_HEADER_DEFAULT_S",
    "interceptor_drain_s",
    "interceptor_grace_s",
    "nlb_idle_timeout_s",
    "path_limit_problem",
    "response_header_timeout_s",
    "silent_s",
]
