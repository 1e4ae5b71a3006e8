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

/** Draws the runs page. */
export function runsPage(): void {
  const q = new URLSearchParams(location.search);
  const limit = Number(q.get("limit") || 50);
  let offset = Number(q.get("offset") || 0);
  let picked: string[] = [];
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
  const compare = h("button", {
    type: "button",
    disabled: true,
    onclick: () => go(`compare?a=${encodeURIComponent(picked[0]!)}&b=${encodeURIComponent(picked[1]!)}`),
  }, "Compare two runs");
  const form = h(
    "form",
    {
      class: "filters",
      onsubmit: (e: Event) => {
        e.preventDefault();
        const next = new URLSearchParams();
        for (const f of [status, agent, experiment, since]) if (f.value) next.set(f.name, f.value);
        go(String(next) ? "?" + next : "");
      },
    },
    h("label", { class: "field" }, "Status", status),
    h("label", { class: "field" }, "Agent", agent),
    h("label", { class: "field" }, "Experiment", experiment),
    h("label", { class: "field" }, "Started since", since),
    h("button", { class: "primary", type: "submit" }, "Filter"),
    h("span", { class: "grow" }),
    compare,
  );
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
    card(null, form),
    h("section", { class: "card flush", id: "runs" }, body),
  ));
  const row = (r: RunRow) => {
    const box = h("input", {
      type: "checkbox",
      "aria-label": "pick " + r.run_id,
      onchange: (e: Event) => {
        if ((e.target as HTMLInputElement).checked) picked.push(r.run_id);
        else picked = picked.filter((x) => x !== r.run_id);
        compare.disabled = picked.length !== 2;
      },
    });
    box.checked = picked.includes(r.run_id);
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
      h("td", { class: "mono" }, r.experiment || "—"),
      h(
        "td",
        { class: "muted nowrap", title: r.started_at ?? "" },
        r.started_at ? when(r.started_at).slice(5) : "—",
      ),
      h("td", { class: "muted num" }, r.duration_ms === null ? "—" : duration(r.duration_ms * 1000)),
    );
  };
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
          h("button", {
            disabled: page.offset === 0,
            onclick: () => (offset = Math.max(0, offset - limit), load()),
          }, "← Newer"),
          h("button", { disabled: last >= page.total, onclick: () => (offset += limit, load()) }, "Older →"),
        ),
      );
      body.replaceChildren(
        table(
          ["", "Run", "Status", "Agent", "Model", "Tokens", "Experiment", "Started", "Took"],
          page.runs.map(row),
        ),
        pager,
      );
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
