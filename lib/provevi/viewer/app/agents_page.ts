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
import { api } from "./api.ts";
import { empty, errorBox, h, hiddenMark, type Kid, show, table } from "./dom.ts";
import { money, short, tokens } from "./format.ts";
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
  detail: (item: T) => Promise<HTMLElement>;
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
    options.detail(item).then((el) => detail.replaceChildren(el), (e) => detail.replaceChildren(errorBox(e)));
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
    detail: async (x) => {
      const [d, totals] = await Promise.all([
        api<ExperimentDetail>("api/experiment?uri=" + encodeURIComponent(x.experiment)),
        api<Totals>("api/totals?experiment=" + encodeURIComponent(x.experiment)),
      ]);
      return h(
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
    },
  });
}
