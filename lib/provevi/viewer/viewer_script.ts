/**
 * The viewer's script, served as `/assets/app.js`: the pages (runs, a run, agents, experiments, compare) drawn
 * in the browser from the viewer's JSON, with no framework and no network beyond the viewer itself. Every text
 * from the store goes into the page as text (`textContent`), never as HTML.
 * @module
 */

/** The script. */
export const APP_JS: string = String.raw`
"use strict";
var app = document.getElementById("app");
var info = null;

function h(tag, attrs) {
  var el = document.createElement(tag);
  if (attrs) {
    for (var k in attrs) {
      var v = attrs[k];
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k.slice(0, 2) === "on") el.addEventListener(k.slice(2), v);
      else if (k === "text") el.textContent = v;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  for (var i = 2; i < arguments.length; i++) add(el, arguments[i]);
  return el;
}
function add(el, kid) {
  if (kid === null || kid === undefined || kid === false) return;
  if (Array.isArray(kid)) { kid.forEach(function (k) { add(el, k); }); return; }
  el.appendChild(typeof kid === "object" ? kid : document.createTextNode(String(kid)));
}
function link(href, kids, cls) {
  return h("a", { href: href, class: cls, onclick: function (e) {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault(); go(href);
  } }, kids);
}
function go(href) { history.pushState(null, "", href); route(); }
window.addEventListener("popstate", function () { route(); });

function api(path, options) {
  return fetch(path, Object.assign({ credentials: "same-origin" }, options || {})).then(function (r) {
    return r.json().catch(function () { return { error: "the viewer answered " + r.status }; }).then(function (body) {
      if (!r.ok) throw new Error(body && body.error ? body.error : "the viewer answered " + r.status);
      return body;
    });
  });
}
function short(hash, n) { return hash ? String(hash).slice(0, n || 12) : "—"; }
function pill(status) { return h("span", { class: "pill " + status, "data-status": status }, status); }
function tag(type) { return h("span", { class: "tag t-" + type }, type); }
function when(time) {
  if (!time) return "—";
  return time.slice(0, 10) + " " + time.slice(11, 19);
}
function clock(time) { return time ? time.slice(11, 23) : ""; }
function micros(time) {
  var base = Date.parse(time.slice(0, 19) + "Z");
  var m = /\.(\d+)Z$/.exec(time);
  return base * 1000 + (m ? Number((m[1] + "000000").slice(0, 6)) : 0);
}
function duration(us) {
  if (us < 1000) return Math.max(0, Math.round(us)) + " µs";
  if (us < 1e6) return (us / 1000).toFixed(us < 1e4 ? 1 : 0) + " ms";
  if (us < 6e7) return (us / 1e6).toFixed(2) + " s";
  return Math.floor(us / 6e7) + " min " + Math.round((us % 6e7) / 1e6) + " s";
}
function pretty(value) { return JSON.stringify(value, null, 2); }
function errorBox(error) { return h("div", { class: "error-box", role: "alert" }, String(error.message || error)); }
function empty(text) { return h("div", { class: "empty" }, text); }
function card(title, kids, cls) { return h("section", { class: "card " + (cls || "") }, title ? h("h2", null, title) : null, kids); }
function table(head, rows) {
  return h("table", null, h("thead", null, h("tr", null, head.map(function (c) { return h("th", null, c); }))),
    h("tbody", null, rows));
}
function show(el) { app.replaceChildren(el); }

function header() {
  var p = location.pathname;
  var on = function (prefix) { return p === prefix || (prefix !== "/" && p.indexOf(prefix) === 0) ? "on" : null; };
  var nav = h("nav", null,
    link("/", "Runs", p === "/" || p.indexOf("/runs") === 0 ? "on" : null),
    link("/agents", "Agents", on("/agents")),
    link("/experiments", "Experiments", on("/experiments")),
    link("/compare", "Compare", on("/compare")));
  var where = h("div", { class: "where" },
    info ? h("span", { class: "mono", title: info.runs_root }, info.store === "file" ? "file store · " + info.runs_root : info.store) : null,
    info ? h("span", { class: "level", title: "the telemetry policy's live destination decides what the viewer shows" },
      info.live ? "shows: " + info.live.receives : "shows: structure only") : null);
  var top = document.querySelector("header.top");
  top.replaceChildren(h("span", { class: "brand" }, h("span", { class: "mark" }, "M"), "MahaCata · prove ui"), nav, where);
}

var timer = null;
var source = null;
function route() {
  if (timer) { clearInterval(timer); timer = null; }
  if (source) { source.close(); source = null; }
  header();
  var p = location.pathname;
  var m = /^\/runs\/([^/]+)$/.exec(p);
  if (m) return runPage(decodeURIComponent(m[1]));
  if (p === "/agents") return agentsPage();
  if (p === "/experiments") return experimentsPage();
  if (p === "/compare") return comparePage();
  return runsPage();
}

/* ---------- the runs ---------- */
function runsPage() {
  var q = new URLSearchParams(location.search);
  var limit = Number(q.get("limit") || 50);
  var offset = Number(q.get("offset") || 0);
  var picked = [];
  var status = h("select", { name: "status" }, ["", "completed", "failed", "cancelled", "running", "cut"].map(function (s) {
    return h("option", { value: s, selected: q.get("status") === s }, s || "any");
  }));
  var agent = h("input", { name: "agent", placeholder: "org/domain/env/name or name", value: q.get("agent") || "" });
  var experiment = h("input", { name: "experiment", placeholder: "experiment://…", value: q.get("experiment") || "" });
  var since = h("input", { name: "since", type: "date", value: q.get("since") || "" });
  var compare = h("button", { type: "button", disabled: true, onclick: function () {
    go("/compare?a=" + encodeURIComponent(picked[0]) + "&b=" + encodeURIComponent(picked[1]));
  } }, "Compare two runs");
  var form = h("form", { class: "filters", onsubmit: function (e) {
    e.preventDefault();
    var next = new URLSearchParams();
    [status, agent, experiment, since].forEach(function (f) { if (f.value) next.set(f.name, f.value); });
    go("/" + (String(next) ? "?" + next : ""));
  } },
    h("label", { class: "field" }, "Status", status),
    h("label", { class: "field" }, "Agent", agent),
    h("label", { class: "field" }, "Experiment", experiment),
    h("label", { class: "field" }, "Started since", since),
    h("button", { class: "primary", type: "submit" }, "Filter"),
    h("span", { class: "grow" }), compare);
  var body = h("div", null, empty("Loading the runs…"));
  show(h("div", null, h("h1", null, "Runs"),
    h("p", { class: "sub" }, "Every run in the store, newest first. Open one to see its trace, its evidence and its verdict."),
    card(null, form), h("section", { class: "card flush", id: "runs" }, body)));
  function load() {
    var params = new URLSearchParams(q);
    params.set("limit", String(limit)); params.set("offset", String(offset));
    return api("/api/runs?" + params).then(function (page) {
      if (!page.runs.length) return body.replaceChildren(empty(page.total ? "No runs on this page." : "No runs match."));
      var rows = page.runs.map(function (r) {
        var box = h("input", { type: "checkbox", "aria-label": "pick " + r.run_id, style: null, onchange: function (e) {
          if (e.target.checked) picked.push(r.run_id); else picked = picked.filter(function (x) { return x !== r.run_id; });
          compare.disabled = picked.length !== 2;
        } });
        box.checked = picked.indexOf(r.run_id) >= 0;
        box.style.minWidth = "0";
        return h("tr", { "data-run": r.run_id },
          h("td", null, box),
          h("td", { class: "nowrap" }, link("/runs/" + encodeURIComponent(r.run_id), h("span", { class: "mono" }, r.run_id))),
          h("td", null, pill(r.status)),
          h("td", null, r.agent || "—"),
          h("td", { class: "mono" }, r.model || "—"),
          h("td", { class: "num" }, r.tokens === null ? "—" : r.tokens.toLocaleString()),
          h("td", { class: "num" }, r.cost === null || r.cost === undefined ? "—" : r.cost),
          h("td", { class: "mono" }, r.experiment || "—"),
          h("td", { class: "muted nowrap", title: r.started_at || "" }, r.started_at ? when(r.started_at).slice(5) : "—"),
          h("td", { class: "muted num" }, r.duration_ms === null ? "—" : duration(r.duration_ms * 1000)));
      });
      var last = Math.min(page.offset + page.runs.length, page.total);
      var pager = h("div", { class: "pager" },
        h("span", null, (page.offset + 1).toLocaleString() + "–" + last.toLocaleString() + " of " + page.total.toLocaleString() + " runs"),
        h("span", { class: "row" },
          h("button", { disabled: page.offset === 0, onclick: function () { offset = Math.max(0, offset - limit); load(); } }, "← Newer"),
          h("button", { disabled: last >= page.total, onclick: function () { offset += limit; load(); } }, "Older →")));
      body.replaceChildren(table(["", "Run", "Status", "Agent", "Model", "Tokens", "Cost", "Experiment", "Started", "Took"], rows), pager);
    }).catch(function (e) { body.replaceChildren(errorBox(e)); });
  }
  load();
  timer = setInterval(function () { if (offset === 0 && !document.hidden) load(); }, 2000);
}

/* ---------- a run ---------- */
function runPage(id) {
  var untrusted = new URLSearchParams(location.search).get("untrusted") === "1";
  var live = { boxes: [], open: null };
  var view = null;
  show(h("div", null, h("h1", { class: "mono" }, id), empty("Loading the run…")));
  function load() {
    return api("/api/runs/" + encodeURIComponent(id) + (untrusted ? "?untrusted=1" : "")).then(function (v) {
      view = v; draw();
      if (v.running && !source) follow();
    }).catch(function (e) { show(h("div", null, h("h1", { class: "mono" }, id), errorBox(e))); });
  }
  function follow() {
    var after = view.events.length ? view.events[view.events.length - 1].seq : -1;
    source = new EventSource("/api/runs/" + encodeURIComponent(id) + "/live?after=" + after);
    var pending = null;
    source.addEventListener("event", function (m) {
      var e = JSON.parse(m.data);
      if (view.events.some(function (x) { return x.seq === e.seq; })) return;
      e.fresh = true;
      view.events.push(e);
      if (live.open && (e.type === "model_called" || e.type === "step_failed")) { live.open.seq = e.seq; live.open = null; }
      if (!pending) pending = setTimeout(function () { pending = null; draw(); }, 120);
    });
    source.addEventListener("text", function (m) {
      var piece = JSON.parse(m.data).text;
      if (!live.open) { live.open = { seq: null, text: "" }; live.boxes.push(live.open); }
      live.open.text += piece;
      var el = document.getElementById("streaming");
      if (el) el.lastChild.textContent = live.open.text; else draw();
    });
    source.addEventListener("end", function () {
      source.close(); source = null;
      setTimeout(load, 150);
    });
    source.onerror = function () { if (source) { source.close(); source = null; setTimeout(load, 1000); } };
  }
  // the usage the model calls record, shown at the usage level and above
  function usage(v) {
    var calls = v.events.filter(function (e) { return e.type === "model_called" && e.data && typeof e.data.input_tokens === "number"; });
    if (!calls.length) return "—";
    var sum = function (k) { return calls.reduce(function (n, e) { return n + (e.data[k] || 0); }, 0); };
    return sum("input_tokens").toLocaleString() + " / " + sum("output_tokens").toLocaleString() +
      (sum("cache_read_tokens") ? " (" + sum("cache_read_tokens").toLocaleString() + " cached)" : "");
  }
  // the total the run's last event records; prove cost recomputes it
  function costOf(v) {
    var last = v.events[v.events.length - 1];
    var cost = last && last.data && last.data.cost;
    if (!cost || typeof cost.amount !== "string") return "—";
    return cost.amount + " " + (cost.currency || "") + (cost.unpriced_calls ? " (" + cost.unpriced_calls + " unpriced)" : "");
  }
  function draw() {
    var v = view;
    var byType = {};
    v.events.forEach(function (e) { byType[e.type] = (byType[e.type] || 0) + 1; });
    var first = v.events[0], lastEv = v.events[v.events.length - 1];
    var took = first && lastEv && !v.running ? duration(micros(lastEv.time) - micros(first.time)) : v.running ? "running" : "—";
    var s = v.settings || {};
    var facts = h("div", { class: "facts" },
      fact("Agent", s.agent ? [s.org, s.domain, s.env, s.agent].filter(Boolean).join("/") : "—"),
      fact("Model", s.model || "—"), fact("Backend", s.backend || "—"),
      fact("Started", first ? when(first.time) : "—"), fact("Took", took),
      fact("Events", String(v.events.length)),
      fact("Model calls", String(byType.model_called || 0)), fact("Tool calls", String(byType.tool_called || 0)),
      fact("Tokens in / out", usage(v)), fact("Cost", costOf(v)),
      fact("Shown at", v.level || "structure only"));
    var kids = [
      h("div", { class: "row" }, h("h1", { class: "mono grow" }, v.run_id), pill(v.status)),
      h("p", { class: "sub" }, v.folder ? h("span", { class: "mono" }, v.folder) : null),
      verdict(v),
      v.untrusted ? h("div", { class: "untrusted", role: "alert" }, "UNVERIFIED CONTENT: this run does not verify, so what follows may have been changed after the run. Do not rely on it.") : null,
      v.note ? h("div", { class: "note", id: "level-note" }, v.note) : null,
      card(null, facts),
      answers(v),
      h("section", { class: "card flush", id: "timeline" }, h("h2", null, "Trace"), timeline(v)),
      h("section", { class: "card flush", id: "events" }, h("h2", null, "Events"), events(v)),
      card("Inputs", inputs(v), "flush"),
      card("Outputs", outputs(v), "flush"),
      card("Grants and refusals", access(v), "flush"),
      card("Assessments", assessments(v), "flush"),
    ];
    show(h("div", null, kids));
    v.events.forEach(function (e) { e.fresh = false; });
  }
  function fact(k, val) { return h("div", null, h("span", null, k), h("b", null, val)); }
  function verdict(v) {
    if (v.running) {
      return h("div", { class: "verdict live", id: "verdict" }, h("div", { class: "icon" }, "…"),
        h("div", null, h("h2", null, "Running: not sealed yet"),
          h("div", null, v.verdict.ok ? "The chain of the events written so far is intact. The full check runs when the run ends." : "The events written so far have problems:"),
          v.verdict.ok ? null : h("ul", null, v.verdict.problems.map(function (p) { return h("li", { "data-code": p.code }, p.message); }))));
    }
    if (v.verdict.ok) {
      return h("div", { class: "verdict ok", id: "verdict" }, h("div", { class: "icon" }, "✓"),
        h("div", null, h("h2", null, "Verified"),
          h("div", null, v.verdict.bundle ? "The evidence, the outputs and the committed bundle " + v.verdict.bundle + " verify." : "The evidence and the outputs verify: the hash chain, the payloads, the manifest and the output files are as the run recorded them.")));
    }
    return h("div", { class: "verdict bad", id: "verdict", role: "alert" }, h("div", { class: "icon" }, "!"),
      h("div", { class: "grow" }, h("h2", null, "Does not verify: " + v.verdict.problems.length + (v.verdict.problems.length === 1 ? " problem" : " problems")),
        h("div", null, v.untrusted ? "The content below is shown as asked, and cannot be trusted." : "Only the structure of its events is shown: its content cannot be trusted."),
        h("ul", { id: "problems" }, v.verdict.problems.map(function (p) { return h("li", { "data-code": p.code }, p.message); })),
        v.untrusted ? null : h("p", null, h("button", { onclick: function () { go(location.pathname + "?untrusted=1"); } }, "Show the unverified content anyway"))));
  }
  function answers(v) {
    var list = v.events.filter(function (e) { return e.answer !== undefined; }).map(function (e) {
      return h("div", { class: "answer" }, h("span", { class: "who" }, "Answer · " + e.type + " #" + e.seq), e.answer);
    });
    live.boxes.forEach(function (b) {
      if (b.seq !== null && v.events.some(function (e) { return e.seq === b.seq && e.answer !== undefined; })) return;
      var streaming = b === live.open;
      list.push(h("div", { class: "answer" + (streaming ? " streaming" : ""), id: streaming ? "streaming" : null },
        h("span", { class: "who" }, streaming ? "Streaming answer" : "Answer · streamed"), h("span", null, b.text)));
    });
    if (!list.length) return null;
    return card("Answers", list);
  }
  function timeline(v) {
    if (!v.events.length) return empty("No events.");
    var spans = v.spans;
    if (v.running) spans = spansOf(v);
    var total = Math.max.apply(null, spans.map(function (s) { return s.end_us; }).concat([1]));
    return h("div", { class: "timeline" }, spans.map(function (s) {
      var kind = s.depth === 0 ? "root" : s.name.split(" ")[0];
      var left = (s.start_us / total) * 100, width = ((s.end_us - s.start_us) / total) * 100;
      return h("div", { class: "span", "data-span": s.span_id, title: s.name + " · events " + s.seqs.join(", ") },
        h("div", { class: "name", style: null }, h("span", { class: "tw" }, "\u00a0\u00a0".repeat(s.depth) + (s.depth ? "└ " : "")), s.name),
        h("div", { class: "track" }, (function () {
          var bar = h("div", { class: "bar k-" + kind + " " + (s.status !== "ok" ? s.status : "") });
          bar.style.left = left + "%"; bar.style.width = Math.max(width, 0.3) + "%";
          return bar;
        })()),
        h("div", { class: "dur" }, duration(s.end_us - s.start_us)));
    }));
  }
  function spansOf(v) {
    var t0 = micros(v.events[0].time), now = Date.now() * 1000;
    var root = v.events[0].span_id || "root";
    var map = {}, order = [];
    map[root] = { span_id: root, name: "run", start_us: 0, end_us: now - t0, depth: 0, status: "running", seqs: [] };
    order.push(map[root]);
    v.events.forEach(function (e) {
      var id = e.span_id || root;
      if (!map[id]) {
        var d = (e.shown && e.shown.data) || {};
        var label = d.model || d.tool || "";
        var step = e.type === "model_called" ? "chat" : e.type === "tool_called" ? "execute_tool" : e.type;
        map[id] = { span_id: id, name: (step + " " + label).trim(), start_us: micros(e.started_at || e.time) - t0, end_us: micros(e.time) - t0, depth: 1, status: e.type === "step_failed" ? "error" : "ok", seqs: [] };
        order.push(map[id]);
      }
      map[id].seqs.push(e.seq);
    });
    if (live.open) {
      var lastTime = micros(v.events[v.events.length - 1].time) - t0;
      order.push({ span_id: "streaming", name: "chat (streaming)", start_us: lastTime, end_us: now - t0, depth: 1, status: "running", seqs: [] });
    }
    return order;
  }
  function events(v) {
    if (!v.events.length) return empty("No events yet.");
    return table(["#", "Time", "Type", "Span", "Payload", "Content"], v.events.map(function (e) {
      var content = e.shown
        ? h("details", null, h("summary", null, summary(e.shown)), h("pre", { class: "json" }, pretty(contentOf(e.shown))))
        : h("span", { class: "muted" }, "structure only");
      return h("tr", { class: e.fresh ? "new" : null, "data-seq": e.seq, "data-type": e.type },
        h("td", { class: "seq" }, e.seq), h("td", { class: "mono muted" }, clock(e.time)), h("td", null, tag(e.type)),
        h("td", { class: "hash", title: e.span_id || "" }, short(e.span_id, 8)),
        h("td", { class: "hash", title: e.payload_sha256 || "" }, short(e.payload_sha256, 10)), h("td", null, content));
    }));
  }
  function contentOf(item) {
    var out = { data: item.data };
    if (item.component !== undefined) out.component = item.component;
    if (item.actor !== undefined) out.actor = item.actor;
    if (item.refs !== undefined) out.refs = item.refs;
    if (item.payload !== undefined) out.payload = item.payload;
    return out;
  }
  function summary(item) {
    var keys = Object.keys(item.data || {});
    var bits = keys.slice(0, 3).map(function (k) {
      var val = item.data[k];
      return k + "=" + (typeof val === "object" ? "…" : String(val).slice(0, 40));
    });
    return (bits.join("  ") || "no data shown") + (keys.length > 3 ? "  +" + (keys.length - 3) : "");
  }
  function inputs(v) {
    if (!v.inputs.length) return empty("No inputs staged.");
    return table(["#", "Name", "Pinned URI", "SHA-256"], v.inputs.map(function (i) {
      return h("tr", null, h("td", { class: "seq" }, i.seq), h("td", null, i.name === null ? h("span", { class: "muted" }, "hidden") : String(i.name)),
        h("td", { class: "mono" }, i.uri || h("span", { class: "muted" }, "hidden")), h("td", { class: "hash", title: i.sha256 || "" }, short(i.sha256, 16)));
    }));
  }
  function outputs(v) {
    if (!v.outputs.length) return empty("No outputs recorded.");
    return table(["#", "Path", "Size", "SHA-256"], v.outputs.map(function (o) {
      return h("tr", null, h("td", { class: "seq" }, o.seq), h("td", { class: "mono" }, o.path === null ? h("span", { class: "muted" }, "hidden") : String(o.path)),
        h("td", null, o.size === null ? "—" : o.size + " B"), h("td", { class: "hash", title: o.sha256 || "" }, short(o.sha256, 16)));
    }));
  }
  function access(v) {
    if (!v.access.length) return empty("No access was asked for.");
    return table(["#", "Decision", "URI", "Mode", "Reason"], v.access.map(function (a) {
      return h("tr", null, h("td", { class: "seq" }, a.seq), h("td", null, tag("access_" + a.decision)),
        h("td", { class: "mono" }, a.uri || h("span", { class: "muted" }, "hidden")), h("td", null, a.mode === null ? "—" : String(a.mode)),
        h("td", null, a.reason === null ? "—" : String(a.reason)));
    }));
  }
  function assessments(v) {
    if (v.assessments === null) return empty("The file store keeps no assessments: serve a sqlite store (--store sqlite:///…) to add them.");
    var rows = v.assessments.map(function (a) {
      return h("tr", null, h("td", null, a.name === undefined ? h("span", { class: "muted" }, "hidden") : a.name),
        h("td", null, a.value === undefined ? h("span", { class: "muted" }, "hidden") : String(JSON.stringify(a.value))),
        h("td", null, a.seq === null ? "run" : "event #" + a.seq), h("td", null, a.source || "—"),
        h("td", null, a.rationale || "—"), h("td", { class: "muted" }, when(a.created_at)));
    });
    var name = h("input", { name: "name", placeholder: "name, e.g. correct", required: true });
    var value = h("input", { name: "value", placeholder: "true, 0.8 or text", required: true });
    var why = h("input", { name: "rationale", placeholder: "rationale (optional)" });
    var said = h("span", { class: "muted" });
    var form = info && info.assess ? h("form", { class: "filters", style: null, onsubmit: function (e) {
      e.preventDefault();
      var raw = value.value.trim();
      var val = raw === "true" ? true : raw === "false" ? false : raw !== "" && !isNaN(Number(raw)) ? Number(raw) : raw;
      api("/api/runs/" + encodeURIComponent(v.run_id) + "/assessments", { method: "POST", headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: name.value, value: val, rationale: why.value }) })
        .then(function () { load(); }).catch(function (err) { said.textContent = err.message; });
    } }, h("label", { class: "field" }, "Name", name), h("label", { class: "field" }, "Value", value),
      h("label", { class: "field grow" }, "Rationale", why), h("button", { class: "primary", type: "submit" }, "Add assessment"), said) : null;
    return [rows.length ? table(["Name", "Value", "Judges", "Source", "Rationale", "Added"], rows) : empty("No assessments yet."),
      form ? h("div", { style: null, class: "pager" }, form) : null];
  }
  load();
}

/* ---------- agents and experiments ---------- */
function agentsPage() {
  var body = h("div", null, empty("Loading the agents…"));
  var detail = h("div");
  show(h("div", null, h("h1", null, "Agents"),
    h("p", { class: "sub" }, "Agent classes, found in the runs: an agent's name in its org, domain and environment. A version is the SHA-256 of its spec without the prompt and inputs."),
    h("section", { class: "card flush" }, body), detail));
  api("/api/agents").then(function (list) {
    if (!list.length) return body.replaceChildren(empty("No agent classes yet."));
    body.replaceChildren(table(["Agent class", "Versions", "Runs", "First run"], list.map(function (a) {
      return h("tr", null, h("td", null, h("a", { href: "#", onclick: function (e) { e.preventDefault(); open(a.agent); } }, a.agent)),
        h("td", null, a.versions), h("td", null, link("/?agent=" + encodeURIComponent(a.agent), String(a.runs))),
        h("td", null, link("/runs/" + encodeURIComponent(a.first_run), h("span", { class: "mono" }, a.first_run))));
    })));
    if (list.length === 1) open(list[0].agent);
  }).catch(function (e) { body.replaceChildren(errorBox(e)); });
  function open(name) {
    api("/api/agent?name=" + encodeURIComponent(name)).then(function (d) {
      detail.replaceChildren(h("section", { class: "card flush" }, h("h2", null, d.agent + ": versions"),
        table(["Version", "Backend", "Model", "Tools", "Runs", "First run"], d.versions.map(function (v) {
          return h("tr", null, h("td", { class: "hash", title: v.version }, short(v.version, 16)), h("td", null, v.backend || "—"),
            h("td", { class: "mono" }, v.model || "—"), h("td", { class: "mono" }, v.tools ? JSON.stringify(v.tools) : "—"),
            h("td", null, v.runs.length), h("td", null, link("/runs/" + encodeURIComponent(v.first_run), h("span", { class: "mono" }, v.first_run))));
        }))));
    }).catch(function (e) { detail.replaceChildren(errorBox(e)); });
  }
}

function experimentsPage() {
  var body = h("div", null, empty("Loading the experiments…"));
  var detail = h("div");
  show(h("div", null, h("h1", null, "Experiments"),
    h("p", { class: "sub" }, "The questions that runs named, each with the versions that runs pinned."),
    h("section", { class: "card flush" }, body), detail));
  api("/api/experiments").then(function (list) {
    if (!list.length) return body.replaceChildren(empty("No run has named an experiment yet."));
    body.replaceChildren(table(["Experiment", "Versions", "Runs", "First run"], list.map(function (x) {
      return h("tr", null, h("td", { class: "mono" }, h("a", { href: "#", onclick: function (e) { e.preventDefault(); open(x.experiment); } }, x.experiment)),
        h("td", null, x.versions), h("td", null, link("/?experiment=" + encodeURIComponent(x.experiment), String(x.runs))),
        h("td", null, link("/runs/" + encodeURIComponent(x.first_run), h("span", { class: "mono" }, x.first_run))));
    })));
    if (list.length === 1) open(list[0].experiment);
  }).catch(function (e) { body.replaceChildren(errorBox(e)); });
  function open(uri) {
    api("/api/experiment?uri=" + encodeURIComponent(uri)).then(function (d) {
      detail.replaceChildren(h("section", { class: "card flush" }, h("h2", null, d.experiment + ": versions"),
        table(["Pinned version", "SHA-256", "Runs", "First run"], d.versions.map(function (v) {
          return h("tr", null, h("td", { class: "mono" }, v.pin), h("td", { class: "hash" }, short(v.sha256, 16)),
            h("td", null, link("/?experiment=" + encodeURIComponent(v.pin), String(v.runs.length))),
            h("td", null, link("/runs/" + encodeURIComponent(v.first_run), h("span", { class: "mono" }, v.first_run))));
        }))));
    }).catch(function (e) { detail.replaceChildren(errorBox(e)); });
  }
}

/* ---------- compare ---------- */
function comparePage() {
  var q = new URLSearchParams(location.search);
  var a = h("input", { name: "a", placeholder: "run ID", value: q.get("a") || "" });
  var b = h("input", { name: "b", placeholder: "run ID", value: q.get("b") || "" });
  a.style.minWidth = "340px"; b.style.minWidth = "340px";
  var body = h("div");
  show(h("div", null, h("h1", null, "Compare two runs"),
    h("p", { class: "sub" }, "Their settings, inputs and answers side by side; what differs is highlighted."),
    card(null, h("form", { class: "filters", onsubmit: function (e) {
      e.preventDefault(); go("/compare?a=" + encodeURIComponent(a.value.trim()) + "&b=" + encodeURIComponent(b.value.trim()));
    } }, h("label", { class: "field" }, "Run A", a), h("label", { class: "field" }, "Run B", b), h("button", { class: "primary", type: "submit" }, "Compare"))),
    body));
  if (!q.get("a") || !q.get("b")) { body.replaceChildren(card(null, empty("Pick two runs here, or tick two runs on the runs page."))); return; }
  api("/api/compare?a=" + encodeURIComponent(q.get("a")) + "&b=" + encodeURIComponent(q.get("b"))).then(function (sides) {
    var keys = {};
    sides.forEach(function (s) { Object.keys(s.settings).forEach(function (k) { keys[k] = true; }); });
    var names = Object.keys(keys).sort();
    var differs = function (k) { return JSON.stringify(sides[0].settings[k]) !== JSON.stringify(sides[1].settings[k]); };
    body.replaceChildren(h("div", { class: "split", id: "compare" }, sides.map(function (s) {
      return h("div", null,
        h("section", { class: "card" }, h("div", { class: "row" }, link("/runs/" + encodeURIComponent(s.run_id), h("span", { class: "mono grow" }, s.run_id)), pill(s.status)),
          h("div", { class: "facts", style: null }, h("div", null, h("span", null, "Verdict"), h("b", null, s.verdict.checked ? (s.verdict.ok ? "verifies" : "does not verify") : "running")),
            h("div", null, h("span", null, "Took"), h("b", null, duration(s.duration_us))),
            h("div", null, h("span", null, "Tokens in / out"), h("b", null, s.tokens ? s.tokens.input + " / " + s.tokens.output : "—")),
            h("div", null, h("span", null, "Shown at"), h("b", null, s.level || "structure only")))),
        s.note ? h("div", { class: "note" }, s.note) : null,
        h("section", { class: "card" }, h("h2", null, "Answers"), s.answers.length ? s.answers.map(function (x) {
          return h("div", { class: "answer" }, h("span", { class: "who" }, "model call #" + x.seq), x.text);
        }) : empty("No answers shown at this level.")),
        h("section", { class: "card flush" }, h("h2", null, "Settings"), names.length ? h("table", { class: "kv" }, h("tbody", null, names.map(function (k) {
          var val = s.settings[k];
          return h("tr", { class: differs(k) ? "diff" : null }, h("td", null, k), h("td", { class: "mono" }, val === undefined ? "—" : typeof val === "object" ? JSON.stringify(val) : String(val)));
        }))) : empty("No settings shown at this level.")),
        h("section", { class: "card flush" }, h("h2", null, "Inputs"), s.inputs.length ? h("table", { class: "kv" }, h("tbody", null, s.inputs.map(function (i) {
          return h("tr", null, h("td", null, i.name === null ? "hidden" : String(i.name)), h("td", { class: "mono" }, (i.uri || "") + " " + short(i.sha256, 16)));
        }))) : empty("No inputs.")));
    })));
  }).catch(function (e) { body.replaceChildren(errorBox(e)); });
}

api("/api/info").then(function (i) { info = i; }).catch(function () {}).then(route);
`;
