// squall UI: one page, hash routes (#/ and #/topology/<id>), polling Storm's UI REST API v1.
"use strict";
const POLL_MS = 2000;
let timer = null;
let previous = {};  // component -> {emitted, t}: rates come from two reads
let chosenWindow = ":all-time";  // Storm's windows: "600", "10800", "86400", ":all-time"
const WINDOWS = [["600", "10m"], ["10800", "3h"], ["86400", "1d"], [":all-time", "All time"]];

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v); else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

// The UI's token (loopback with security on) lives in this origin's localStorage, which no
// other server on 127.0.0.1 can read (a cookie would be sent to every port), and goes with
// each request as a header. The address `squall ui` prints brings it once as ?token=.
const TOKEN_KEY = "squall-ui-token";
(function takeToken() {
  const params = new URLSearchParams(location.search);
  if (!params.has("token")) return;
  localStorage.setItem(TOKEN_KEY, params.get("token"));
  params.delete("token");
  const query = params.toString();
  const path = "/" + location.pathname.replace(/^[\/\\]+/, "");  // never "//other.site/"
  history.replaceState(null, "", path + (query ? "?" + query : "") + location.hash);
})();

function authorized(options) {
  const token = localStorage.getItem(TOKEN_KEY);
  const headers = { ...((options && options.headers) || {}) };
  if (token) headers.Authorization = "Bearer " + token;
  return { ...(options || {}), headers };
}

async function api(path, options) {
  const response = await fetch("/api/v1" + path, authorized(options));
  const body = await response.json();
  if (!response.ok) throw new Error(body.errorMessage || body.error || response.status);
  return body;
}

function table(headers, rows, id) {
  const head = el("tr", {}, ...headers.map((h, i) => el("th", i ? {} : { class: "l" }, h)));
  const body = rows.map((r) => el("tr", {}, ...r.map((c, i) => el("td", i ? {} : { class: "l" }, c))));
  return el("table", id ? { id } : {}, head, ...body);
}

function showStatus(message) { document.getElementById("status").textContent = message || ""; }
const dash = (v) => (v === null || v === undefined ? "—" : v);
// nimbus answered from what it last read (ZooKeeper unreachable): say so above the figures
const staleNote = (x) => (x.stale ? el("p", { class: "error", id: "stale" }, x.staleNote) : "");

async function home() {
  const [cluster, topologies, supervisors, nimbuses] = await Promise.all([
    api("/cluster/summary"), api("/topology/summary"), api("/supervisor/summary"), api("/nimbus/summary"),
  ]);
  document.getElementById("version").textContent = cluster.stormVersion;
  return [
    el("h2", {}, "Cluster summary"),
    staleNote(cluster),
    table(["supervisors", "slots total", "slots used", "slots free", "executors", "tasks", "topologies"],
      [[cluster.supervisors, cluster.slotsTotal, cluster.slotsUsed, cluster.slotsFree,
        cluster.executorsTotal, cluster.tasksTotal, cluster.topologies]], "cluster"),
    el("h2", {}, "Topologies"),
    table(["name", "id", "status", "uptime", "workers", "executors", "tasks", "scheduler"],
      topologies.topologies.map((t) => [el("a", { href: "#/topology/" + encodeURIComponent(t.id) }, t.name),
        t.id, t.status, t.uptime, t.workersTotal, t.executorsTotal, t.tasksTotal,
        schedulerInfo(t.schedulerInfo)]), "topologies"),
    el("h2", {}, "Supervisors"),
    table(["id", "host", "uptime", "slots", "used", "free", "spark connect"],
      supervisors.supervisors.map((s) => [s.id, s.host, s.uptime, s.slotsTotal, s.slotsUsed, s.slotsFree,
        s.sparkConnect]),
      "supervisors"),
    el("h2", {}, "Nimbus"),
    table(["host", "port", "status", "uptime", "version"],
      nimbuses.nimbuses.map((n) => [n.host, n.port, n.status, n.nimbusUpTime, n.version])),
  ];
}

function layout(viz) {
  // Columns by depth from the spouts (longest path), rows in name order within a column.
  const depth = {};
  const names = Object.keys(viz).sort();
  const visit = (name, seen) => {
    if (depth[name] !== undefined) return depth[name];
    if (seen.has(name)) return 0;
    seen.add(name);
    const ins = viz[name][":inputs"].filter((i) => viz[i[":component"]]);
    depth[name] = ins.length ? 1 + Math.max(...ins.map((i) => visit(i[":component"], seen))) : 0;
    return depth[name];
  };
  names.forEach((n) => visit(n, new Set()));
  const columns = {};
  names.forEach((n) => (columns[depth[n]] = columns[depth[n]] || []).push(n));
  const pos = {};
  for (const [d, members] of Object.entries(columns)) {
    members.forEach((n, i) => (pos[n] = { x: 20 + d * 220, y: 20 + i * 90 }));
  }
  return pos;
}

function graph(topologyId, viz, rates) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = (tag, attrs, text) => {
    const node = document.createElementNS(ns, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const pos = layout(viz);
  const width = 40 + 220 * (1 + Math.max(0, ...Object.values(pos).map((p) => (p.x - 20) / 220)));
  const height = 40 + 90 * Math.max(1, ...Object.values(pos).map((p) => 1 + (p.y - 20) / 90));
  const root = svg("svg", { class: "graph", id: "graph", width, height });
  const defs = svg("defs", {});
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
    markerWidth: 6, markerHeight: 6, orient: "auto" });
  marker.append(svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#667" }));
  defs.append(marker);
  root.append(defs);
  for (const [name, c] of Object.entries(viz)) {
    for (const input of c[":inputs"]) {
      const from = pos[input[":component"]];
      if (!from) continue;
      const to = pos[name];
      root.append(svg("path", { class: "edge", d: `M${from.x + 160},${from.y + 30} L${to.x},${to.y + 30}` }));
    }
  }
  for (const [name, c] of Object.entries(viz)) {
    const p = pos[name];
    const g = svg("a", { class: "node " + c[":type"], "data-component": name,
      href: `#/topology/${encodeURIComponent(topologyId)}/component/${encodeURIComponent(name)}` });
    g.append(svg("rect", { x: p.x, y: p.y, width: 160, height: 60, rx: 6 }));
    g.append(svg("text", { x: p.x + 8, y: p.y + 17, "font-weight": "bold" }, name));
    g.append(svg("text", { x: p.x + 8, y: p.y + 34, class: "emitted" }, `emitted ${c[":emitted"]}`));
    const rate = rates[name] === undefined ? "—" : rates[name].toFixed(1) + "/s";
    const lat = c[":latency"] === null ? "" : ` · ${c[":latency"]} ms`;
    g.append(svg("text", { x: p.x + 8, y: p.y + 51 }, `rate ${rate}${lat}`));
    root.append(g);
  }
  return root;
}

function componentRates(components) {
  const now = Date.now();
  const rates = {};
  for (const c of components) {
    const id = c.spoutId || c.boltId;
    const count = c.spoutId ? c.emitted : c.executed;
    const before = previous[id];
    if (before && now > before.t) rates[id] = (1000 * (count - before.count)) / (now - before.t);
    previous[id] = { count, t: now };
  }
  return rates;
}

async function act(topology, operation) {
  const path = operation === "kill" ? "kill/30" : operation === "rebalance" ? "rebalance/0" : operation;
  if (!window.confirm(`${operation} topology ${topology.name}?`)) return;
  await post(`/topology/${encodeURIComponent(topology.id)}/${path}`, operation);
}

// Storm's Debug button: sample this percentage of the topology's tuples into its event log
async function debug(topology, enable) {
  let percent = "0";
  if (enable) {
    percent = window.prompt(`debug topology ${topology.name}: sampling percentage`, "10");
    if (percent === null) return;
  }
  const action = enable ? `enable/${encodeURIComponent(percent.trim())}` : "disable/0";
  await post(`/topology/${encodeURIComponent(topology.id)}/debug/${action}`, "debug");
}

// Storm's Change Log Level, as `squall set_log_level -l` takes it: LOGGER=LEVEL[:SECONDS]
async function changeLogLevel(topology) {
  const answer = window.prompt("logger=LEVEL[:seconds], e.g. squall.worker=DEBUG:300", "ROOT=DEBUG:300");
  if (answer === null) return;
  const match = answer.trim().match(/^([^=]+)=([A-Za-z]+)(?::([0-9]+))?$/);
  if (!match) { showStatus(`log level: "${answer}" is not logger=LEVEL[:seconds]`); return; }
  const [, logger, level, seconds] = match;
  await setLogLevel(topology, logger.trim(), { target_level: level, timeout: Number(seconds || 0) });
}

async function setLogLevel(topology, logger, wanted) {
  const body = JSON.stringify({ namedLoggerLevels: { [logger]: wanted } });
  await post(`/topology/${encodeURIComponent(topology.id)}/logconfig`, "log level",
    { headers: { "Content-Type": "application/json" }, body });
}

async function post(path, what, options) {
  try {
    await api(path, { method: "POST", ...(options || {}) });
    showStatus(`${what}: done`);
  } catch (e) {
    showStatus(`${what} failed: ${e.message}`);
  }
  render();
}

function logLevels(topology, config) {
  const named = Object.entries(config.namedLoggerLevels || {});
  if (!named.length) return el("p", { class: "muted", id: "log-levels" }, "as the workers' log configuration sets them");
  return table(["logger", "level", "for (s)", "until", ""],
    named.map(([logger, l]) => [logger, l.target_level, l.timeout || "for good",
      l.timeout_epoch ? new Date(l.timeout_epoch).toLocaleTimeString() : "—",
      el("button", { class: "clear-level", onclick: () => setLogLevel(topology, logger, { target_level: null }) },
        "clear")]), "log-levels");
}

function windowPicker() {
  // the spouts', bolts' and executors' figures are for this window (Storm's ?window=)
  return el("p", { id: "window-picker" }, "window: ", ...WINDOWS.map(([key, label]) =>
    el("button", { "data-window": key, class: key === chosenWindow ? "chosen" : "",
      onclick: () => { chosenWindow = key; previous = {}; render(); } }, label)));
}

async function topologyPage(id) {
  const enc = encodeURIComponent(id);
  const w = encodeURIComponent(chosenWindow);
  const [t, viz, levels] = await Promise.all([api(`/topology/${enc}?window=${w}`),
    api(`/topology/${enc}/visualization`), api(`/topology/${enc}/logconfig`).catch(() => ({}))]);
  const rates = componentRates([...t.spouts, ...t.bolts]);
  const errors = [...t.spouts, ...t.bolts].filter((c) => c.lastError);
  const all = t.topologyStats.find((s) => s.window === ":all-time") || {};
  return [
    el("h2", {}, `Topology ${t.name}`),
    staleNote(t),
    table(["id", "status", "uptime", "workers", "executors", "emitted", "acked", "failed", "complete latency (ms)"],
      [[t.id, el("span", { id: "topology-status" }, t.status), t.uptime, t.workersTotal, t.executorsTotal,
        all.emitted, all.acked, all.failed, dash(all.completeLatency)]]),
    el("p", { id: "topology-scheduler" }, schedulerInfo(t.schedulerInfo)),
    el("p", {},
      el("button", { id: "activate", onclick: () => act(t, "activate") }, "Activate"),
      el("button", { id: "deactivate", onclick: () => act(t, "deactivate") }, "Deactivate"),
      el("button", { id: "rebalance", onclick: () => act(t, "rebalance") }, "Rebalance"),
      el("button", { id: "kill", onclick: () => act(t, "kill") }, "Kill"),
      el("button", { id: "debug", onclick: () => debug(t, true) }, "Debug"),
      el("button", { id: "stop-debug", onclick: () => debug(t, false) }, "Stop debug"),
      el("button", { id: "log-level", onclick: () => changeLogLevel(t) }, "Change log level")),
    el("p", { id: "debug-state", class: t.debug ? "" : "muted" },
      t.debug ? `debug: on, sampling ${t.samplingPct}% of tuples` : "debug: off"),
    el("h2", {}, "Topology stats"),
    table(["window", "emitted", "transferred", "acked", "failed", "complete latency (ms)"],
      t.topologyStats.map((s) => [s.windowPretty, s.emitted, s.transferred, s.acked, s.failed,
        dash(s.completeLatency)]), "topology-stats"),
    windowPicker(),
    el("p", { class: "muted", id: "window-hint" }, `window: ${t.windowHint}`),
    graph(t.id, viz, rates),
    el("h2", {}, "Spouts"),
    table(["id", "executors", "emitted", "transferred", "acked", "failed", "rate/s", "complete latency (ms)"],
      t.spouts.map((s) => [s.spoutId, s.executors, s.emitted, s.transferred, s.acked, s.failed,
        rates[s.spoutId] === undefined ? "—" : rates[s.spoutId].toFixed(1), dash(s.completeLatency)]), "spouts"),
    el("h2", {}, "Bolts"),
    table(["id", "executors", "executed", "emitted", "transferred", "acked", "failed", "rate/s",
      "execute latency (ms)", "process latency (ms)", "capacity"],
      t.bolts.map((b) => [b.boltId, b.executors, b.executed, b.emitted, b.transferred, b.acked, b.failed,
        rates[b.boltId] === undefined ? "—" : rates[b.boltId].toFixed(1), dash(b.executeLatency),
        dash(b.processLatency), dash(b.capacity)]), "bolts"),
    el("h2", {}, "Workers"),
    table(["host", "port", "supervisor", "executors", "uptime", "log"],
      t.workers.map((w) => [w.host, w.port, w.supervisorId, w.executorsTotal, w.uptime, logLink(w.workerLogLink)])),
    el("h2", {}, "Log levels"),
    logLevels(t, levels),
    el("h2", {}, "Recent errors"),
    errors.length
      ? table(["component", "error", "host", "port", "seconds ago"],
        errors.map((c) => [c.spoutId || c.boltId, el("span", { class: "error" }, c.lastError),
          c.errorHost, dash(c.errorPort), c.errorLapsedSecs]), "errors")
      : el("p", { class: "muted", id: "errors" }, "none"),
  ];
}

// Storm's scheduler info; squall adds, when tasks are not running, how many and why
function schedulerInfo(text) {
  if (!text) return "—";
  return el("span", { class: text.includes("not running") ? "error" : "muted" }, text);
}

// A log is read with the token's header and shown as a blob: a plain link's navigation
// could not carry it.
async function openLog(event) {
  event.preventDefault();
  const shown = window.open("", "_blank");
  const response = await fetch(event.currentTarget.getAttribute("href"), authorized());
  const text = await response.text();
  const blob = URL.createObjectURL(new Blob([text], { type: "text/plain;charset=utf-8" }));
  if (shown) shown.location = blob; else location.href = blob;
}

function logLink(href) {
  return href ? el("a", { href, class: "log", onclick: openLog }, "log") : "—";
}

async function componentPage(id, name) {
  const w = encodeURIComponent(chosenWindow);
  const c = await api(`/topology/${encodeURIComponent(id)}/component/${encodeURIComponent(name)}?window=${w}`);
  const spout = c.componentType === "spout";
  const windows = spout ? c.spoutSummary : c.boltStats;
  const keys = spout
    ? ["emitted", "transferred", "acked", "failed", "completeLatency"]
    : ["executed", "emitted", "transferred", "acked", "failed", "executeLatency", "processLatency", "capacity"];
  return [
    el("h2", {}, el("a", { href: "#/topology/" + encodeURIComponent(id) }, c.name), ` / ${c.id} (${c.componentType})`),
    staleNote(c),
    el("p", { class: "muted" }, `window: ${c.windowHint}`),
    table(["window", ...keys], windows.map((w) => [w.windowPretty, ...keys.map((k) => dash(w[k]))]), "component-stats"),
    windowPicker(),
    ...(spout ? [] : [
      el("h2", {}, "Input streams"),
      table(["component", "stream", "executed", "execute latency (ms)", "process latency (ms)", "acked", "failed"],
        c.inputStats.map((i) => [i.component, i.stream, dash(i.executed), dash(i.executeLatency),
          dash(i.processLatency), dash(i.acked), dash(i.failed)]), "input-stats")]),
    el("h2", {}, "Output streams"),
    table(["stream", "emitted", "transferred"], c.outputStats.map((o) => [o.stream, o.emitted, o.transferred])),
    el("h2", {}, "Executors"),
    table(["id", "host", "port", "uptime", ...keys, "log"],
      c.executorStats.map((e) => [e.id, e.host, e.port, e.uptime, ...keys.map((k) => dash(e[k])),
        logLink(e.workerLogLink)]), "executors"),
    el("h2", {}, "Errors"),
    c.componentErrors.length
      ? table(["time", "host", "port", "error"], c.componentErrors.map((e) => [
        new Date(e.errorTime * 1000).toISOString(), e.errorHost, dash(e.errorPort),
        el("span", { class: "error" }, e.error)]), "component-errors")
      : el("p", { class: "muted", id: "component-errors" }, "none"),
  ];
}

async function render() {
  clearTimeout(timer);
  const route = location.hash.replace(/^#/, "") || "/";
  const main = document.getElementById("main");
  try {
    const component = route.match(/^\/topology\/([^/]+)\/component\/(.+)$/);
    const topology = route.match(/^\/topology\/([^/]+)$/);
    const nodes = component
      ? await componentPage(decodeURIComponent(component[1]), decodeURIComponent(component[2]))
      : topology ? await topologyPage(decodeURIComponent(topology[1])) : await home();
    main.replaceChildren(...nodes);
    main.setAttribute("data-updated", String(Date.now()));
    if (!document.getElementById("status").textContent.includes(":")) showStatus("");
  } catch (e) {
    showStatus(`cannot read the cluster: ${e.message}`);
  }
  timer = setTimeout(render, POLL_MS);
}

window.addEventListener("hashchange", () => { previous = {}; render(); });
render();
