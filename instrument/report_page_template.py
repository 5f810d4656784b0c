"""The pipeline report's HTML, CSS and script (one page, nothing loaded from elsewhere).

`__TITLE__` and `__DATA__` are replaced by `report_page.write_page`: the title, and the report's JSON
gzip-compressed and base64-encoded (the page inflates it with the browser's DecompressionStream).
"""

PAGE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
:root { --fg: #1d1f21; --muted: #6a737d; --line: #e1e4e8; --sel: #dbeafe; --chg: #f59e0b;
        --del: #ffebe9; --delw: #ffc1bd; --add: #e6ffec; --addw: #abf2bc; --bar: #93c5fd; }
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.4 system-ui, sans-serif; color: var(--fg); height: 100vh; display: grid;
       grid-template-rows: auto 1fr; }
header { display: flex; gap: 16px; align-items: center; padding: 6px 12px; border-bottom: 1px solid var(--line); }
header h1 { font-size: 15px; margin: 0; }
#summary, .muted { color: var(--muted); }
#search { width: 260px; padding: 3px 6px; }
main { display: grid; grid-template-columns: minmax(280px, 26%) 1fr; min-height: 0; }
#pass-list { margin: 0; padding: 0; list-style: none; overflow: auto; border-right: 1px solid var(--line); }
#pass-list li { display: grid; grid-template-columns: 1fr 70px; gap: 6px; padding: 2px 8px; cursor: pointer;
                border-left: 3px solid transparent; white-space: nowrap; }
#pass-list li.changed { border-left-color: var(--chg); font-weight: 600; }
#pass-list li.selected { background: var(--sel); }
#pass-list li.not-run { color: var(--muted); font-style: italic; }
#pass-list li.failed .name { color: #b91c1c; }
.badge { font-size: 11px; padding: 0 4px; border-radius: 3px; background: #eee; margin-left: 4px; font-weight: normal; }
.badge.failed, .badge.drift { background: #fecaca; } .badge.vetoed { background: #fde68a; }
.bar { height: 8px; margin-top: 5px; background: var(--bar); min-width: 1px; }
#detail { overflow: auto; padding: 8px 14px; }
#detail h2 { font-size: 15px; margin: 4px 0; }
#facts { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; margin: 6px 0 10px; }
#facts table { border-collapse: collapse; } #facts td, #facts th { padding: 1px 8px 1px 0; text-align: left; }
#facts td.num { text-align: right; font-variant-numeric: tabular-nums; }
#facts h3 { font-size: 12px; margin: 0 0 2px; color: var(--muted); text-transform: uppercase; }
#diff { border-collapse: collapse; width: 100%; table-layout: fixed; font: 12px/1.35 ui-monospace, monospace; }
#diff td { padding: 0 6px; white-space: pre; overflow: hidden; text-overflow: ellipsis; vertical-align: top; }
#diff td.ln { width: 52px; text-align: right; color: var(--muted); user-select: none; }
#diff td.old.del, #diff tr.del td.old { background: var(--del); } #diff td.new.add, #diff tr.add td.new { background: var(--add); }
#diff td.old mark { background: var(--delw); } #diff td.new mark { background: var(--addw); }
#diff tr.fold td { background: #f1f5f9; color: var(--muted); text-align: center; font-style: italic; }
#diff mark.hit { background: #fde047; outline: 1px solid #ca8a04; }
#more { margin: 8px 0; }
kbd { border: 1px solid var(--line); border-radius: 3px; padding: 0 3px; font-size: 11px; }
</style>
</head>
<body>
<header>
  <h1 id="title">__TITLE__</h1>
  <span id="summary">loading…</span>
  <input id="search" type="search" placeholder="search the IR (Enter: next pass with it)" aria-label="search">
  <span id="search-status" class="muted"></span>
  <span class="muted"><kbd>↑</kbd><kbd>↓</kbd> passes, <kbd>n</kbd><kbd>p</kbd> changed ones, <kbd>/</kbd> search</span>
</header>
<main>
  <ul id="pass-list" role="listbox" aria-label="passes"></ul>
  <section id="detail">
    <h2 id="detail-name"></h2>
    <div id="detail-status" class="muted"></div>
    <div id="facts"></div>
    <div id="more"></div>
    <table id="diff"><colgroup><col style="width:52px"><col><col style="width:52px"><col></colgroup><tbody></tbody></table>
  </section>
</main>
<script type="application/octet-stream" id="report-data">__DATA__</script>
<script>
"use strict";
const ROW_LIMIT = 4000;
let DATA = null, selected = -1, query = "";
const $ = (id) => document.getElementById(id);
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]));

async function load() {
  const b64 = $("report-data").textContent.trim();
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function fmtMs(ms) { return ms >= 1000 ? (ms / 1000).toFixed(2) + " s" : ms.toFixed(ms < 10 ? 2 : 1) + " ms"; }
function deltaText(delta) {
  return Object.entries(delta).map(([op, d]) => (d > 0 ? "+" : "") + d + " " + op).join(", ");
}

function renderList() {
  const max = Math.max(1e-9, ...DATA.passes.map((p) => p.ms));
  $("pass-list").innerHTML = DATA.passes.map((p, i) => {
    const cls = [p.changed ? "changed" : "", p.status === "ran" ? "" : (p.status === "failed" ? "failed" : "not-run")];
    const badge = p.status === "ran" ? "" : `<span class="badge ${p.status}">${p.status}</span>`;
    const drift = p.drift && p.drift.drifted ? `<span class="badge drift">drift</span>` : "";
    const bar = p.status === "ran" || p.status === "failed"
      ? `<div class="bar" style="width:${(100 * p.ms / max).toFixed(1)}%" title="${fmtMs(p.ms)}"></div>` : "<div></div>";
    return `<li data-id="${i}" class="${cls.join(" ").trim()}" role="option" style="padding-left:${8 + 14 * p.depth}px">` +
      `<span class="name">${esc(p.name)}${badge}${drift}</span>${bar}</li>`;
  }).join("");
  const changed = DATA.passes.filter((p) => p.changed).length;
  const total = DATA.passes.filter((p) => p.depth === 0).reduce((s, p) => s + p.ms, 0);
  $("summary").textContent = `${DATA.passes.length} passes, ${changed} changed the IR, ${fmtMs(total)}`;
}

function table(title, head, rows) {
  if (!rows.length) return "";
  return `<div><h3>${title}</h3><table><tr>${head.map((h) => `<th>${h}</th>`).join("")}</tr>` +
    rows.map((r) => `<tr>${r.map((c, i) => `<td class="${i && typeof c === "number" ? "num" : ""}">${esc(c)}</td>`).join("")}</tr>`).join("") +
    "</table></div>";
}

function changedRange(a, b) {
  // The differing middle of two lines: [start, end in a, end in b].
  let s = 0;
  while (s < a.length && s < b.length && a[s] === b[s]) s++;
  let e = 0;
  while (e < a.length - s && e < b.length - s && a[a.length - 1 - e] === b[b.length - 1 - e]) e++;
  return [s, a.length - e, b.length - e];
}

function cell(text, range) {
  // `text` as HTML: search hits as <mark class="hit">, inside them (or alone) the changed part as <mark>.
  const changed = (from, to) => {
    if (!range) return esc(text.slice(from, to));
    const [s, e] = [Math.max(from, range[0]), Math.min(to, range[1])];
    if (s >= e) return esc(text.slice(from, to));
    return esc(text.slice(from, s)) + "<mark>" + esc(text.slice(s, e)) + "</mark>" + esc(text.slice(e, to));
  };
  if (!query) return changed(0, text.length);
  const lower = text.toLowerCase(), q = query.toLowerCase();
  let out = "", at = 0;
  for (let i = lower.indexOf(q); i >= 0; i = lower.indexOf(q, i + q.length)) {
    out += changed(at, i) + '<mark class="hit">' + changed(i, i + q.length) + "</mark>";
    at = i + q.length;
  }
  return out + changed(at, text.length);
}

function diffRows(diff) {
  // The unified diff as side-by-side rows: [kind, old line no, old text, old changed range, new no, text, range].
  const rows = [], lines = diff.split("\n");
  let oldNo = 0, newNo = 0, lastOld = 0, dels = [], adds = [];
  const flush = () => {
    for (let i = 0; i < Math.max(dels.length, adds.length); i++) {
      const d = dels[i], a = adds[i];
      if (d && a) {
        const [s, e1, e2] = changedRange(d[1], a[1]);
        rows.push(["chg", d[0], d[1], [s, e1], a[0], a[1], [s, e2]]);
      } else if (d) rows.push(["del", d[0], d[1], null, "", "", null]);
      else rows.push(["add", "", "", null, a[0], a[1], null]);
    }
    dels = []; adds = [];
  };
  for (const line of lines) {
    if (line.startsWith("---") || line.startsWith("+++") || line === "") continue;
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      flush();
      oldNo = +hunk[1]; newNo = +hunk[3];
      if (hunk[2] === "0") oldNo++;
      if (oldNo > lastOld + 1) rows.push(["fold", `⋯ ${oldNo - lastOld - 1} unchanged lines (${lastOld + 1}–${oldNo - 1})`]);
      continue;
    }
    const kind = line[0], text = line.slice(1);
    if (kind === "-") { dels.push([oldNo++, text]); lastOld = oldNo - 1; }
    else if (kind === "+") adds.push([newNo++, text]);
    else { flush(); rows.push(["same", oldNo, text, null, newNo, text, null]); lastOld = oldNo; oldNo++; newNo++; }
  }
  flush();
  if (rows.length) rows.push(["fold", `⋯ unchanged to the end (after line ${lastOld})`]);
  return rows;
}

function renderDiff(p, limit) {
  const body = $("diff").tBodies[0];
  if (!p.diff) {
    body.innerHTML = `<tr class="fold"><td colspan="4">${p.changed ? "changed, but not in the printed IR" : "the IR did not change"}</td></tr>`;
    $("more").innerHTML = "";
    return;
  }
  const rows = diffRows(p.diff);
  const shown = rows.slice(0, limit);
  body.innerHTML = shown.map((r) => r[0] === "fold"
    ? `<tr class="fold"><td colspan="4">${r[1]}</td></tr>`
    : `<tr class="${r[0]}"><td class="ln">${r[1]}</td><td class="old${r[0] === "chg" ? " del" : ""}">${cell(r[2], r[3])}</td>` +
      `<td class="ln">${r[4]}</td><td class="new${r[0] === "chg" ? " add" : ""}">${cell(r[5], r[6])}</td></tr>`).join("");
  $("more").innerHTML = rows.length > limit
    ? `<button id="show-all">show all ${rows.length} rows (${rows.length - limit} more)</button>` : "";
  if (rows.length > limit) $("show-all").onclick = () => renderDiff(p, rows.length);
  const hit = body.querySelector("mark.hit");
  if (hit) hit.scrollIntoView({block: "center"});
}

function select(i, scroll = true) {
  if (!DATA || i < 0 || i >= DATA.passes.length) return;
  const list = $("pass-list");
  if (selected >= 0) list.children[selected].classList.remove("selected");
  selected = i;
  const li = list.children[i];
  li.classList.add("selected");
  li.setAttribute("aria-selected", "true");
  if (scroll) li.scrollIntoView({block: "nearest"});
  const p = DATA.passes[i];
  $("detail-name").textContent = p.name;
  const parts = [`depth ${p.depth}`, p.status === "ran" ? "ran" : p.status + (p.reason ? ": " + p.reason : "")];
  if (p.status === "ran" || p.status === "failed") parts.push(fmtMs(p.ms), p.changed ? "changed the IR" : "no change");
  $("detail-status").textContent = parts.join(" · ");
  let drift = "";
  if (p.drift) {
    const d = p.drift;
    const text = d.error ? d.error : `max abs ${d.max_abs.toExponential(2)}, max rel ${d.max_rel.toExponential(2)}`;
    drift = `<div id="drift"><h3>numerical drift</h3>${esc(text)}${d.drifted ? ' <span class="badge drift">DRIFT</span>' : ""}</div>`;
  }
  $("facts").innerHTML =
    `<div id="op-delta">${table("op-count delta", ["op", "Δ"], Object.entries(p.op_delta))}</div>` +
    `<div id="stats">${table("statistics", ["value", "name", "description"], p.stats.map((s) => [s[1], s[0], s[2]]))}</div>` +
    `<div id="patterns">${table("patterns", ["pattern", "tried", "applied", "created", "erased", "ms"], p.patterns)}</div>` + drift;
  renderDiff(p, ROW_LIMIT);
  history.replaceState(null, "", "#pass=" + i);
}

function step(direction, onlyChanged) {
  for (let i = selected + direction; i >= 0 && i < DATA.passes.length; i += direction) {
    if (!onlyChanged || DATA.passes[i].changed) return select(i);
  }
}

function search(direction) {
  query = $("search").value;
  if (!query) { $("search-status").textContent = ""; return select(selected); }
  const q = query.toLowerCase(), n = DATA.passes.length;
  const found = DATA.passes.filter((p) => p.diff.toLowerCase().includes(q)).length;
  for (let k = 1; k <= n; k++) {
    const i = ((selected + direction * k) % n + n) % n;
    if (DATA.passes[i].diff.toLowerCase().includes(q)) {
      $("search-status").textContent = `in ${found} pass${found === 1 ? "" : "es"}`;
      return select(i);
    }
  }
  $("search-status").textContent = "not found";
}

function fromHash() {
  const m = /pass=(\d+)/.exec(location.hash);
  const q = /q=([^&]*)/.exec(location.hash);
  if (q) { $("search").value = decodeURIComponent(q[1]); query = $("search").value; }
  if (m) return select(+m[1]);
  const first = DATA.passes.findIndex((p) => p.changed && p.depth > 0);
  select(first >= 0 ? first : 0);
}

document.addEventListener("keydown", (e) => {
  if (e.target === $("search")) {
    if (e.key === "Enter") { e.preventDefault(); search(e.shiftKey ? -1 : 1); }
    if (e.key === "Escape") $("search").blur();
    return;
  }
  const keys = {ArrowDown: () => step(1, false), j: () => step(1, false), ArrowUp: () => step(-1, false),
                k: () => step(-1, false), n: () => step(1, true), p: () => step(-1, true),
                "/": () => $("search").focus()};
  if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
});
$("pass-list").addEventListener("click", (e) => {
  const li = e.target.closest("li");
  if (li) select(+li.dataset.id, false);
});

load().then((data) => {
  DATA = data;
  renderList();
  fromHash();
  document.body.dataset.loadMs = Math.round(performance.now());  // since navigation started
  document.body.dataset.ready = "1";
}).catch((error) => {
  $("summary").textContent = "cannot read the report: " + error;
  document.body.dataset.ready = "error";
});
</script>
</body>
</html>
"""
