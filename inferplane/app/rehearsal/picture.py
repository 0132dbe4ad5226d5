"""A rehearsal's timeline as one self-contained HTML page: inline SVG, no script, nothing
fetched. One block per model: load offered per zone, replicas desired / ready / pending,
requests waiting / running, and TTFT, inter-token and end-to-end latency (p50, p95, p99)
with the SLO drawn as a dashed red line; the verdict's lines above it. A PNG is not made:
matplotlib is not among the project's dependencies.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence

from inferplane.app.rehearsal.timeline import Row, latency_key
from inferplane.app.rehearsal.verdict import Verdict

WIDTH, HEIGHT, PAD = 760, 150, 44
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf")
SLO_COLOUR = "#d62728"

Series = tuple[str, Sequence[float | None]]


def _panel(
    title: str, ts: Sequence[float], series: Sequence[Series], slo: float | None = None
) -> str:
    values = [v for _, vs in series for v in vs if v is not None]
    top = max([*values, slo or 0.0, 1e-9]) * 1.1
    end = max(ts[-1] if ts else 1.0, 1.0)

    def x(t: float) -> float:
        return PAD + (WIDTH - 2 * PAD) * t / end

    def y(v: float) -> float:
        return HEIGHT - PAD / 2 - (HEIGHT - PAD) * v / top

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'role="img" aria-label="{html.escape(title)}">',
        f'<text x="{PAD}" y="14" font-size="12" font-weight="bold">{html.escape(title)}</text>',
        f'<line x1="{PAD}" y1="{y(0):.1f}" x2="{WIDTH - PAD}" y2="{y(0):.1f}" stroke="#999"/>',
        f'<text x="{PAD - 4}" y="{y(top / 1.1):.1f}" font-size="10" text-anchor="end">'
        f"{top / 1.1:.3g}</text>",
        f'<text x="{PAD - 4}" y="{y(0):.1f}" font-size="10" text-anchor="end">0</text>',
        f'<text x="{WIDTH - PAD}" y="{HEIGHT - 2}" font-size="10" text-anchor="end">'
        f"{end:.0f} s</text>",
    ]
    for i, (name, vs) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        runs: list[list[str]] = [[]]
        for t, v in zip(ts, vs, strict=True):
            if v is None:
                runs.append([])
            else:
                runs[-1].append(f"{x(t):.1f},{y(v):.1f}")
        for run in runs:
            if run:
                parts.append(
                    f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
                    f'points="{" ".join(run)}"/>'
                )
        parts.append(
            f'<text x="{WIDTH - PAD + 4}" y="{28 + 12 * i}" font-size="10" fill="{colour}">'
            f"{html.escape(name)}</text>"
        )
    if slo is not None:
        parts.append(
            f'<line x1="{PAD}" y1="{y(slo):.1f}" x2="{WIDTH - PAD}" y2="{y(slo):.1f}" '
            f'stroke="{SLO_COLOUR}" stroke-dasharray="6 4"/>'
            f'<text x="{PAD + 4}" y="{y(slo) - 3:.1f}" font-size="10" fill="{SLO_COLOUR}">'
            f"SLO {slo:g} ms</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _col(rows: Sequence[Row], get: Callable[[Row], float | None]) -> list[float | None]:
    return [get(r) for r in rows]


def model_block(rows: Sequence[Row], verdict: Verdict, slo_ms: Mapping[str, float]) -> str:
    ts = [r.t for r in rows]
    zones = sorted({z for r in rows for z in r.offered_rps})
    panels = [
        _panel(
            "offered load (requests/s per zone; the rehearsal's sender)",
            ts,
            [(z, [r.offered_rps.get(z) for r in rows]) for z in zones],
        ),
        _panel(
            "replicas (the real HPA, Deployment and scheduler)",
            ts,
            [
                ("desired", _col(rows, lambda r: r.desired)),
                ("ready", _col(rows, lambda r: r.ready)),
                ("pending pods", _col(rows, lambda r: r.pending_pods)),
            ],
        ),
        _panel(
            "requests waiting / running (Prometheus, from the stand-ins)",
            ts,
            [
                ("waiting", _col(rows, lambda r: r.queue)),
                ("running", _col(rows, lambda r: r.running)),
            ],
        ),
    ]
    for kind, title, slo_field in (
        ("ttft", "time to first token, ms", "ttft_p95_ms"),
        ("itl", "inter-token latency, ms", "itl_p95_ms"),
        ("e2e", "end-to-end latency, ms", "p95_ms"),
    ):
        series = [
            (f"p{round(q * 100)}", [r.latency_ms.get(latency_key(kind, q)) for r in rows])
            for q in (0.5, 0.95, 0.99)
        ]
        panels.append(
            _panel(
                f"{title} (Prometheus, from the stand-ins' model)",
                ts,
                series,
                slo_ms.get(slo_field),
            )
        )
    lines = "\n".join(html.escape(line) for line in verdict.lines())
    return (
        f"<section><h2>{html.escape(verdict.model)}</h2><pre>{lines}</pre>"
        + "".join(f"<div>{p}</div>" for p in panels)
        + "</section>"
    )


def page(title: str, notes: Sequence[str], blocks: Sequence[str]) -> str:
    """The whole page; `notes` are shown first (what ran for real, what stood in)."""
    note = "".join(f"<li>{html.escape(n)}</li>" for n in notes)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;margin:1em}pre{background:#f6f6f6;padding:.5em}"
        "</style></head><body>"
        f"<h1>{html.escape(title)}</h1><ul>{note}</ul>" + "".join(blocks) + "</body></html>\n"
    )
