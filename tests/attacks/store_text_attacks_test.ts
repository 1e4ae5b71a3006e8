/**
 * Texts that a column refuses or changes, in every string a run carries into the indexed stores: its actor,
 * org, agent name and model, experiment, parent run, the URIs its events name, an input's name, a refusal's
 * reason, a step's component and tool name, and the error text of its failure. PostgreSQL's `text` refuses a
 * NUL and `jsonb` its escape; SQLite cuts a text at a NUL when it reads it; both change half a surrogate pair.
 * Each run, through the recorder in strict and in lenient mode, into the sqlite and the postgres store, must
 * lose no event, verify with the store, and leave every question across runs answering (the NUL's escape where
 * the column holds it).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { buildManifest } from "../../lib/provevi/evidence/manifest.ts";
import { verify } from "../../lib/provevi/evidence/verify.ts";
import { columnText } from "../../lib/provevi/store/store_rows.ts";
import type { EvidenceStore } from "../../lib/provevi/store/store.ts";
import { PostgresStore } from "../../lib/provevi/postgres/postgres_store.ts";
import { listRuns } from "../../lib/provevi/runs/list_runs.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { EvidenceRecorder } from "../../lib/provrun/run/recorder.ts";
import { freshDatabase } from "../provevi/postgres/_pg.ts";
import { Tally } from "./_tally.ts";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { provr } from "../../cli/provr.ts";
import { whyFailed } from "../../cli/_why_failed.ts";
import { peerTest } from "../_peers.ts";

const tally = new Tally("texts a column refuses");

/** The corpus: each text goes into every string of one run. */
const NASTY: [string, string][] = [
  ["a NUL", "ada\u0000x"],
  ["only a NUL", "\u0000"],
  ["NULs at both ends", "\u0000mid\u0000"],
  ["a NUL's escape written out", "ada\\u0000x"],
  ["a backslash before a NUL", "ada\\\u0000x"],
  ["control characters", "a\u0001\u001f\u007f\u0085b"],
  ["line breaks", "a\r\nb\u2028c\u2029d"],
  ["a byte order mark", "\ufeffada"],
  ["non-characters", "a\ufffe\uffffb"],
  ["an astral character", "ada \u{1F600} \u{10FFFF}"],
  ["SQL", "x'); DROP TABLE provevi_runs; --"],
  ["placeholders and wildcards", "$1 ? %_ \\"],
  ["a long text", "n\u0000".repeat(5000)],
];

/** Writes one run with `text` everywhere a run carries a string, ending with a failure that quotes it. */
async function writeRun(store: EvidenceStore, runId: string, text: string, mode: "strict" | "lenient") {
  const recorder = new EvidenceRecorder(await store.openRun(runId), { actor: `actor ${text}`, mode });
  const uri = `data+table://acme/demo/dev/in/${text}`;
  await recorder.record({
    type: "run_created",
    component: "RunContext",
    refs: [`run://acme/demo/dev/${runId}`],
    data: {
      org: `acme${text}`,
      domain: "demo",
      env: "dev",
      actor: `actor ${text}`,
      mode,
      agent: `agent ${text}`,
      backend: "call",
      model: `model ${text}`,
      spec: { name: `agent ${text}`, backend: "call", model: `model ${text}`, instructions: text },
      experiment: `experiment://acme/demo/dev/${text}`,
      experiment_pin: `experiment://acme/demo/dev/${text}?at=commit:${"e".repeat(40)}`,
      experiment_sha256: "f".repeat(64),
      parent_run: `run-parent ${text}`,
    },
  });
  await recorder.record({
    type: "access_granted",
    component: "StubBroker",
    refs: [uri],
    data: { mode: text },
  });
  await recorder.record({
    type: "input_staged",
    component: "InProcessStager",
    refs: [`${uri}?at=commit:${"c".repeat(40)}`],
    data: { name: `name ${text}`, sha256: "b".repeat(64) },
  });
  await recorder.record({
    type: "access_denied",
    component: `Broker ${text}`,
    refs: [`${uri}/denied`],
    data: { mode: "mounted_snapshot", reason: `reason ${text}` },
  });
  const payload = await recorder.payload(`a reply that quotes ${text}`);
  await recorder.record({
    type: "tool_called",
    component: `tool ${text}`,
    payload,
    data: { tool: `read_file${text}`, path: `file ${text}`, error: `error ${text}` },
  });
  await recorder.record({
    type: "run_failed",
    component: "RunContext",
    data: { error: `Error${text}`, message: `the tool failed on ${text}` },
  });
  return { manifest: await recorder.seal(), uri, events: 6 };
}

/** Runs the corpus through one store in one mode; returns what went wrong, one line each. */
async function attack(
  store: EvidenceStore & SqliteStore | PostgresStore,
  label: string,
  mode: "strict" | "lenient",
) {
  const failures: string[] = [];
  let i = 0;
  for (const [name, text] of NASTY) {
    const runId = `run-20261201T120000Z-${mode.slice(0, 1)}${String(i++).padStart(7, "0")}`;
    const what = `${name} (${label}, ${mode})`;
    let lost = true, verifies = false;
    try {
      const { manifest, uri, events } = await writeRun(store, runId, text, mode);
      lost = manifest.lost.length > 0 || manifest.events !== events;
      // The evidence and the rows; the experiment's pin is not compared, as no catalog holds it.
      const problems = [
        ...(await verify(await store.readRun(runId))).problems,
        ...await store.checkRun(runId),
      ];
      verifies = problems.length === 0;
      if (lost) failures.push(`${what}: lost ${JSON.stringify(manifest.lost).slice(0, 300)}`);
      if (problems.length) {
        failures.push(`${what}: ${problems.map((p) => p.message).join("; ").slice(0, 300)}`);
      }
      // The questions across runs answer, each text as its column holds it.
      const row = await store.run(runId);
      assert.equal(row?.actor, columnText(`actor ${text}`), what);
      assert.equal(row?.org, columnText(`acme${text}`), what);
      const access = await store.access(runId);
      assert.deepEqual(access.map((a) => a.decision), ["granted", "denied"], what);
      assert.equal(access[1]!.reason, columnText(`reason ${text}`), what);
      assert.equal((await store.inputs(runId))[0]?.name, columnText(`name ${text}`), what);
      assert.ok((await store.runsReading(uri)).some((r) => r.run_id === runId), `${what}: runsReading`);
      assert.ok(
        (await store.runsOfAgent(`agent ${text}`)).some((r) => r.run_id === runId),
        `${what}: runsOfAgent`,
      );
    } catch (error) {
      failures.push(`${what}: ${(error as Error).message.slice(0, 300)}`);
      verifies = false;
    }
    tally.add(what, { stopped: verifies, recorded: !lost });
  }
  // The listing of runs reads each run's first line and ending: every run is there, its model as held.
  const listed = new Map((await listRuns(store, { status: "failed" })).runs.map((r) => [r.run_id, r.model]));
  NASTY.forEach(([name, text], n) => {
    const runId = `run-20261201T120000Z-${mode.slice(0, 1)}${String(n).padStart(7, "0")}`;
    if (listed.get(runId) !== columnText(`model ${text}`)) {
      failures.push(`${name} (${label}, ${mode}): listRuns`);
    }
  });
  return failures;
}

Deno.test("every text a column refuses, in every string of a run, through the sqlite store in both modes: no event lost, the run verifies, the questions answer", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-text-sqlite-" });
  try {
    await using store = new SqliteStore(join(dir, "evidence.db"), { runs: dir });
    const failures = [
      ...await attack(store, "sqlite", "strict"),
      ...await attack(store, "sqlite", "lenient"),
    ];
    assert.deepEqual(failures, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

peerTest("postgres", {
  name:
    "every text a column refuses, in every string of a run, through the postgres store in both modes: no event lost, the run verifies, the questions answer",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "attack-text-pg-" });
    const db = await freshDatabase();
    try {
      await using store = await PostgresStore.open(db.uri, { runs: dir });
      const failures = [
        ...await attack(store, "postgres", "strict"),
        ...await attack(store, "postgres", "lenient"),
      ];
      assert.deepEqual(failures, []);
    } finally {
      await db.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

peerTest("postgres", {
  name:
    "a line that holds half a surrogate pair (no RFC 8785 form, so no chain makes one) is still kept whole by both stores, its columns escaped",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "attack-surrogate-" });
    const db = await freshDatabase();
    try {
      await using sqlite = new SqliteStore(join(dir, "evidence.db"), { runs: join(dir, "s") });
      await using pg = await PostgresStore.open(db.uri, { runs: join(dir, "p") });
      for (const [label, store] of [["sqlite", sqlite], ["postgres", pg]] as const) {
        for (const text of ["x\ud800y", "\udc00", "a\ud800\u0000"]) {
          const what = `half a surrogate pair ${JSON.stringify(text)} (${label})`;
          const writer = await store.openRun(`run-20261201T120000Z-${crypto.randomUUID().slice(0, 8)}`);
          // A line made without the chain's check, as a store given lines by another program would get them.
          const chain = new EventChain(writer.runId);
          const made = chain.next({ type: "run_created", component: "RunContext", actor: "ada", data: {} });
          const event = { ...made.event, actor: text, component: text, refs: [`uri:${text}`] };
          const line = JSON.stringify(event);
          let kept = false;
          try {
            await writer.append(line, event);
            await writer.seal();
            const problems = await store.checkRun(writer.runId);
            kept = problems.length === 0;
            assert.deepEqual(problems.map((p) => p.message), [], what);
            assert.equal((await store.run(writer.runId))?.actor, columnText(text), what);
          } finally {
            tally.add(what, { stopped: kept, recorded: kept });
          }
        }
      }
    } finally {
      await db.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** A run file whose actor and prompt hold a NUL, as YAML writes it (`\0`). */
function nulRunFile(mode: "strict" | "lenient"): string {
  return `run: { org: acme, domain: demo, env: dev, actor: "ada\\0x", mode: ${mode} }
agent:
  name: q
  backend: call
  model: "test:"
  script: { turns: [{ text: "forty-two" }] }
prompt: "What is\\0the answer?"
`;
}

/** provr then prove verify, in-process, as a user types them. */
async function provrThenVerify(store: string, runs: string, file: string) {
  const io = bufferIo();
  const code = await provr(["--store", store, "--runs", runs, "run", file], io);
  const runId = io.stdout[0] ?? "";
  if (!runId) throw new Error(`provr wrote no run: ${io.stderr.join("\n")}`);
  const check = bufferIo();
  const verified = await prove(["--store", store, "--runs", runs, "verify", runId], check);
  const events = (await Deno.readTextFile(join(runs, runId, "evidence", "events.jsonl"))).trimEnd().split(
    "\n",
  );
  return {
    code,
    err: io.stderr.join("\n"),
    verified,
    said: [...check.stdout, ...check.stderr].join("\n"),
    events,
  };
}

peerTest("postgres", {
  name:
    "provr with a NUL in the run file's actor, into sqlite and postgres, strict and lenient: the run completes, keeps every event and verifies with the store",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "attack-text-provr-" });
    const db = await freshDatabase();
    try {
      const stores = [["sqlite", `sqlite:///${join(dir, "e.db")}`], ["postgres", db.uri]] as const;
      for (const [label, store] of stores) {
        for (const mode of ["strict", "lenient"] as const) {
          const what = `provr with a NUL in the actor (${label}, ${mode})`;
          const file = join(dir, `${label}-${mode}.yaml`);
          await Deno.writeTextFile(file, nulRunFile(mode));
          const r = await provrThenVerify(store, join(dir, `${label}-${mode}`), file);
          tally.add(what, { stopped: r.code === 0 && r.verified === 0, recorded: r.events.length >= 6 });
          assert.equal(r.code, 0, `${what}: ${r.err}`);
          assert.equal(r.verified, 0, `${what}: ${r.said}`);
          assert.match(r.events[0]!, /"actor":"ada\\u0000x"/, what);
          assert.match(r.events.at(-1)!, /"run_completed"/, what);
        }
      }
    } finally {
      await db.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("a failed run without an error is told by its manifest, never as undefined: undefined", () => {
  const manifest = buildManifest({
    run_id: "run-x",
    status: "incomplete",
    events: 0,
    last_hash: null,
    payloads: [],
    lost: [
      { type: "run_created", time: "t", error: 'cannot write event 0 of run "run-x": invalid byte sequence' },
      { type: "run_completed", time: "t", error: "the same" },
    ],
    sealed_at: "t",
  });
  const line = whyFailed({ runId: "run-x", manifest });
  assert.doesNotMatch(line, /undefined/);
  assert.match(
    line,
    /lenient mode lost 2 events, the first run_created: cannot write event 0 .*invalid byte/,
  );
  assert.equal(
    whyFailed({ runId: "run-x", error: { name: "EvidenceError", message: "m" }, manifest }),
    "EvidenceError: m",
  );
  assert.match(whyFailed({ runId: "run-x", manifest: null }), /not sealed/);
  assert.match(
    whyFailed({ runId: "run-x", error: { name: "", message: "" }, manifest }),
    /^Error: \(no message\)$/,
  );
});

Deno.test("the counts of texts a column refuses", () => {
  console.log(tally.line({ stopped: "verify with the store", recorded: "lost no event" }));
  assert.equal(tally.missed.length, 0, tally.line());
});
