/**
 * The comparisons of two runs' steps, phase by phase: the setup (settings, inputs, tools, prompt), each model
 * step (the request, the answer, each tool call's name, arguments and result), and the end (outputs, the
 * inputs' re-check, how each run ended, tokens). Events are compared by their hashes and facts first; only the
 * first divergences' payloads are read, to say where in them the two differ.
 * @module
 */
import type { EvidenceEvent, Json } from "../evidence/event.ts";
import { type DiffWhat, type Divergence, type Divergences, refOf } from "./divergence.ts";
import { jsonDifference, shownValue } from "./json_difference.ts";
import type { ModelStep, RunSteps } from "./run_steps.ts";

/** Reads a payload of one side: its JSON, or its text when it is not JSON. */
export type PayloadReader = (side: "a" | "b", sha256: string) => Promise<unknown>;

/** The two runs being compared, where their payloads are read, and where the divergences go. */
export interface Sides {
  readonly a: RunSteps;
  readonly b: RunSteps;
  readonly read: PayloadReader;
  readonly out: Divergences;
}

type Obj = { [key: string]: Json };

function of(events: readonly EvidenceEvent[], type: string): EvidenceEvent[] {
  return events.filter((e) => e.type === type);
}

/** A payload key of an event's data: its SHA-256, or null. */
function shaAt(e: EvidenceEvent, key: string): string | null {
  const v = e.data[key];
  return typeof v === "string" ? v : null;
}

function short(sha: unknown): string {
  return typeof sha === "string" ? sha.slice(0, 12) : "(none)";
}

/** The setup: settings, inputs, tools, the prompt. */
export async function compareSetup(s: Sides): Promise<void> {
  const add = (
    what: DiffWhat,
    pair: [EvidenceEvent | undefined, EvidenceEvent | undefined],
    detail: string,
  ) => s.out.add({ phase: "setup", step: 0, what, a: refOf(pair[0]), b: refOf(pair[1]), path: null, detail });
  const ca = of(s.a.setup, "run_created")[0];
  const cb = of(s.b.setup, "run_created")[0];
  const settings = (e: EvidenceEvent | undefined) => ({
    agent: e?.data.spec,
    mode: e?.data.mode,
    experiment: e?.data.experiment,
  });
  const set = jsonDifference(settings(ca), settings(cb));
  if (set) add("settings", [ca, cb], `${set.path}: ${shownValue(set.a)} vs ${shownValue(set.b)}`);
  const uris = jsonDifference(ca?.data.inputs, cb?.data.inputs, "inputs");
  if (uris) {
    add(
      "inputs",
      [ca, cb],
      `the inputs asked for differ at ${uris.path}: ${shownValue(uris.a)} vs ${shownValue(uris.b)}`,
    );
  }
  byName(s, { type: "input_staged", key: "name", phase: "setup" }, (x, y, name) => {
    if (!x || !y) add("inputs", [x, y], `input ${name} is staged in run ${x ? "A" : "B"} only`);
    else if (x.data.sha256 !== y.data.sha256) {
      add("inputs", [x, y], `input ${name} has sha256 ${short(x.data.sha256)}… vs ${short(y.data.sha256)}…`);
    }
  });
  compareTools(s, add);
  await comparePrompt(s, add);
}

/** Calls `each` for every name of the events of a type, in the order the names first appear. */
function byName(
  s: Sides,
  which: { type: string; key: string; phase: "setup" | "end" },
  each: (x: EvidenceEvent | undefined, y: EvidenceEvent | undefined, name: string) => void,
): void {
  const map = (events: readonly EvidenceEvent[]) => {
    const m = new Map<string, EvidenceEvent>();
    for (const e of of(events, which.type)) {
      const name = String(e.data[which.key]);
      if (!m.has(name)) m.set(name, e);
    }
    return m;
  };
  const x = map(which.phase === "setup" ? s.a.setup : s.a.end);
  const y = map(which.phase === "setup" ? s.b.setup : s.b.end);
  for (const name of new Set([...x.keys(), ...y.keys()])) each(x.get(name), y.get(name), name);
}

type Add = (
  what: DiffWhat,
  pair: [EvidenceEvent | undefined, EvidenceEvent | undefined],
  detail: string,
) => void;

/** The tools offered (their definitions) and the tools modules' files (their hashes). */
function compareTools(s: Sides, add: Add): void {
  const x = of(s.a.setup, "sandbox_started")[0];
  const y = of(s.b.setup, "sandbox_started")[0];
  if (!x || !y) return; // a backend without tools; the settings say so
  const tools = (e: EvidenceEvent) => {
    const list = Array.isArray(e.data.tools) ? e.data.tools as Obj[] : [];
    return new Map(list.map((t) => [String(t.name), t]));
  };
  const tx = tools(x);
  const ty = tools(y);
  for (const name of new Set([...tx.keys(), ...ty.keys()])) {
    const d = jsonDifference(tx.get(name), ty.get(name));
    if (!d) continue;
    add(
      "tools",
      [x, y],
      !tx.has(name) || !ty.has(name)
        ? `the tool ${name} is offered in run ${tx.has(name) ? "A" : "B"} only`
        : `the tool ${name} differs at ${d.path}: ${shownValue(d.a)} vs ${shownValue(d.b)}`,
    );
  }
  // A run recorded before the tools files' hashes were has none to compare.
  if (!x.data.tools_files || !y.data.tools_files) return;
  const files = (e: EvidenceEvent) => e.data.tools_files as Obj;
  const fx = files(x);
  const fy = files(y);
  for (const path of new Set([...Object.keys(fx), ...Object.keys(fy)])) {
    if (fx[path] === fy[path]) continue;
    add("tools", [x, y], `the tools module ${path} has sha256 ${short(fx[path])}… vs ${short(fy[path])}…`);
  }
}

async function comparePrompt(s: Sides, add: Add): Promise<void> {
  const x = of(s.a.setup, "prompt_rendered")[0];
  const y = of(s.b.setup, "prompt_rendered")[0];
  if (x?.payload === y?.payload) return;
  if (!x?.payload || !y?.payload || !s.out.takeRefine()) {
    return add("prompt", [x, y], "the rendered prompt differs");
  }
  const lines = (v: unknown) => String(v).split("\n");
  const [la, lb] = [lines(await s.read("a", x.payload)), lines(await s.read("b", y.payload))];
  let i = 0;
  while (i < la.length && la[i] === lb[i]) i++;
  add(
    "prompt",
    [x, y],
    `the rendered prompt differs at line ${i + 1}: ${shownValue(la[i])} vs ${shownValue(lb[i])}`,
  );
}

/** Every model step the two runs share, then the steps one of them lacks. */
export async function compareSteps(s: Sides): Promise<void> {
  const shared = Math.min(s.a.steps.length, s.b.steps.length);
  for (let i = 0; i < shared; i++) await compareStep(s, s.a.steps[i]!, s.b.steps[i]!);
  if (s.a.steps.length !== s.b.steps.length) {
    const longer = s.a.steps.length > s.b.steps.length ? s.a : s.b;
    const extra = longer.steps[shared]!;
    s.out.add({
      phase: "step",
      step: shared + 1,
      what: "steps",
      a: longer === s.a ? refOf(extra.call) : null,
      b: longer === s.b ? refOf(extra.call) : null,
      path: null,
      detail: `run A made ${s.a.steps.length} model calls, run B ${s.b.steps.length}`,
    });
  }
}

/** Where two payloads of one kind differ: the path and the two values there, read only for the first divergence. */
async function where(
  s: Sides,
  pair: { a: string | null; b: string | null; inside?: string },
): Promise<{ path: string | null; text: string }> {
  if (!pair.a || !pair.b || !s.out.takeRefine()) return { path: null, text: "" };
  const va = await s.read("a", pair.a);
  const vb = await s.read("b", pair.b);
  const key = pair.inside;
  let path: string | null = null;
  let d = null;
  if (key !== undefined && isObj(va) && isObj(vb) && key in va && key in vb) {
    d = jsonDifference(va[key], vb[key]);
    if (d) path = d.path === "" ? key : d.path.startsWith("[") ? key + d.path : `${key}.${d.path}`;
  }
  if (!d) {
    d = jsonDifference(va, vb);
    path = d?.path ?? null;
  }
  if (!d) return { path: null, text: "" };
  return { path, text: ` at ${path || "the top"}: ${shownValue(d.a)} vs ${shownValue(d.b)}` };
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** What a difference in a model request is, by where it is: the prompt, the tools, or the call's settings. */
export function requestWhat(path: string | null): DiffWhat {
  if (path === null) return "request";
  if (/^params\.prompt\b/.test(path)) return "prompt";
  if (/^params\.(tools|toolChoice)\b/.test(path)) return "tools";
  if (/^params\./.test(path)) return "settings";
  return "request";
}

async function compareStep(s: Sides, x: ModelStep, y: ModelStep): Promise<void> {
  const add = (what: DiffWhat, pair: [EvidenceEvent | null, EvidenceEvent | null], d: Partial<Divergence>) =>
    s.out.add({
      phase: "step",
      step: x.n,
      what,
      a: refOf(pair[0]),
      b: refOf(pair[1]),
      path: d.path ?? null,
      detail: d.detail ?? "",
    });
  const [cx, cy] = [x.call, y.call];
  if (cx.payload !== cy.payload) {
    const w = await where(s, { a: cx.payload, b: cy.payload, inside: "params" });
    add(requestWhat(w.path), [cx, cy], {
      path: w.path,
      detail: `the request of model call ${x.n} differs${w.text}`,
    });
  }
  if (cx.data.model !== cy.data.model) {
    add("settings", [cx, cy], {
      detail: `model call ${x.n} asked ${shownValue(cx.data.model)} vs ${shownValue(cy.data.model)}`,
    });
  }
  await compareAnswer(s, [cx, cy], (what, d) => add(what, [cx, cy], d));
  await compareToolCalls(s, x, y, add);
}

async function compareAnswer(
  s: Sides,
  [cx, cy]: [EvidenceEvent, EvidenceEvent],
  add: (what: DiffWhat, d: Partial<Divergence>) => void,
): Promise<void> {
  const failed = (e: EvidenceEvent) => e.type === "step_failed";
  const said = (e: EvidenceEvent) => `${e.data.error}: ${shownValue(e.data.message, 80)}`;
  if (failed(cx) || failed(cy)) {
    if (failed(cx) && failed(cy) && said(cx) === said(cy)) return;
    const side = (e: EvidenceEvent) => (failed(e) ? `failed (${said(e)})` : "answered");
    return add("model_answer", { detail: `run A's call ${side(cx)}, run B's ${side(cy)}` });
  }
  const [ra, rb] = [shaAt(cx, "response_payload"), shaAt(cy, "response_payload")];
  if (ra === rb) return;
  const w = await where(s, { a: ra, b: rb });
  add("model_answer", { path: w.path, detail: `the answer differs${w.text}` });
}

type StepAdd = (
  what: DiffWhat,
  pair: [EvidenceEvent | null, EvidenceEvent | null],
  d: Partial<Divergence>,
) => void;

/** The tool calls of one step, paired by call ID when both runs made the same calls, else in order. */
async function compareToolCalls(s: Sides, x: ModelStep, y: ModelStep, add: StepAdd): Promise<void> {
  const id = (e: EvidenceEvent) => String(e.data.call_id);
  const ids = (t: EvidenceEvent[]) => t.map(id).sort().join("\n");
  const byId = ids(x.tools) === ids(y.tools) && new Set(x.tools.map(id)).size === x.tools.length;
  const pairs: [EvidenceEvent | null, EvidenceEvent | null][] = byId
    ? x.tools.map((p) => [p, y.tools.find((q) => id(q) === id(p)) ?? null])
    : Array.from(
      { length: Math.max(x.tools.length, y.tools.length) },
      (_, i) => [x.tools[i] ?? null, y.tools[i] ?? null],
    );
  for (const [p, q] of pairs) {
    if (!p || !q) {
      const one = (p ?? q)!;
      add("tool_call", [p, q], { detail: `only run ${p ? "A" : "B"} called ${one.data.tool} (${id(one)})` });
      continue;
    }
    if (p.data.tool !== q.data.tool) {
      add("tool_call", [p, q], { detail: `run A called ${p.data.tool}, run B ${q.data.tool}` });
      continue;
    }
    if (p.payload !== q.payload) {
      const w = await where(s, { a: p.payload, b: q.payload });
      add("arguments", [p, q], { path: w.path, detail: `the arguments of ${p.data.tool} differ${w.text}` });
    }
    await compareResult(s, [p, q], add);
  }
}

async function compareResult(s: Sides, [p, q]: [EvidenceEvent, EvidenceEvent], add: StepAdd): Promise<void> {
  const error = (
    e: EvidenceEvent,
  ) => (e.data.error ? `${e.data.error}: ${shownValue(e.data.message, 80)}` : null);
  if (error(p) !== error(q)) {
    const side = (e: EvidenceEvent) => error(e) ?? "gave a result";
    return add("tool_result", [p, q], { detail: `${p.data.tool}: run A ${side(p)}; run B ${side(q)}` });
  }
  const [ra, rb] = [shaAt(p, "result_payload"), shaAt(q, "result_payload")];
  if (ra === rb) return;
  const w = await where(s, { a: ra, b: rb });
  add("tool_result", [p, q], { path: w.path, detail: `the result of ${p.data.tool} differs${w.text}` });
}

/** The end: outputs, the inputs' re-check, how the backend and the run ended, tokens. */
export function compareEnd(s: Sides, tokens: { a: number[]; b: number[] }): void {
  const add = (
    what: DiffWhat,
    pair: [EvidenceEvent | undefined, EvidenceEvent | undefined],
    detail: string,
  ) =>
    s.out.add({ phase: "end", step: null, what, a: refOf(pair[0]), b: refOf(pair[1]), path: null, detail });
  byName(s, { type: "output_artifact_created", key: "path", phase: "end" }, (x, y, path) => {
    if (!x || !y) add("output", [x, y], `output/${path} is in run ${x ? "A" : "B"} only`);
    else if (x.data.sha256 !== y.data.sha256) {
      add("output", [x, y], `output/${path} has sha256 ${short(x.data.sha256)}… vs ${short(y.data.sha256)}…`);
    }
  });
  byName(s, { type: "input_verified", key: "name", phase: "end" }, (x, y, name) => {
    if (x && y && x.data.ok !== y.data.ok) {
      add(
        "inputs",
        [x, y],
        `input ${name} ${x.data.ok ? "held" : "changed"} in run A, ${
          y.data.ok ? "held" : "changed"
        } in run B`,
      );
    }
  });
  const done = (r: RunSteps) => of(r.end, "sandbox_completed")[0];
  const [dx, dy] = [done(s.a), done(s.b)];
  if (dx && dy && dx.data.status !== dy.data.status) {
    add(
      "verdict",
      [dx, dy],
      `the agent ended ${shownValue(dx.data.status)} vs ${shownValue(dy.data.status)}`,
    );
  }
  const last = (r: RunSteps) => r.events.at(-1);
  const how = (r: RunSteps) => {
    const e = last(r)!;
    return r.status === "failed" ? `failed (${e.data.error}: ${shownValue(e.data.message, 80)})` : r.status;
  };
  if (how(s.a) !== how(s.b)) add("verdict", [last(s.a), last(s.b)], `run A ${how(s.a)}; run B ${how(s.b)}`);
  if (tokens.a[0] !== tokens.b[0] || tokens.a[1] !== tokens.b[1]) {
    add("tokens", [undefined, undefined], `tokens in/out ${tokens.a.join("/")} vs ${tokens.b.join("/")}`);
  }
}
