import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { provr } from "../../cli/provr.ts";
import { exportRun } from "../../lib/provevi/runs/export_run.ts";
import { openStore } from "../../lib/provevi/runs/open_store.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { freshDatabase } from "../provevi/postgres/_pg.ts";
import { peerTest } from "../_peers.ts";

const FIXTURE_RUNS = new URL("../../fixtures/runs/", import.meta.url).pathname;

async function run(args: string[], command = prove) {
  const io = bufferIo();
  const code = await command(args, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

/** Runs a `deno task NAME` as deno.json writes it (its own permission flags), with these arguments. */
async function task(name: string, args: string[], env: Record<string, string> = {}) {
  const config = JSON.parse(await Deno.readTextFile("deno.json"));
  const words = (config.tasks[name] as string).split(" ").slice(1); // drop "deno"
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...words, ...args],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b).trim();
  return { code: out.code, out: text(out.stdout), err: text(out.stderr) };
}

const RUN_FILE = `run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: q
  backend: call
  model: "test:"
  script: { turns: [{ text: "forty-two" }] }
prompt: What is the answer?
`;

const pgTest = (name: string, fn: () => Promise<void>) => peerTest("postgres", { name, fn });

pgTest(
  "provr --store postgresql://… run records a run that every prove command reads from the store",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "prove-pg-" });
    const db = await freshDatabase();
    try {
      await Deno.writeTextFile(join(dir, "run.yaml"), RUN_FILE);
      const runs = join(dir, "runs");
      const made = await run(["--store", db.uri, "--runs", runs, "run", join(dir, "run.yaml")], provr);
      assert.equal(made.code, 0, made.err);
      const id = made.out;
      const g = ["--store", db.uri, "--runs", runs];
      const verified = await run([...g, "verify", id]);
      assert.equal(verified.code, 0, verified.out);
      assert.match(verified.out, /the evidence and the outputs verify/);
      const listed = await run([...g, "runs", "--agent", "q", "--json"]);
      assert.deepEqual(JSON.parse(listed.out).map((r: { run_id: string }) => r.run_id), [id]);
      const agents = await run([...g, "agents", "--json"]);
      assert.deepEqual(JSON.parse(agents.out).map((a: { agent: string }) => a.agent), ["acme/demo/dev/q"]);
      for (
        const args of [["show", id], ["agent", "show", "q"], ["access", id], ["experiments"], [
          "telemetry",
          id,
        ]]
      ) {
        const r = await run([...g, ...args]);
        assert.equal(r.code, 0, `${args.join(" ")}: ${r.err}`);
      }
      const assessed = await run([...g, "assess", id, "correct", "true", "--json"]);
      assert.equal(assessed.code, 0, assessed.err);
      assert.equal(JSON.parse(assessed.out).value, true);
      const provrVerify = await run([...g, "verify", id], provr);
      assert.equal(provrVerify.code, 0, provrVerify.out);
    } finally {
      await db.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

pgTest("deno task provr and prove reach a postgres store under the tasks' own permissions", async () => {
  const dir = await Deno.makeTempDir({ prefix: "prove-pg-task-" });
  const db = await freshDatabase();
  try {
    await Deno.writeTextFile(join(dir, "run.yaml"), RUN_FILE);
    const env = { PGPASSFILE: join(dir, "no-such-pgpass") };
    const made = await task("provr", [
      "--store",
      db.uri,
      "--runs",
      join(dir, "runs"),
      "run",
      join(dir, "run.yaml"),
    ], env);
    assert.equal(made.code, 0, made.err);
    const v = await task("prove", ["--store", db.uri, "--runs", join(dir, "runs"), "verify", made.out], env);
    assert.equal(v.code, 0, v.out + v.err);
    assert.doesNotMatch(v.err, /NotCapable/);
  } finally {
    await db.drop();
    await Deno.remove(dir, { recursive: true });
  }
});

pgTest(
  "prove export copies a run between the file, sqlite and postgres stores, both ways, and each copy verifies",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "prove-pg-export-" });
    const db = await freshDatabase();
    try {
      // file → postgres, by the command
      const toPg = await run([
        "--runs",
        FIXTURE_RUNS,
        "export",
        SAMPLE_RUN_ID,
        "--to",
        db.uri,
        "--to-runs",
        join(dir, "pg"),
      ]);
      assert.equal(toPg.code, 0, toPg.err);
      assert.equal(toPg.out, `${SAMPLE_RUN_ID}: copied to ${db.uri}; the copy verifies`);
      await using pg = await openStore(db.uri, { runs: join(dir, "pg") });
      // postgres → sqlite → postgres (another database) → file
      await using sqlite = new SqliteStore(join(dir, "e.db"), { runs: join(dir, "sqlite") });
      assert.deepEqual((await exportRun(SAMPLE_RUN_ID, { from: pg, to: sqlite })).problems, []);
      const db2 = await freshDatabase();
      try {
        await using pg2 = await openStore(db2.uri, { runs: join(dir, "pg2") });
        assert.deepEqual((await exportRun(SAMPLE_RUN_ID, { from: sqlite, to: pg2 })).problems, []);
        const back = new FileStore({ runs: join(dir, "back") });
        assert.deepEqual((await exportRun(SAMPLE_RUN_ID, { from: pg2, to: back })).problems, []);
        for (const f of ["events.jsonl", "manifest.json"]) {
          assert.equal(
            await Deno.readTextFile(join(dir, "back", SAMPLE_RUN_ID, "evidence", f)),
            await Deno.readTextFile(join(FIXTURE_RUNS, SAMPLE_RUN_ID, "evidence", f)),
          );
        }
        assert.ok((await verifyRun(await back.readRun(SAMPLE_RUN_ID))).ok);
        await assert.rejects(() => exportRun(SAMPLE_RUN_ID, { from: back, to: pg2 }), /exists already/);
        assert.equal((await pg2.runIds()).length, 1);
      } finally {
        await db2.drop();
      }
    } finally {
      await db.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
);

pgTest(
  "a team: two runs roots write one postgres database, and a third machine verifies a run from the rows and its committed bundle",
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "prove-pg-team-" });
    const db = await freshDatabase();
    try {
      const git = await new Deno.Command("git", { args: ["init", "-q", "--bare", join(dir, "bundles.git")] })
        .output();
      assert.ok(git.success);
      const config = join(dir, "provcat.yaml");
      await Deno.writeTextFile(
        config,
        `stores:\n  bundles: { type: git, path: bundles.git, branch: main }\nroutes:\n  - { prefix: "run://acme/demo/dev", store: bundles }\n`,
      );
      await Deno.writeTextFile(
        join(dir, "run.yaml"),
        RUN_FILE.replace("actor: ada }", "actor: ada, bundle: true }"),
      );
      const ids: string[] = [];
      for (const machine of ["a", "b"]) {
        const made = await run(
          ["--store", db.uri, "--runs", join(dir, machine), "run", join(dir, "run.yaml"), "--config", config],
          provr,
        );
        assert.equal(made.code, 0, made.err);
        ids.push(made.out);
      }
      // Machine C has neither runs root.
      await Deno.rename(join(dir, "a"), join(dir, "a-off"));
      const runs = await run(["--store", db.uri, "runs", "--agent", "q", "--json"]);
      assert.deepEqual(JSON.parse(runs.out).map((r: { run_id: string }) => r.run_id).sort(), [...ids].sort());
      const without = await run(["--store", db.uri, "--runs", join(dir, "c"), "verify", ids[0]!]);
      assert.equal(without.code, 1);
      assert.match(
        without.err,
        /is not on this machine; its bundle is run:\/\/acme\/demo\/dev\/run-\S+\?at=commit:[0-9a-f]{40}: give the catalog config/,
      );
      const verified = await run([
        "--store",
        db.uri,
        "--runs",
        join(dir, "c"),
        "verify",
        ids[0]!,
        "--config",
        config,
      ]);
      assert.equal(verified.code, 0, verified.out + verified.err);
      assert.match(
        verified.out,
        /the evidence, the outputs and the committed bundle run:\/\/acme\/demo\/dev\/run-\S+ verify$/m,
      );
      // A changed row fails it there too.
      const store = await openStore(db.uri, { runs: join(dir, "c") });
      try {
        await (store as unknown as { sql: { unsafe(q: string, p: string[]): Promise<unknown> } }).sql.unsafe(
          "UPDATE provevi_events SET actor = 'mallory' WHERE run_id = $1 AND seq = 0",
          [ids[0]!],
        );
      } finally {
        await store.close();
      }
      const changed = await run([
        "--store",
        db.uri,
        "--runs",
        join(dir, "c"),
        "verify",
        ids[0]!,
        "--config",
        config,
      ]);
      assert.equal(changed.code, 1);
      assert.match(changed.out, /provevi_events \(run_id "run-\S+", seq 0\): column actor is "mallory"/);
    } finally {
      await db.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
