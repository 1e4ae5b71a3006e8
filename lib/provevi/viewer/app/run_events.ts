/**
 * A run's events as a table: each event's seq, time, type, span and payload hash, and a line of its content at
 * the viewer's level; an event that went wrong in red. A row opens the event in the detail panel, with all its
 * content (and links to what the page cut). A run with more events than a page loads the rest on demand.
 * @module
 */
import type { EventItem } from "../../live/live.ts";
import { empty, h, table, tag } from "./dom.ts";
import { clock, short } from "./format.ts";
import { errorSeqs, type RunState } from "./run_state.ts";

function summary(item: EventItem): string {
  const keys = Object.keys(item.data);
  const bits = keys.slice(0, 3).map((k) => {
    const value = item.data[k];
    return k + "=" + (typeof value === "object" && value !== null ? "…" : String(value).slice(0, 40));
  });
  return (bits.join("  ") || "no data shown") + (keys.length > 3 ? "  +" + (keys.length - 3) : "");
}

/** The events table, with a button for the next page when the run has more. */
export function eventsTable(state: RunState): HTMLElement | HTMLElement[] {
  const v = state.view;
  if (!v.events.length) return empty("No events yet.");
  const wrong = errorSeqs(v);
  const rows = v.events.map((e) => {
    const cls = [
      "clickable",
      state.fresh.has(e.seq) ? "new" : "",
      wrong.has(e.seq) ? "err" : "",
      state.selected?.kind === "event" && state.selected.seq === e.seq ? "sel" : "",
    ].join(" ").trim();
    return h(
      "tr",
      {
        class: cls,
        "data-seq": e.seq,
        "data-type": e.type,
        onclick: () => state.select({ kind: "event", seq: e.seq }),
      },
      h("td", { class: "seq" }, e.seq),
      h("td", { class: "mono muted nowrap" }, clock(e.time)),
      h("td", null, tag(e.type)),
      h("td", { class: "hash nowrap", title: e.span_id ?? "" }, short(e.span_id, 8)),
      h("td", { class: "hash nowrap", title: e.payload_sha256 ?? "" }, short(e.payload_sha256, 10)),
      h(
        "td",
        { class: "content" },
        e.shown
          ? h("span", { class: "summary" }, summary(e.shown))
          : h("span", { class: "muted" }, "structure only"),
      ),
    );
  });
  const list = table(["#", "Time", "Type", "Span", "Payload", "Content"], rows);
  if (v.events_next === null) return list;
  return [
    list,
    h(
      "div",
      { class: "pager", id: "more-events" },
      h("span", null, `${v.events.length.toLocaleString()} of ${v.summary.events.toLocaleString()} events`),
      h("button", { onclick: () => state.moreEvents() }, "Load more events"),
    ),
  ];
}
