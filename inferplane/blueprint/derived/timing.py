"""Periods the stack sets on every model, stated once.

The components write them into the objects they create (the ScaledObject's
``pollingInterval``, the ServiceMonitor's ``interval``, the serving container's probes) and
the scale-out budget (`inferplane.blueprint.derived.scale_out`) counts them, so the budget can never
disagree with the stack about them.
"""

from __future__ import annotations

from typing import Final

POLLING_INTERVAL_S: Final = 15
"""KEDA ``ScaledObject.spec.pollingInterval``: how often KEDA checks the triggers itself. It
decides the 0 -> 1 activation; from one replica on, the HPA asks KEDA's metrics server on
its own sync period and, without ``useCachedMetrics``, each such request queries the scaler
(keda-docs ``content/docs/2.20/concepts/scaling-deployments.md``, "Caching Metrics")."""

SCRAPE_INTERVAL_S: Final = 5
"""The serving ServiceMonitors' scrape ``interval``: how old the newest sample of a signal
may be, so a part of every scale-out (`scale_out`). 5 s rather than the common 15-30 s: a
model's metrics are a few hundred series, and a surge shows in the queue a scrape sooner.
Only the serving monitors use it; the add-ons keep their charts' intervals."""

PROBE_PERIOD_S: Final = 10
"""``periodSeconds`` of the liveness probe."""

STARTUP_PERIOD_S: Final = 5
"""``periodSeconds`` of the startup probe: a new replica is found loaded at most this long
after it is (a part of every scale-out); its failureThreshold follows, so the startup budget
(``startup_timeout_s``) is the same whatever the period."""

READINESS_PERIOD_S: Final = 5
"""``periodSeconds`` of the readiness probe."""

READINESS_FAILURE_THRESHOLD: Final = 2
READINESS_SUCCESS_THRESHOLD: Final = 1
"""``successThreshold`` of the readiness probe (the API requires 1 for startup and liveness
probes; 1 for readiness too, so one good answer is enough)."""
