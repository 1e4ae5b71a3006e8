import assert from "node:assert/strict";
import { join } from "node:path";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import type { Json } from "../../../lib/provevi/evidence/event.ts";
import { RunNotFound } from "../../../lib/provevi/evidence/errors.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { buildTrace, type TraceBuildOptions } from "../../../lib/provtrace/build/build.ts";
import { SOURCE_WORKERS } from "../../../lib/provtrace/build/_source_workers.ts";
import { dumpTrace } from "../_runs.ts";
import { makeWritable, removeWritable } from "../../_files.ts";
import { makeRuns, type TestRuns } from "../_runs.ts";
import { freshDatabase } from "../../provevi/postgres/_pg.ts";
import { peerTest } from "../../_peers.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { PostgresStore } from "../../../lib/provevi/postgres/postgres_store.ts";

// A build of many runs prepares them on workers (read, verified, checked, mapped to rows) while it writes: these
// tests hold that it writes the same rows, gives the same results, progress and errors, as the build that
// prepares them on its own thread, and leaves no worker behind (the test sanitizers).

/** A sqlite store of `count` runs of a few model and tool steps; the run `open` is left unsealed. */
async function writeRuns(dir: string, count: number, open: number): Promise<string[]> {
  await using store = new SqliteStore(join(dir, "evidence.db"), { runs: join(dir, "runs") });
  const enc = new TextEncoder();
  const ids: string[] = [];
  for (let r = 0; r < count; r++) {
    const runId = `run-20261130T000000Z-${r.toString(16).padStart(8, "0")}`;
    ids.push(runId);
    const writer = await store.openRun(runId);
    const chain = new EventChain(runId);
    const trace = r.toString(16).padStart(32, "0");
    let span = 1;
    const sid = () => (span++).toString(16).padStart(16, "0");
    const root = sid();
    const add = async (type: string, data: Record<string, Json>, payload: string | null, id = sid()) => {
      const next = chain.next({
        type,
        component: "AgentBackend",
        actor: "test",
        data,
        payload,
        trace_id: trace,
        span_id: id,
        parent_span_id: id === root ? null : root,
        started_at: type.startsWith("run_") ? null : "2026-11-30T00:00:00.000000Z",
      });
      await writer.append(next.line, next.event);
      chain.accept(next);
    };
    const put = (value: Json) => writer.putPayload(enc.encode(JSON.stringify(value)));
    await add(
      "run_created",
      { agent: "a", backend: "agent", model: "test:", org: "o", domain: "d", env: "dev" },
      null,
      root,
    );
    for (let s = 0; s < 3; s++) {
      const args = { path: `/input/${r}-${s}.csv` };
      const request = await put({
        params: { prompt: [{ role: "user", content: [{ type: "text", text: `Q${r}` }] }] },
      });
      const reply = {
        content: [{ type: "tool-call", toolCallId: `c${s}`, toolName: "grep", input: JSON.stringify(args) }],
      };
      await add("model_called", {
        provider: "test",
        model: "m",
        input_tokens: 10 + s,
        output_tokens: 2,
        finish_reason: "tool-calls",
        streamed: false,
        tool_calls: [{ id: `c${s}`, name: "grep" }],
        response_payload: await put(reply),
      }, request);
      await add("tool_called", {
        tool: "grep",
        call_id: `c${s}`,
        error: null,
        executed_by: "sandbox",
        sandboxed: true,
        result_payload: await put([{ line: s }]),
      }, await put(args));
    }
    if (r === open) continue;
    await add("run_completed", { status: "completed" }, null, root);
    await writer.seal();
  }
  return ids;
}

/** Builds in a new database, on this thread (`workers` 0) or with workers; gives what it gave, or its error. */
async function build(dir: string, name: string, workers: number, more: Partial<TraceBuildOptions> = {}) {
  const saved = { ...SOURCE_WORKERS };
  const started = countWorkers();
  Object.assign(SOURCE_WORKERS, { count: workers, minRuns: 1 });
  const db = join(dir, `${name}.db`);
  const progress: string[] = [];
  try {
    const result = await buildTrace({
      store: `sqlite:///${join(dir, "evidence.db")}`,
      runs: join(dir, "runs"),
      db,
      onProgress: (done, total, id) => progress.push(`${done}/${total} ${id}`),
      ...more,
    });
    return { result, progress, rows: dumpTrace(db), workers: started.count() };
  } catch (error) {
    return { error, progress, rows: dumpTrace(db), workers: started.count() };
  } finally {
    Object.assign(SOURCE_WORKERS, saved);
    started.stop();
  }
}

/** Counts the workers started until `stop`. */
function countWorkers(): { count(): number; stop(): void } {
  const Original = globalThis.Worker;
  let n = 0;
  globalThis.Worker = class extends Original {
    constructor(...args: ConstructorParameters<typeof Worker>) {
      super(...args);
      n++;
    }
  };
  return { count: () => n, stop: () => globalThis.Worker = Original };
}

Deno.test("a build on workers writes the same rows, results and progress as one on its own thread", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ids = await writeRuns(dir, 12, 4);
    // Run 7 does not verify: a line of its events.jsonl changed after the seal.
    const events = join(dir, "runs", ids[7]!, "evidence", "events.jsonl");
    await makeWritable(join(dir, "runs", ids[7]!));
    await Deno.writeTextFile(
      events,
      (await Deno.readTextFile(events)).replace('"input_tokens":11', '"input_tokens":12'),
    );
    for (const more of [{}, { allowUnverified: true }]) {
      const here = await build(dir, `here${more.allowUnverified ? "-all" : ""}`, 0, more);
      assert.equal(here.workers, 0);
      assert.ok("result" in here, String(here.error));
      assert.deepEqual(here.result!.open, [ids[4]]);
      assert.equal(here.result!.added.length, more.allowUnverified ? 11 : 10);
      if (!more.allowUnverified) assert.deepEqual(here.result!.refused.map((r) => r.run_id), [ids[7]]);
      for (const workers of [1, 2]) {
        const name = `workers${workers}${more.allowUnverified ? "-all" : ""}`;
        const there = await build(dir, name, workers, more);
        assert.equal(there.workers, workers);
        assert.deepEqual(there.result, here.result, name);
        assert.deepEqual(there.progress, here.progress, name);
        assert.deepEqual(there.rows, here.rows, name);
      }
    }
  } finally {
    await removeWritable(dir);
  }
});

Deno.test("a run the store refuses to read fails a build on workers with the error of one on its own thread, and the runs before it stay written", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ids = await writeRuns(dir, 10, -1);
    // Run 6's folder became a link: the store refuses to read it (RunNotFound, naming the link).
    const folder = join(dir, "runs", ids[6]!);
    await Deno.rename(folder, join(dir, "elsewhere"));
    await Deno.symlink(join(dir, "elsewhere"), folder);
    const here = await build(dir, "here", 0);
    assert.ok(here.error instanceof RunNotFound, String(here.error));
    assert.match(here.error.message, /is a link/);
    for (const workers of [1, 2]) {
      const there = await build(dir, `workers${workers}`, workers);
      assert.equal(there.workers, workers);
      assert.ok("error" in there, "the build on workers fails");
      assert.equal(there.error?.constructor, here.error?.constructor);
      assert.equal((there.error as Error).message, (here.error as Error).message);
      assert.deepEqual(there.progress, here.progress);
      assert.deepEqual(there.rows, here.rows);
    }
    assert.equal(here.progress.length, 6);
  } finally {
    await removeWritable(dir);
  }
});

Deno.test("a build on workers stopped by an error of its own part way keeps the runs before it, as one on its own thread, and leaves nothing running", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await writeRuns(dir, 20, -1);
    const stop = (done: number) => {
      if (done === 5) throw new Error("the progress line could not be written");
    };
    const here = await build(dir, "here", 0, { onProgress: stop });
    assert.match(String(here.error), /could not be written/);
    for (const workers of [1, 2]) {
      const there = await build(dir, `workers${workers}`, workers, { onProgress: stop });
      assert.equal(there.workers, workers);
      assert.equal(String(there.error), String(here.error));
      assert.deepEqual(there.rows, here.rows);
    }
  } finally {
    await removeWritable(dir);
  }
});

/** Counts the runs this thread's stores read (each store's `readRun`), until `stop`. */
function readsHere(): { stop(): number } {
  const kinds = [FileStore.prototype, PostgresStore.prototype, SqliteStore.prototype];
  const kept = kinds.map((k) => k.readRun);
  let n = 0;
  kinds.forEach((k, i) =>
    k.readRun = function (this: never, ...args: [string]) {
      n++;
      return (kept[i] as (...a: [string]) => ReturnType<typeof k.readRun>).apply(this, args);
    }
  );
  return { stop: () => (kinds.forEach((k, i) => k.readRun = kept[i]!), n) };
}

/** Builds `t`'s runs (from `store`) on this thread and on a worker, with the catalog of their config or none. */
async function catalogBuilds(t: TestRuns, store: string): Promise<void> {
  const config = join(t.root, "provcat.yaml");
  await Deno.writeTextFile(
    config,
    [
      `cache: ${join(t.root, "cache")}`,
      `stores: { lake: { type: git, path: ${join(t.root, "lake")} } }`,
      "routes:",
      "  - { prefix: data://acme/demo/dev, store: lake }",
      "  - { prefix: data://acme/demo/prod, store: lake }",
      "  - { prefix: run://acme/demo/dev, store: lake, path: runs }",
      "",
    ].join("\n"),
  );
  const saved = { ...SOURCE_WORKERS };
  try {
    for (const catalogConfig of [{ configPath: config }, {}]) {
      const built: unknown[] = [];
      for (const workers of [0, 1]) {
        Object.assign(SOURCE_WORKERS, { count: workers, minRuns: 1 });
        const db = join(t.root, `trace-${workers}-${Object.keys(catalogConfig).length}.db`);
        const read = readsHere();
        const result = await buildTrace({ store, runs: t.runs, db, catalogConfig });
        // on a worker, every run was prepared there: this thread read none
        assert.equal(read.stop() === 0, workers === 1);
        built.push({ result, rows: dumpTrace(db) });
      }
      assert.deepEqual(built[1], built[0]);
      const { result } = built[0] as { result: { added: unknown[] } };
      assert.equal(result.added.length, catalogConfig.configPath ? 2 : 0, JSON.stringify(result));
    }
  } finally {
    Object.assign(SOURCE_WORKERS, saved);
  }
}

Deno.test("a build on workers of runs that need the catalog (a committed bundle) opens it from its config there, as one on its own thread", async () => {
  await using t = await makeRuns();
  await catalogBuilds(t, "file");
});

peerTest("postgres", {
  name: "a build on workers of a postgres store's runs gives what one on its own thread gives",
  fn: async () => {
    const db = await freshDatabase();
    try {
      await using t = await makeRuns({ store: () => db.uri });
      await catalogBuilds(t, db.uri);
    } finally {
      await db.drop();
    }
  },
});
