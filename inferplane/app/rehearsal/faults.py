"""Faults a rehearsal injects on request (``--fault KIND@SECONDS``), and what each did.

``kill-replica``: a serving process dies with requests in flight (streamed ones: the sender
streams, `rehearsal.stream`). At SECONDS into the profile the rehearsal kills (SIGKILL, by
PID) the stand-in of each rehearsed model's first ready pod: requests in flight to it fail,
and it leaves the set the traffic is spread over at once (a real pod leaves its Service's
endpoints only once its readiness probe fails, so the real window of failures is longer by
up to a probe period). The pod stays, as a pod whose container restarts (``restartPolicy:
Always``) does, and its stand-in starts again after the same start-up as a new replica's
(the plan's scale-out parts, shortened by ``--time-scale``); the kubelet's restart back-off
is not added, nor is a faster load from the node's own cache.

The report lists each fault: when, which pod, how many requests failed with it (cut
mid-stream: their answer had begun, then ended before ``[DONE]``; refused: no answer at
all; and any other failure), when the pod served again, and the worst p95 of each SLO from
the fault until it served again and one alert window after (what the SLO did).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from inferplane.app.rehearsal.timeline import Row
from inferplane.app.rehearsal.verdict import SLO_FIELDS

KINDS: Final = ("kill-replica",)
AFTER_S: Final = 120.0
"""How long after the replica serves again the SLO is still read: the 2 m window of the
latency the timeline shows keeps the fault's requests that long."""


class FaultError(ValueError):
    """A ``--fault`` value that is not ``KIND@SECONDS`` within the profile."""


@dataclass(frozen=True)
class Fault:
    kind: str
    at_s: float

    def arg(self) -> str:
        return f"{self.kind}@{self.at_s:g}"


def parse(text: str, profile_s: float) -> Fault:
    """``KIND@SECONDS``: a kind of `KINDS`, at a whole or decimal second inside the profile."""
    kind, sep, at = text.partition("@")
    if not sep or kind not in KINDS:
        raise FaultError(
            f"--fault {text!r}: expected KIND@SECONDS with KIND one of {', '.join(KINDS)} "
            "(for example kill-replica@120)"
        )
    try:
        seconds = float(at)
    except ValueError:
        raise FaultError(f"--fault {text!r}: {at!r} is not a number of seconds") from None
    if not 0 <= seconds < profile_s:
        raise FaultError(
            f"--fault {text!r}: {seconds:g} s is outside the profile, which lasts {profile_s:g} s"
        )
    return Fault(kind, seconds)


def judge(
    rows: Sequence[Row], events: Sequence[Mapping[str, Any]], slo_ms: Mapping[str, float]
) -> list[dict[str, Any]]:
    """Each fault event of one model (as the harness reports it) with what the SLO did:
    the worst p95 of each SLO field from the fault until `AFTER_S` after the pod served
    again (or to the end), and whether it passed the SLO."""
    out = []
    for e in events:
        back = e.get("ready_again_at_s")
        until = (back if back is not None else float("inf")) + AFTER_S
        window = [r for r in rows if e["at_s"] <= r.t <= until]
        slo = []
        for field, column, _ in SLO_FIELDS:
            if field not in slo_ms:
                continue
            seen = [r.latency_ms.get(column) for r in window]
            values = [v for v in seen if v is not None]
            worst = max(values) if values else None
            slo.append(
                {
                    "field": field,
                    "limit_ms": slo_ms[field],
                    "worst_ms": worst,
                    # No sample in the window says nothing either way.
                    "held": None if worst is None else worst <= slo_ms[field],
                }
            )
        out.append({**e, "slo_after": slo})
    return out


def lines(judged: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line per fault, under the model's verdict."""
    out = []
    for f in judged:
        back = f.get("ready_again_at_s")
        served = f"served again at {back:.0f} s" if back is not None else "not serving again"
        slo = "; ".join(
            f"{s['field']} no data"
            if s["held"] is None
            else f"{s['field']} worst {s['worst_ms']:.0f} ms "
            + ("held" if s["held"] else f"over {s['limit_ms']:g}")
            for s in f["slo_after"]
        )
        how = ""
        if "cut_mid_stream" in f:
            other = sum((f.get("failed_otherwise") or {}).values())
            how = f" ({f['cut_mid_stream']} cut mid-stream, {f['refused']} refused" + (
                f", {other} otherwise)" if other else ")"
            )
        out.append(
            f"  fault {f['kind']} at {f['at_s']:.0f} s (pod {f['pod']}): "
            f"{f['failed_requests']} requests failed with it{how}; {served}"
            + (f"; after it: {slo}" if slo else "")
        )
    return out
