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
  h1 { font-size: 1.4em; margin-bottom: .2em; }
  h2 { font-size: 1.15em; margin: 1.2em 0 .4em; }
  textarea { width: 100%; min-height: 8em; font-size: 1.1em; box-sizing: border-box; }
  input[type=text] { width: 70%; font-size: 1.05em; }
  .answer { min-height: 2em; font-size: 1.1em; white-space: pre-wrap; border: 1px solid #ccc;
            padding: .5em; background: #fafafa; }
  #status, .note { color: #666; font-size: .9em; }
  .error { color: #b00; }
  ol { margin: .3em 0; }
  svg { border: 1px solid #ddd; background: #fff; }
  .legend span { margin-right: 1.5em; }
  table.alignment { border-collapse: collapse; margin: .6em 0; font-size: .85em; }
  table.alignment th { font-weight: normal; padding: 2px 4px; }
  table.alignment thead th { writing-mode: vertical-rl; transform: rotate(180deg); vertical-align: bottom; }
  table.alignment td { width: 1.3em; height: 1.3em; border: 1px solid #eee; }
  table.alignment td.hit { background: #1f77b4; }
  [hidden] { display: none !important; }
</style>
</head>
<body>
<h1>mixseq serve</h1>
<p id="models" class="note"></p>
<section id="translate-section">
  <h2>Translate</h2>
  <label for="source" id="source-label">Source text, one sentence a line:</label>
  <textarea id="source" autofocus placeholder="one hundred and two"></textarea>
  <p>
    <label>n-best <select id="nbest"><option>1</option><option>2</option><option>3</option>
      <option>4</option><option>5</option></select></label>
    <label><input type="checkbox" id="show-alignment"> alignment</label>
    <span id="status"></span>
  </p>
  <div id="translation" class="answer" aria-live="polite"></div>
  <div id="alignment"></div>
</section>
<section id="transcribe-section" hidden>
  <h2>Transcribe</h2>
  <p><label>An audio file: <input type="file" id="audio-file" accept="audio/*"></label>
     or <button id="record" type="button">record</button> <span id="record-status" class="note"></span></p>
  <audio id="recording" controls hidden></audio>
  <div id="transcript" class="answer" aria-live="polite"></div>
  <p id="transcript-words" class="note"></p>
</section>
<section id="classify-section" hidden>
  <h2>Classify</h2>
  <p><input type="text" id="classify-text" placeholder="a sentence to label"> <button id="classify" type="button">classify</button></p>
  <div id="classification" class="answer" aria-live="polite"></div>
</section>
<section id="synthesize-section" hidden>
  <h2>Speak</h2>
  <p><input type="text" id="speak-text" placeholder="three one four"> <button id="speak" type="button">speak</button>
     <span id="speak-status" class="note"></span></p>
  <audio id="speech" controls hidden></audio>
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
const $ = id => document.getElementById(id);
const source = $("source"), nbest = $("nbest"), showAlignment = $("show-alignment");
const statusLine = $("status"), output = $("translation");
let timer = null, sequence = 0;

function element(tag, text) { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; return e; }
async function errorOf(response) {
  try { return (await response.json()).error || `HTTP ${response.status}`; } catch (e) { return `HTTP ${response.status}`; }
}

function show(results, n) {
  output.textContent = "";
  if (n === 1) { output.textContent = results.join("\n"); return; }
  for (const list of results) {
    const ol = element("ol");
    for (const text of list) ol.appendChild(element("li", text));
    output.appendChild(ol);
  }
}

// One table per sentence: a column per source piece (and its </s>), a row per target piece, the
// source piece each target piece attended most filled in.
function showAlignments(answer) {
  const box = $("alignment");
  box.textContent = "";
  if (!answer.alignment) return;
  answer.alignment.forEach((links, k) => {
    const columns = answer.src_pieces[k].concat(["</s>"]), rows = answer.tgt_pieces[k];
    const table = element("table"), head = element("thead"), top = element("tr");
    table.className = "alignment";
    top.appendChild(element("th"));
    for (const piece of columns) top.appendChild(element("th", piece));
    head.appendChild(top);
    table.appendChild(head);
    const body = element("tbody");
    rows.forEach((piece, i) => {
      const tr = element("tr");
      tr.appendChild(element("th", piece));
      columns.forEach((_, j) => {
        const td = element("td");
        if (links[i] === j) { td.className = "hit"; td.title = `${piece} <- ${columns[j]}`; }
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    table.appendChild(body);
    box.appendChild(table);
  });
}

async function translateNow() {
  const lines = source.value.split("\n").filter(line => line.trim() !== "");
  const mine = ++sequence;
  if (lines.length === 0) { output.textContent = ""; $("alignment").textContent = ""; statusLine.textContent = ""; return; }
  const n = Number(nbest.value);
  const body = { src: lines };
  if (n > 1) { body.nbest = n; body.beam_size = Math.max(n, 5); }
  if (showAlignment.checked) body.alignment = true;
  statusLine.textContent = "translating...";
  try {
    const response = await fetch("/translate", { method: "POST", headers: { "Content-Type": "application/json" },
                                                  body: JSON.stringify(body) });
    const answer = await response.json();
    if (mine !== sequence) return;  // a newer request is on its way
    if (!response.ok) { output.className = "answer error"; output.textContent = answer.error; return; }
    output.className = "answer";
    show(answer.tgt, n);
    showAlignments(answer);
    statusLine.textContent = `${lines.length} sentence(s) in ${answer.time_ms.toFixed(1)} ms`;
  } catch (error) {
    if (mine === sequence) { statusLine.textContent = ""; output.className = "answer error"; output.textContent = String(error); }
  }
}

function schedule() { clearTimeout(timer); timer = setTimeout(translateNow, 300); }  // debounced: 300 ms after typing stops
source.addEventListener("input", schedule);
nbest.addEventListener("change", translateNow);
showAlignment.addEventListener("change", translateNow);

// Transcription: a file as it is, or a recording made here as 16-bit WAV (every browser can make
// it, and the server reads it).
const transcript = $("transcript");
async function transcribe(bytes, type) {
  transcript.className = "answer";
  transcript.textContent = "transcribing...";
  $("transcript-words").textContent = "";
  try {
    const response = await fetch("/transcribe", { method: "POST", headers: { "Content-Type": type || "application/octet-stream" },
                                                   body: bytes });
    if (!response.ok) { transcript.className = "answer error"; transcript.textContent = await errorOf(response); return; }
    const answer = await response.json();
    transcript.textContent = answer.text;
    $("transcript-words").textContent = answer.words.map(w => `${w.word} ${w.start.toFixed(2)}-${w.end.toFixed(2)} s`).join(", ") +
      ` (${answer.seconds} s of audio in ${answer.time_ms.toFixed(1)} ms)`;
  } catch (error) { transcript.className = "answer error"; transcript.textContent = String(error); }
}
$("audio-file").addEventListener("change", async event => {
  const file = event.target.files[0];
  if (file) transcribe(await file.arrayBuffer(), file.type && file.type.startsWith("audio/") ? file.type : "application/octet-stream");
});

function wavFile(chunks, rate) {  // mono float chunks -> a 16-bit PCM WAV file
  const count = chunks.reduce((sum, c) => sum + c.length, 0);
  const view = new DataView(new ArrayBuffer(44 + 2 * count));
  const text = (offset, s) => { for (let i = 0; i < s.length; i++) view.setUint8(offset + i, s.charCodeAt(i)); };
  text(0, "RIFF"); view.setUint32(4, 36 + 2 * count, true); text(8, "WAVE"); text(12, "fmt ");
  view.setUint32(16, 16, true); view.setUint16(20, 1, true); view.setUint16(22, 1, true);
  view.setUint32(24, rate, true); view.setUint32(28, 2 * rate, true); view.setUint16(32, 2, true);
  view.setUint16(34, 16, true); text(36, "data"); view.setUint32(40, 2 * count, true);
  let offset = 44;
  for (const chunk of chunks)
    for (const x of chunk) { view.setInt16(offset, Math.round(Math.max(-1, Math.min(1, x)) * 32767), true); offset += 2; }
  return view.buffer;
}

let recorder = null;
$("record").addEventListener("click", async () => {
  const button = $("record"), note = $("record-status");
  if (recorder) {  // stop: the recording is posted
    const { stream, context, chunks } = recorder;
    recorder = null;
    stream.getTracks().forEach(track => track.stop());
    await context.close();
    button.textContent = "record";
    const wav = wavFile(chunks, context.sampleRate);
    const seconds = (wav.byteLength - 44) / 2 / context.sampleRate;
    note.textContent = `recorded ${seconds.toFixed(1)} s`;
    const player = $("recording");
    player.src = URL.createObjectURL(new Blob([wav], { type: "audio/wav" }));
    player.hidden = false;
    transcribe(wav, "audio/wav");
    return;
  }
  try {
    const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
    const context = new AudioContext();
    const input = context.createMediaStreamSource(stream);
    const tap = context.createScriptProcessor(4096, 1, 1);
    const chunks = [];
    tap.onaudioprocess = event => chunks.push(new Float32Array(event.inputBuffer.getChannelData(0)));
    input.connect(tap);
    tap.connect(context.destination);
    recorder = { stream, context, chunks };
    button.textContent = "stop and transcribe";
    note.textContent = "recording...";
  } catch (error) { note.textContent = "no microphone: " + error; }
});

$("classify").addEventListener("click", async () => {
  const box = $("classification"), text = $("classify-text").value;
  box.className = "answer";
  try {
    const response = await fetch("/classify", { method: "POST", headers: { "Content-Type": "application/json" },
                                                 body: JSON.stringify({ text: [text] }) });
    if (!response.ok) { box.className = "answer error"; box.textContent = await errorOf(response); return; }
    const answer = await response.json();
    const all = Object.entries(answer.probabilities[0]).map(([label, p]) => `${label} ${p.toFixed(3)}`).join(", ");
    box.textContent = `${answer.label[0]} (${answer.probability[0].toFixed(3)}); ${all}`;
  } catch (error) { box.className = "answer error"; box.textContent = String(error); }
});

$("speak").addEventListener("click", async () => {
  const note = $("speak-status"), player = $("speech");
  note.className = "note";
  note.textContent = "speaking...";
  try {
    const response = await fetch("/synthesize", { method: "POST", headers: { "Content-Type": "application/json" },
                                                   body: JSON.stringify({ text: $("speak-text").value, format: "wav" }) });
    if (!response.ok) { note.className = "error"; note.textContent = await errorOf(response); return; }
    const audio = await response.blob();
    player.dataset.bytes = audio.size;
    player.src = URL.createObjectURL(audio);
    player.hidden = false;
    note.textContent = `${response.headers.get("X-Audio-Seconds")} s of audio, ${response.headers.get("X-Frames")} frames` +
      (response.headers.get("X-Stop-Token") === "1" ? "" : " (cut: no stop token)");
    player.play().catch(() => {});  // a browser may refuse to play before the person has interacted
  } catch (error) { note.className = "error"; note.textContent = String(error); }
});

async function describeModels() {
  try {
    const info = await (await fetch("/info")).json();
    const served = [];
    if (info.translate) {
      const t = info.translate;
      if (t.source_language && t.target_language) {
        served.push(`translation ${t.source_language} \u2192 ${t.target_language}`);
        $("source-label").textContent = `Source text (${t.source_language}), one sentence a line; translated into ${t.target_language}:`;
      } else {
        served.push("translation");
      }
    } else {
      source.disabled = true;
      statusLine.textContent = "this server has no translation model (start it with -c CHECKPOINT)";
      $("translate-section").hidden = true;
    }
    if (info.transcribe) { served.push(`speech recognition (${info.transcribe.sample_rate} Hz)`); $("transcribe-section").hidden = false; }
    if (info.classify) { served.push(`classification (${info.classify.labels.join(", ")})`); $("classify-section").hidden = false; }
    if (info.synthesize) { served.push(`speech synthesis (${info.synthesize.sample_rate} Hz)`); $("synthesize-section").hidden = false; }
    $("models").textContent = "Serving " + served.join("; ") + ".";
  } catch (error) {
    $("models").textContent = "GET /info failed: " + error;
  }
}
describeModels();

const history = [];  // {t, p50, p90, p99, rate}
let last = null;
function drawChart() {
  const svg = $("chart"), w = 600, h = 160, ns = svg.namespaceURI;
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
    const now = Date.now();
    const rate = last ? (m.requests - last.requests) / ((now - last.t) / 1000) : 0;
    last = { t: now, requests: m.requests };
    const latency = m.latency_ms || {};
    history.push({ p50: latency.p50 || 0, p90: latency.p90 || 0, p99: latency.p99 || 0, rate: Math.max(0, rate) });
    if (history.length > 60) history.shift();
    $("metrics-text").textContent =
      `${m.requests} requests, ${m.batches} batches, ${m.refused} refused, ${m.failed} failed; latency ms ` +
      `p50 ${(latency.p50 || 0).toFixed(1)}, p90 ${(latency.p90 || 0).toFixed(1)}, p99 ${(latency.p99 || 0).toFixed(1)}; ` +
      `up ${Math.round(m.uptime_s)} s`;
    drawChart();
  } catch (error) {
    $("metrics-text").textContent = "metrics unavailable: " + error;
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
