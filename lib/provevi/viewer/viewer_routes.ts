/**
 * The viewer's routes, as a table: each a method, a path pattern under the viewer's base (`api/runs/:run`) and
 * a handler. A `:run`, `:seq` or `:sha256` part is checked by its name, here, before any handler sees it, and a
 * query's numbers by {@linkcode wholeNumber}; so a new page adds a row and its handler, and nothing else. The
 * pages themselves (`viewer_paths.ts`) are the one HTML page.
 * @module
 */
import { checkRunIdToRead } from "../evidence/record.ts";
import { readBytesCapped } from "../guard/body_bytes.ts";
import { questionsOf } from "../store/store_questions.ts";
import { compareView } from "./compare_steps.ts";
import { liveStream } from "./live_stream.ts";
import { type RunModel, runModel, type RunModelOptions } from "./run_model.ts";
import { pageOf, type RunView, type RunViewOptions } from "./run_page.ts";
import type { ViewerInfo } from "./route_context.ts";
import { wholeAnswer, wholeEvent, wholePayload } from "./run_whole.ts";
import { runLogView } from "./run_log_view.ts";
import { eventChat } from "./run_chat.ts";
import { type Route, type RouteContext, wholeNumber } from "./route_context.ts";
import { runDigests, runsPage, runTotals } from "./runs_api.ts";
import { traceView } from "./trace_view.ts";
import { assessmentsAt } from "./assessments_view.ts";
import type { AssessOptions, AssessTarget } from "../store/assess.ts";
import { APP_CSS, APP_JS } from "./viewer_assets.ts";
import { json, text, ViewerRefusal } from "./viewer_http.ts";

export type { Route, RouteContext, ViewerInfo, ViewerOptions } from "./route_context.ts";
export { wholeNumber } from "./route_context.ts";

/** How each `:name` part of a path is checked; a part not listed here is refused by the table's test. */
export const PARAM_CHECKS: Readonly<Record<string, (value: string) => void>> = {
  run: (value) => checkRunIdToRead(value),
  seq: (value) => {
    if (!/^\d{1,9}$/.test(value)) {
      throw new ViewerRefusal(400, `"${value.slice(0, 40)}" is not an event's seq: give a whole number`);
    }
  },
  trace: (value) => {
    if (!/^[0-9a-f]{32}$/.test(value) || /^0+$/.test(value)) {
      throw new ViewerRefusal(400, `"${value.slice(0, 80)}" is not a trace ID: give 32 lowercase hex digits`);
    }
  },
  sha256: (value) => {
    if (!/^[0-9a-f]{64}$/.test(value)) {
      throw new ViewerRefusal(
        400,
        `"${value.slice(0, 80)}" is not a payload's SHA-256: give 64 lowercase hex digits`,
      );
    }
  },
};

function modelOptions(c: RouteContext): RunModelOptions {
  return {
    policy: c.options.policy,
    ...(c.options.catalog ? { catalog: c.options.catalog } : {}),
    untrusted: c.query.get("untrusted") === "1",
  };
}

/**
 * The run of the path as the viewer knows it: read and checked once for the requests that ask for it at once,
 * whichever page each wants (ten tabs opening a large run check it once).
 */
function modelOf(c: RouteContext): Promise<RunModel> {
  const options = modelOptions(c);
  return c.models.run(JSON.stringify([c.params.run, options.untrusted]), async () => {
    return await runModel(c.store, await c.store.readRun(c.params.run!), options);
  });
}

/** A page of the run, or some of its fields, as JSON. */
async function viewJson(
  c: RouteContext,
  page: Omit<RunViewOptions, keyof RunModelOptions> & { pick?: readonly (keyof RunView)[] },
): Promise<Response> {
  const view = await pageOf(c.store, await modelOf(c), page);
  return json(page.pick ? Object.fromEntries(page.pick.map((k) => [k, view[k]])) : view);
}

/** The API. */
export const API_ROUTES: readonly Route[] = [
  { method: "GET", path: "assets/app.css", handle: () => text(APP_CSS, "text/css") },
  { method: "GET", path: "assets/app.js", handle: () => text(APP_JS, "text/javascript") },
  { method: "GET", path: "api/info", handle: info },
  { method: "GET", path: "api/runs", handle: runsPage },
  {
    method: "GET",
    path: "api/runs/:run",
    handle: (c) => viewJson(c, { limit: wholeNumber(c.query, "limit", { max: 1000 }) }),
  },
  {
    method: "GET",
    path: "api/runs/:run/events",
    handle: (c) =>
      viewJson(c, {
        after: wholeNumber(c.query, "after", { min: -1 }),
        limit: wholeNumber(c.query, "limit", { max: 1000 }),
        spansLimit: 0,
        pick: ["events", "events_next", "summary"],
      }),
  },
  {
    method: "GET",
    path: "api/runs/:run/spans",
    handle: (c) =>
      viewJson(c, {
        spansOffset: wholeNumber(c.query, "offset"),
        spansLimit: wholeNumber(c.query, "limit", { max: 2000 }),
        limit: 1,
        pick: ["spans", "spans_next", "summary"],
      }),
  },
  {
    method: "GET",
    path: "api/runs/:run/events/:seq",
    handle: async (c) => json(wholeEvent(await modelOf(c), Number(c.params.seq))),
  },
  {
    method: "GET",
    path: "api/runs/:run/events/:seq/answer",
    handle: async (c) => text(await wholeAnswer(await modelOf(c), Number(c.params.seq)), "text/plain"),
  },
  {
    method: "GET",
    path: "api/runs/:run/events/:seq/chat",
    handle: async (c) => json(await eventChat(await modelOf(c), Number(c.params.seq))),
  },
  {
    method: "GET",
    path: "api/runs/:run/payloads/:sha256",
    handle: async (c) => {
      const payload = await wholePayload(await modelOf(c), c.params.sha256!);
      const response = text(payload.body, "text/plain");
      response.headers.set("content-length", String(payload.size));
      // Shown as text, in a sandbox: a payload is never a page of the viewer's origin.
      response.headers.set("content-security-policy", "sandbox; default-src 'none'");
      return response;
    },
  },
  {
    method: "GET",
    path: "api/runs/:run/live",
    handle: async (c) =>
      liveStream(c.store, await c.store.readRun(c.params.run!), {
        policy: c.options.policy,
        after: wholeNumber(c.query, "after", { min: -1 }) ?? -1,
      }),
  },
  { method: "POST", path: "api/runs/:run/assessments", handle: addAssessment },
  {
    method: "GET",
    path: "api/runs/:run/log",
    handle: async (c) => json(await runLogView(c.store, await c.store.readRun(c.params.run!))),
  },
  { method: "GET", path: "api/digests", handle: runDigests },
  { method: "GET", path: "api/totals", handle: runTotals },
  { method: "GET", path: "api/agents", handle: (c) => agents(c, true) },
  { method: "GET", path: "api/agent", handle: (c) => agents(c, false) },
  {
    method: "GET",
    path: "api/traces/:trace",
    handle: async (c) => {
      const view = await traceView(c.store, c.params.trace!, {
        level: c.options.policy.liveLevel(),
        offset: wholeNumber(c.query, "offset"),
        limit: wholeNumber(c.query, "limit", { max: 2000 }),
      });
      if (view.total === 0) {
        throw new ViewerRefusal(404, `no run in the store carries the trace ${view.trace_id}`);
      }
      return json(view);
    },
  },
  { method: "GET", path: "api/experiments", handle: (c) => experiments(c, true) },
  { method: "GET", path: "api/experiment", handle: (c) => experiments(c, false) },
  { method: "POST", path: "api/experiment/assessments", handle: addExperimentAssessment },
  {
    method: "GET",
    path: "api/compare",
    handle: async (c) => {
      const ids = [c.query.get("a") ?? "", c.query.get("b") ?? ""];
      for (const id of ids) checkRunIdToRead(id);
      const { untrusted: _untrusted, ...options } = modelOptions(c);
      return json(await compareView(c.store, ids, options));
    },
  },
];

function info(c: RouteContext): Response {
  const live = c.options.policy.destinations.find((d) => d.kind === "live");
  const info: ViewerInfo = {
    store: c.store.uri,
    runs_root: c.store.runsRoot,
    policy: c.options.policy.source,
    live: live ? { name: live.name, receives: live.receives } : null,
    // Every store keeps a run's assessments (the file store in the run's folder, once it is sealed).
    assess: c.options.openToWrite !== undefined,
  };
  return json(info);
}

/** With no live viewer in the policy, only structure shows: no agent classes, experiments or their settings. */
function hidden(c: RouteContext, list: boolean): Response | null {
  if (c.options.policy.liveLevel() !== null) return null;
  if (list) return json([]);
  throw new ViewerRefusal(
    404,
    `hidden: the telemetry policy (${c.options.policy.source}) names no live viewer`,
  );
}

async function agents(c: RouteContext, list: boolean): Promise<Response> {
  const refused = hidden(c, list);
  if (refused) return refused;
  const questions = questionsOf(c.store, "the agents page");
  if (list) return json(await questions.agents());
  const name = c.query.get("name") ?? "";
  const found = await questions.agent(name);
  if (!found) throw new ViewerRefusal(404, `no agent class "${name.slice(0, 200)}" in the store`);
  return json(found);
}

async function experiments(c: RouteContext, list: boolean): Promise<Response> {
  const refused = hidden(c, list);
  if (refused) return refused;
  const questions = questionsOf(c.store, "the experiments page");
  if (list) return json(await questions.experiments());
  const uri = c.query.get("uri") ?? "";
  const found = await questions.experiment(uri);
  if (!found) throw new ViewerRefusal(404, `no experiment "${uri.slice(0, 200)}" in the store`);
  // Its assessments, of the whole and of each version, as the level lets them show (500 at most).
  const all = await questions.experimentAssessments(found.experiment);
  const assessments = assessmentsAt(all.slice(-500), c.options.policy.liveLevel());
  return json({ ...found, assessments, assessments_total: all.length });
}

/** The largest assessment the viewer takes: a name, a value and a rationale. */
const MAX_ASSESSMENT_BYTES = 64 * 1024;

/** A request's body as text, refused with a 413 when it declares or holds more than `max` bytes. */
async function bodyText(request: Request, max: number): Promise<string> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  const tooLarge = () =>
    new ViewerRefusal(413, `an assessment is at most ${max / 1024} KiB of JSON: shorten its rationale`);
  if (declared > max) throw tooLarge();
  if (request.body === null) return "";
  return new TextDecoder().decode(await readBytesCapped(request.body, { max, tooLarge }));
}

/** What a page sends to add an assessment. */
interface AssessmentBody {
  name?: unknown;
  value?: unknown;
  rationale?: unknown;
  source?: unknown;
  seq?: unknown;
  experiment?: unknown;
}

/** The body of a request that adds an assessment, read and checked: a JSON object with a name and a value. */
async function assessmentBody(c: RouteContext): Promise<AssessmentBody & { name: string }> {
  if (!c.options.openToWrite) throw new ViewerRefusal(403, "prove ui: this viewer cannot add assessments");
  let body: AssessmentBody;
  try {
    body = JSON.parse(await bodyText(c.request, MAX_ASSESSMENT_BYTES));
  } catch (error) {
    if (error instanceof ViewerRefusal) throw error;
    throw new ViewerRefusal(400, "an assessment is a JSON object with a name and a value");
  }
  if (typeof body?.name !== "string" || body.name.trim() === "" || body.value === undefined) {
    throw new ViewerRefusal(400, "an assessment needs a name (text) and a value");
  }
  return { ...body, name: body.name.trim() };
}

/** The options of an assessment that a page sent. */
function judgementOptions(body: AssessmentBody): AssessOptions {
  return {
    ...(typeof body.rationale === "string" && body.rationale !== "" ? { rationale: body.rationale } : {}),
    ...(typeof body.source === "string" && body.source !== "" ? { source: body.source } : {}),
  };
}

/** Writes an assessment through a store opened to write, and closes it. */
async function assessWith(c: RouteContext, target: AssessTarget, body: AssessmentBody & { name: string }) {
  const store = await c.options.openToWrite!();
  try {
    const assessment = await questionsOf(store, "adding an assessment").assess(
      target,
      body.name,
      body.value,
      judgementOptions(body),
    );
    return json(assessment, { status: 201 });
  } finally {
    await store.close();
  }
}

/** Adds an assessment of an experiment, or of one version of it (`experiment` in the body: its URI). */
async function addExperimentAssessment(c: RouteContext): Promise<Response> {
  const body = await assessmentBody(c);
  if (typeof body.experiment !== "string" || body.experiment === "") {
    throw new ViewerRefusal(400, "an experiment's assessment names the experiment: its URI, as experiment");
  }
  return await assessWith(c, { experiment: body.experiment }, body);
}

/** Adds an assessment of a run, or of one of its events (`seq` in the body). */
async function addAssessment(c: RouteContext): Promise<Response> {
  const body = await assessmentBody(c);
  const runId = c.params.run!;
  await c.store.readRun(runId);
  return await assessWith(c, typeof body.seq === "number" ? { run: runId, seq: body.seq } : runId, body);
}
