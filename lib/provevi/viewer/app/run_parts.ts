/**
 * The parts of a run page around its trace and events: the answers (streaming while the run runs), the inputs,
 * outputs, grants and refusals, and the assessments with the form that adds one.
 * @module
 */
import type { RunView } from "../run_view.ts";
import { api, runPath, state as app } from "./api.ts";
import { card, empty, h, type Kid, table, tag } from "./dom.ts";
import { bytes, short, when } from "./format.ts";
import { wholeLink } from "./nav.ts";
import type { RunState } from "./run_state.ts";

/** Each model call's answer on the loaded events, and the answers streaming now. */
export function answers(state: RunState): HTMLElement | null {
  const v = state.view;
  const list: Kid[] = v.events.filter((e) => e.answer !== undefined).map((e) =>
    h(
      "div",
      { class: "answer" },
      h("span", { class: "who" }, `Answer · ${e.type} #${e.seq}`),
      e.answer,
      e.cut?.answer
        ? h(
          "span",
          { class: "cut" },
          "The answer is cut to fit the page: ",
          wholeLink(
            runPath(state.id, `/events/${e.seq}/answer`, { untrusted: state.untrusted }),
            `the whole answer (${bytes(e.cut.answer.size)} reply)`,
          ),
        )
        : null,
    )
  );
  // What streamed comes from the live feed, which is no evidence (the run's program can write it): the recorded
  // answer, with its call's event, takes its place; until then, or when no event records one, it is marked so.
  for (const box of state.live.boxes) {
    if (box.seq !== null && v.events.some((e) => e.seq === box.seq && e.answer !== undefined)) continue;
    const streaming = box === state.live.open;
    list.push(h(
      "div",
      { class: "answer" + (streaming ? " streaming" : ""), id: streaming ? "streaming" : null },
      h(
        "span",
        { class: "who" },
        streaming ? "Streaming answer · not checked yet" : "Streamed · no recorded answer backs it",
      ),
      h("span", null, box.text),
    ));
  }
  return list.length ? card("Answers", list) : null;
}

/** The rows of a part the page cut to its first rows: how many more there are. */
function more(shown: number, total: number): HTMLElement | null {
  return total > shown
    ? h("div", { class: "pager" }, `${shown.toLocaleString()} of ${total.toLocaleString()} shown`)
    : null;
}

const hidden = () => h("span", { class: "muted" }, "hidden");

/** The inputs with their pins and hashes. */
export function inputs(v: RunView): Kid {
  if (!v.inputs.length) return empty("No inputs staged.");
  return [
    table(
      ["#", "Name", "Pinned URI", "SHA-256"],
      v.inputs.map((i) =>
        h(
          "tr",
          null,
          h("td", { class: "seq" }, i.seq),
          h("td", null, i.name === null ? hidden() : String(i.name)),
          h("td", { class: "mono" }, i.uri || hidden()),
          h("td", { class: "hash", title: String(i.sha256 ?? "") }, short(i.sha256, 16)),
        )
      ),
    ),
    more(v.inputs.length, v.summary.inputs),
  ];
}

/** The outputs. */
export function outputs(v: RunView): Kid {
  if (!v.outputs.length) return empty("No outputs recorded.");
  return [
    table(
      ["#", "Path", "Size", "SHA-256"],
      v.outputs.map((o) =>
        h(
          "tr",
          null,
          h("td", { class: "seq" }, o.seq),
          h("td", { class: "mono" }, o.path === null ? hidden() : String(o.path)),
          h("td", null, o.size === null ? "—" : o.size + " B"),
          h("td", { class: "hash", title: String(o.sha256 ?? "") }, short(o.sha256, 16)),
        )
      ),
    ),
    more(v.outputs.length, v.summary.outputs),
  ];
}

/** The grants and refusals. */
export function access(v: RunView): Kid {
  if (!v.access.length) return empty("No access was asked for.");
  return [
    table(
      ["#", "Decision", "URI", "Mode", "Reason"],
      v.access.map((a) =>
        h(
          "tr",
          null,
          h("td", { class: "seq" }, a.seq),
          h("td", null, tag("access_" + a.decision)),
          h("td", { class: "mono" }, a.uri || hidden()),
          h("td", null, a.mode === null ? "—" : String(a.mode)),
          h("td", null, a.reason === null ? "—" : String(a.reason)),
        )
      ),
    ),
    more(v.access.length, v.summary.access),
  ];
}

/** The assessments, and the form that adds one where the store keeps them. */
export function assessments(state: RunState): Kid {
  const v = state.view;
  if (v.assessments === null) {
    return empty(
      "This store keeps no assessments.",
    );
  }
  const rows = v.assessments.map((a) =>
    h(
      "tr",
      null,
      h("td", null, a.name === undefined ? hidden() : a.name),
      h("td", null, a.value === undefined ? hidden() : String(JSON.stringify(a.value))),
      h(
        "td",
        null,
        typeof a.seq === "number" ? "event #" + a.seq : a.span_id ? "span " + short(a.span_id, 16) : "run",
      ),
      h("td", null, a.source || "—"),
      h("td", null, a.rationale || "—"),
      h("td", { class: "muted" }, when(a.created_at)),
    )
  );
  const list = rows.length
    ? table(["Name", "Value", "Judges", "Source", "Rationale", "Added"], rows)
    : empty("No assessments yet.");
  if (!app.info?.assess) return [list, more(v.assessments.length, v.summary.assessments ?? 0)];
  const name = h("input", { name: "name", placeholder: "name, e.g. correct", required: true });
  const value = h("input", { name: "value", placeholder: "true, 0.8 or text", required: true });
  const why = h("input", { name: "rationale", placeholder: "rationale (optional)" });
  const said = h("span", { class: "muted" });
  const submit = async (e: Event) => {
    e.preventDefault();
    const raw = value.value.trim();
    const val = raw === "true"
      ? true
      : raw === "false"
      ? false
      : raw !== "" && !isNaN(Number(raw))
      ? Number(raw)
      : raw;
    try {
      await api(runPath(v.run_id, "/assessments"), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: name.value, value: val, rationale: why.value }),
      });
      state.reload();
    } catch (err) {
      said.textContent = (err as Error).message;
    }
  };
  const form = h(
    "form",
    { class: "filters", onsubmit: submit },
    h("label", { class: "field" }, "Name", name),
    h("label", { class: "field" }, "Value", value),
    h("label", { class: "field grow" }, "Rationale", why),
    h("button", { class: "primary", type: "submit" }, "Add assessment"),
    said,
  );
  return [list, more(v.assessments.length, v.summary.assessments ?? 0), h("div", { class: "pager" }, form)];
}
