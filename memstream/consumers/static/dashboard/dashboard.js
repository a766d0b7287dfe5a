// memstream dashboard: read-only pages over the worker's /ui/api and /v1 routes.
// The key the page was opened with (?key=...) goes with every request, so the worker's
// namespace scoping decides what is shown. The body's data-ready says when a page is drawn
// ("1", or "error" with the message on the page); data-plots counts the charts with data.
"use strict";

const query = new URLSearchParams(location.search);
const KEY = query.get("key") || "";
const COLORS = ["#2f6fb5", "#d9822b", "#3a9a5b", "#b3261e", "#7b4fb0", "#8c6d31", "#1aa3a3", "#c2497b"];
let namespace = query.get("namespace") || "";
let plots = 0;

class ApiError extends Error {
  constructor(status, code, message) {
    super(`${status} ${code}: ${message}`);
    this.status = status;
  }
}

async function api(path) {
  const response = await fetch(path, { headers: KEY ? { Authorization: `Bearer ${KEY}` } : {} });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const e = body.error || {};
    throw new ApiError(response.status, e.code || "error", e.message || response.statusText);
  }
  return body;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const ns = () => encodeURIComponent(namespace);
const when = (seconds) => (seconds ? new Date(seconds * 1000).toISOString().replace(".000Z", "Z") : "");
const fixed = (x, n = 3) => (x === null || x === undefined ? "" : Number(x).toFixed(n));

function card(label, value, cls = "") {
  return el("div", { class: "card" }, el("div", { class: "label" }, label), el("div", { class: `value ${cls}` }, value));
}

function table(rows, columns) {
  if (!rows.length) return el("p", { class: "muted" }, "nothing yet");
  const head = el("tr", {}, columns.map(([label, , cls]) => el("th", cls ? { class: cls } : {}, label)));
  const body = rows.map((row) =>
    el("tr", {}, columns.map(([, get, cls]) => el("td", cls ? { class: cls } : {}, get(row)))),
  );
  return el("table", {}, el("thead", {}, head), el("tbody", {}, body));
}

function memoryLink(id) {
  return el("a", { href: `#memory/${encodeURIComponent(id)}` }, id.slice(0, 8) + "…");
}

// One chart: x values and named series over them (null where a series has no point).
// pad: x units either side when all points share one x (one minute, one day).
function chart(parent, title, xs, series, { time = true, bars = false, height = 240, pad = 60, range = null } = {}) {
  const box = el("div", { class: "panel" });
  parent.append(box);
  if (!xs.length) {
    box.append(el("h2", {}, title), el("p", { class: "muted" }, "no data yet"));
    return;
  }
  const width = Math.max(320, box.clientWidth - 24);
  const opts = {
    title,
    width,
    height,
    scales: {
      x: {
        time,
        range: (u, min, max) => range || (min === max ? [min - pad, max + pad] : [min, max]),
      },
    },
    series: [
      {},
      ...series.map((s, i) => ({
        label: s.label,
        stroke: COLORS[i % COLORS.length],
        fill: bars ? COLORS[i % COLORS.length] + "99" : undefined,
        width: 2,
        paths: bars ? uPlot.paths.bars({ size: [0.7, 60] }) : undefined,
        points: { show: xs.length < 40 },
        spanGaps: false,
      })),
    ],
  };
  new uPlot(opts, [xs, ...series.map((s) => s.values)], box);
  plots += 1;
}

// rows [{at, <key>, <value>}] -> sorted xs and one series per key
function pivot(rows, key, value, scale = 1) {
  const xs = [...new Set(rows.map((r) => r.at))].sort((a, b) => a - b);
  const keys = [...new Set(rows.map((r) => r[key]))].sort();
  const index = new Map(xs.map((x, i) => [x, i]));
  const series = keys.map((k) => ({ label: k, values: xs.map(() => null) }));
  rows.forEach((r) => {
    series[keys.indexOf(r[key])].values[index.get(r.at)] = r[value] / scale;
  });
  return [xs, series];
}

// --- pages ---------------------------------------------------------------------------

async function overview(page) {
  const d = await api(`/ui/api/overview?namespace=${ns()}`);
  const health = d.health || {};
  const cards = el("div", { class: "cards" },
    card("health", health.status || "unknown", health.status === "ok" ? "ok" : "bad"),
    card(`dead letters (${d.dead_letters_scope})`, d.dead_letters, d.dead_letters ? "bad" : ""),
    d.totals.map((t) => card(`${t.topic} events`, t.events)),
  );
  page.append(cards);
  const [xs, series] = pivot(d.per_minute, "topic", "events", 60);
  chart(page, "events per second by topic (per minute, last hour recorded)", xs, series);
  page.append(el("h2", {}, "checks (consumer and projection lag among them)"));
  page.append(el("div", { class: "panel" }, table(health.checks || [], [
    ["check", (c) => c.name],
    ["state", (c) => el("span", { class: c.ok ? "ok" : "bad" }, c.ok ? "ok" : "not ok")],
    ["detail", (c) => c.detail || ""],
  ])));
  const projections = Object.entries(health.projections || {}).map(([kind, s]) => ({ kind, ...s }));
  page.append(el("h2", {}, "projections"));
  page.append(el("div", { class: "panel" }, table(projections, [
    ["projection", (p) => p.kind],
    ["records read", (p) => p.records, "num"],
    ["applied", (p) => p.applied, "num"],
    ["duplicates", (p) => p.duplicates, "num"],
    ["rejected", (p) => p.rejected, "num"],
    ["dead-lettered", (p) => p.dead_lettered, "num"],
  ])));
}

async function memories(page) {
  const d = await api(`/ui/api/memories?namespace=${ns()}`);
  for (const kind of ["status", "tier"]) {
    const [days, moves] = pivot(d.moves.filter((m) => m.kind === kind), "name", "delta");
    moves.forEach((s) => {  // running sums: the count on each day
      let total = 0;
      s.values = s.values.map((v) => (total += v || 0));
    });
    chart(page, `memories by ${kind} over event time`, days, moves, { pad: 86400, height: 200 });
  }
  const [xs, series] = pivot(d.decisions, "type", "events");
  chart(page, "memory decisions per day of event time", xs, series, { pad: 86400 });
  page.append(el("h2", {}, "memories by status and tier"));
  const tiers = [...new Set(d.by_status_and_tier.map((r) => r.tier))].sort();
  const statuses = [...new Set(d.by_status_and_tier.map((r) => r.status))].sort();
  const cells = statuses.map((status) => {
    const row = { status };
    tiers.forEach((t) => {
      const hit = d.by_status_and_tier.find((r) => r.status === status && r.tier === t);
      row[t] = hit ? hit.memories : 0;
    });
    return row;
  });
  page.append(el("div", { class: "panel" }, table(cells, [
    ["status", (r) => r.status],
    ...tiers.map((t) => [t, (r) => r[t], "num"]),
  ])));
  page.append(el("h2", {}, "latest memories"));
  page.append(el("div", { class: "panel" }, table(d.recent, [
    ["memory", (m) => memoryLink(m.memory_id)],
    ["text", (m) => m.text],
    ["category", (m) => m.category],
    ["status", (m) => m.status],
    ["tier", (m) => m.tier],
    ["Q", (m) => fixed(m.q_value), "num"],
    ["uses", (m) => m.access_count, "num"],
  ])));
}

async function learning(page) {
  const d = await api(`/ui/api/learning?namespace=${ns()}`);
  const xs = d.histogram.map((b) => b.bucket / 10 + 0.05);
  chart(page, "active memories per Q-value (tenths of 0..1)", xs,
    [{ label: "memories", values: d.histogram.map((b) => b.memories) }],
    { time: false, bars: true, range: [0, 1] });
  const days = d.per_day.map((r) => r.at);
  chart(page, "mean Q after each day's updates", days, [
    { label: "mean Q", values: d.per_day.map((r) => r.mean_q) },
    { label: "mean change", values: d.per_day.map((r) => r.mean_change) },
  ], { pad: 86400 });
  chart(page, "Q updates per day", days, [{ label: "updates", values: d.per_day.map((r) => r.updates) }],
    { bars: true, height: 180, pad: 86400 });
}

async function gaps(page) {
  const d = await api(`/v1/gaps?namespace=${ns()}&days=3650`);
  page.append(el("h2", {}, "knowledge gaps: topics asked about often and answered poorly"));
  page.append(el("div", { class: "panel" }, table(d.gaps, Object.keys(d.gaps[0] || {}).map(
    (k) => [k, (r) => (typeof r[k] === "number" ? fixed(r[k], 2) : String(r[k] ?? ""))],
  ))));
}

async function workflows(page) {
  const d = await api(`/v1/workflows/health?namespace=${ns()}`);
  page.append(el("h2", {}, "workflow health"));
  page.append(el("div", { class: "panel" }, table(d.workflows, [
    ["workflow", (w) => w.workflow],
    ["verdict", (w) => el("span", { class: w.status === "degraded" ? "bad" : "" }, w.verdict)],
    ["suggestions", (w) => (w.suggestions || []).join("; ")],
  ])));
  for (const w of d.workflows.filter((w) => (w.evidence || []).length)) {
    page.append(el("h2", {}, `evidence: ${w.workflow}`));
    page.append(el("div", { class: "panel" }, table(w.evidence, [
      ["when", (e) => String(e.occurred_at)],
      ["outcome", (e) => e.outcome],
      ["detail", (e) => e.detail || ""],
    ])));
  }
}

async function evolution(page) {
  const d = await api(`/ui/api/evolution?namespace=${ns()}`);
  page.append(el("h2", {}, "evolution candidates (memstream evolve --apply acts on them)"));
  page.append(el("div", { class: "panel" }, table(d.candidates, [
    ["memory", (c) => memoryLink(c.memory_id)],
    ["text", (c) => c.text],
    ["level", (c) => el("span", { class: c.level === "critical" ? "bad" : "" }, c.level)],
    ["action", (c) => c.action],
    ["Q", (c) => fixed(c.q_value), "num"],
    ["uses", (c) => c.access_count, "num"],
    ["last use", (c) => when(c.last_access)],
  ])));
}

async function memory(page, id) {
  const d = await api(`/ui/api/memory/${encodeURIComponent(id)}?namespace=${ns()}`);
  const created = d.events.find((e) => e.type === "MemoryCreated");
  page.append(el("h2", {}, `memory ${id}`));
  if (created && created.text) page.append(el("p", {}, created.text));
  const qs = d.events.filter((e) => e.new_q !== null);
  chart(page, "Q-value over event time", qs.map((e) => e.at),
    [{ label: "Q", values: qs.map((e) => e.new_q) }], { height: 200 });
  page.append(el("h2", {}, "timeline (the audit trail: each decision and its cause)"));
  page.append(el("div", { class: "panel" }, table(d.events, [
    ["when (event time)", (e) => when(e.at)],
    ["decision", (e) => e.type],
    ["reason", (e) => e.reason],
    ["tier", (e) => e.tier],
    ["Q", (e) => fixed(e.new_q), "num"],
    ["by", (e) => e.producer || ""],
    ["caused by", (e) => e.causation_id || ""],
  ])));
}

const PAGES = { overview, memories, learning, gaps, workflows, evolution, memory };

async function render() {
  const [name, arg] = (location.hash.slice(1) || "overview").split("/");
  const page = document.getElementById("page");
  document.body.dataset.ready = "";
  document.querySelectorAll("nav a").forEach((a) => {
    a.classList.toggle("active", a.getAttribute("href") === `#${name}`);
  });
  page.replaceChildren();
  plots = 0;
  try {
    if (!namespace) throw new ApiError(404, "no_namespace", "no namespace holds memories yet");
    await (PAGES[name] || overview)(page, arg && decodeURIComponent(arg));
    document.body.dataset.ready = "1";
  } catch (e) {
    page.replaceChildren(el("p", { class: "error" }, e.message));
    document.body.dataset.ready = "error";
  }
  document.body.dataset.plots = String(plots);
}

async function start() {
  const select = document.getElementById("namespace");
  try {
    const d = await api("/ui/api/namespaces");
    const names = d.namespaces.slice();
    if (namespace && !names.includes(namespace)) names.unshift(namespace);
    namespace = namespace || names[0] || "";
    names.forEach((n) => select.append(el("option", n === namespace ? { selected: "" } : {}, n)));
  } catch (e) {
    document.getElementById("page").replaceChildren(el("p", { class: "error" }, e.message));
    document.body.dataset.ready = "error";
    return;
  }
  select.addEventListener("change", () => {
    namespace = select.value;
    render();
  });
  window.addEventListener("hashchange", render);
  await render();
}

start();
