/**
 * A run's page: its verdict first, its facts, answers, trace and events, its inputs, outputs, grants and
 * assessments. The viewer sends one page of a large run; the rest of its events and spans load on demand. A
 * running run follows its live feed (each event as it is written, and at `bodies` the answer as it streams),
 * and is loaded again, checked, when it ends.
 * @module
 */
import type { RunView, ViewEvent } from "../run_view.ts";
import { api, runPath } from "./api.ts";
import { chatOf } from "./chat.ts";
import { card, empty, errorBox, h, pill, show, verdictBadge } from "./dom.ts";
import { href, onLeave } from "./nav.ts";
import { callsCard } from "./run_calls.ts";
import { detailPanel } from "./run_detail.ts";
import { eventsTable } from "./run_events.ts";
import { errors, facts, outcome, verdict } from "./run_header.ts";
import { RUN_PANELS } from "./run_panels.ts";
import { access, answers, assessments, inputs, outputs } from "./run_parts.ts";
import type { RunState, Selection } from "./run_state.ts";
import { timeline } from "./run_trace.ts";

/** Draws a run's page. */
export function runPage(id: string): void {
  const untrusted = new URLSearchParams(location.search).get("untrusted") === "1";
  let source: EventSource | null = null;
  let gone = false;
  onLeave(() => {
    gone = true;
    source?.close();
    source = null;
  });
  show(h("div", null, h("h1", { class: "mono" }, id), empty("Loading the run…")));
  let state: RunState | null = null;
  const load = async () => {
    try {
      const view = await api<RunView>(runPath(id, "", { untrusted }));
      if (gone) return;
      state = {
        id,
        untrusted,
        view,
        fresh: new Set(),
        live: state?.live ?? { boxes: [], open: null },
        selected: state?.selected ?? firstPick(view),
        fetched: new Map(),
        reload: () => void load(),
        moreEvents: () => void moreEvents(),
        moreSpans: () => void moreSpans(),
        select: (selection) => select(state!, selection),
      };
      draw(state);
      if (view.running && !source) {
        source = follow(state, (delay) => {
          source = null;
          setTimeout(load, delay);
        });
      }
    } catch (e) {
      show(h("div", null, h("h1", { class: "mono" }, id), errorBox(e)));
    }
  };
  const moreEvents = async () => {
    const s = state!;
    const page = await api<Pick<RunView, "events" | "events_next" | "summary">>(
      runPath(id, `/events?after=${s.view.events_next}`, { untrusted }),
    );
    const last = s.view.events.at(-1)?.seq ?? -1;
    s.view.events.push(...page.events.filter((e) => e.seq > last));
    s.view.events_next = page.events_next;
    s.view.summary = page.summary;
    draw(s);
  };
  const moreSpans = async () => {
    const s = state!;
    const page = await api<Pick<RunView, "spans" | "spans_next">>(
      runPath(id, `/spans?offset=${s.view.spans_next}`, { untrusted }),
    );
    s.view.spans.push(...page.spans);
    s.view.spans_next = page.spans_next;
    draw(s);
  };
  void load();
}

/** Follows a running run's live feed; `ended` is called when the feed ends, or fails, with when to reload. */
function follow(state: RunState, ended: (delay: number) => void): EventSource {
  const v = state.view;
  const source = new EventSource(href(runPath(state.id, `/live?after=${v.summary.last_seq ?? -1}`)));
  let pending: ReturnType<typeof setTimeout> | null = null;
  source.addEventListener("event", (m) => {
    const e = JSON.parse((m as MessageEvent).data) as ViewEvent;
    if (!counted(state, e)) return;
    if (state.live.open && (e.type === "model_called" || e.type === "step_failed")) {
      state.live.open.seq = e.seq;
      state.live.open = null;
    }
    if (!pending) pending = setTimeout(() => (pending = null, draw(state)), 120);
  });
  source.addEventListener("text", (m) => {
    const piece = (JSON.parse((m as MessageEvent).data) as { text: string }).text;
    if (!state.live.open) {
      state.live.open = { seq: null, text: "" };
      state.live.boxes.push(state.live.open);
    }
    state.live.open.text += piece;
    const el = document.getElementById("streaming");
    if (el?.lastChild) el.lastChild.textContent = state.live.open.text;
    else draw(state);
  });
  let done = false;
  const stop = (delay: number) => {
    if (done) return;
    done = true;
    source.close();
    ended(delay);
  };
  source.addEventListener("end", () => stop(150));
  source.onerror = () => stop(1000);
  return source;
}

/**
 * Counts an event that came live into the summary, and adds it to the loaded events when they reach the end
 * (else it is loaded with the next page). False when it was already known.
 */
function counted(state: RunState, e: ViewEvent): boolean {
  const v = state.view;
  const last = v.summary.last_seq ?? -1;
  if (e.seq <= last) return false;
  v.summary.events++;
  v.summary.last_seq = e.seq;
  v.summary.last_time = e.time;
  v.summary.first_time ??= e.time;
  v.summary.by_type[e.type] = (v.summary.by_type[e.type] ?? 0) + 1;
  if (v.events_next === null && (v.events.at(-1)?.seq ?? -1) === last) {
    v.events.push(e);
    state.fresh.add(e.seq);
  } else v.events_next ??= v.events.at(-1)?.seq ?? -1;
  return true;
}

/** What the panel shows first: the first thing that went wrong, else nothing. */
function firstPick(view: RunView): Selection | null {
  const wrong = view.errors[0];
  return wrong ? { kind: "event", seq: wrong.seq } : null;
}

/** Shows a selection in the detail panel and marks it where it is listed, without drawing the page again. */
function select(state: RunState, selection: Selection | null): void {
  state.selected = selection;
  const panel = document.getElementById("detail");
  panel?.replaceChildren(detailPanel(state));
  for (const el of document.querySelectorAll(".sel")) el.classList.remove("sel");
  if (selection?.kind === "event") {
    for (
      const el of document.querySelectorAll(
        `#events [data-seq="${selection.seq}"], #calls [data-seq="${selection.seq}"]`,
      )
    ) {
      el.classList.add("sel");
    }
  } else if (selection?.kind === "span") {
    document.querySelector(`.span[data-span="${CSS.escape(selection.id)}"]`)?.classList.add("sel");
  }
  if (panel && selection && panel.getBoundingClientRect().top > innerHeight) {
    panel.scrollIntoView({ block: "start", behavior: "smooth" });
  }
}

/** The run's whole conversation as a chat, at bodies. */
function conversation(state: RunState): HTMLElement | null {
  const seq = state.view.conversation_seq;
  if (seq === null || state.view.running) return null;
  return card("Conversation", chatOf(state.id, seq, { untrusted: state.untrusted, end: true }), {
    id: "conversation",
  });
}

function draw(state: RunState): void {
  const v = state.view;
  show(h(
    "div",
    null,
    h(
      "div",
      { class: "row title-row" },
      h("h1", { class: "mono grow" }, v.run_id),
      pill(v.status),
      verdictBadge(v.running ? "running" : v.verdict.kind),
    ),
    h("p", { class: "sub" }, v.folder ? h("span", { class: "mono" }, v.folder) : null),
    h("div", { class: "outcomes" }, outcome(state), verdict(v)),
    v.untrusted
      ? h(
        "div",
        { class: "untrusted", role: "alert" },
        "UNVERIFIED CONTENT: this run does not verify, so what follows may have been changed after the run. Do not rely on it.",
      )
      : null,
    v.note ? h("div", { class: "note", id: "level-note" }, v.note) : null,
    card(null, facts(v)),
    RUN_PANELS.map((panel) => panel(state)),
    errors(state),
    answers(state),
    h(
      "div",
      { class: "workbench" },
      h(
        "div",
        { class: "wb-main" },
        h("section", { class: "card flush", id: "timeline" }, h("h2", null, "Trace"), timeline(state)),
        callsCard(state),
        h("section", { class: "card flush", id: "events" }, h("h2", null, "Events"), eventsTable(state)),
      ),
      h("aside", { class: "wb-side", id: "detail", "aria-label": "details" }, detailPanel(state)),
    ),
    conversation(state),
    h(
      "div",
      { class: "split" },
      card("Inputs", inputs(v), { flush: true }),
      card("Outputs", outputs(v), { flush: true }),
    ),
    card("Grants and refusals", access(v), { flush: true }),
    card("Assessments", assessments(state), { flush: true }),
  ));
  state.fresh.clear();
}
