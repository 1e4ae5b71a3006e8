/// <reference no-default-lib="true" />
/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/// <reference lib="esnext" />
/**
 * The viewer's script, served as `assets/app.js` (bundled by `deno task viewer:bundle` into
 * `../viewer_script.ts`): the pages, drawn in the browser from the viewer's JSON, with no framework and no
 * network beyond the viewer itself. Each page of `../viewer_paths.ts` has its drawing function here; the type
 * of {@linkcode PAGES_DRAWN} makes a page without one fail the check.
 * @module
 */
import { matchPath, type PagePath, PAGES, type PathParams, pathParts } from "../viewer_paths.ts";
import { agentsPage, experimentsPage } from "./agents_page.ts";
import { api, state, type ViewerInfo } from "./api.ts";
import { comparePage } from "./compare_page.ts";
import { empty, h, show } from "./dom.ts";
import { here, leave, link, setRouter } from "./nav.ts";
import { runPage } from "./run_page.ts";
import "./run_log.ts"; // the run page's log panel
import { runsPage } from "./runs_page.ts";
import { tracePage } from "./trace_page.ts";

/** How each page is drawn. */
const PAGES_DRAWN: Readonly<Record<PagePath, (params: PathParams) => void>> = {
  "": runsPage,
  "runs/:run": (params) => runPage(params.run!),
  "traces/:trace": (params) => tracePage(params.trace!),
  agents: agentsPage,
  experiments: experimentsPage,
  compare: comparePage,
};

function header(): void {
  const p = here();
  const on = (page: string) => (p === page || p.startsWith(page + "/") ? "on" : null);
  const info = state.info;
  const nav = h(
    "nav",
    null,
    link("", "Runs", { cls: p === "" || p.startsWith("runs") || p.startsWith("traces") ? "on" : null }),
    link("agents", "Agents", { cls: on("agents") }),
    link("experiments", "Experiments", { cls: on("experiments") }),
    link("compare", "Compare", { cls: on("compare") }),
  );
  const where = h(
    "div",
    { class: "where" },
    info
      ? h(
        "span",
        { class: "mono", title: info.runs_root },
        info.store === "file" ? "file store · " + info.runs_root : info.store,
      )
      : null,
    info
      ? h(
        "span",
        { class: "level", title: "the telemetry policy's live destination decides what the viewer shows" },
        info.live ? "shows: " + info.live.receives : "shows: structure only",
      )
      : null,
  );
  document.querySelector("header.top")!.replaceChildren(
    h("span", { class: "brand" }, h("span", { class: "mark" }, "M"), "MahaCata · prove ui"),
    nav,
    where,
  );
}

function route(): void {
  leave();
  header();
  const parts = pathParts(here());
  for (const page of PAGES) {
    const params = parts && matchPath(page, parts);
    if (params) return PAGES_DRAWN[page](params);
  }
  show(h("div", null, h("h1", null, "No such page"), empty("The viewer has no page at this address.")));
}

setRouter(route);
addEventListener("popstate", route);
api<ViewerInfo>("api/info").then((info) => (state.info = info), () => {}).then(route);
