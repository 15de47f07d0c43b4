// The cluster page: renders each snapshot pushed on `events` (see events.rs) by patching the
// tables in place, rows keyed by job id or node name. Text goes in with textContent only,
// never as HTML. No build step, no library. Elapsed and remaining times tick here, from the
// snapshot's clock. `window.minipbs` exposes what tests and the benchmark read.
"use strict";

const page = { loadedAt: performance.now(), frames: 0, firstRender: null };
window.minipbs = page;
let clock = { server: 0, local: 0 };

function serverNow() {
  return clock.server + (Date.now() / 1000 - clock.local);
}

function hms(seconds) {
  if (seconds === null || seconds === undefined || !isFinite(seconds)) return "";
  const s = Math.max(0, Math.floor(seconds));
  const pad = (n) => String(n).padStart(2, "0");
  return `${pad(Math.floor(s / 3600))}:${pad(Math.floor(s / 60) % 60)}:${pad(s % 60)}`;
}

function when(epoch) {
  return epoch ? new Date(epoch * 1000).toLocaleString() : "";
}

// A cell: a string, or {text, cls, href, node}.
function fill(td, cell) {
  const spec = typeof cell === "object" && cell !== null ? cell : { text: cell };
  const key = JSON.stringify([spec.text, spec.cls, spec.href, spec.nodeKey]);
  if (td.dataset.key === key) return;
  td.dataset.key = key;
  td.className = spec.cls || "";
  if (spec.node) {
    td.replaceChildren(spec.node());
  } else if (spec.href) {
    const a = document.createElement("a");
    a.href = spec.href;
    a.textContent = spec.text;
    td.replaceChildren(a);
  } else {
    td.textContent = spec.text === null || spec.text === undefined ? "" : String(spec.text);
  }
}

// Makes `tbody` hold one row per item, in order, reusing the rows of keys it already has.
function sync(tbody, items, key, cells) {
  const old = new Map();
  for (const tr of tbody.rows) old.set(tr.dataset.job || tr.dataset.node, tr);
  let at = 0;
  for (const item of items) {
    const k = key(item);
    let tr = old.get(k);
    old.delete(k);
    const values = cells(item);
    if (!tr) {
      tr = document.createElement("tr");
      if (key === jobKey) tr.dataset.job = k; else tr.dataset.node = k;
    }
    while (tr.cells.length < values.length) tr.insertCell();
    values.forEach((value, i) => fill(tr.cells[i], value));
    if (tbody.rows[at] !== tr) tbody.insertBefore(tr, tbody.rows[at] || null);
    at++;
  }
  for (const tr of old.values()) tr.remove();
}

const jobKey = (job) => job.id;
const jobLink = (job) => ({ text: job.id, href: "job/" + encodeURIComponent(job.id) });
const stateCell = (job) => ({ text: job.state, cls: "state" });

function gpus(node) {
  const span = document.createElement("span");
  for (const gpu of node.gpus) {
    const chip = document.createElement("span");
    chip.className = "gpu " + gpu.use;
    let text = `${gpu.index}: ${gpu.use}`;
    if (gpu.jobs.length) text += ` ${gpu.jobs.join(",")}`;
    if (gpu.user) text += ` (${gpu.user}${gpu.mps_percent !== null ? " " + gpu.mps_percent + "%" : ""})`;
    if (gpu.reason) text += ` – ${gpu.reason}`;
    chip.textContent = text;
    span.appendChild(chip);
  }
  return span;
}

function slots(node) {
  const wrap = document.createElement("span");
  const bar = document.createElement("span");
  bar.className = "bar";
  const used = document.createElement("span");
  used.style.width = node.slots ? `${(100 * node.slots_used) / node.slots}%` : "0";
  bar.appendChild(used);
  wrap.append(bar, `${node.slots_used}/${node.slots}`);
  return wrap;
}

function render(frame) {
  const view = frame.view;
  clock = { server: frame.now, local: Date.now() / 1000 };
  document.getElementById("server").textContent = view.server;
  document.title = `minipbs ${view.server}`;
  sync(document.getElementById("nodes"), view.nodes, (node) => node.name, (node) => [
    node.name,
    { text: node.state, cls: node.state.split(",").map((s) => "state-" + s).join(" ") },
    { nodeKey: `${node.slots_used}/${node.slots}`, node: () => slots(node) },
    { nodeKey: JSON.stringify(node.gpus), node: () => gpus(node) },
  ]);
  sync(document.getElementById("running"), view.running, jobKey, (job) => [
    jobLink(job), job.name, job.owner, job.queue, stateCell(job), job.hosts,
    { text: "", cls: "elapsed" }, { text: "", cls: "remaining" },
  ]);
  for (const tr of document.getElementById("running").rows) {
    const job = view.running.find((j) => j.id === tr.dataset.job);
    tr.dataset.start = job.start ?? "";
    tr.dataset.walltime = job.walltime ?? "";
  }
  sync(document.getElementById("waiting"), view.waiting, jobKey, (job) => [
    String(view.waiting.indexOf(job) + 1), jobLink(job), job.name, job.owner, job.queue, stateCell(job),
    String(job.ncpus), String(job.priority), { text: job.reason || "", cls: "why" }, when(job.estimated_start),
  ]);
  sync(document.getElementById("finished"), view.finished, jobKey, (job) => [
    jobLink(job), job.name, job.owner, stateCell(job), job.exit_status ?? "", when(job.ended),
  ]);
  document.getElementById("nodes-count").textContent = `(${view.nodes.length})`;
  document.getElementById("running-count").textContent = `(${view.running.length})`;
  const waiting = view.waiting.length + view.waiting_more;
  document.getElementById("waiting-count").textContent = `(${waiting})`;
  const more = document.getElementById("waiting-more");
  more.hidden = view.waiting_more === 0;
  more.textContent = `… and ${view.waiting_more} more not listed.`;
  tick();
  page.frames++;
  if (page.firstRender === null) {
    page.firstRender = performance.now();
    performance.mark("minipbs-first-render");
  }
}

function tick() {
  const now = serverNow();
  for (const tr of document.getElementById("running").rows) {
    const start = Number(tr.dataset.start);
    const wall = tr.dataset.walltime === "" ? NaN : Number(tr.dataset.walltime);
    const elapsed = tr.dataset.start === "" ? NaN : now - start;
    tr.querySelector(".elapsed").textContent = hms(elapsed);
    tr.querySelector(".remaining").textContent = hms(wall - elapsed);
  }
}

function connect() {
  const status = document.getElementById("status");
  const source = new EventSource("events");
  source.addEventListener("view", (event) => render(JSON.parse(event.data)));
  source.onopen = () => { status.textContent = "live"; status.className = "status live"; };
  source.onerror = () => { status.textContent = "reconnecting"; status.className = "status down"; };
}

connect();
setInterval(tick, 1000);
