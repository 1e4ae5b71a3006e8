import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { DatabaseSync } from "node:sqlite";
import type { EvidenceEvent } from "../../lib/provevi/evidence/event.ts";
import type { EvidenceStore } from "../../lib/provevi/store/store.ts";
import { ProveviError } from "../../lib/provevi/evidence/errors.ts";
import { readTrustedKey } from "../../lib/provevi/evidence/signing_key.ts";
import { exportRun } from "../../lib/provevi/runs/export_run.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { sqlitePath } from "../../lib/provevi/store/store_uri.ts";
import { writeRichRun } from "../provevi/_rich_run.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";

const FIXTURE_RUNS = new URL("../../fixtures/runs/", import.meta.url).pathname;
const EXP = "experiment://acme/risk/dev/credit/q";
const PIN = `${EXP}?at=commit:${"1".repeat(40)}`;
const REVENUE = "data+table://acme/demo/dev/evals/revenue";

async function run(args: string[]) {
  const io = bufferIo();
  const code = await prove(args, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

async function withStore(fn: (store: string, runs: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "prove-sqlite-" });
  const db = join(dir, "evidence.db");
  try {
    {
      await using store = new SqliteStore(db, { runs: join(dir, "runs") });
      await writeRichRun(await store.openRun("run-1"), {
        experiment: EXP,
        experimentPin: PIN,
        inputs: [REVENUE],
        denied: ["data+table://acme/demo/dev/evals/costs"],
        notes: 1,
      });
      await writeRichRun(await store.openRun("run-2"), { agent: "summariser" });
    }
    await fn(`sqlite:///${db}`, join(dir, "runs"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("prove runs --reading/--experiment/--agent lists runs from a sqlite store, with --json", () =>
  withStore(async (store) => {
    const reading = await run(["--store", store, "runs", "--reading", REVENUE]);
    assert.equal(reading.code, 0, reading.err);
    assert.match(
      reading.out,
      /^run-1 {2}completed {2}acme\/demo\/dev\/revenue-question {2}[0-9a-f]{12} {2}data\+table/,
    );
    const exp = await run(["--store", store, "runs", "--experiment", EXP, "--json"]);
    assert.deepEqual(JSON.parse(exp.out).map((r: { run_id: string }) => r.run_id), ["run-1"]);
    // A bare name lists the runs as the whole URI does, as it did before the table.
    for (const name of ["q", "credit/q", `credit/q?at=commit:${"1".repeat(40)}`]) {
      const named = await run(["--store", store, "runs", "--experiment", name, "--json"]);
      assert.deepEqual(JSON.parse(named.out).map((r: { run_id: string }) => r.run_id), ["run-1"], name);
    }
    const none = await run(["--store", store, "runs", "--experiment", "redit/q"]);
    assert.deepEqual([none.code, none.out, none.err], [0, "", "no runs"]);
    const agent = await run(["--store", store, "runs", "--agent", "summariser", "--json"]);
    assert.deepEqual(JSON.parse(agent.out).map((r: { run_id: string }) => r.run_id), ["run-2"]);
    const table = (await run(["--store", store, "runs"])).out.split("\n");
    assert.deepEqual(table.map((l) => l.split(/ +/).slice(0, 2)), [
      ["RUN", "STATUS"],
      ["run-2", "completed"],
      [
        "run-1",
        "completed",
      ],
    ]);
    assert.equal((await run(["--store", store, "runs", "--reading", "x", "--agent", "y"])).code, 2);
    const oldest = await run(["--store", store, "runs", "--oldest-first", "--json"]);
    assert.deepEqual(JSON.parse(oldest.out).map((r: { run_id: string }) => r.run_id), ["run-1", "run-2"]);
    const first = await run(["--store", store, "runs", "--oldest-first", "--limit", "1"]);
    assert.deepEqual(first.out.split("\n").map((l) => l.split(/ +/)[0]), ["RUN", "run-1"]);
    assert.equal(first.err, "(1 of 2 runs shown; --limit 2 shows all, --offset 1 the next)");
  }));

Deno.test("prove runs --reading/--experiment with a branch selector is refused in one line that says what to give", () =>
  withStore(async (store) => {
    for (const flag of ["--reading", "--experiment"]) {
      const r = await run(["--store", store, "runs", flag, `${REVENUE}?at=branch:main`]);
      assert.equal(r.code, 2);
      assert.equal(r.err.split("\n").length, 1);
      assert.match(r.err, new RegExp(`^prove: ${flag} .* names a branch, .*drop \\?at=branch:main`));
    }
  }));

Deno.test("prove experiments, experiment show, agents, agent show and access print aligned columns", () =>
  withStore(async (store) => {
    const exps = await run(["--store", store, "experiments"]);
    assert.equal(exps.out.split("\n")[1], `${EXP}  1         1     run-1`);
    const show = await run(["--store", store, "experiment", "show", "credit/q"]);
    assert.match(
      show.out,
      new RegExp(`^${EXP} \\(first run run-1\\)\\n  ${PIN.replace(/[?]/g, "\\?")}  -  run-1$`),
    );
    const agents = await run(["--store", store, "agents", "--json"]);
    assert.deepEqual(JSON.parse(agents.out).map((a: { agent: string }) => a.agent), [
      "acme/demo/dev/revenue-question",
      "acme/demo/dev/summariser",
    ]);
    const agent = await run(["--store", store, "agent", "show", "revenue-question"]);
    assert.match(
      agent.out,
      /^acme\/demo\/dev\/revenue-question \(first run run-1\)\n {2}[0-9a-f]{12} {2}call {2}test:answer/,
    );
    const access = await run(["--store", store, "access", "run-1"]);
    assert.match(access.out, /^ {3}1 {2}\S+ {2}granted {2}data\+table:\/\/acme\/demo\/dev\/evals\/revenue/);
    assert.match(
      access.out,
      /denied {3}data\+table:\/\/acme\/demo\/dev\/evals\/costs {4}mounted_snapshot {2}not granted$/,
    );
    const missing = await run(["--store", store, "agent", "show", "nobody"]);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /^prove: no run in store .* used an agent class nobody$/);
  }));

Deno.test("prove assess writes an assessment and prove show lists it after the events", () =>
  withStore(async (store) => {
    const a = await run([
      "--store",
      store,
      "assess",
      "run-1",
      "correct",
      "true",
      "--rationale",
      "ok",
      "--source",
      "ada",
    ]);
    assert.equal(a.code, 0, a.err);
    assert.equal((await run(["--store", store, "assess", "run-1", "score", "0.5", "--event", "2"])).code, 0);
    assert.equal(
      (await run(["--store", store, "assess", "run-1", "tone", "calm", "--span", "00000000000000a1"])).code,
      0,
    );
    assert.equal((await run(["--store", store, "assess", "run-1", "x", "1", "--event", "99"])).code, 1);
    const show = await run(["--store", store, "show", "run-1"]);
    assert.equal(show.code, 0, show.err);
    assert.match(
      show.out,
      new RegExp(
        [
          "\\nassessments:",
          "run {20}correct  true    ada  ok",
          "event 2 {16}score    0\\.5     -",
          'span 00000000000000a1  tone     "calm"  -$',
        ].join("\\n"),
      ),
    );
  }));

Deno.test("the questions across runs need a sqlite store: the file store exits 1 and says so", async () => {
  for (
    const args of [["runs", "--reading", "x"], ["experiments"], ["agents"], ["access", "run-x"], [
      "agent",
      "show",
      "x",
    ]]
  ) {
    const r = await run(["--runs", FIXTURE_RUNS, ...args]);
    assert.equal(r.code, 1);
    assert.match(r.err, /needs a sqlite store/);
  }
});

Deno.test("a sqlite store that is missing or not WAL is refused by prove with exit 1", async () => {
  const r = await run(["--store", "sqlite:////nonexistent/evidence.db", "runs"]);
  assert.equal(r.code, 1);
  assert.match(
    r.err,
    /^prove: cannot open store "sqlite:\/\/\/\/nonexistent\/evidence\.db": there is no file/,
  );
});

Deno.test("exportRun() copies a run from the file store to sqlite and back, keeping its seal, and both verify", async () => {
  const dir = await Deno.makeTempDir({ prefix: "prove-export-" });
  try {
    const from = new FileStore({ runs: FIXTURE_RUNS });
    await using sqlite = new SqliteStore(join(dir, "evidence.db"), { runs: join(dir, "indexed") });
    const check = await exportRun(SAMPLE_RUN_ID, { from, to: sqlite });
    assert.deepEqual(check.problems, []);
    const back = new FileStore({ runs: join(dir, "back") });
    assert.deepEqual((await exportRun(SAMPLE_RUN_ID, { from: sqlite, to: back })).problems, []);
    const original = join(FIXTURE_RUNS, SAMPLE_RUN_ID, "evidence");
    for (const f of ["events.jsonl", "manifest.json"]) {
      assert.equal(
        await Deno.readTextFile(join(dir, "back", SAMPLE_RUN_ID, "evidence", f)),
        await Deno.readTextFile(join(original, f)),
      );
    }
    assert.ok((await verifyRun(await back.readRun(SAMPLE_RUN_ID))).ok);
    await assert.rejects(() => exportRun(SAMPLE_RUN_ID, { from, to: sqlite }), /exists already/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("exportRun() copies a signed run of format 2 with its payloads.pack byte for byte, so its signature still verifies", async () => {
  const dir = await Deno.makeTempDir({ prefix: "prove-export-pack-" });
  try {
    const fixtures = new URL("../../fixtures/", import.meta.url).pathname;
    const from = new FileStore({ runs: join(fixtures, "vectors", "packed-signed") });
    const trust = [await readTrustedKey(join(fixtures, "keys", "signing.key.pub"))];
    await using sqlite = new SqliteStore(join(dir, "evidence.db"), { runs: join(dir, "indexed") });
    assert.deepEqual((await exportRun(SAMPLE_RUN_ID, { from, to: sqlite })).problems, []);
    const copied = await sqlite.readRun(SAMPLE_RUN_ID);
    const pack = (f: string) => Deno.readFile(join(f, "evidence", "payloads.pack"));
    assert.deepEqual(
      await pack(copied.folder!),
      await pack(join(fixtures, "vectors", "packed-signed", SAMPLE_RUN_ID)),
    );
    const check = await verifyRun(copied, { trust, store: sqlite });
    assert.deepEqual(check.problems, []);
    assert.deepEqual(check.signedBy, [trust[0]!.keyid]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("prove export --to copies a run into a sqlite store and says the copy verifies", async () => {
  const dir = await Deno.makeTempDir({ prefix: "prove-export-" });
  try {
    const uri = `sqlite:///${join(dir, "e.db")}`;
    const r = await run([
      "--runs",
      FIXTURE_RUNS,
      "export",
      SAMPLE_RUN_ID,
      "--to",
      uri,
      "--to-runs",
      join(dir, "runs"),
    ]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, `${SAMPLE_RUN_ID}: copied to ${uri}; the copy verifies`);
    const v = await run(["--store", uri, "--runs", join(dir, "runs"), "verify", SAMPLE_RUN_ID]);
    assert.equal(v.code, 0, v.out);
    const same = await run(["--runs", FIXTURE_RUNS, "export", SAMPLE_RUN_ID, "--to", "file"]);
    assert.equal(same.code, 1);
    assert.match(same.err, /its own folder/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("prove assess of a number too big for JSON keeps it as text, and assess() refuses Infinity with a ProveviError", () =>
  withStore(async (store, runs) => {
    const big = await run(["--store", store, "assess", "run-1", "score", "1e999", "--json"]);
    assert.equal(big.code, 0, big.err);
    assert.equal(JSON.parse(big.out).value, "1e999");
    await using s = new SqliteStore(sqlitePath(store), { runs });
    await assert.rejects(
      s.assess("run-1", "score", Infinity),
      (e: Error) => e instanceof ProveviError && /assessment "score" is not JSON/.test(e.message),
    );
    await assert.rejects(s.assess("run-1", "score", 1n), ProveviError);
  }));

Deno.test("a JSON column changed by hand makes agent show, access and show exit 1 with one line naming the row", () =>
  withStore(async (store, runs) => {
    assert.equal((await run(["--store", store, "assess", "run-1", "ok", "true"])).code, 0);
    const db = new DatabaseSync(sqlitePath(store));
    db.exec(`UPDATE provevi_agent_versions SET tools = 'not json';
      UPDATE provevi_run_params SET value = '{' WHERE key = 'model';
      UPDATE provevi_assessments SET value = 'nope'`);
    db.close();
    for (
      const [args, row] of [
        [
          ["agent", "show", "revenue-question"],
          /provevi_agent_versions \(agent \S+, version [0-9a-f]{64}\): tools/,
        ],
        [["access", "run-1"], /provevi_run_params \(run_id "run-1", key model\)/],
        [["--runs", runs, "show", "run-1"], /provevi_assessments \(id 1, run_id "run-1"\): value/],
      ] as const
    ) {
      const r = await run(["--store", store, ...args]);
      assert.equal(r.code, 1, `${args.join(" ")}: ${r.err}`);
      // show checks the run first: the changed row makes it warn that the run does not verify, then fail.
      const last = r.err.split("\n").at(-1)!;
      if ((args as readonly string[]).includes("show") && r.err.includes("\n")) {
        assert.match(r.err, /^prove: warning: run run-1 does not verify/);
      }
      assert.match(last, /^prove: .* is not JSON: the store file was changed; restore it from a copy$/);
      assert.match(last, row);
    }
  }));

/** The store, with a writer whose third append fails, as a full disk would fail it. */
function failingAtThirdAppend<T extends EvidenceStore>(store: T): T {
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (key === "openRun") {
        return async (runId: string, options?: { folder?: string }) => {
          const writer = await target.openRun(runId, options);
          let n = 0;
          return new Proxy(writer, {
            get(w, k) {
              const v: unknown = Reflect.get(w, k, w);
              if (k === "append") {
                return (line: string, event: EvidenceEvent) =>
                  ++n === 3 ? Promise.reject(new Error("No space left on device")) : w.append(line, event);
              }
              return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(w) : v;
            },
          });
        };
      }
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

Deno.test("exportRun() that fails part way leaves no partial copy, neither rows nor folder, and can be run again", async () => {
  const dir = await Deno.makeTempDir({ prefix: "prove-export-" });
  try {
    const from = new FileStore({ runs: FIXTURE_RUNS });
    const indexed = join(dir, "indexed");
    await using sqlite = new SqliteStore(join(dir, "e.db"), { runs: indexed });
    await assert.rejects(
      () => exportRun(SAMPLE_RUN_ID, { from, to: failingAtThirdAppend(sqlite) }),
      /No space left/,
    );
    assert.deepEqual(await sqlite.runIds(), []);
    for (const table of ["events", "event_refs", "payloads", "run_params", "agents", "agent_versions"]) {
      const n = sqlite.db.prepare(`SELECT count(*) AS n FROM provevi_${table}`).get() as { n: number };
      assert.equal(n.n, 0, table);
    }
    await assert.rejects(() => Deno.lstat(join(indexed, SAMPLE_RUN_ID)), Deno.errors.NotFound);
    const back = join(dir, "back");
    await assert.rejects(
      () => exportRun(SAMPLE_RUN_ID, { from, to: failingAtThirdAppend(new FileStore({ runs: back })) }),
      /No space left/,
    );
    await assert.rejects(() => Deno.lstat(join(back, SAMPLE_RUN_ID)), Deno.errors.NotFound);
    assert.deepEqual((await exportRun(SAMPLE_RUN_ID, { from, to: sqlite })).problems, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("prove runs --agent --version refuses an empty version and a start that two versions share", () =>
  withStore(async (store, runs) => {
    {
      // 17 versions: two of them must start with the same hex digit.
      await using s = new SqliteStore(sqlitePath(store), { runs });
      for (let i = 0; i < 17; i++) {
        await writeRichRun(await s.openRun(`run-t${i}`), { agent: "twin", model: `test:m${i}` });
      }
    }
    const all = await run(["--store", store, "runs", "--agent", "twin", "--json"]);
    const versions: string[] = JSON.parse(all.out).map((r: { agent_version: string }) => r.agent_version);
    assert.equal(new Set(versions).size, 17);
    const empty = await run(["--store", store, "runs", "--agent", "twin", "--version", ""]);
    assert.equal(empty.code, 2); // a wrong command line
    assert.match(empty.err, /^prove: --version "" is not an agent version/);
    const one = await run([
      "--store",
      store,
      "runs",
      "--agent",
      "twin",
      "--version",
      versions[0]!.slice(0, 12),
    ]);
    assert.equal(one.code, 0, one.err);
    assert.equal(one.out.split("\n").length, 1);
    const shared = [..."0123456789abcdef"].find((d) => versions.filter((v) => v.startsWith(d)).length > 1)!;
    const both = await run(["--store", store, "runs", "--agent", "twin", "--version", shared]);
    assert.equal(both.code, 1);
    assert.match(
      both.err,
      /^prove: "\w" starts \d+ versions of acme\/demo\/dev\/twin \(.*\); write more of the SHA-256$/,
    );
  }));

Deno.test("prove export of a run that does not verify is refused before the target is opened: no target file is made", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const target = join(dir, "copy.db");
    const io = bufferIo();
    const tampered = new URL("../../fixtures/runs-tampered", import.meta.url).pathname;
    const code = await prove(
      ["--runs", tampered, "export", SAMPLE_RUN_ID, "--to", `sqlite:///${target}`],
      io,
    );
    assert.equal(code, 1);
    assert.match(io.stderr.join("\n"), /does not verify .*only a run that verifies is copied/);
    assert.equal(io.stderr.length, 1);
    assert.equal(await Deno.stat(target).then(() => true, () => false), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
