import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { checkRunRows } from "../../../lib/provevi/sqlite/sqlite_check.ts";
import type { ProblemCode } from "../../../lib/provevi/evidence/problem_codes.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { writeRichRun } from "../_rich_run.ts";

const EXP = "experiment://acme/risk/dev/credit/q";
const PIN = `${EXP}?at=commit:${"1".repeat(40)}`;
const RUN = "run-20261129T120000Z-0000c0de";
const K = `run_id "${RUN}"`;

/** Each way of changing a row, and the row the problem must name. */
const CHANGES: [string, string, RegExp][] = [
  [
    "an event's column",
    `UPDATE provevi_events SET type = 'note_added' WHERE seq = 2`,
    new RegExp(`provevi_events \\(${K}, seq 2\\): column type`),
  ],
  [
    "an event's time",
    `UPDATE provevi_events SET time = '2020-01-01T00:00:00Z' WHERE seq = 1`,
    new RegExp(`provevi_events \\(${K}, seq 1\\): column time`),
  ],
  [
    "an event's line",
    `UPDATE provevi_events SET line = replace(line, 'mounted_snapshot', 'copy') WHERE seq = 1`,
    new RegExp(`provevi_events \\(${K}, seq 1\\): its line differs`),
  ],
  [
    "a deleted event",
    `DELETE FROM provevi_events WHERE seq = 3`,
    new RegExp(`provevi_events lacks the rows of run "${RUN}" for seq 3`),
  ],
  [
    "a deleted last event",
    `DELETE FROM provevi_events WHERE seq = (SELECT max(seq) FROM provevi_events)`,
    /lines \d+–\d+ are not in the store/,
  ],
  [
    "an event's URI",
    `UPDATE provevi_event_refs SET uri = 'data+table://acme/x' WHERE seq = 1`,
    new RegExp(`provevi_event_refs \\(${K}, seq 1\\) holds`),
  ],
  [
    "a deleted URI",
    `DELETE FROM provevi_event_refs WHERE seq = 2`,
    new RegExp(`provevi_event_refs \\(${K}, seq 2\\) holds \\[\\]`),
  ],
  ["a deleted run", `DELETE FROM provevi_runs`, new RegExp(`provevi_runs \\(${K}\\) is missing`)],
  [
    "the run's org",
    `UPDATE provevi_runs SET org = 'evil'`,
    new RegExp(`provevi_runs \\(${K}\\): column org`),
  ],
  [
    "the run's actor",
    `UPDATE provevi_runs SET actor = 'eve'`,
    new RegExp(`provevi_runs \\(${K}\\): column actor`),
  ],
  [
    "the run's mode",
    `UPDATE provevi_runs SET mode = 'lenient'`,
    new RegExp(`provevi_runs \\(${K}\\): column mode`),
  ],
  [
    "the run's parent",
    `UPDATE provevi_runs SET parent_run = 'run-other'`,
    new RegExp(`provevi_runs \\(${K}\\): column parent_run`),
  ],
  [
    "the run's status",
    `UPDATE provevi_runs SET status = 'failed'`,
    new RegExp(`provevi_runs \\(${K}\\): status`),
  ],
  [
    "the run's start",
    `UPDATE provevi_runs SET started_at = '2020-01-01T00:00:00Z'`,
    new RegExp(`provevi_runs \\(${K}\\): column started_at`),
  ],
  [
    "the run's end",
    `UPDATE provevi_runs SET ended_at = NULL`,
    new RegExp(`provevi_runs \\(${K}\\): ended_at`),
  ],
  [
    "the run's agent",
    `UPDATE provevi_runs SET agent = 'acme/demo/dev/other'`,
    new RegExp(`provevi_runs \\(${K}\\): column agent `),
  ],
  [
    "the run's agent version",
    `UPDATE provevi_runs SET agent_version = '${"0".repeat(64)}'`,
    new RegExp(`provevi_runs \\(${K}\\): column agent_version`),
  ],
  [
    "the run's experiment",
    `UPDATE provevi_runs SET experiment = 'experiment://x'`,
    new RegExp(`provevi_runs \\(${K}\\): column experiment `),
  ],
  [
    "the run's experiment pin",
    `UPDATE provevi_runs SET experiment_pin = NULL`,
    new RegExp(`provevi_runs \\(${K}\\): column experiment_pin`),
  ],
  [
    "the run's experiment hash",
    `UPDATE provevi_runs SET experiment_sha256 = 'x'`,
    new RegExp(`provevi_runs \\(${K}\\): column experiment_sha256`),
  ],
  [
    "the manifest hash",
    `UPDATE provevi_runs SET manifest_sha256 = '${"0".repeat(64)}'`,
    new RegExp(`provevi_runs \\(${K}\\): manifest_sha256`),
  ],
  [
    "the last hash",
    `UPDATE provevi_runs SET last_hash = NULL`,
    new RegExp(`provevi_runs \\(${K}\\): last_hash`),
  ],
  [
    "the bundle's place",
    `UPDATE provevi_runs SET bundle_pinned = 'run://x?at=commit:0'`,
    new RegExp(`provevi_runs \\(${K}\\): bundle_pinned`),
  ],
  [
    "a setting",
    `UPDATE provevi_run_params SET value = '"gpt-x"' WHERE key = 'model'`,
    new RegExp(`provevi_run_params \\(${K}, key model\\): value`),
  ],
  [
    "a deleted setting",
    `DELETE FROM provevi_run_params WHERE key = 'limits'`,
    new RegExp(`provevi_run_params \\(${K}, key limits\\) is missing`),
  ],
  [
    "an added setting",
    `INSERT INTO provevi_run_params VALUES ('${RUN}', 'secret', '"x"')`,
    new RegExp(`provevi_run_params \\(${K}, key secret\\) is not a setting`),
  ],
  [
    "the agent class",
    `UPDATE provevi_agents SET org = 'evil'`,
    /provevi_agents \(agent acme\/demo\/dev\/revenue-question\): column org/,
  ],
  [
    "a deleted agent class",
    `DELETE FROM provevi_agents`,
    /provevi_agents \(agent acme\/demo\/dev\/revenue-question\) is missing/,
  ],
  [
    "the agent version's model",
    `UPDATE provevi_agent_versions SET model = 'other'`,
    /provevi_agent_versions \(agent acme\/demo\/dev\/revenue-question, version [0-9a-f]{64}\): column model/,
  ],
  [
    "a deleted agent version",
    `DELETE FROM provevi_agent_versions`,
    /provevi_agent_versions \(agent acme\/demo\/dev\/revenue-question, version [0-9a-f]{64}\) is missing/,
  ],
  [
    "a deleted experiment",
    `DELETE FROM provevi_experiments`,
    /provevi_experiments \(experiment experiment:\/\/acme\/risk\/dev\/credit\/q\) is missing/,
  ],
  [
    "the experiment version's hash",
    `UPDATE provevi_experiment_versions SET sha256 = 'x'`,
    /provevi_experiment_versions \(experiment experiment:\/\/acme\/risk\/dev\/credit\/q, pin .*\): sha256/,
  ],
  [
    "a deleted experiment version",
    `DELETE FROM provevi_experiment_versions`,
    /provevi_experiment_versions \(experiment .*\) is missing/,
  ],
  [
    "a payload's size",
    `UPDATE provevi_payloads SET size = size + 1`,
    new RegExp(`provevi_payloads \\(${K}, sha256 [0-9a-f]{64}\\): size`),
  ],
  [
    "a deleted payload",
    `DELETE FROM provevi_payloads`,
    new RegExp(`provevi_payloads \\(${K}, sha256 [0-9a-f]{64}\\) is missing`),
  ],
  [
    "a trigger on a provevi table",
    `CREATE TRIGGER t AFTER INSERT ON provevi_events BEGIN SELECT 1; END`,
    /store: the schema has a trigger t/,
  ],
  [
    "an event's line of null",
    `UPDATE provevi_events SET line = 'null' WHERE seq = 1`,
    new RegExp(`provevi_events \\(${K}, seq 1\\): its line is not a JSON object`),
  ],
  [
    "a changed view",
    `DROP VIEW provevi_grants; CREATE VIEW provevi_grants AS SELECT 1`,
    /store: the schema's view provevi_grants was changed/,
  ],
];

/** A sqlite store in `dir` holding the rich run, with an experiment, a parent, an input and a bundle. */
async function richStore(dir: string): Promise<SqliteStore> {
  const store = new SqliteStore(join(dir, "evidence.db"), { runs: dir });
  await writeRichRun(await store.openRun(RUN), {
    experiment: EXP,
    experimentPin: PIN,
    experimentSha256: "e".repeat(64),
    parentRun: "run-parent",
    inputs: ["data+table://acme/demo/dev/evals/revenue"],
  });
  const bundle = {
    uri: `run://acme/demo/dev/${RUN}`,
    pinned: `run://acme/demo/dev/${RUN}?at=commit:${"9".repeat(40)}`,
  };
  await Deno.writeTextFile(join(dir, RUN, "bundle.json"), JSON.stringify(bundle));
  await store.recordBundle(RUN, bundle);
  assert.deepEqual(await store.checkRun(RUN), []);
  return store;
}

/** A change of each kind of row, and the code of its problem. */
const CODES: [string, ProblemCode][] = [
  [`UPDATE provevi_events SET type = 'note_added' WHERE seq = 2`, "rows.event_differs"],
  [`UPDATE provevi_event_refs SET uri = 'data+table://acme/x' WHERE seq = 1`, "rows.refs_differ"],
  [`DELETE FROM provevi_events WHERE seq = 3`, "rows.events_missing"],
  [`DELETE FROM provevi_runs`, "rows.run_missing"],
  [`UPDATE provevi_runs SET status = 'failed'`, "rows.run_differs"],
  [`UPDATE provevi_run_params SET value = '"gpt-x"' WHERE key = 'model'`, "rows.settings_differ"],
  [`DELETE FROM provevi_agent_versions`, "rows.settings_differ"],
  [`UPDATE provevi_payloads SET size = size + 1`, "rows.payload_differs"],
  [`UPDATE provevi_runs SET bundle_pinned = 'run://x?at=commit:0'`, "rows.bundle_differs"],
  [`CREATE TRIGGER t AFTER INSERT ON provevi_events BEGIN SELECT 1; END`, "rows.schema"],
];

Deno.test("checkRun() gives each kind of changed row its own code", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-check-" });
  try {
    await using store = await richStore(dir);
    for (const [sql, code] of CODES) {
      store.db.exec("BEGIN");
      try {
        store.db.exec(sql);
        const problems = await checkRunRows(store.db, RUN);
        assert.deepEqual([...new Set(problems.map((p) => p.code))], [code], sql);
      } finally {
        store.db.exec("ROLLBACK");
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("checkRun() fails each way of changing a row with a problem naming the row", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-check-" });
  try {
    await using store = await richStore(dir);
    // The bundle and the experiment here name commits of no catalog: only they may fail, not the rows.
    const problems = (await verifyRun(await store.readRun(RUN), { store })).problems.map((p) => p.message);
    assert.deepEqual(problems.filter((p) => !/no catalog was given/.test(p)), []);
    const db = store.db;
    for (const [what, sql, expected] of CHANGES) {
      db.exec("BEGIN");
      try {
        db.exec(sql);
        const problems = (await checkRunRows(db, RUN)).map((p) => p.message);
        assert.ok(problems.some((p) => expected.test(p)), `${what}: ${JSON.stringify(problems, null, 2)}`);
      } finally {
        db.exec("ROLLBACK");
      }
    }
    assert.deepEqual(await store.checkRun(RUN), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("verifyRun() with a sqlite store reports a changed row", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-check-" });
  try {
    await using store = new SqliteStore(join(dir, "evidence.db"), { runs: dir });
    await writeRichRun(await store.openRun(RUN));
    store.db.exec("UPDATE provevi_events SET actor = 'eve' WHERE seq = 0");
    const check = await verifyRun(await store.readRun(RUN), { store });
    assert.equal(check.ok, false);
    assert.match(
      check.problems.map((p) => p.message).join("\n"),
      /provevi_events \(run_id ".*", seq 0\): column actor is "eve"/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("checkRun() reports events.jsonl that cannot be read, or is not UTF-8, and does not throw", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-check-" });
  try {
    await using store = new SqliteStore(join(dir, "evidence.db"), { runs: dir });
    await writeRichRun(await store.openRun(RUN));
    const events = join(dir, RUN, "evidence", "events.jsonl");
    const bytes = await Deno.readFile(events);
    await Deno.writeFile(events, new Uint8Array([...bytes, 0xff, 0x0a]));
    assert.match(
      (await store.checkRun(RUN)).map((p) => p.message).join("\n"),
      /events\.jsonl cannot be read: .* is not valid UTF-8/,
    );
    await Deno.remove(events);
    await Deno.mkdir(events);
    assert.match(
      (await store.checkRun(RUN)).map((p) => p.message).join("\n"),
      /events\.jsonl cannot be read/,
    );
    assert.equal((await verifyRun(await store.readRun(RUN), { store })).ok, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Rows that borrow the run: forged as if the run reported them, or judging what the run lacks. */
const FORGED: [string, string, RegExp][] = [
  [
    "a forged experiment version",
    `INSERT INTO provevi_experiment_versions VALUES ('${EXP}', '${EXP}?at=commit:${
      "2".repeat(40)
    }', NULL, '${RUN}')`,
    new RegExp(`provevi_experiment_versions \\(experiment ${EXP}, pin \\S+2{40}\\) names run "${RUN}"`),
  ],
  [
    "a forged experiment",
    `INSERT INTO provevi_experiments VALUES ('experiment://acme/x/dev/f/q', '${RUN}')`,
    new RegExp(`provevi_experiments \\(experiment experiment://acme/x/dev/f/q\\) names run "${RUN}"`),
  ],
  [
    "a forged agent version",
    `INSERT INTO provevi_agent_versions (agent, version, first_run)
     VALUES ('acme/demo/dev/revenue-question', '${"a".repeat(64)}', '${RUN}')`,
    new RegExp(`provevi_agent_versions \\(agent acme/demo/dev/revenue-question, version a{64}\\) names run`),
  ],
  [
    "a forged agent class",
    `INSERT INTO provevi_agents VALUES ('acme/demo/dev/ghost', 'acme', 'demo', 'dev', 'ghost', '${RUN}')`,
    /provevi_agents \(agent acme\/demo\/dev\/ghost\) names run/,
  ],
  [
    "an assessment of an event the run lacks",
    `INSERT INTO provevi_assessments (run_id, seq, name, value, created_at) VALUES ('${RUN}', 999, 'x', '1', 't')`,
    new RegExp(`provevi_assessments \\(id \\d+, ${K}\\) judges event 999, which the run lacks`),
  ],
  [
    "an assessment of a span the run lacks",
    `INSERT INTO provevi_assessments (run_id, span_id, name, value, created_at)
     VALUES ('${RUN}', '0123456789abcdef', 'x', '1', 't')`,
    new RegExp(`provevi_assessments \\(id \\d+, ${K}\\) judges span 0123456789abcdef`),
  ],
  [
    "an assessment whose value is not JSON",
    `INSERT INTO provevi_assessments (run_id, name, value, created_at) VALUES ('${RUN}', 'x', 'nope', 't')`,
    new RegExp(`provevi_assessments \\(id \\d+, ${K}\\): its value is not JSON`),
  ],
];

Deno.test("checkRun() reports a forged row that names the run as its first, and an assessment of what the run lacks", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-check-" });
  try {
    await using store = new SqliteStore(join(dir, "evidence.db"), { runs: dir });
    await writeRichRun(await store.openRun(RUN), { experiment: EXP, experimentPin: PIN });
    await store.assess(`${RUN}#1`, "ok", true);
    assert.deepEqual(await store.checkRun(RUN), []);
    const db = store.db;
    for (const [what, sql, expected] of FORGED) {
      db.exec("BEGIN");
      try {
        db.exec(sql);
        const problems = (await checkRunRows(db, RUN)).map((p) => p.message);
        assert.ok(problems.some((p) => expected.test(p)), `${what}: ${JSON.stringify(problems, null, 2)}`);
      } finally {
        db.exec("ROLLBACK");
      }
    }
    assert.deepEqual(await store.checkRun(RUN), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a row that missed its run's seal (its writer killed between the folder's seal and the row's) is completed from the folder when the run is read; a folder whose seal disagrees with its lines is not copied", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-check-" });
  try {
    await using store = new SqliteStore(join(dir, "evidence.db"), { runs: dir });
    await writeRichRun(await store.openRun(RUN));
    const sealed = store.db.prepare(
      "SELECT last_hash, manifest_sha256, sealed_at, status, ended_at FROM provevi_runs",
    )
      .get();
    const unseal = "UPDATE provevi_runs SET last_hash = NULL, manifest_sha256 = NULL, sealed_at = NULL";
    store.db.exec(unseal);
    // A store opened only to read writes nothing, so its check says what the row lacks.
    {
      await using reader = new SqliteStore(join(dir, "evidence.db"), { runs: dir, create: false });
      assert.match(
        (await reader.checkRun(RUN)).map((p) => p.message).join("\n"),
        /manifest_sha256 is null, but manifest\.json hashes to/,
      );
    }
    const check = await verifyRun(await store.readRun(RUN), { store });
    assert.deepEqual(check.problems.map((p) => p.message), []);
    assert.deepEqual(
      store.db.prepare("SELECT last_hash, manifest_sha256, sealed_at, status, ended_at FROM provevi_runs")
        .get(),
      sealed,
    );
    // A line added after the seal: the manifest's last hash is not the last line's, so nothing is copied.
    store.db.exec(unseal);
    const events = join(dir, RUN, "evidence", "events.jsonl");
    const lines = (await Deno.readTextFile(events)).trimEnd().split("\n");
    await Deno.writeTextFile(events, [...lines, lines[0]].join("\n") + "\n");
    const tampered = await verifyRun(await store.readRun(RUN), { store });
    assert.equal(tampered.ok, false);
    assert.match(tampered.problems.map((p) => p.message).join("\n"), /out of sequence/);
    assert.equal(store.db.prepare("SELECT manifest_sha256 FROM provevi_runs").get()!.manifest_sha256, null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("rows a run's writer could not write before its folder was sealed (its last events, a payload, the seal) are completed from the folder when the run is read or checked, as the writer would have written them", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-check-" });
  try {
    await using store = new SqliteStore(join(dir, "evidence.db"), { runs: dir });
    await writeRichRun(await store.openRun(RUN), { inputs: ["data+table://acme/demo/dev/in/a"], notes: 2 });
    const tables = ["provevi_runs", "provevi_events", "provevi_event_refs", "provevi_payloads"];
    const dump = () => tables.map((t) => store.db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all());
    const whole = dump();
    const lose = `DELETE FROM provevi_events WHERE seq >= 3; DELETE FROM provevi_event_refs WHERE seq >= 3;
      DELETE FROM provevi_payloads;
      UPDATE provevi_runs SET last_hash = NULL, manifest_sha256 = NULL, sealed_at = NULL, status = 'running'`;
    for (const read of ["readRun", "checkRun"] as const) {
      store.db.exec(lose);
      if (read === "readRun") await store.readRun(RUN);
      assert.deepEqual(await store.checkRun(RUN), [], read);
      assert.deepEqual(dump(), whole, read);
    }
    // Opened only to read, the store writes nothing: the check says what the rows lack.
    store.db.exec(lose);
    await using reader = new SqliteStore(join(dir, "evidence.db"), { runs: dir, create: false });
    assert.match(
      (await verifyRun(await reader.readRun(RUN), { store: reader })).problems.map((p) => p.message).join(
        "\n",
      ),
      /lines 4–/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("verifyRun() compares the rows with the folder's texts it read, and finds what checkRun() finds reading them itself", async () => {
  const changes = [
    "UPDATE provevi_events SET actor = 'eve' WHERE seq = 0",
    `UPDATE provevi_events SET line = replace(line, '"actor":', '"actor": ') WHERE seq = 1`,
    "UPDATE provevi_events SET line = 'not json' WHERE seq = 2",
    "DELETE FROM provevi_events WHERE seq = 1",
    "UPDATE provevi_events SET seq = 9 WHERE seq = 1",
  ];
  for (const change of changes) {
    const dir = await Deno.makeTempDir({ prefix: "provevi-check-" });
    try {
      await using store = new SqliteStore(join(dir, "evidence.db"), { runs: dir });
      await writeRichRun(await store.openRun(RUN));
      store.db.exec(change);
      const alone = (await store.checkRun(RUN)).map((p) => p.message);
      const rows = (await verifyRun(await store.readRun(RUN), { store })).problems
        .filter((p) => p.code.startsWith("rows.")).map((p) => p.message);
      assert.ok(alone.length > 0, change);
      assert.deepEqual(rows, alone, change);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});

Deno.test("verifyRun() of a record whose events are not its folder's still compares the rows with the folder's files", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-check-" });
  try {
    await using store = new SqliteStore(join(dir, "evidence.db"), { runs: dir });
    await writeRichRun(await store.openRun(RUN));
    // rows changed, and a record that reads its events from those rows (as `prove show` reads a store's)
    store.db.exec(`UPDATE provevi_events SET line = replace(line, '"actor":', '"actor": ') WHERE seq = 1`);
    const rowsText =
      (store.db.prepare("SELECT line FROM provevi_events WHERE run_id = ? ORDER BY seq").all(RUN) as {
        line: string;
      }[]).map((r) => `${r.line}\n`).join("");
    const folder = await store.readRun(RUN);
    const record = {
      runId: folder.runId,
      folder: folder.folder,
      eventsText: () => Promise.resolve(rowsText),
      manifestText: () => folder.manifestText(),
      payloadNames: () => folder.payloadNames(),
      payloadInfo: (sha: string) => folder.payloadInfo(sha),
      payloadPack: () => folder.payloadPack(),
      payload: (sha: string) => folder.payload(sha),
    };
    const problems = (await verifyRun(record, { store })).problems.map((p) => p.message).join("\n");
    assert.match(
      problems,
      /provevi_events \(run_id ".*", seq 1\): its line differs from line 2 of events\.jsonl/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("checkRun() of one connection sees each change of the schema, committed or rolled back", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-check-" });
  try {
    await using store = await richStore(dir);
    const other = new DatabaseSync(join(dir, "evidence.db"));
    try {
      const schema = async () => (await checkRunRows(store.db, RUN)).map((p) => p.message);
      assert.deepEqual(await schema(), []);
      // another connection commits a change: the next check sees it, and its undoing
      other.exec("CREATE TRIGGER t AFTER INSERT ON provevi_events BEGIN SELECT 1; END");
      assert.match((await schema()).join("\n"), /the schema has a trigger t/);
      other.exec("DROP TRIGGER t");
      assert.deepEqual(await schema(), []);
      // changes of this connection's own, each rolled back: the next one has the same version
      for (const [sql, expected] of CHANGED_SCHEMAS) {
        store.db.exec("BEGIN");
        try {
          store.db.exec(sql);
          assert.match((await schema()).join("\n"), expected, sql);
        } finally {
          store.db.exec("ROLLBACK");
        }
      }
      assert.deepEqual(await schema(), []);
    } finally {
      other.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const CHANGED_SCHEMAS: [string, RegExp][] = [
  ["CREATE TRIGGER t AFTER INSERT ON provevi_events BEGIN SELECT 1; END", /the schema has a trigger t/],
  ["CREATE TRIGGER u AFTER INSERT ON provevi_runs BEGIN SELECT 1; END", /the schema has a trigger u/],
  ["CREATE TABLE provevi_more (x)", /the schema has a table provevi_more that provevi does not make/],
];

Deno.test("checkRun() of one connection sees a change of the schema whose version another connection set back", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-check-" });
  try {
    await using store = await richStore(dir);
    // not defensive, as the sqlite3 shell is: it may set the schema's version
    const other = new DatabaseSync(join(dir, "evidence.db"));
    (other as unknown as { enableDefensive(on: boolean): void }).enableDefensive(false);
    try {
      const schema = async () => (await checkRunRows(store.db, RUN)).map((p) => p.message);
      assert.deepEqual(await schema(), []);
      const version = () =>
        (other.prepare("PRAGMA schema_version").get() as { schema_version: number }).schema_version;
      const before = version();
      other.exec("CREATE TRIGGER t AFTER INSERT ON provevi_events BEGIN SELECT 1; END");
      other.exec(`PRAGMA schema_version = ${before}`);
      assert.match((await schema()).join("\n"), /the schema has a trigger t/);
    } finally {
      other.close();
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
