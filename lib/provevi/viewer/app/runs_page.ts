/**
 * The runs page: every run in the store, newest first, filtered by status, agent, experiment and start, a
 * page at a time; tick two to compare them. It refreshes every two seconds while it shows the newest runs.
 * @module
 */
import type { RunList, RunRow } from "../../runs/list_runs.ts";
import { api } from "./api.ts";
import { card, empty, errorBox, h, pill, show, table } from "./dom.ts";
import { duration, when } from "./format.ts";
import { go, link, onLeave } from "./nav.ts";

const STATUSES = ["", "completed", "failed", "cancelled", "running", "cut"];

/** The runs ticked to compare, and the button that compares them. */
interface Picks {
  ids: string[];
  button: HTMLButtonElement;
}

/** The filters, as a form that goes to the runs page they ask for. */
function filters(q: URLSearchParams, picks: Picks): HTMLFormElement {
  const status = h(
    "select",
    { name: "status" },
    STATUSES.map((s) => h("option", { value: s, selected: q.get("status") === s }, s || "any")),
  );
  const agent = h("input", {
    name: "agent",
    placeholder: "org/domain/env/name or name",
    value: q.get("agent") ?? "",
  });
  const experiment = h("input", {
    name: "experiment",
    placeholder: "experiment://…",
    value: q.get("experiment") ?? "",
  });
  const since = h("input", { name: "since", type: "date", value: q.get("since") ?? "" });
  const submit = (e: Event) => {
    e.preventDefault();
    const next = new URLSearchParams();
    for (const f of [status, agent, experiment, since]) if (f.value) next.set(f.name, f.value);
    go(String(next) ? "?" + next : "");
  };
  return h(
    "form",
    { class: "filters", onsubmit: submit },
    h("label", { class: "field" }, "Status", status),
    h("label", { class: "field" }, "Agent", agent),
    h("label", { class: "field" }, "Experiment", experiment),
    h("label", { class: "field" }, "Started since", since),
    h("button", { class: "primary", type: "submit" }, "Filter"),
    h("span", { class: "grow" }),
    picks.button,
  );
}

/** One run's row, with its box to tick. */
function row(r: RunRow, picks: Picks): HTMLTableRowElement {
  const box = h("input", {
    type: "checkbox",
    "aria-label": "pick " + r.run_id,
    onchange: (e: Event) => {
      if ((e.target as HTMLInputElement).checked) picks.ids.push(r.run_id);
      else picks.ids = picks.ids.filter((x) => x !== r.run_id);
      picks.button.disabled = picks.ids.length !== 2;
    },
  });
  box.checked = picks.ids.includes(r.run_id);
  box.style.minWidth = "0";
  return h(
    "tr",
    { "data-run": r.run_id },
    h("td", null, box),
    h(
      "td",
      { class: "nowrap" },
      link("runs/" + encodeURIComponent(r.run_id), h("span", { class: "mono" }, r.run_id)),
    ),
    h("td", null, pill(r.status)),
    h("td", null, r.agent || "—"),
    h("td", { class: "mono" }, r.model || "—"),
    h("td", { class: "num" }, r.tokens === null ? "—" : r.tokens.toLocaleString()),
    h("td", { class: "num" }, r.cost ?? "—"),
    h("td", { class: "mono" }, r.experiment || "—"),
    h(
      "td",
      { class: "muted nowrap", title: r.started_at ?? "" },
      r.started_at ? when(r.started_at).slice(5) : "—",
    ),
    h("td", { class: "muted num" }, r.duration_ms === null ? "—" : duration(r.duration_ms * 1000)),
  );
}

/** Draws the runs page. */
export function runsPage(): void {
  const q = new URLSearchParams(location.search);
  const limit = Number(q.get("limit") || 50);
  let offset = Number(q.get("offset") || 0);
  const picks: Picks = {
    ids: [],
    button: h("button", {
      type: "button",
      disabled: true,
      onclick: () =>
        go(`compare?a=${encodeURIComponent(picks.ids[0]!)}&b=${encodeURIComponent(picks.ids[1]!)}`),
    }, "Compare two runs"),
  };
  const body = h("div", null, empty("Loading the runs…"));
  show(h(
    "div",
    null,
    h("h1", null, "Runs"),
    h(
      "p",
      { class: "sub" },
      "Every run in the store, newest first. Open one to see its trace, its evidence and its verdict.",
    ),
    card(null, filters(q, picks)),
    h("section", { class: "card flush", id: "runs" }, body),
  ));
  const load = async () => {
    const params = new URLSearchParams(q);
    params.set("limit", String(limit));
    params.set("offset", String(offset));
    try {
      const page = await api<RunList & { offset: number }>("api/runs?" + params);
      if (!page.runs.length) {
        body.replaceChildren(empty(page.total ? "No runs on this page." : "No runs match."));
        return;
      }
      const last = Math.min(page.offset + page.runs.length, page.total);
      const turn = (to: number) => () => (offset = Math.max(0, to), load());
      const pager = h(
        "div",
        { class: "pager" },
        h(
          "span",
          null,
          `${
            (page.offset + 1).toLocaleString()
          }–${last.toLocaleString()} of ${page.total.toLocaleString()} runs`,
        ),
        h(
          "span",
          { class: "row" },
          h("button", { disabled: page.offset === 0, onclick: turn(offset - limit) }, "← Newer"),
          h("button", { disabled: last >= page.total, onclick: turn(offset + limit) }, "Older →"),
        ),
      );
      const head = ["", "Run", "Status", "Agent", "Model", "Tokens", "Cost", "Experiment", "Started", "Took"];
      body.replaceChildren(table(head, page.runs.map((r) => row(r, picks))), pager);
    } catch (e) {
      body.replaceChildren(errorBox(e));
    }
  };
  load();
  const timer = setInterval(() => {
    if (offset === 0 && !document.hidden) load();
  }, 2000);
  onLeave(() => clearInterval(timer));
}
