#include "mixseq/serve/web_page.h"

namespace mixseq {

namespace {

// Kept small and dependency-free: plain DOM, fetch() and an inline SVG chart.
constexpr std::string_view kPage = R"html(<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mixseq serve</title>
<link rel="icon" href="data:,">
<style>
  body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em; padding: 0 1em; color: #222; }
  h1 { font-size: 1.4em; }
  textarea { width: 100%; min-height: 8em; font-size: 1.1em; box-sizing: border-box; }
  #translation { min-height: 4em; font-size: 1.1em; white-space: pre-wrap; border: 1px solid #ccc;
                 padding: .5em; background: #fafafa; }
  #status, .note { color: #666; font-size: .9em; }
  .error { color: #b00; }
  ol { margin: .3em 0; }
  svg { border: 1px solid #ddd; background: #fff; }
  .legend span { margin-right: 1.5em; }
</style>
</head>
<body>
<h1>mixseq serve</h1>
<section id="translate-section">
  <label for="source">Source text, one sentence a line:</label>
  <textarea id="source" autofocus placeholder="one hundred and two"></textarea>
  <p>
    <label>n-best <select id="nbest"><option>1</option><option>2</option><option>3</option>
      <option>4</option><option>5</option></select></label>
    <span id="status"></span>
  </p>
  <div id="translation" aria-live="polite"></div>
</section>
<section>
  <h2>Server</h2>
  <p id="metrics-text" class="note"></p>
  <svg id="chart" width="600" height="160" viewBox="0 0 600 160" role="img" aria-label="latency chart"></svg>
  <p class="legend note"><span style="color:#1f77b4">&#9632; p50 latency</span>
    <span style="color:#ff7f0e">&#9632; p90</span><span style="color:#d62728">&#9632; p99</span>
    <span style="color:#2ca02c">&#9632; requests/s</span></p>
</section>
<script>
"use strict";
const source = document.getElementById("source");
const nbest = document.getElementById("nbest");
const statusLine = document.getElementById("status");
const output = document.getElementById("translation");
let timer = null, sequence = 0;

function show(results, n) {
  output.textContent = "";
  if (n === 1) { output.textContent = results.join("\n"); return; }
  for (const list of results) {
    const ol = document.createElement("ol");
    for (const text of list) { const li = document.createElement("li"); li.textContent = text; ol.appendChild(li); }
    output.appendChild(ol);
  }
}

async function translateNow() {
  const lines = source.value.split("\n").filter(line => line.trim() !== "");
  const mine = ++sequence;
  if (lines.length === 0) { output.textContent = ""; statusLine.textContent = ""; return; }
  const n = Number(nbest.value);
  const body = { src: lines };
  if (n > 1) { body.nbest = n; body.beam_size = Math.max(n, 5); }
  statusLine.textContent = "translating...";
  try {
    const response = await fetch("/translate", { method: "POST", headers: { "Content-Type": "application/json" },
                                                  body: JSON.stringify(body) });
    const answer = await response.json();
    if (mine !== sequence) return;  // a newer request is on its way
    if (!response.ok) { output.className = "error"; output.textContent = answer.error; return; }
    output.className = "";
    show(answer.tgt, n);
    statusLine.textContent = `${lines.length} sentence(s) in ${answer.time_ms.toFixed(1)} ms`;
  } catch (error) {
    if (mine === sequence) { statusLine.textContent = ""; output.className = "error"; output.textContent = String(error); }
  }
}

function schedule() { clearTimeout(timer); timer = setTimeout(translateNow, 300); }  // debounced: 300 ms after typing stops
source.addEventListener("input", schedule);
nbest.addEventListener("change", translateNow);

const history = [];  // {t, p50, p90, p99, rate}
let last = null;
function drawChart() {
  const svg = document.getElementById("chart"), w = 600, h = 160, ns = svg.namespaceURI;
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  if (history.length < 2) return;
  const series = [["p50", "#1f77b4"], ["p90", "#ff7f0e"], ["p99", "#d62728"], ["rate", "#2ca02c"]];
  const top = Math.max(1, ...history.flatMap(p => [p.p99, p.rate]));
  for (const [key, color] of series) {
    const points = history.map((p, i) => `${(i / (history.length - 1) * (w - 10) + 5).toFixed(1)},` +
                                         `${(h - 5 - p[key] / top * (h - 20)).toFixed(1)}`).join(" ");
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", points); line.setAttribute("fill", "none"); line.setAttribute("stroke", color);
    svg.appendChild(line);
  }
  const label = document.createElementNS(ns, "text");
  label.setAttribute("x", 8); label.setAttribute("y", 14); label.setAttribute("font-size", 11);
  label.textContent = `max ${top.toFixed(1)} (ms or requests/s)`;
  svg.appendChild(label);
}

async function pollMetrics() {
  try {
    const m = await (await fetch("/metrics")).json();
    if (m.translate === undefined && !source.disabled) {  // started without -c: nothing to translate
      source.disabled = true; statusLine.textContent = "this server has no translation model (start it with -c CHECKPOINT)";
    }
    const now = Date.now();
    const rate = last ? (m.requests - last.requests) / ((now - last.t) / 1000) : 0;
    last = { t: now, requests: m.requests };
    const latency = m.latency_ms || {};
    history.push({ p50: latency.p50 || 0, p90: latency.p90 || 0, p99: latency.p99 || 0, rate: Math.max(0, rate) });
    if (history.length > 60) history.shift();
    document.getElementById("metrics-text").textContent =
      `${m.requests} requests, ${m.batches} batches, ${m.refused} refused, ${m.failed} failed; latency ms ` +
      `p50 ${(latency.p50 || 0).toFixed(1)}, p90 ${(latency.p90 || 0).toFixed(1)}, p99 ${(latency.p99 || 0).toFixed(1)}; ` +
      `up ${Math.round(m.uptime_s)} s`;
    drawChart();
  } catch (error) {
    document.getElementById("metrics-text").textContent = "metrics unavailable: " + error;
  }
}
pollMetrics();
setInterval(pollMetrics, 2000);
</script>
</body>
</html>
)html";

}  // namespace

std::string_view serve_page_html() { return kPage; }

}  // namespace mixseq
