// The atlas page's drawing (analysis/atlas/page.py inlines this file and the table's rows).
// Plain JavaScript and SVG: a heatmap of B_min / BDP over flows and speed, and B_min / BDP
// against flows per speed with its 95% bracket and the rules' lines. The view is the URL's hash.
const rows = JSON.parse(document.getElementById('atlas-data').textContent);
const pick = id => document.getElementById(id);
const uniq = (k, f) => [...new Set(rows.filter(f || (() => true)).map(r => r[k]))].sort((a, b) => a - b || (a < b ? -1 : 1));
const svgNS = 'http://www.w3.org/2000/svg';
const LOG_LO = -8, LOG_HI = 3;  // the colour scale: log2(B / BDP)
const RULES = {bdp: '8 4', stanford: '2 3', spang: '10 3 2 3', enachescu: '1 4', dick: '6 2 1 2'};
const SPEED_HUE = [210, 30, 130, 280, 0];

function el(name, attrs, parent, text) {
  const e = document.createElementNS(svgNS, name);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  parent.appendChild(e); return e;
}
function colour(v) {
  const t = Math.max(0, Math.min(1, (Math.log2(v) - LOG_LO) / (LOG_HI - LOG_LO)));
  return `hsl(${240 - 240 * t}, 70%, ${78 - 28 * t}%)`;
}
function fill(id, values) {
  const s = pick(id); s.innerHTML = '';
  for (const v of values) { const o = document.createElement('option'); o.value = o.textContent = v; s.appendChild(o); }
}
function fmt(v, d) { return v === null || v === undefined ? '-' : (+v).toPrecision(d || 3); }
function pkts(v) { return v === null || v === undefined ? '?' : Math.round(v).toLocaleString('en'); }

fill('tcp', uniq('tcp')); fill('queue', uniq('queue')); fill('target', uniq('target')); fill('rtt', uniq('rtt_ms'));
function fromHash() {  // #tcp=cubic&queue=droptail&target=0.95&rtt=50; defaults: cubic, droptail, 0.95
  const h = new URLSearchParams(location.hash.slice(1));
  const rtts = uniq('rtt_ms');
  const want = {tcp: h.get('tcp') || 'cubic', queue: h.get('queue') || 'droptail',
                target: h.get('target') || '0.95', rtt: h.get('rtt') || String(rtts[Math.floor(rtts.length / 2)])};
  for (const id in want) {
    const opts = [...pick(id).options].map(o => o.value);
    if (opts.includes(want[id])) pick(id).value = want[id];
  }
}
function toHash() {
  const v = id => encodeURIComponent(pick(id).value);
  history.replaceState(null, '', `#tcp=${v('tcp')}&queue=${v('queue')}&target=${v('target')}&rtt=${v('rtt')}`);
}

function draw() {
  toHash();
  const sel = r => r.tcp === pick('tcp').value && r.queue === pick('queue').value &&
    String(r.target) === pick('target').value && String(r.rtt_ms) === pick('rtt').value && r.traffic === 'none';
  const cells = rows.filter(sel);
  const flows = uniq('flows', sel), speeds = uniq('core_mbps', sel);
  drawHeatmap(cells, flows, speeds);
  drawLines(cells, flows, speeds);
  pick('view').textContent = location.hash;
}

function drawHeatmap(cells, flows, speeds) {
  const svg = pick('heatmap'); svg.innerHTML = '';
  const W = 110, H = 46, X0 = 100, Y0 = 40, legendW = 260;
  const width = Math.max(X0 + W * flows.length + 20, legendW + X0 + 20);
  const height = Y0 + H * speeds.length + 100;
  svg.setAttribute('width', width); svg.setAttribute('height', height);
  const defs = el('defs', {}, svg);
  const hatch = el('pattern', {id: 'hatch', width: 8, height: 8, patternUnits: 'userSpaceOnUse', patternTransform: 'rotate(45)'}, defs);
  el('line', {x1: 0, y1: 0, x2: 0, y2: 8, stroke: '#333', 'stroke-width': 2, 'stroke-opacity': 0.45}, hatch);
  el('text', {x: X0, y: 18, class: 'title'}, svg, 'minimum buffer / BDP, and packets');
  const below = Y0 + H * speeds.length + 18;
  flows.forEach((f, i) => el('text', {x: X0 + W * i + W / 2, y: below, 'text-anchor': 'middle', class: 'axis'}, svg, `${f} flow${f === 1 ? '' : 's'}`));
  speeds.forEach((c, j) => el('text', {x: X0 - 8, y: Y0 + H * j + H / 2 + 4, 'text-anchor': 'end', class: 'axis'}, svg, `${c} Mb/s`));
  for (const r of cells) {
    const i = flows.indexOf(r.flows), j = speeds.indexOf(r.core_mbps);
    const v = r.min_buffer_bdp, x = X0 + W * i, y = Y0 + H * j;
    const g = el('g', {class: 'cell', 'data-value': v === null ? '' : fmt(v), 'data-flags': r.flags || ''}, svg);
    el('title', {}, g, `${r.flows} flows, ${r.core_mbps} Mb/s, ${r.rtt_ms} ms: ` +
      (v === null ? 'no answer' : `${pkts(r.min_buffer_pkts)} packets (${fmt(v)} x BDP)`) +
      `\n95% bracket (${pkts(r.lo_pkts)}, ${pkts(r.hi_pkts)}] packets; BDP ${pkts(r.bdp_pkts)}` +
      (r.flags ? `\nflags: ${r.flags}${r.reason ? ' (' + r.reason + ')' : ''}` : ''));
    el('rect', {x, y, width: W - 3, height: H - 3, fill: v ? colour(v) : '#ddd'}, g);
    if (r.flags) el('rect', {x, y, width: W - 3, height: H - 3, fill: 'url(#hatch)', class: 'flagged'}, g);
    el('text', {x: x + W / 2, y: y + 18, 'text-anchor': 'middle', class: 'value'}, g, v === null ? (r.flags || 'none').split(',')[0] : fmt(v));
    el('text', {x: x + W / 2, y: y + 34, 'text-anchor': 'middle', class: 'small'}, g, v === null ? '' : `${pkts(r.min_buffer_pkts)} pkts`);
  }
  // The colour scale, and what hatching means.
  const ly = below + 24, lx = X0;
  const grad = el('linearGradient', {id: 'scale'}, defs);
  for (let k = 0; k <= 10; k++) el('stop', {offset: `${k * 10}%`, 'stop-color': colour(2 ** (LOG_LO + (LOG_HI - LOG_LO) * k / 10))}, grad);
  el('rect', {x: lx, y: ly, width: legendW, height: 12, fill: 'url(#scale)'}, svg);
  for (const e of [-8, -6, -4, -2, 0, 2]) {
    const tx = lx + legendW * (e - LOG_LO) / (LOG_HI - LOG_LO);
    el('text', {x: tx, y: ly + 26, 'text-anchor': 'middle', class: 'small'}, svg, e >= 0 ? String(2 ** e) : `1/${2 ** -e}`);
  }
  el('text', {x: lx + legendW + 10, y: ly + 11, class: 'small'}, svg, 'x BDP');
  el('rect', {x: lx, y: ly + 36, width: 18, height: 12, fill: 'url(#hatch)', stroke: '#999'}, svg);
  el('text', {x: lx + 24, y: ly + 46, class: 'small'}, svg, 'flagged (hover: flag and bracket); grey: no answer');
}

function drawLines(cells, flows, speeds) {
  const svg = pick('lines'); svg.innerHTML = '';
  const W = 560, H = 320, L = 70, T = 20, legendX = L + W + 20;
  svg.setAttribute('width', legendX + 260); svg.setAttribute('height', H + T + 60);
  const lx = Math.log10;
  const values = cells.flatMap(r => [r.min_buffer_bdp, r.lo_pkts && r.lo_pkts / r.bdp_pkts, r.hi_pkts && r.hi_pkts / r.bdp_pkts,
                                     ...Object.keys(RULES).map(k => r['rule_' + k + '_pkts'] / r.bdp_pkts)]).filter(v => v > 0);
  const lo = Math.min(-3, Math.floor(lx(Math.min(...values, 1))));  // every value of the view on the axis
  const hi = Math.max(1.5, Math.ceil(lx(Math.max(...values, 1))));
  const span = Math.max(1e-9, lx(flows[flows.length - 1]) - lx(flows[0]));
  const fx = f => flows.length > 1 ? L + W * (lx(f) - lx(flows[0])) / span : L + W / 2;
  const fy = v => T + H * (hi - Math.max(lo, Math.min(hi, lx(v)))) / (hi - lo);
  el('rect', {x: L, y: T, width: W, height: H, fill: 'none', stroke: '#bbb'}, svg);
  for (let e = lo; e <= hi; e += 1) {
    el('line', {x1: L, x2: L + W, y1: fy(10 ** e), y2: fy(10 ** e), stroke: '#eee'}, svg);
    el('text', {x: L - 6, y: fy(10 ** e) + 4, 'text-anchor': 'end', class: 'axis'}, svg, String(+(10 ** e).toPrecision(1)));
  }
  for (const f of flows) el('text', {x: fx(f), y: T + H + 16, 'text-anchor': 'middle', class: 'axis'}, svg, String(f));
  el('text', {x: L + W / 2, y: T + H + 36, 'text-anchor': 'middle', class: 'axis'}, svg, 'flows (log)');
  el('text', {x: 14, y: T + H / 2, transform: `rotate(-90 14 ${T + H / 2})`, 'text-anchor': 'middle', class: 'axis'}, svg, 'buffer / BDP (log)');
  let k = 0;
  const legend = (style, label, dash) => {
    const y = T + 16 * k++ + 8;
    el('line', {x1: legendX, x2: legendX + 30, y1: y - 4, y2: y - 4, style, 'stroke-dasharray': dash || ''}, svg);
    el('text', {x: legendX + 36, y, class: 'small'}, svg, label);
  };
  speeds.forEach((c, j) => {
    const stroke = `hsl(${SPEED_HUE[j % SPEED_HUE.length]}, 65%, 40%)`;
    const pts = cells.filter(r => r.core_mbps === c && r.min_buffer_bdp).sort((a, b) => a.flows - b.flows);
    if (pts.length) {
      el('polyline', {points: pts.map(r => `${fx(r.flows)},${fy(r.min_buffer_bdp)}`).join(' '), fill: 'none',
                      stroke, 'stroke-width': 2.5, class: 'series'}, svg);
      for (const r of pts) {  // its 95% bracket
        const lo_ = r.lo_pkts ? r.lo_pkts / r.bdp_pkts : 10 ** lo;
        el('line', {x1: fx(r.flows), x2: fx(r.flows), y1: fy(lo_), y2: fy(r.hi_pkts / r.bdp_pkts), stroke, 'stroke-width': 6, 'stroke-opacity': 0.3}, svg);
        el('circle', {cx: fx(r.flows), cy: fy(r.min_buffer_bdp), r: 3.5, fill: r.flags ? '#fff' : stroke, stroke}, svg);
      }
    }
    legend(`stroke: ${stroke}; stroke-width: 2.5`, `atlas, ${c} Mb/s (band: 95% bracket)`);
    for (const rule in RULES) {
      const rp = cells.filter(r => r.core_mbps === c && r['rule_' + rule + '_pkts']).sort((a, b) => a.flows - b.flows);
      if (rp.length) el('polyline', {points: rp.map(r => `${fx(r.flows)},${fy(r['rule_' + rule + '_pkts'] / r.bdp_pkts)}`).join(' '),
                                     fill: 'none', stroke, 'stroke-width': 1.2, 'stroke-dasharray': RULES[rule], class: 'rule'}, svg);
    }
  });
  k++;
  for (const rule in RULES) {
    if (cells.some(r => r['rule_' + rule + '_pkts'])) legend('stroke: #444; stroke-width: 1.2', `rule ${rule} (in each speed's colour)`, RULES[rule]);
  }
  const y = T + 16 * k + 8;
  el('circle', {cx: legendX + 15, cy: y - 4, r: 3.5, fill: '#fff', stroke: '#444'}, svg);
  el('text', {x: legendX + 36, y, class: 'small'}, svg, 'open dot: a flagged cell');
}

fromHash();
for (const id of ['tcp', 'queue', 'target', 'rtt']) pick(id).addEventListener('change', draw);
window.addEventListener('hashchange', () => { fromHash(); draw(); });
draw();
document.body.setAttribute('data-ready', 'yes');
