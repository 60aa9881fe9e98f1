"""The atlas as one self-contained HTML page (docs/atlas.md, "The page"): the table's rows inlined
as JSON and plain JavaScript (`page.js`) that draws, for the sender, discipline, target and RTT
picked (or named in the URL's hash), the heatmap of B_min / BDP over flows and speed (SVG) and,
per speed, B_min / BDP against flows with its bracket beside the rules' lines. Nothing is fetched
when it is viewed: no library was worth a download for two SVG charts."""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any

COLUMNS = (
    "tcp",
    "queue",
    "discipline",
    "flows",
    "core_mbps",
    "rtt_ms",
    "traffic",
    "target",
    "min_buffer_pkts",
    "min_buffer_bdp",
    "lo_pkts",
    "hi_pkts",
    "confidence",
    "bdp_pkts",
    "flags",
    "reason",
    "utilization",
    "rule_bdp_pkts",
    "rule_stanford_pkts",
    "rule_spang_pkts",
    "rule_enachescu_pkts",
    "rule_dick_pkts",
)

SCRIPT = Path(__file__).with_name("page.js")
"""The drawing: the page inlines it, so the page is one file."""


def _clean(v: Any) -> Any:
    return None if isinstance(v, float) and not math.isfinite(v) else v


def render(name: str, rows: list[dict[str, Any]]) -> str:
    data = json.dumps([{k: _clean(r.get(k)) for k in COLUMNS} for r in rows]).replace("</", "<\\/")
    selects = "".join(
        f'<label>{lbl} <select id="{i}"></select></label> '
        for i, lbl in (("tcp", "sender"), ("queue", "discipline"), ("target", "target"), ("rtt", "RTT ms"))
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>buffer atlas: {html.escape(name)}</title>
<style>body{{font-family:sans-serif;margin:1.5em;max-width:1100px}} svg{{display:block;margin:1em 0;overflow:visible}}
.value{{font-size:13px}} .small{{font-size:11px}} .axis{{font-size:12px}} .title{{font-size:14px;font-weight:bold}}
select{{margin-right:1em}} #view{{color:#666;font-size:12px}}</style>
</head><body>
<h1>The buffer atlas: {html.escape(name)}</h1>
<p>The smallest buffer reaching each utilization target, per sender, discipline, flows, speed and
RTT, with its 95% bracket (buffersweep, <code>python -m analysis atlas build +atlas={html.escape(name)}</code>;
docs/atlas.md). Hover a cell for its bracket and flags; the address keeps the view:
<span id="view"></span></p>
<p>{selects}</p>
<svg id="heatmap" xmlns="http://www.w3.org/2000/svg"></svg>
<svg id="lines" xmlns="http://www.w3.org/2000/svg"></svg>
<script type="application/json" id="atlas-data">{data}</script>
<script>{SCRIPT.read_text()}</script>
</body></html>
"""
