/**
 * The agents page and the experiments page: the agent classes found in the runs, each with its versions, and
 * the experiments that runs named, each with the versions that runs pinned. Both need an indexed store.
 * @module
 */
import type {
  AgentDetail,
  AgentSummary,
  ExperimentDetail,
  ExperimentSummary,
} from "../../store/store_questions.ts";
import type { RunTotals } from "../runs_api.ts";
import type { Assessment } from "../../store/assess.ts";
import { api, state } from "./api.ts";
import { empty, errorBox, h, hiddenMark, type Kid, show, table } from "./dom.ts";
import { money, short, tokens, when } from "./format.ts";
import { go, link } from "./nav.ts";

/** What `api/totals` answers. */
interface Totals {
  hidden: boolean;
  total?: number;
  read?: number;
  groups: RunTotals[];
}

/** The totals of a group's runs as cells: tokens and cost, hidden below usage. */
function totalCells(totals: Totals, key: string): Kid[] {
  const g = totals.groups.find((x) => x.key === key);
  const hide = () => hiddenMark("token counts and costs need usage");
  return [
    h("td", { class: "num" }, g && g.failed ? h("span", { class: "errchip" }, String(g.failed)) : "0"),
    h("td", { class: "num" }, totals.hidden ? hide() : g?.tokens == null ? "—" : tokens(g.tokens)),
    h("td", { class: "num" }, totals.hidden ? hide() : g?.cost == null ? "—" : money(g.cost)),
  ];
}

const runLink = (id: string) => link("runs/" + encodeURIComponent(id), h("span", { class: "mono" }, id));

/** A list, and the detail of the item picked (or of the only one). */
async function listPage<T>(options: {
  title: string;
  sub: string;
  path: string;
  none: string;
  rows: (list: T[], open: (item: T) => void) => HTMLElement;
  /** The item's detail; `reload` draws it again (after a change it made). */
  detail: (item: T, reload: () => void) => Promise<HTMLElement>;
}): Promise<void> {
  const body = h("div", null, empty(`Loading the ${options.title.toLowerCase()}…`));
  const detail = h("div");
  show(h(
    "div",
    null,
    h("h1", null, options.title),
    h("p", { class: "sub" }, options.sub),
    h("section", { class: "card flush" }, body),
    detail,
  ));
  const open = (item: T) => {
    options.detail(item, () => open(item)).then(
      (el) => detail.replaceChildren(el),
      (e) => detail.replaceChildren(errorBox(e)),
    );
  };
  try {
    const list = await api<T[]>(options.path);
    if (!list.length) return void body.replaceChildren(empty(options.none));
    body.replaceChildren(options.rows(list, open));
    if (list.length === 1) open(list[0]!);
  } catch (e) {
    body.replaceChildren(errorBox(e));
  }
}

/** Draws the agents page. */
export function agentsPage(): void {
  void listPage<AgentSummary>({
    title: "Agents",
    sub:
      "Agent classes, found in the runs: an agent's name in its org, domain and environment. A version is the SHA-256 of its spec without the prompt and inputs.",
    path: "api/agents",
    none: "No agent classes yet.",
    rows: (list, open) =>
      table(
        ["Agent class", "Versions", "Runs", "First run"],
        list.map((a) =>
          h(
            "tr",
            null,
            h(
              "td",
              null,
              h("a", { href: "#", onclick: (e: Event) => (e.preventDefault(), open(a)) }, a.agent),
            ),
            h("td", null, a.versions),
            h("td", null, link("?agent=" + encodeURIComponent(a.agent), String(a.runs))),
            h("td", null, runLink(a.first_run)),
          )
        ),
      ),
    detail: async (a) => {
      const [d, totals] = await Promise.all([
        api<AgentDetail>("api/agent?name=" + encodeURIComponent(a.agent)),
        api<Totals>("api/totals?agent=" + encodeURIComponent(a.agent)),
      ]);
      const picked: string[] = [];
      const compare = h("button", {
        type: "button",
        disabled: true,
        onclick: () => go(`compare?a=${encodeURIComponent(picked[0]!)}&b=${encodeURIComponent(picked[1]!)}`),
      }, "Compare two versions");
      const box = (run: string) =>
        h("input", {
          type: "checkbox",
          "aria-label": "pick the version of " + run,
          onchange: (e: Event) => {
            if ((e.target as HTMLInputElement).checked) picked.push(run);
            else picked.splice(picked.indexOf(run), 1);
            compare.disabled = picked.length !== 2;
          },
        });
      return h(
        "section",
        { class: "card flush", id: "versions" },
        h("div", { class: "row pad-h" }, h("h2", { class: "grow" }, d.agent + ": versions"), compare),
        table(
          ["", "Version", "Backend", "Model", "Tools", "Runs", "Failed", "Tokens", "Cost", "First run"],
          d.versions.map((v) =>
            h(
              "tr",
              { "data-version": v.version },
              h("td", null, box(v.first_run)),
              h("td", { class: "hash", title: v.version }, short(v.version, 16)),
              h("td", null, v.backend || "—"),
              h("td", { class: "mono" }, v.model || "—"),
              h("td", { class: "mono" }, v.tools ? JSON.stringify(v.tools) : "—"),
              h("td", { class: "num" }, v.runs.length),
              totalCells(totals, v.version),
              h("td", null, runLink(v.first_run)),
            )
          ),
        ),
        totals.read !== undefined && totals.total !== undefined && totals.read < totals.total
          ? h("div", { class: "pager" }, `Totals of the newest ${totals.read} of ${totals.total} runs.`)
          : null,
      );
    },
  });
}

/** Draws the experiments page. */
export function experimentsPage(): void {
  void listPage<ExperimentSummary>({
    title: "Experiments",
    sub: "The questions that runs named, each with the versions that runs pinned.",
    path: "api/experiments",
    none: "No run has named an experiment yet.",
    rows: (list, open) =>
      table(
        ["Experiment", "Versions", "Runs", "First run"],
        list.map((x) =>
          h(
            "tr",
            null,
            h(
              "td",
              { class: "mono" },
              h("a", { href: "#", onclick: (e: Event) => (e.preventDefault(), open(x)) }, x.experiment),
            ),
            h("td", null, x.versions),
            h("td", null, link("?experiment=" + encodeURIComponent(x.experiment), String(x.runs))),
            h("td", null, runLink(x.first_run)),
          )
        ),
      ),
    detail: async (x, reload) => {
      const [d, totals] = await Promise.all([
        api<ExperimentView>("api/experiment?uri=" + encodeURIComponent(x.experiment)),
        api<Totals>("api/totals?experiment=" + encodeURIComponent(x.experiment)),
      ]);
      const versions = h(
        "section",
        { class: "card flush", id: "versions" },
        h("h2", null, d.experiment + ": versions"),
        table(
          ["Pinned version", "SHA-256", "Runs", "Failed", "Tokens", "Cost", "First run"],
          d.versions.map((v) =>
            h(
              "tr",
              null,
              h("td", { class: "mono" }, v.pin),
              h("td", { class: "hash" }, short(v.sha256, 16)),
              h(
                "td",
                { class: "num" },
                link("?experiment=" + encodeURIComponent(v.pin), String(v.runs.length)),
              ),
              totalCells(totals, v.pin),
              h("td", null, runLink(v.first_run)),
            )
          ),
        ),
      );
      return h("div", null, versions, experimentAssessments(d, reload));
    },
  });
}

/** An experiment as the viewer sends it: its versions, and its assessments cut to the level. */
type ExperimentView = ExperimentDetail & { assessments: Partial<Assessment>[]; assessments_total: number };

/** The assessments of an experiment (of the whole, and of each version), and the form that adds one. */
function experimentAssessments(d: ExperimentView, reload: () => void): HTMLElement {
  const rows = d.assessments.map((a) =>
    h(
      "tr",
      { "data-assessment": String(a.id) },
      h("td", null, a.name ?? h("span", { class: "muted" }, "hidden")),
      h(
        "td",
        null,
        a.value === undefined ? h("span", { class: "muted" }, "hidden") : JSON.stringify(a.value),
      ),
      h(
        "td",
        { class: "mono" },
        a.experiment === d.experiment ? "the experiment" : String(a.experiment ?? ""),
      ),
      h("td", null, a.source || "—"),
      h("td", null, a.rationale || "—"),
      h("td", { class: "muted" }, when(a.created_at)),
    )
  );
  const list = rows.length
    ? table(["Name", "Value", "Judges", "Source", "Rationale", "Added"], rows)
    : empty("No assessments of this experiment yet.");
  return h(
    "section",
    { class: "card flush", id: "experiment-assessments" },
    h("h2", null, "Assessments"),
    list,
    state.info?.assess ? h("div", { class: "pager" }, assessmentForm(d, reload)) : null,
  );
}

/** The form that adds an assessment of the experiment, or of one of its versions. */
function assessmentForm(d: ExperimentView, reload: () => void): HTMLElement {
  const target = h(
    "select",
    { name: "target" },
    h("option", { value: d.experiment }, "the experiment"),
    ...d.versions.map((v) => h("option", { value: v.pin }, v.pin)),
  );
  const name = h("input", { name: "name", placeholder: "name, e.g. approved", required: true });
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
      await api("api/experiment/assessments", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          experiment: target.value,
          name: name.value,
          value: val,
          rationale: why.value,
        }),
      });
      reload();
    } catch (err) {
      said.textContent = (err as Error).message;
    }
  };
  const form = h(
    "form",
    { class: "filters", onsubmit: submit },
    h("label", { class: "field" }, "Judges", target),
    h("label", { class: "field" }, "Name", name),
    h("label", { class: "field" }, "Value", value),
    h("label", { class: "field grow" }, "Rationale", why),
    h("button", { class: "primary", type: "submit" }, "Add assessment"),
    said,
  );
  return form;
}
