/**
 * The check of a trace database against the evidence it came from: each run's last hash compared with what
 * its store holds now.
 * @module
 */
import { openStore, ProveviError, RunNotFound, sha256Hex } from "../../provevi/mod.ts";
import { openTraceDb } from "../db/mod.ts";

/** How one run compares with its source. */
export interface TraceSourceCheck {
  run_id: string;
  store_uri: string;
  /** `same`, `changed` (another last hash), `missing` (the store has no such run) or `unreadable`. */
  state: "same" | "changed" | "missing" | "unreadable";
  /** The last hash the database was built from. */
  built_from: string;
  /** The last hash the store holds now, when it has one. */
  now: string | null;
  /** Why, in one line, when the state is not `same`. */
  problem: string | null;
}

/** The result of {@linkcode checkTrace}. */
export interface TraceCheck {
  ok: boolean;
  runs: TraceSourceCheck[];
}

/**
 * Compares each run of a trace database with the evidence it was built from.
 *
 * @param db The trace database's file.
 * @param options `runs`: the runs root to read a `file` store from, instead of the one each run records.
 * @returns `{ ok, runs }`; it prints nothing.
 * @throws ProveviError when the database cannot be opened.
 * @example
 * ```ts
 * import { checkTrace } from "./check.ts";
 * const check = await checkTrace("/tmp/trace.db");
 * console.log(check.ok, check.runs.filter((r) => r.state !== "same"));
 * ```
 */
export async function checkTrace(db: string, options: { runs?: string } = {}): Promise<TraceCheck> {
  let sources: { run_id: string; store_uri: string; runs_root: string; last_hash: string }[];
  {
    using trace = openTraceDb(db);
    sources = trace.db.prepare(
      "SELECT run_id, store_uri, runs_root, last_hash FROM trace_sources ORDER BY run_id",
    )
      .all() as typeof sources;
  }
  const stores = new Map<string, Promise<Awaited<ReturnType<typeof openStore>>>>();
  const runs: TraceSourceCheck[] = [];
  try {
    for (const s of sources) {
      const runsRoot = options.runs ?? s.runs_root;
      const key = `${s.store_uri}\n${runsRoot}`;
      if (!stores.has(key)) stores.set(key, openStore(s.store_uri, { readOnly: true, runs: runsRoot }));
      const base = { run_id: s.run_id, store_uri: s.store_uri, built_from: s.last_hash };
      try {
        const store = await stores.get(key)!;
        const record = await store.readRun(s.run_id);
        const manifest = await record.manifestText();
        const now = manifest === null
          ? null
          : (JSON.parse(manifest) as { last_hash?: string }).last_hash ?? null;
        // The manifest's last hash holds only if the lines still chain to it: a line changed in place, with the
        // manifest left alone, breaks the chain here (a cheap pass over the lines, not the whole verifyRun).
        const broken = now === s.last_hash ? chainBreak(await record.eventsText(), now) : null;
        if (broken !== null) {
          runs.push({
            ...base,
            state: "changed",
            now,
            problem: `${broken}; build it again with --run ${s.run_id}`,
          });
          continue;
        }
        runs.push(
          now === s.last_hash ? { ...base, state: "same", now, problem: null } : {
            ...base,
            state: "changed",
            now,
            problem: now === null
              ? "the store's run has no manifest now"
              : `the store's last hash is ${now.slice(0, 12)}…, not ${
                s.last_hash.slice(0, 12)
              }… as built; build it again with --run ${s.run_id}`,
          },
        );
      } catch (error) {
        if (error instanceof RunNotFound) {
          runs.push({
            ...base,
            state: "missing",
            now: null,
            problem: `the store has no run ${s.run_id} now`,
          });
        } else if (error instanceof ProveviError || error instanceof SyntaxError) {
          runs.push({ ...base, state: "unreadable", now: null, problem: error.message.split("\n")[0]! });
        } else throw error;
      }
    }
  } finally {
    for (const p of stores.values()) await p.then((s) => s.close(), () => {});
  }
  return { ok: runs.every((r) => r.state === "same"), runs };
}

/** Where the lines of `events.jsonl` stop chaining to `last`, in one line; null when they chain whole. */
function chainBreak(text: string | null, last: string | null): string | null {
  if (text === null) return "the store's run has no events.jsonl now";
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  let prev: string | null = null;
  for (const [i, line] of lines.entries()) {
    let said: unknown;
    try {
      said = (JSON.parse(line) as { prev?: unknown }).prev;
    } catch {
      return `events.jsonl line ${i + 1} is not JSON now`;
    }
    if (said !== prev) return `events.jsonl line ${i + 1} no longer chains to the line before it`;
    prev = sha256Hex(line);
  }
  return prev === last ? null : "the last line of events.jsonl no longer hashes to the manifest's last hash";
}
