import assert from "node:assert/strict";
import { join } from "node:path";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import { formatMicros } from "../../../lib/provevi/evidence/event.ts";
import { writerProcess } from "../../../lib/provevi/evidence/writer_process.ts";
import type { Json } from "../../../lib/provevi/evidence/event.ts";
import type { EvidenceStore } from "../../../lib/provevi/store/store.ts";
import { ProveviError, RunNotFound } from "../../../lib/provevi/evidence/errors.ts";
import { listRuns } from "../../../lib/provevi/runs/list_runs.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { resolveRunRef } from "../../../lib/provevi/runs/resolve_run_ref.ts";
import { PostgresStore } from "../../../lib/provevi/postgres/postgres_store.ts";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { freshDatabase } from "../postgres/_pg.ts";
import { peerTest } from "../../_peers.ts";

const EXP = "experiment://acme/risk/dev/credit/q";

interface Sketch {
  id: string;
  agent: string;
  model: string;
  tokens?: [number, number][];
  end?: "completed" | { error: string };
  seal?: boolean;
  writer?: Json;
  experiment?: string;
  /** The experiment's pinned version. */
  pin?: string;
  /** What is left of the writer's lock: held (the writer is open), freed (it died), none (an old run). */
  lock?: "held" | "freed" | "none";
}

/** Writes a run whose events follow the sketch, starting `minute` minutes after 2026-11-30T10:00Z. */
async function writeSketch(store: EvidenceStore, s: Sketch, minute: number): Promise<void> {
  const writer = await store.openRun(s.id);
  const chain = new EventChain(s.id);
  let clock = (Date.UTC(2026, 10, 30, 10, 0, 0) + minute * 60_000) * 1000;
  const add = async (type: string, data: Record<string, Json>) => {
    const next = chain.next({ type, component: "RunContext", actor: "ada", time: formatMicros(clock), data });
    clock += 2_000_000;
    await writer.append(next.line, next.event);
    chain.accept(next);
  };
  await add("run_created", {
    org: "acme",
    domain: "demo",
    env: "dev",
    agent: s.agent,
    model: s.model,
    ...(s.experiment ? { experiment: s.experiment } : {}),
    ...(s.pin ? { experiment_pin: s.pin } : {}),
    ...(s.writer !== undefined ? { writer: s.writer } : {}),
  });
  for (const [input_tokens, output_tokens] of s.tokens ?? []) {
    await add("model_called", { input_tokens, output_tokens });
  }
  if (s.end === "completed") await add("run_completed", { status: "completed" });
  else if (s.end) await add("run_failed", { error: s.end.error, message: "it stopped" });
  if (s.seal ?? s.end !== undefined) await writer.seal();
  const lock = join(writer.folder, ".writer.lock");
  if (s.lock === "freed" || s.lock === "none") await Deno.remove(lock);
  // A lock file that no process holds, as a writer that was killed leaves it.
  if (s.lock === "freed") await Deno.writeTextFile(lock, "");
}

async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

async function sketches(): Promise<Sketch[]> {
  const me = writerProcess();
  return [
    {
      id: "run-a1",
      agent: "alpha",
      model: "test:a",
      tokens: [[10, 5], [3, 2]],
      end: "completed",
      experiment: EXP,
    },
    { id: "run-a2", agent: "alpha", model: "test:a", end: { error: "ValueError" } },
    { id: "run-b3", agent: "beta", model: "test:b", tokens: [[1, 1]], end: { error: "CancelledError" } },
    { id: "run-b4", agent: "beta", model: "test:b", writer: me as unknown as Json, lock: "held" },
    {
      id: "run-c5",
      agent: "beta",
      model: "test:b",
      writer: { ...me, pid: await deadPid() } as unknown as Json,
      lock: "freed",
    },
    { id: "run-c6", agent: "gamma", model: "test:c", seal: true },
    { id: "run-c7", agent: "gamma", model: "test:c", lock: "none" },
  ];
}

/** Each kind of store, opened on a fresh place; the postgres one on the tests' server (`.ci/peers/postgres.sh`). */
const STORES: [string, (dir: string) => Promise<{ store: EvidenceStore; drop?: () => Promise<void> }>][] = [
  ["file", (dir) => Promise.resolve({ store: new FileStore({ runs: join(dir, "runs") }) })],
  [
    "sqlite",
    (dir) =>
      Promise.resolve({ store: new SqliteStore(join(dir, "evidence.db"), { runs: join(dir, "runs") }) }),
  ],
  ["postgres", async (dir) => {
    const db = await freshDatabase();
    return { store: await PostgresStore.open(db.uri, { runs: join(dir, "runs") }), drop: db.drop };
  }],
];

for (const [kind, open] of STORES) {
  const peer = kind === "postgres" ? "postgres" : null;
  const withRuns = async (fn: (store: EvidenceStore) => Promise<void>, only?: Sketch[]) => {
    const dir = await Deno.makeTempDir({ prefix: "list-runs-" });
    let drop: (() => Promise<void>) | undefined;
    try {
      const opened = await open(dir);
      drop = opened.drop;
      await using store = opened.store;
      for (const [i, s] of (only ?? await sketches()).entries()) await writeSketch(store, s, i);
      await fn(store);
    } finally {
      await drop?.();
      await Deno.remove(dir, { recursive: true });
    }
  };

  peerTest(peer, {
    name: `listRuns() on the ${kind} store: newest first, each status told apart, tokens summed`,
    fn: () =>
      withRuns(async (store) => {
        const { runs, total } = await listRuns(store);
        assert.equal(total, 7);
        assert.deepEqual(runs.map((r) => [r.run_id, r.status]), [
          ["run-c7", "running"], // an unsealed run with no writer recorded: cannot be told from here
          ["run-c6", "cut"], // sealed without an ending
          ["run-c5", "cut"], // its writer is gone
          ["run-b4", "running"], // its writer is this process
          ["run-b3", "cancelled"],
          ["run-a2", "failed"],
          ["run-a1", "completed"],
        ]);
        const a1 = runs[6]!;
        assert.equal(a1.tokens, 20);
        assert.equal(a1.model, "test:a");
        assert.equal(a1.agent, "acme/demo/dev/alpha");
        assert.equal(a1.experiment, EXP);
        assert.equal(a1.started_at, "2026-11-30T10:00:00.000000Z");
        assert.equal(a1.ended_at, "2026-11-30T10:00:06.000000Z");
        assert.equal(a1.duration_ms, 6000);
        assert.equal(a1.last_seq, 3);
        assert.equal(runs[5]!.tokens, null);
        assert.equal(runs[2]!.last_seq, 0);
        assert.equal(runs[2]!.duration_ms, 0);
      }),
  });

  peerTest(peer, {
    name: `listRuns() on the ${kind} store filters by status, agent, experiment and start, and pages`,
    fn: () =>
      withRuns(async (store) => {
        const ids = async (options: Parameters<typeof listRuns>[1]) => {
          const list = await listRuns(store, options);
          return [list.total, ...list.runs.map((r) => r.run_id)];
        };
        assert.deepEqual(await ids({ status: "cut" }), [2, "run-c6", "run-c5"]);
        assert.deepEqual(await ids({ status: "running" }), [2, "run-c7", "run-b4"]);
        assert.deepEqual(await ids({ status: "cancelled" }), [1, "run-b3"]);
        assert.deepEqual(await ids({ status: "failed" }), [1, "run-a2"]);
        assert.deepEqual(await ids({ status: "completed" }), [1, "run-a1"]);
        assert.deepEqual(await ids({ agent: "beta" }), [3, "run-c5", "run-b4", "run-b3"]);
        assert.deepEqual(await ids({ agent: "acme/demo/dev/gamma" }), [2, "run-c7", "run-c6"]);
        assert.deepEqual(await ids({ agent: "acme/demo/prod/gamma" }), [0]);
        assert.deepEqual(await ids({ experiment: EXP }), [1, "run-a1"]);
        assert.deepEqual(await ids({ since: "2026-11-30T10:05:00Z" }), [2, "run-c7", "run-c6"]);
        assert.deepEqual(await ids({ limit: 2, offset: 1 }), [7, "run-c6", "run-c5"]);
        assert.deepEqual(await ids({ limit: 0 }), [7]);
        assert.deepEqual(await ids({ status: "cut", limit: 1, offset: 1 }), [2, "run-c5"]);
        // Filters together, as the viewer's runs page combines them (the indexes of schema step 4).
        assert.deepEqual(await ids({ agent: "beta", status: "cancelled" }), [1, "run-b3"]);
        assert.deepEqual(await ids({ agent: "alpha", status: "failed" }), [1, "run-a2"]);
        assert.deepEqual(await ids({ agent: "beta", status: "failed" }), [0]);
        assert.deepEqual(await ids({ agent: "alpha", status: "completed", experiment: EXP }), [1, "run-a1"]);
        assert.deepEqual(await ids({ agent: "beta", status: "running" }), [1, "run-b4"]);
        assert.deepEqual(await ids({ agent: "beta", limit: 1, offset: 1 }), [3, "run-b4"]);
        assert.deepEqual(await ids({ agent: "beta", limit: 1 }), [3, "run-c5"]);
        assert.deepEqual(await ids({ agent: "nobody" }), [0]);
        assert.deepEqual(await ids({ since: "2026-11-30T10:01:00Z", status: "failed" }), [1, "run-a2"]);
        assert.deepEqual(await ids({ experiment: `${EXP}?at=v1` }), [0]);
        await assert.rejects(() => listRuns(store, { limit: -1 }), ProveviError);
      }),
  });

  peerTest(peer, {
    name:
      `listRuns() on the ${kind} store: a run that ended but was never sealed, its writer gone, is cut in ` +
      `the list and under --status cut, and not under its ending's status`,
    fn: async () => {
      const gone = { ...writerProcess(), pid: await deadPid() } as unknown as Json;
      await withRuns(async (store) => {
        const ids = async (options: Parameters<typeof listRuns>[1]) => {
          const list = await listRuns(store, options);
          return [list.total, ...list.runs.map((r) => `${r.run_id} ${r.status}`)];
        };
        assert.deepEqual(await ids({}), [4, "run-d4 cut", "run-d3 cut", "run-d2 failed", "run-d1 completed"]);
        assert.deepEqual(await ids({ status: "cut" }), [2, "run-d4 cut", "run-d3 cut"]);
        assert.deepEqual(await ids({ status: "completed" }), [1, "run-d1 completed"]);
        assert.deepEqual(await ids({ status: "failed" }), [1, "run-d2 failed"]);
      }, [
        { id: "run-d1", agent: "delta", model: "test:d", end: "completed" },
        { id: "run-d2", agent: "delta", model: "test:d", end: { error: "ValueError" } },
        // killed at the seal: its ending is written, its seal is not, and its lock is free
        {
          id: "run-d3",
          agent: "delta",
          model: "test:d",
          end: "completed",
          seal: false,
          writer: gone,
          lock: "freed",
        },
        {
          id: "run-d4",
          agent: "delta",
          model: "test:d",
          end: { error: "ValueError" },
          seal: false,
          writer: gone,
          lock: "freed",
        },
      ]);
    },
  });

  peerTest(peer, {
    name: `listRuns() on the ${kind} store lists oldest first when asked (the seed's order), and pages so`,
    fn: () =>
      withRuns(async (store) => {
        const list = await listRuns(store, { oldestFirst: true });
        assert.deepEqual(list.runs.map((r) => r.run_id), [
          "run-a1",
          "run-a2",
          "run-b3",
          "run-b4",
          "run-c5",
          "run-c6",
          "run-c7",
        ]);
        assert.equal(list.runs[0]!.tokens, 20);
        const page = await listRuns(store, { oldestFirst: true, limit: 2, offset: 1 });
        assert.deepEqual([page.total, ...page.runs.map((r) => r.run_id)], [7, "run-a2", "run-b3"]);
        const beta = await listRuns(store, { oldestFirst: true, agent: "beta", limit: 2 });
        assert.deepEqual(beta.runs.map((r) => r.run_id), ["run-b3", "run-b4"]);
        const cut = await listRuns(store, { oldestFirst: true, status: "cut" });
        assert.deepEqual(cut.runs.map((r) => r.run_id), ["run-c5", "run-c6"]);
      }),
  });

  peerTest(peer, {
    name: `listRuns() on the ${kind} store finds an experiment's runs by its bare name, as by its URI`,
    fn: () => {
      const other = "experiment://acme/risk/dev/retail/q";
      return withRuns(async (store) => {
        const ids = async (experiment: string) => {
          const list = await listRuns(store, { experiment, oldestFirst: true });
          return [list.total, ...list.runs.map((r) => r.run_id)];
        };
        assert.deepEqual(await ids(EXP), [2, "run-e1", "run-e2"]);
        assert.deepEqual(await ids("credit/q"), [2, "run-e1", "run-e2"]);
        assert.deepEqual(await ids("dev/credit/q"), [2, "run-e1", "run-e2"]);
        // A bare name that two experiments end with names both, as a bare agent name names every class.
        assert.deepEqual(await ids("q"), [3, "run-e1", "run-e2", "run-e3"]);
        assert.deepEqual(await ids("retail/q"), [1, "run-e3"]);
        // A name is whole parts of the URI, not any ending of it.
        assert.deepEqual(await ids("redit/q"), [0]);
        assert.deepEqual(await ids("nothing"), [0]);
        // A pinned name: that version's runs.
        assert.deepEqual(await ids("credit/q?at=commit:2"), [1, "run-e2"]);
        assert.deepEqual(await ids(`${EXP}?at=commit:1`), [1, "run-e1"]);
        assert.deepEqual(await ids("q?at=commit:1"), [1, "run-e1"]);
        assert.deepEqual(await ids("q?at=commit:9"), [0]);
      }, [
        {
          id: "run-e1",
          agent: "epsilon",
          model: "test:e",
          end: "completed",
          experiment: EXP,
          pin: `${EXP}?at=commit:1`,
        },
        {
          id: "run-e2",
          agent: "epsilon",
          model: "test:e",
          end: "completed",
          experiment: EXP,
          pin: `${EXP}?at=commit:2`,
        },
        { id: "run-e3", agent: "epsilon", model: "test:e", end: "completed", experiment: other },
        { id: "run-e4", agent: "epsilon", model: "test:e", end: "completed" },
      ]);
    },
  });

  peerTest(peer, {
    name: `resolveRunRef() on the ${kind} store takes latest and an unambiguous start of a run ID`,
    fn: () =>
      withRuns(async (store) => {
        assert.equal(await resolveRunRef(store, "latest"), "run-c7");
        assert.equal(await resolveRunRef(store, "run-a1"), "run-a1");
        assert.equal(await resolveRunRef(store, "run-b4"), "run-b4");
        assert.equal(await resolveRunRef(store, "run-c5"), "run-c5");
        await assert.rejects(
          () => resolveRunRef(store, "run-a"),
          /"run-a" starts more than one run .*run-a1, run-a2/,
        );
        assert.equal((await findRun("run-b3", { store })).runId, "run-b3");
        assert.equal((await findRun("latest", { store })).runId, "run-c7");
        await assert.rejects(() => findRun("run-x", { store }), RunNotFound);
        await assert.rejects(() => findRun("run-c", { store }), /starts more than one run/);
      }),
  });
}

for (const [kind, open] of STORES.filter(([k]) => k !== "postgres")) {
  Deno.test(`resolveRunRef() on the ${kind} store: latest of two runs begun in one second is the one begun last`, async () => {
    // Their IDs share the second; the random ends sort the other way round from their start.
    const dir = await Deno.makeTempDir({ prefix: "list-runs-" });
    const { store } = await open(dir);
    try {
      const run = (id: string) => ({ id, agent: "a", model: "test:a", end: "completed" as const });
      await writeSketch(store, run("run-20261130T095959Z-99999999"), 0);
      await writeSketch(store, run("run-20261130T100000Z-ffffffff"), 1);
      await writeSketch(store, run("run-20261130T100000Z-00000000"), 2);
      assert.equal(await resolveRunRef(store, "latest"), "run-20261130T100000Z-00000000");
      await writeSketch(store, run("run-20261130T100001Z-00000000"), 3);
      assert.equal(await resolveRunRef(store, "latest"), "run-20261130T100001Z-00000000");
    } finally {
      await store.close();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("resolveRunRef() on a store with no runs says there is no latest run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "list-runs-" });
  try {
    await using store = new FileStore({ runs: dir });
    await assert.rejects(() => resolveRunRef(store, "latest"), /there is no latest run/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("listRuns() on a file store whose runs root does not exist is an error, not an empty list", async () => {
  await using store = new FileStore({ runs: "/nonexistent/runs" });
  await assert.rejects(() => listRuns(store), /the runs root \/nonexistent\/runs does not exist/);
});
