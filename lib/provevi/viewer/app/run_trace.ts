/**
 * A run's trace as a timeline: a bar per span, nested, on one time axis. An ended run's spans come from the
 * viewer a page at a time; a running run's are drawn here from its events so far, with the answer streaming.
 * @module
 */
import type { ViewSpan } from "../run_view.ts";
import { empty, h } from "./dom.ts";
import { duration, micros } from "./format.ts";
import type { RunState } from "./run_state.ts";

/** The spans of a running run, from the events loaded so far. */
function liveSpans(state: RunState): ViewSpan[] {
  const events = state.view.events;
  const t0 = micros(events[0]!.time);
  const now = Date.now() * 1000;
  const root = events[0]!.span_id ?? "root";
  const map = new Map<string, ViewSpan>();
  const base = { parent_span_id: null, seqs: [] as number[], event_count: 0 };
  map.set(root, {
    ...base,
    trace_id: events[0]!.trace_id,
    span_id: root,
    name: "run",
    start_us: 0,
    end_us: now - t0,
    depth: 0,
    status: "running",
  });
  for (const e of events) {
    const id = e.span_id ?? root;
    let span = map.get(id);
    if (!span) {
      const d = e.shown?.data ?? {};
      const label = typeof d.model === "string" ? d.model : typeof d.tool === "string" ? d.tool : "";
      const step = e.type === "model_called" ? "chat" : e.type === "tool_called" ? "execute_tool" : e.type;
      span = {
        ...base,
        seqs: [],
        trace_id: e.trace_id,
        span_id: id,
        name: (step + " " + label).trim(),
        start_us: micros(e.started_at ?? e.time) - t0,
        end_us: micros(e.time) - t0,
        depth: 1,
        status: e.type === "step_failed" ? "error" : "ok",
      };
      map.set(id, span);
    }
    span.seqs.push(e.seq);
    span.event_count++;
  }
  const spans = [...map.values()];
  if (state.live.open) {
    const last = micros(events.at(-1)!.time) - t0;
    spans.push({
      ...base,
      trace_id: null,
      span_id: "streaming",
      name: "chat (streaming)",
      start_us: last,
      end_us: now - t0,
      depth: 1,
      status: "running",
    });
  }
  return spans;
}

function bar(span: ViewSpan, total: number): HTMLElement {
  const first = span.name.split(" ")[0]!;
  const kind = span.depth === 0
    ? "root"
    : /llm_request|^chat/.test(first)
    ? "chat"
    : /tool/.test(first)
    ? "execute_tool"
    : first;
  const el = h("div", { class: `bar k-${kind} ${span.status !== "ok" ? span.status : ""}` });
  el.style.left = (span.start_us / total) * 100 + "%";
  el.style.width = Math.max(((span.end_us - span.start_us) / total) * 100, 0.3) + "%";
  return el;
}

/** The timeline of the run's spans, with a button for more when the run has more than a page of them. */
export function timeline(state: RunState): HTMLElement {
  const v = state.view;
  if (!v.events.length) return empty("No events.");
  const spans = v.running ? liveSpans(state) : v.spans;
  const total = Math.max(1, ...spans.map((s) => s.end_us));
  const rows = spans.map((s) =>
    h(
      "div",
      {
        class: "span clickable" + (s.status === "error" || s.status === "refused" ? " " + s.status : "") +
          (state.selected?.kind === "span" && state.selected.id === s.span_id ? " sel" : ""),
        "data-span": s.span_id,
        "data-status": s.status,
        onclick: () => state.select({ kind: "span", id: s.span_id }),
        title: `${s.name} · ${s.event_count} event${s.event_count === 1 ? "" : "s"}: ${s.seqs.join(", ")}${
          s.event_count > s.seqs.length ? ", …" : ""
        }`,
      },
      h(
        "div",
        { class: "name", title: s.name },
        h("span", { class: "tw" }, "\u00a0\u00a0".repeat(Math.min(s.depth, 12)) + (s.depth ? "└ " : "")),
        s.status === "error"
          ? h("span", { class: "st-error" }, "✕ ")
          : s.status === "refused"
          ? h("span", { class: "st-refused" }, "⊘ ")
          : null,
        s.name,
      ),
      h("div", { class: "track" }, bar(s, total)),
      h("div", { class: "dur" }, duration(s.end_us - s.start_us)),
    )
  );
  const more = !v.running && v.spans_next !== null
    ? h(
      "div",
      { class: "pager" },
      h("span", null, `${v.spans.length.toLocaleString()} of ${v.summary.spans.toLocaleString()} spans`),
      h("button", { onclick: () => state.moreSpans() }, "Show more spans"),
    )
    : null;
  return h("div", null, h("div", { class: "timeline" }, rows), more);
}
