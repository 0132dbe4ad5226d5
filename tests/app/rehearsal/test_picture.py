"""The rehearsal's picture: one self-contained HTML page with the SLO lines."""

from __future__ import annotations

import re

from inferplane.app.rehearsal import picture, verdict
from inferplane.app.rehearsal.timeline import Row

EXP = verdict.Expectation("chat<x>", {"ttft_p95_ms": 400.0, "p95_ms": 2000.0}, 2, 8)


def rows() -> list[Row]:
    return [
        Row(
            t=n * 5,
            offered_rps={"zone-a": 1.0 + n, "zone-b": 1.0},
            queue=float(n),
            ready=2,
            desired=2 + n // 3,
            latency_ms={"ttft_p95": 100.0 * n if n != 3 else None, "e2e_p95": 1000.0},
        )
        for n in range(8)
    ]


def test_the_page_draws_each_panel_and_the_slo_lines_and_fetches_nothing() -> None:
    got = verdict.judge(rows(), EXP)
    text = picture.page(
        "rehearsal", ["the loops are real"], [picture.model_block(rows(), got, EXP.slo_ms)]
    )
    assert text.startswith("<!DOCTYPE html>")
    assert text.count("<svg") == 6
    assert "SLO 400 ms" in text and "SLO 2000 ms" in text
    assert 'stroke-dasharray="6 4"' in text
    # The model's name is escaped; nothing refers outside the page.
    assert "chat&lt;x&gt;" in text and "chat<x>" not in text
    assert not re.search(r"(src|href)=|https?://(?!www\.w3\.org/2000/svg)", text)
    # A missing value breaks the line rather than drawing it at zero.
    (ttft,) = [svg for svg in re.findall("<svg.*?</svg>", text) if "first token" in svg]
    assert ttft.count("<polyline") >= 2
