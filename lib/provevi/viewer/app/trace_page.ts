/**
 * A trace's page: every span of the store's runs that carry the trace, nested by parent on one time axis, each
 * with its run (a link to the run's page) and its events; the span the address names (`?span=`) is marked. A
 * large trace comes a page at a time.
 * @module
 */
import type { TraceView, TraceViewSpan } from "../trace_view.ts";
import { api } from "./api.ts";
import { card, empty, errorBox, h, show } from "./dom.ts";
import { duration } from "./format.ts";
import { link } from "./nav.ts";

function bar(span: TraceViewSpan, total: number): HTMLElement {
  const kind = span.depth === 0 ? "root" : span.name.split(" ")[0];
  const el = h("div", {
    class: `bar k-${kind} ${span.status === "ok" ? "" : span.status === "open" ? "running" : "error"}`,
  });
  if (span.start_us === null) return h("span", { class: "muted" }, "no timing");
  const end = span.end_us ?? total;
  el.style.left = (span.start_us / total) * 100 + "%";
  el.style.width = Math.max(((end - span.start_us) / total) * 100, 0.3) + "%";
  return el;
}

function rows(spans: readonly TraceViewSpan[], marked: string | null, many: boolean): HTMLElement[] {
  const total = Math.max(1, ...spans.map((s) => s.end_us ?? s.start_us ?? 0));
  return spans.map((s) =>
    h(
      "div",
      {
        class: "span" + (s.span_id === marked ? " marked" : ""),
        "data-span": s.span_id,
        title: `${s.name} · span ${s.span_id} · run ${s.run_id} · events ${
          s.seqs.join(", ") || "none"
        } · from the ${s.source === "index" ? "span index" : "events"}`,
      },
      h(
        "div",
        { class: "name" },
        h("span", { class: "tw" }, "\u00a0\u00a0".repeat(s.depth) + (s.depth ? "└ " : "")),
        link("runs/" + encodeURIComponent(s.run_id), s.name),
        many ? h("span", { class: "muted mono" }, " · " + s.run_id) : null,
      ),
      h("div", { class: "track" }, bar(s, total)),
      h(
        "div",
        { class: "dur" },
        s.start_us === null ? "—" : s.end_us === null ? "open" : duration(s.end_us - s.start_us),
      ),
    )
  );
}

/** Draws a trace's page. */
export function tracePage(traceId: string): void {
  const marked = new URLSearchParams(location.search).get("span");
  const title = h("h1", { class: "mono" }, "Trace " + traceId);
  show(h("div", null, title, empty("Loading the trace…")));
  const spans: TraceViewSpan[] = [];
  const load = async (offset: number) => {
    try {
      const view = await api<TraceView>(`api/traces/${traceId}${offset ? `?offset=${offset}` : ""}`);
      spans.push(...view.spans);
      const many = view.runs.length > 1;
      const more = view.next !== null
        ? h(
          "div",
          { class: "pager" },
          h("span", null, `${spans.length.toLocaleString()} of ${view.total.toLocaleString()} spans`),
          h("button", { onclick: () => void load(view.next!) }, "Show more spans"),
        )
        : null;
      show(h(
        "div",
        null,
        title,
        h(
          "p",
          { class: "sub" },
          `${view.total.toLocaleString()} span${view.total === 1 ? "" : "s"} in `,
          ...view.runs.flatMap((r, i) => [
            i ? ", " : "",
            link("runs/" + encodeURIComponent(r), h("span", { class: "mono" }, r)),
          ]),
        ),
        card("Spans", [h("div", { class: "timeline" }, rows(spans, marked, many)), more], { flush: true }),
      ));
      document.querySelector(".span.marked")?.scrollIntoView({ block: "center" });
    } catch (e) {
      show(h("div", null, title, errorBox(e)));
    }
  };
  void load(0);
}
