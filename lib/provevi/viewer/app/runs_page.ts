/**
 * The runs page: every run in the store, newest first, with its status, its verdict (verified, does not
 * verify, cannot be checked here), its agent, model, steps, errors, tokens and cost; searched by free text
 * (what the level shows: names, and at `bodies` prompts, answers and tool arguments) and filtered by status,
 * verdict, agent, model, tool, experiment, cost and time, a page at a time; tick two to compare them. A column
 * the level hides says "hidden", never "—". It refreshes every two seconds while it shows the newest runs.
 * @module
 */
import type { RunRow } from "../../runs/list_runs.ts";
import type { ListDigest } from "../runs_api.ts";
import type { RunsAnswer } from "../run_search.ts";
import { api } from "./api.ts";
import { card, empty, errorBox, h, hiddenMark, type Kid, pill, show, table, verdictBadge } from "./dom.ts";
import { duration, money, tokens, when } from "./format.ts";
import { go, link, onLeave } from "./nav.ts";

const STATUSES = ["", "completed", "failed", "cancelled", "running", "cut"];
const VERDICTS: [string, string][] = [
  ["", "any"],
  ["verified", "verified"],
  ["does_not_verify", "does not verify"],
  ["cannot_check", "cannot check here"],
];

/** The digests the page has, by run, and when each was asked: kept across refreshes, asked again when old. */
const digests = new Map<string, ListDigest>();
const asked = new Map<string, number>();

/** A digest is asked again after this long, in milliseconds (the server keeps one while its run is unchanged). */
const DIGEST_AGE_MS = 30_000;

/** The runs ticked to compare, and the button that compares them. */
interface Picks {
  ids: string[];
  button: HTMLButtonElement;
}

function field(label: string, el: HTMLElement, cls = "field"): HTMLElement {
  return h("label", { class: cls }, label, el);
}

/** The search and the filters, as a form that goes to the runs page they ask for. */
function filters(q: URLSearchParams, picks: Picks): HTMLFormElement {
  const select = (name: string, options: [string, string][]) =>
    h(
      "select",
      { name },
      options.map(([v, t]) => h("option", { value: v, selected: (q.get(name) ?? "") === v }, t)),
    );
  const input = (name: string, placeholder: string, type = "text") =>
    h("input", { name, placeholder, type, value: q.get(name) ?? "" });
  const fields = [
    input("q", "whole words of prompts, answers, tool arguments, names", "search"),
    select("status", STATUSES.map((s) => [s, s || "any"])),
    select("verdict", VERDICTS),
    input("agent", "name or org/domain/env/name"),
    input("model", "model"),
    input("tool", "tool"),
    input("experiment", "experiment://…"),
    input("since", "", "date"),
    input("until", "", "date"),
    input("min_cost", "0.01", "number"),
  ];
  fields[0]!.classList.add("search");
  (fields.at(-1) as HTMLInputElement).step = "any";
  const submit = (e: Event) => {
    e.preventDefault();
    const next = new URLSearchParams();
    for (const f of fields as (HTMLInputElement | HTMLSelectElement)[]) {
      if (f.value) next.set(f.name, f.value);
    }
    go(String(next) ? "?" + next : "");
  };
  const [search, status, verdict, agent, model, tool, experiment, since, until, cost] =
    fields as HTMLElement[];
  return h(
    "form",
    { class: "filters", onsubmit: submit, id: "search" },
    field("Search", search!, "field grow"),
    field("Status", status!),
    field("Verdict", verdict!),
    field("Agent", agent!),
    field("Model", model!),
    field("Tool", tool!),
    field("Experiment", experiment!),
    field("Started since", since!),
    field("until", until!),
    field("Cost at least", cost!),
    h("button", { class: "primary", type: "submit" }, "Search"),
    h("button", { type: "button", onclick: () => go("") }, "Clear"),
    h("span", { class: "grow" }),
    picks.button,
  );
}

function digestOf(id: string): Exclude<ListDigest, { error: string }> | null {
  const d = digests.get(id);
  return d && !("error" in d) ? d : null;
}

function verdictCell(id: string): Kid {
  const d = digests.get(id);
  if (!d) return verdictBadge("pending");
  if ("error" in d) return h("span", { class: "muted", title: d.error }, "cannot read");
  return verdictBadge(
    d.verdict,
    d.problems ? `${d.problems} problem${d.problems === 1 ? "" : "s"}` : undefined,
  );
}

function stepsCell(id: string): Kid {
  const d = digestOf(id);
  if (!d) return h("span", { class: "muted" }, "…");
  return [
    h("span", { class: "nowrap" }, `${d.model_calls} · ${d.tool_calls}`),
    d.errors
      ? h(
        "span",
        { class: "errchip", title: "failed steps, tool errors, refusals, telemetry problems" },
        `${d.errors} ✕`,
      )
      : null,
  ];
}

/** One run's row, with its box to tick. */
function row(
  r: RunRow & { cost?: string | null },
  picks: Picks,
  hidden: readonly string[],
): HTMLTableRowElement {
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
  const d = digestOf(r.run_id);
  const or = (value: string | null | undefined, key: string) =>
    value
      ? value
      : hidden.includes(key)
      ? hiddenMark("hidden at this level: see the policy's live destination")
      : "—";
  const tok = d?.tokens ? d.tokens.input + d.tokens.output : r.tokens;
  const cost = r.cost ?? d?.cost?.amount ?? null;
  const cls = [
    r.status === "failed" ? "failed" : "",
    d?.verdict === "does_not_verify" ? "tampered" : "",
  ].join(" ").trim();
  return h(
    "tr",
    { "data-run": r.run_id, class: cls || null },
    h("td", null, box),
    h(
      "td",
      { class: "nowrap" },
      link("runs/" + encodeURIComponent(r.run_id), h("span", { class: "mono" }, r.run_id)),
    ),
    h("td", null, pill(r.status)),
    h("td", { class: "verdict-cell" }, verdictCell(r.run_id)),
    h(
      "td",
      { class: "agent" },
      h(
        "div",
        { class: "clip", title: r.agent ?? "" },
        r.agent
          ? [
            h("b", null, r.agent.split("/").at(-1)),
            " ",
            h("span", { class: "muted small" }, r.agent.split("/").slice(0, -1).join("/")),
          ]
          : or(null, "agent"),
      ),
      r.experiment ? h("div", { class: "clip muted small", title: r.experiment }, r.experiment) : null,
    ),
    h("td", { class: "mono clip model", title: r.model ?? "" }, or(r.model, "model")),
    h("td", { class: "num" }, stepsCell(r.run_id)),
    h("td", { class: "num" }, tok === null ? or(null, "tokens") : tokens(tok)),
    h("td", { class: "num" }, cost ? money(cost, d?.cost?.currency ?? null) : or(null, "tokens")),
    h(
      "td",
      { class: "muted nowrap", title: r.started_at ?? "" },
      r.started_at ? when(r.started_at).slice(5, 16) : "—",
    ),
    h("td", { class: "muted num" }, r.duration_ms === null ? "—" : duration(r.duration_ms * 1000)),
  );
}

/** Asks for the digests of the runs shown, a few at a time, and draws each row again as they come. */
async function fillDigests(rows: readonly RunRow[], redraw: () => void): Promise<void> {
  const now = Date.now();
  const wanted = rows.filter((r) =>
    !digests.has(r.run_id) || r.status === "running" || digestOf(r.run_id)?.verdict === "running" ||
    now - (asked.get(r.run_id) ?? 0) > DIGEST_AGE_MS
  ).map((r) => r.run_id);
  for (const id of wanted) asked.set(id, now);
  for (let i = 0; i < wanted.length; i += 10) {
    const chunk = wanted.slice(i, i + 10);
    try {
      const got = await api<ListDigest[]>(
        "api/digests?" + chunk.map((id) => "run=" + encodeURIComponent(id)).join("&"),
      );
      for (const d of got) digests.set(d.run_id, d);
    } catch { /* the rows keep "checking…"; the next refresh asks again */ }
    redraw();
  }
}

function searchNote(page: RunsAnswer): HTMLElement | null {
  const s = page.search;
  if (!s) return null;
  const where = s.indexed < s.total
    ? `Searched the ${s.indexed.toLocaleString("en-US")} newest of ${
      s.total.toLocaleString("en-US")
    } runs; the rest are being indexed.`
    : `Searched all ${s.total.toLocaleString("en-US")} runs.`;
  return h("div", { class: "note search-note", id: "search-note" }, where, s.note ? " " + s.note : null);
}

/** The columns of the runs table. */
const HEAD = [
  "",
  "Run",
  "Status",
  "Verdict",
  "Agent",
  "Model",
  "Model · tool calls",
  "Tokens",
  "Cost",
  "Started",
  "Took",
];

/** The page around the table: its title, the filters, the search note and the table's section. */
function frame(form: HTMLFormElement, { note, body }: { note: HTMLElement; body: HTMLElement }): HTMLElement {
  return h(
    "div",
    null,
    h("h1", null, "Runs"),
    h(
      "p",
      { class: "sub" },
      "Every run in the store, newest first, with the verdict of its check. Open one to see its trace, its evidence and its messages.",
    ),
    card(null, form),
    note,
    h("section", { class: "card flush", id: "runs" }, body),
  );
}

/** Where a page of runs is among them all, with the buttons to the newer and the older page. */
function pager(
  page: RunsAnswer,
  { offset, limit, turn }: { offset: number; limit: number; turn: (to: number) => () => unknown },
): HTMLElement {
  const last = Math.min(page.offset + page.runs.length, page.total);
  return h(
    "div",
    { class: "pager" },
    h(
      "span",
      null,
      `${(page.offset + 1).toLocaleString()}–${last.toLocaleString()} of ${page.total.toLocaleString()}${
        page.capped ? "+" : ""
      } runs`,
    ),
    h(
      "span",
      { class: "row" },
      h("button", { disabled: page.offset === 0, onclick: turn(offset - limit) }, "← Newer"),
      h(
        "button",
        { disabled: last >= page.total && !page.capped, onclick: turn(offset + limit) },
        "Older →",
      ),
    ),
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
  const note = h("div");
  show(frame(filters(q, picks), { note, body }));
  let loads = 0;
  const load = async () => {
    const params = new URLSearchParams(q);
    params.set("limit", String(limit));
    params.set("offset", String(offset));
    const mine = ++loads;
    try {
      const page = await api<RunsAnswer>("api/runs?" + params);
      if (mine !== loads) return;
      note.replaceChildren(searchNote(page) ?? "");
      if (!page.runs.length) {
        body.replaceChildren(empty(page.total ? "No runs on this page." : "No runs match."));
        return;
      }
      const turn = (to: number) => () => (offset = Math.max(0, to), load());
      const pages = pager(page, { offset, limit, turn });
      const draw = () => {
        if (mine === loads) {
          body.replaceChildren(table(HEAD, page.runs.map((r) => row(r, picks, page.hidden))), pages);
        }
      };
      for (const r of page.runs) {
        if (r.digest) {
          digests.set(r.run_id, { run_id: r.run_id, ...r.digest });
          asked.set(r.run_id, Date.now());
        }
      }
      draw();
      void fillDigests(page.runs, draw);
    } catch (e) {
      body.replaceChildren(errorBox(e));
    }
  };
  void load();
  const timer = setInterval(() => {
    if (offset === 0 && !document.hidden) void load();
  }, 2000);
  onLeave(() => clearInterval(timer));
}
