/**
 * The detail panel beside a run's trace: the span or event picked, with its timings, its attributes (its data
 * at the level), its payload (cut, with a link to the whole), its hashes and its line in the chain; a model
 * call's conversation as a chat, with its tokens and cost. An event that is not on the loaded pages is fetched
 * alone.
 * @module
 */
import type { RunView, ViewEvent, ViewSpan } from "../run_view.ts";
import { api, runPath } from "./api.ts";
import { chatOf } from "./chat.ts";
import { empty, errorBox, h, hiddenMark, type Kid, tag } from "./dom.ts";
import { bytes, duration, micros, money, pretty, short, tokens } from "./format.ts";
import { link, wholeLink } from "./nav.ts";
import { errorSeqs, type RunState } from "./run_state.ts";

function kv(rows: [string, Kid][]): HTMLElement {
  return h(
    "table",
    { class: "kv" },
    h("tbody", null, rows.map(([k, v]) => h("tr", null, h("td", null, k), h("td", null, v)))),
  );
}

function section(title: string, ...kids: Kid[]): HTMLElement {
  return h("div", { class: "dsec" }, h("h3", null, title), kids);
}

function hash(value: string | null): Kid {
  return value ? h("span", { class: "hash", title: value }, short(value, 20) + "…") : "—";
}

/** The value of a data key, as a line of text or folded JSON. */
function value(v: unknown): Kid {
  if (v === null || typeof v !== "object") return h("span", { class: "mono" }, String(v));
  return h("pre", { class: "json small" }, pretty(v));
}

function callFacts(state: RunState, e: ViewEvent): HTMLElement | null {
  const call = state.view.calls.find((c) => c.seq === e.seq);
  if (!call) return null;
  const rows: [string, Kid][] = [["Status", h("span", { class: "st-" + call.status }, call.status)]];
  if (call.kind === "model") {
    rows.push([
      "Tokens in / out",
      call.input_tokens === null
        ? (state.view.level === "usage" || state.view.level === "bodies"
          ? "—"
          : hiddenMark("token counts need usage"))
        : `${tokens(call.input_tokens)} / ${tokens(call.output_tokens ?? 0)}`,
    ]);
    rows.push(["Cost", call.cost === null ? "—" : money(call.cost)]);
  }
  if (call.error) rows.push(["Error", h("code", { class: "reason" }, call.error)]);
  if (call.duration_us !== null) rows.push(["Took", duration(call.duration_us)]);
  return section(call.kind === "model" ? "Model call" : "Tool call", kv(rows));
}

function payloadSection(state: RunState, e: ViewEvent): HTMLElement | null {
  if (!e.payload_sha256) return null;
  const link = wholeLink(
    runPath(state.id, `/payloads/${e.payload_sha256}`, { untrusted: state.untrusted }),
    e.cut?.payload ? `the whole payload (${bytes(e.cut.payload.size)})` : "the payload as text",
  );
  return section(
    "Payload",
    kv([["SHA-256", hash(e.payload_sha256)]]),
    e.shown?.payload !== undefined
      ? h(
        "pre",
        { class: "json" },
        typeof e.shown.payload === "string" ? e.shown.payload : pretty(e.shown.payload),
      )
      : h("div", { class: "muted small" }, "Its content shows at bodies."),
    state.view.level === "bodies" ? h("div", { class: "small" }, link) : null,
  );
}

/** The detail of one event. */
export function eventDetail(state: RunState, e: ViewEvent): HTMLElement {
  const wrong = errorSeqs(state.view).get(e.seq);
  const data = e.shown?.data;
  const took = e.started_at ? duration(micros(e.time) - micros(e.started_at)) : null;
  const spanLink = (id: string | null) =>
    id
      ? h("a", {
        href: "#",
        class: "hash",
        title: id,
        onclick: (ev: Event) => (ev.preventDefault(), state.select({ kind: "span", id })),
      }, short(id, 16))
      : "—";
  const isChat = state.view.level === "bodies" &&
    (e.type === "model_called" || e.type === "trace_imported" ||
      (e.type === "step_failed" && data?.step === "model_called"));
  return h(
    "div",
    { class: "detail", "data-detail-seq": e.seq },
    h(
      "div",
      { class: "dhead" },
      tag(e.type),
      h("b", null, ` #${e.seq}`),
      wrong ? h("span", { class: "tag t-err" }, wrong.replace("_", " ")) : null,
    ),
    callFacts(state, e),
    isChat
      ? section(
        e.type === "trace_imported" ? "Conversation" : "Messages",
        chatOf(state.id, e.seq, { untrusted: state.untrusted }),
      )
      : null,
    e.answer !== undefined ? section("Answer", h("div", { class: "answer" }, e.answer)) : null,
    section(
      "Attributes",
      data === undefined
        ? h("div", { class: "muted small" }, "Only its structure shows at this level.")
        : Object.keys(data).length
        ? kv(Object.entries(data).map(([k, v]) => [k, value(v)]))
        : h("div", { class: "muted small" }, "No data shows at this level."),
    ),
    payloadSection(state, e),
    section(
      "Timing",
      kv([
        ["Time", h("span", { class: "mono" }, e.time)],
        ["Started", e.started_at ? h("span", { class: "mono" }, e.started_at) : "—"],
        ["Took", took ?? "—"],
      ]),
    ),
    section(
      "In the chain",
      kv([
        ["Line", `${e.line} of events.jsonl`],
        ["This line", hash(e.line_sha256)],
        ["prev", hash(e.prev)],
        ["Confidence", e.confidence],
      ]),
    ),
    section(
      "Span",
      kv([["Span", spanLink(e.span_id)], ["Parent", spanLink(e.parent_span_id)], [
        "Trace",
        hash(e.trace_id),
      ]]),
    ),
  );
}

/** The detail of one span: its timings and its events; its last event's detail below. */
function spanDetail(state: RunState, s: ViewSpan): HTMLElement {
  const main = s.seqs.at(-1);
  return h(
    "div",
    { class: "detail", "data-detail-span": s.span_id },
    h("div", { class: "dhead" }, h("span", { class: "tag t-span" }, "span"), h("b", null, " " + s.name)),
    section(
      "Span",
      kv([
        ["Status", h("span", { class: "st-" + s.status }, s.status)],
        ["Starts at", duration(s.start_us)],
        ["Took", duration(s.end_us - s.start_us)],
        ["Span ID", hash(s.span_id)],
        ["Parent", hash(s.parent_span_id)],
        // The trace whole: every run that carries it (the spans an agent program sent into another's too).
        [
          "Trace",
          s.trace_id
            ? link(
              `traces/${s.trace_id}?span=${encodeURIComponent(s.span_id)}`,
              short(s.trace_id, 20) + "…",
              {
                cls: "to-trace",
              },
            )
            : "—",
        ],
        [
          "Events",
          h(
            "span",
            null,
            s.seqs.map((seq) =>
              h("a", {
                href: "#",
                class: "seqlink",
                onclick: (ev: Event) => (ev.preventDefault(), state.select({ kind: "event", seq })),
              }, `#${seq}`)
            ),
            s.event_count > s.seqs.length ? ` and ${s.event_count - s.seqs.length} more` : null,
          ),
        ],
      ]),
    ),
    main === undefined ? null : eventPanel(state, main),
  );
}

/** An event's detail, fetched alone when it is not on the loaded pages. */
function eventPanel(state: RunState, seq: number): HTMLElement {
  const known = state.view.events.find((e) => e.seq === seq) ?? state.fetched.get(seq);
  if (known) return eventDetail(state, known);
  const el = h("div", null, empty(`Loading event #${seq}…`));
  api<Pick<RunView, "events">>(runPath(state.id, `/events?after=${seq - 1}&limit=1`, state)).then(
    (page) => {
      const e = page.events[0];
      if (!e) return el.replaceChildren(empty(`The run has no event #${seq}.`));
      state.fetched.set(seq, e);
      el.replaceChildren(eventDetail(state, e));
    },
    (err) => el.replaceChildren(errorBox(err)),
  );
  return el;
}

/** The panel's content for the current selection. */
export function detailPanel(state: RunState): HTMLElement {
  const sel = state.selected;
  const close = h("button", { class: "close", title: "close", onclick: () => state.select(null) }, "×");
  let body: Kid;
  if (sel === null) {
    body = empty(
      "Pick a span of the trace, a call or an event to see its attributes, timings, payload and hashes here.",
    );
  } else if (sel.kind === "span") {
    const span = state.view.spans.find((s) => s.span_id === sel.id);
    body = span ? spanDetail(state, span) : empty("This span is not on the loaded pages of the trace.");
  } else body = eventPanel(state, sel.seq);
  return h("div", { class: "panel-in" }, sel ? close : null, body);
}
