"""The atlas as one self-contained HTML page (docs/atlas.md, "The page"): the table's rows inlined
as JSON and a few lines of plain JavaScript that draw, for the sender, discipline, target and RTT
picked, the heatmap of B_min / BDP over flows and speed (SVG) and, per speed, B_min / BDP against
flows beside the rules' lines. Nothing is fetched when it is viewed: no library was worth a
download for two SVG charts."""

from __future__ import annotations

import html
import json
import math
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
    "bdp_pkts",
    "flags",
    "utilization",
    "rule_bdp_pkts",
    "rule_stanford_pkts",
    "rule_spang_pkts",
    "rule_enachescu_pkts",
    "rule_dick_pkts",
)

SCRIPT = r"""
const rows = JSON.parse(document.getElementById('atlas-data').textContent);
const pick = id => document.getElementById(id);
const uniq = (k, f) => [...new Set(rows.filter(f || (() => true)).map(r => r[k]))].sort((a, b) => a < b ? -1 : 1);
function fill(id, values) {
  const s = pick(id); s.innerHTML = '';
  for (const v of values) { const o = document.createElement('option'); o.value = o.textContent = v; s.appendChild(o); }
}
fill('tcp', uniq('tcp')); fill('queue', uniq('queue')); fill('target', uniq('target')); fill('rtt', uniq('rtt_ms'));
const svgNS = 'http://www.w3.org/2000/svg';
function el(name, attrs, parent, text) {
  const e = document.createElementNS(svgNS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  parent.appendChild(e); return e;
}
function colour(v) {  // log2(B/BDP) from -8 to 3 onto blue..red
  const t = Math.max(0, Math.min(1, (Math.log2(v) + 8) / 11));
  return `hsl(${240 - 240 * t}, 70%, ${75 - 25 * t}%)`;
}
function draw() {
  const sel = r => r.tcp === pick('tcp').value && r.queue === pick('queue').value &&
    String(r.target) === pick('target').value && String(r.rtt_ms) === pick('rtt').value &&
    r.traffic === 'none';
  const cells = rows.filter(sel);
  const flows = uniq('flows', sel), speeds = uniq('core_mbps', sel);
  const svg = pick('heatmap'); svg.innerHTML = '';
  const W = 90, H = 40, X0 = 90, Y0 = 30;
  svg.setAttribute('width', Math.max(420, X0 + W * flows.length + 10));
  svg.setAttribute('height', Y0 + H * speeds.length + 40);
  const below = Y0 + H * speeds.length + 20;
  flows.forEach((f, i) => el('text', {x: X0 + W * i + W / 2, y: below, 'text-anchor': 'middle'}, svg, f));
  speeds.forEach((c, j) => el('text', {x: X0 - 6, y: Y0 + H * j + H / 2 + 5, 'text-anchor': 'end'}, svg, c + ' Mb/s'));
  el('text', {x: X0, y: 18}, svg, 'minimum buffer / BDP (columns: flows)');
  for (const r of cells) {
    const i = flows.indexOf(r.flows), j = speeds.indexOf(r.core_mbps);
    const v = r.min_buffer_bdp;
    el('rect', {x: X0 + W * i, y: Y0 + H * j, width: W - 2, height: H - 2, fill: v ? colour(v) : '#ddd',
                class: 'cell', 'data-value': v === null ? '' : v.toPrecision(3)}, svg);
    el('text', {x: X0 + W * i + W / 2, y: Y0 + H * j + H / 2 + 5, 'text-anchor': 'middle', class: 'value'}, svg,
       v === null ? (r.flags || 'none') : v.toPrecision(3));
  }
  drawLines(cells, flows, speeds);
}
function drawLines(cells, flows, speeds) {
  const svg = pick('lines'); svg.innerHTML = '';
  const W = 520, H = 300, L = 60, T = 20, lx = Math.log10, lo = -3, hi = 1.5;
  svg.setAttribute('width', W + L + 140); svg.setAttribute('height', H + T + 40);
  const fx = f => L + W * (lx(f) - lx(flows[0])) / Math.max(1e-9, lx(flows[flows.length - 1]) - lx(flows[0]));
  const fy = v => T + H * (hi - Math.max(lo, Math.min(hi, lx(v)))) / (hi - lo);
  for (let e = lo; e <= hi; e += 1) {
    el('text', {x: L - 6, y: fy(10 ** e) + 4, 'text-anchor': 'end'}, svg, String(+(10 ** e).toPrecision(1)));
  }
  el('text', {x: L, y: T + H + 30}, svg, 'flows (log)        y: buffer / BDP (log)');
  const line = (pts, style, label, k) => {
    if (pts.length === 0) return;
    const points = pts.map(([f, v]) => `${fx(f)},${fy(v)}`).join(' ');
    el('polyline', {points, fill: 'none', style, class: 'series'}, svg);
    el('text', {x: L + W + 8, y: T + 14 * k + 10, style: style.replace('stroke', 'fill')}, svg, label);
  };
  let k = 0;
  speeds.forEach((c, j) => {
    const pts = cells.filter(r => r.core_mbps === c && r.min_buffer_bdp).sort((a, b) => a.flows - b.flows)
      .map(r => [r.flows, r.min_buffer_bdp]);
    line(pts, `stroke: hsl(${120 * j}, 60%, 40%); stroke-width: 2`, `atlas ${c} Mb/s`, k++);
  });
  for (const rule of ['bdp', 'stanford', 'spang', 'enachescu', 'dick']) {
    const c = speeds[speeds.length - 1];
    const pts = cells.filter(r => r.core_mbps === c && r['rule_' + rule + '_pkts']).sort((a, b) => a.flows - b.flows)
      .map(r => [r.flows, r['rule_' + rule + '_pkts'] / r.bdp_pkts]);
    line(pts, 'stroke: #555; stroke-dasharray: 4 3', `rule ${rule}`, k++);
  }
}
for (const id of ['tcp', 'queue', 'target', 'rtt']) pick(id).addEventListener('change', draw);
draw();
document.body.setAttribute('data-ready', 'yes');
"""


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
<style>body{{font-family:sans-serif;margin:1.5em}} svg{{display:block;margin:1em 0}} .value{{font-size:12px}}</style>
</head><body>
<h1>The buffer atlas: {html.escape(name)}</h1>
<p>The smallest buffer reaching each utilization target, per sender, discipline, flows, speed and
RTT (buffersweep, <code>python -m analysis atlas build +atlas={html.escape(name)}</code>).
Grey: no answer (see the flag).</p>
<p>{selects}</p>
<svg id="heatmap" xmlns="http://www.w3.org/2000/svg"></svg>
<svg id="lines" xmlns="http://www.w3.org/2000/svg"></svg>
<script type="application/json" id="atlas-data">{data}</script>
<script>{SCRIPT}</script>
</body></html>
"""
