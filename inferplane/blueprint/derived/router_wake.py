"""How long an llm-aware model at zero holds the request that wakes it, and how long the woken
replica stays: timers derived from the model's scale-out budget (`scale_out`).

At zero replicas the llm-d router's flow control holds the zone's requests while KEDA
scales from zero on its queue (`wake.wakes_in_router_queue`). Three timers decide whether
the held request is served:

- **The queue's TTL.** Flow control sheds a request still queued after
  ``flowControl.defaultRequestTTL`` of the picker's ``EndpointPickerConfig``, 60 s when
  unset (llm-d-router v0.10.0 ``apix/config/v1alpha1/endpointpickerconfig_types.go``,
  ``FlowControlConfig.DefaultRequestTTL``: "If omitted, it defaults to 60s ... a request
  that cannot dispatch within it is shed"; ``pkg/epp/flowcontrol/controller/config.go``,
  ``defaultRequestTTL = 60 * time.Second``). A first replica takes minutes (the budget),
  so the default drops every request that wakes a model. `queue_ttl_s` is the budget plus
  `DISCOVERY_MARGIN_S`. The chart renders the plugins file from ``router.epp
  .pluginsCustomConfig`` verbatim (``routerlib/templates/_config.yaml``), so the pinned
  release can carry it.
- **Envoy's wait for the picker.** The proxy waits ``message_timeout`` for each answer of
  the picker (Envoy ``ext_proc.proto``, ``ExternalProcessor.message_timeout``), 1000 s in
  the chart's Envoy preset (``config/charts/llm-d-router-standalone/values.yaml``); the
  picker answers the request's headers only once flow control dispatches it
  (``pkg/epp/handlers/request.go``, `generateRequestHeaderResponse` carries the picked
  endpoint), so `ext_proc_timeout_s` is never below the TTL.
- **KEDA's cooldown.** KEDA scales a ScaledObject back to zero ``cooldownPeriod`` after
  its triggers were last active (kedacore/keda ``pkg/scaling/executor/
  scale_scaledobjects.go`` at v2.20.2 and on main after it: to zero once
  ``LastActiveTime.Add(cooldownPeriod)`` is past; unset, ``defaultCooldownPeriod = 5 * 60``,
  ``scale_executor.go``). The queue trigger
  falls quiet once the held request is dispatched, or shed, or its client leaves; the
  replica must then still be allowed to finish starting and to serve it, so
  `cooldown_s` is the TTL plus the longest request, never below the model's own
  scale-down stabilisation.
"""

from __future__ import annotations

from typing import Final

from inferplane.blueprint.long_requests import HEADROOM_S

QUEUE_TTL_DEFAULT_S: Final = 60
"""``defaultRequestTTL`` of flow control when the picker's config sets none (module
docstring)."""
DISCOVERY_MARGIN_S: Final = 60
"""Beyond the budget's readiness: the picker learns of the new pod from its informer and
must scrape the pod's metrics (``metrics-data-source``) before it dispatches to it, and
the budget's parts are bounds of their own periodic waits, not of these."""
EXT_PROC_PRESET_TIMEOUT_S: Final = 1000
"""``message_timeout`` of the chart's Envoy preset (``values.yaml``: ``message_timeout:
1000s``)."""


def wake_s(budget_s: int, unknown_parts: bool, startup_timeout_s: int) -> int:
    """Seconds from a held request to a ready first replica: the scale-out budget, and
    where a part's size is unknown (the budget then a lower bound), the startup probe's
    limit on top, the longest a replica may load before the kubelet gives up on it."""
    return budget_s + (startup_timeout_s if unknown_parts else 0)


def queue_ttl_s(wake: int) -> int:
    """Flow control's ``defaultRequestTTL``: the wake plus `DISCOVERY_MARGIN_S`."""
    return wake + DISCOVERY_MARGIN_S


def ext_proc_timeout_s(ttl_s: int) -> int:
    """Envoy's ``message_timeout`` for the picker: the preset's, or the TTL and headroom."""
    return max(EXT_PROC_PRESET_TIMEOUT_S, ttl_s + HEADROOM_S)


def cooldown_s(wake: int, max_request_s: int, stabilization_s: int) -> int:
    """KEDA's ``cooldownPeriod`` of a model woken through the router's queue: long enough
    for the woken replica to start and serve the request (`queue_ttl_s` + the longest
    request + headroom), and never shorter than the model's scale-down stabilisation."""
    return max(stabilization_s, queue_ttl_s(wake) + max_request_s + HEADROOM_S)


__all__ = [
    "DISCOVERY_MARGIN_S",
    "EXT_PROC_PRESET_TIMEOUT_S",
    "QUEUE_TTL_DEFAULT_S",
    "cooldown_s",
    "ext_proc_timeout_s",
    "queue_ttl_s",
    "wake_s",
]
