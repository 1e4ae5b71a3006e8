/**
 * A run's events as a table: each event's seq, time, type, span and payload hash, and its content at the
 * viewer's level, folded; where the page cut an event's data or payload, a link to the whole. A run with more
 * events than a page loads the rest on demand.
 * @module
 */
import type { EventItem } from "../../live/live.ts";
import type { ViewEvent } from "../run_view.ts";
import { runPath } from "./api.ts";
import { empty, h, table, tag } from "./dom.ts";
import { bytes, clock, pretty, short } from "./format.ts";
import { wholeLink } from "./nav.ts";
import type { RunState } from "./run_state.ts";

function contentOf(item: EventItem): Record<string, unknown> {
  const out: Record<string, unknown> = { data: item.data };
  if (item.component !== undefined) out.component = item.component;
  if (item.actor !== undefined) out.actor = item.actor;
  if (item.refs !== undefined) out.refs = item.refs;
  if (item.payload !== undefined) out.payload = item.payload;
  return out;
}

function summary(item: EventItem): string {
  const keys = Object.keys(item.data);
  const bits = keys.slice(0, 3).map((k) => {
    const value = item.data[k];
    return k + "=" + (typeof value === "object" && value !== null ? "…" : String(value).slice(0, 40));
  });
  return (bits.join("  ") || "no data shown") + (keys.length > 3 ? "  +" + (keys.length - 3) : "");
}

/** The links to what the page cut of an event. */
function cutLinks(state: RunState, e: ViewEvent): HTMLElement | null {
  const cut = e.cut;
  if (!cut || (!cut.data && !cut.payload)) return null;
  return h(
    "p",
    { class: "cut" },
    "Cut to fit the page: ",
    cut.data
      ? wholeLink(runPath(state.id, `/events/${e.seq}`, { untrusted: state.untrusted }), "the whole content")
      : null,
    cut.data && cut.payload ? " · " : null,
    cut.payload && e.payload_sha256
      ? wholeLink(
        runPath(state.id, `/payloads/${e.payload_sha256}`, { untrusted: state.untrusted }),
        `the whole payload (${bytes(cut.payload.size)})`,
      )
      : null,
  );
}

/** The events table, with a button for the next page when the run has more. */
export function eventsTable(state: RunState): HTMLElement | HTMLElement[] {
  const v = state.view;
  if (!v.events.length) return empty("No events yet.");
  const rows = v.events.map((e) => {
    const content = e.shown
      ? h(
        "details",
        null,
        h("summary", null, summary(e.shown)),
        h("pre", { class: "json" }, pretty(contentOf(e.shown))),
        cutLinks(state, e),
      )
      : h("span", { class: "muted" }, "structure only");
    return h(
      "tr",
      { class: state.fresh.has(e.seq) ? "new" : null, "data-seq": e.seq, "data-type": e.type },
      h("td", { class: "seq" }, e.seq),
      h("td", { class: "mono muted nowrap" }, clock(e.time)),
      h("td", null, tag(e.type)),
      h("td", { class: "hash nowrap", title: e.span_id ?? "" }, short(e.span_id, 8)),
      h("td", { class: "hash nowrap", title: e.payload_sha256 ?? "" }, short(e.payload_sha256, 10)),
      h("td", null, content),
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
