/**
 * provtrace with a postgres evidence store, against the real server of `.ci/peers/postgres.sh`: runs
 * recorded into the database by provrun (and one by `deno task provr --store postgresql://…`), then
 * `deno task provtrace build`, `check` and `export` under the task's own flags; a sqlite store holding the
 * same runs (copied by `prove export --to sqlite://…`) gives the same trace rows and the same lines.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { freshDatabase, task } from "../provevi/postgres/_pg.ts";
import { dumpTrace, makeRuns } from "./_runs.ts";
import { peerTest } from "../_peers.ts";

/** A trace database's rows, without what names the store they came from (its URI and runs root, and the digest over them). */
function rowsWithoutSource(db: string): Record<string, unknown[]> {
  const rows = dumpTrace(db);
  rows.trace_sources = rows.trace_sources!.map((r) => {
    // The digest of a run's rows covers its source's place too, and so does their MAC.
    const { store_uri: _u, runs_root: _r, rows_digest: _d, rows_mac: _m, ...rest } = JSON.parse(r as string);
    return rest;
  });
  return rows;
}

/** Export lines, without the store URI of their provenance. */
function linesWithoutSource(text: string): unknown[] {
  return text.split("\n").map((l) => {
    const line = JSON.parse(l);
    delete line.provenance.store_uri;
    return line;
  });
}

peerTest("postgres", {
  name:
    "provtrace build, check and export with a postgres store (deno task, its own flags) give what a sqlite store of the same runs gives",
  fn: async () => {
    const db = await freshDatabase();
    await using t = await makeRuns({ store: () => db.uri });
    try {
      // The catalog config that reads the runs' committed bundles, as a user passes it to provtrace.
      const config = join(t.root, "provcat.yaml");
      await Deno.writeTextFile(
        config,
        `cache: ${join(t.root, "cache-cli")}\nstores:\n  lake: { type: git, path: ${
          join(t.root, "lake")
        } }\n` +
          `routes:\n  - { prefix: "data://acme/demo/dev", store: lake }\n` +
          `  - { prefix: "run://acme/demo/dev", store: lake, path: runs }\n`,
      );
      await Deno.writeTextFile(
        join(t.root, "run.yaml"),
        `run: { org: acme, domain: demo, env: dev, actor: ada }\nagent:\n  name: q\n  backend: call\n  model: "test:"\n` +
          `  script: { turns: [{ text: "forty-two" }] }\nprompt: What is the answer?\n`,
      );
      const made = await task("provr", [
        "--store",
        db.uri,
        "--runs",
        t.runs,
        "run",
        join(t.root, "run.yaml"),
      ]);
      assert.equal(made.code, 0, made.err);
      const ids = [t.agentRun, t.callRun, made.out].sort();

      // The same runs in a sqlite store, copied by prove export (each copy verified by it).
      const sqlite = `sqlite:///${join(t.root, "evidence.db")}`;
      for (const id of ids) {
        const io = bufferIo();
        const code = await prove([
          "--store",
          db.uri,
          "--runs",
          t.runs,
          "export",
          id,
          "--to",
          sqlite,
          "--to-runs",
          join(t.root, "sqlite-runs"),
          "--config",
          config,
        ], io);
        assert.equal(code, 0, io.stderr.join("\n"));
      }

      const fromPg = join(t.root, "pg-trace.db");
      const built = await task("provtrace", [
        "build",
        "--store",
        db.uri,
        "--runs",
        t.runs,
        "--db",
        fromPg,
        "--config",
        config,
      ]);
      assert.equal(built.code, 0, built.out + built.err);
      assert.doesNotMatch(built.err, /NotCapable/);
      assert.match(built.out, /: 3 added, 0 already there, 0 not sealed, 0 refused$/);
      const fromSqlite = join(t.root, "sqlite-trace.db");
      const builtSqlite = await task("provtrace", [
        "build",
        "--store",
        sqlite,
        "--runs",
        join(t.root, "sqlite-runs"),
        "--db",
        fromSqlite,
        "--config",
        config,
      ]);
      assert.equal(builtSqlite.code, 0, builtSqlite.out + builtSqlite.err);

      const runs = await task("provtrace", ["runs", "--db", fromPg, "--json"]);
      assert.deepEqual(JSON.parse(runs.out).map((r: { run_id: string }) => r.run_id).sort(), ids);
      assert.ok(JSON.parse(runs.out).every((r: { verified: boolean | number }) => r.verified), runs.out);
      assert.deepEqual(rowsWithoutSource(fromPg), rowsWithoutSource(fromSqlite));
      const sources = dumpTrace(fromPg).trace_sources!.map((r) => JSON.parse(r as string).store_uri);
      assert.deepEqual(sources, [db.uri, db.uri, db.uri]);

      // check opens the store the user names (the postgres URI), and finds each run as built.
      const fromPgSource = ["--store", db.uri, "--runs", t.runs];
      const fromSqliteSource = ["--store", sqlite, "--runs", join(t.root, "sqlite-runs")];
      const checked = await task("provtrace", ["check", "--db", fromPg, ...fromPgSource, "--config", config]);
      assert.equal(checked.code, 0, checked.out + checked.err);
      assert.match(checked.out, /: 3 runs, each as its source holds it$/);

      for (const kind of [["--kind", "steps"], ["--kind", "sft"], ["--kind", "sft", "--per", "run"]]) {
        const a = await task("provtrace", [
          "export",
          "--db",
          fromPg,
          ...fromPgSource,
          ...kind,
          "--config",
          config,
        ]);
        const b = await task("provtrace", [
          "export",
          "--db",
          fromSqlite,
          ...fromSqliteSource,
          ...kind,
          "--config",
          config,
        ]);
        assert.equal(a.code, 0, a.err);
        assert.ok(a.out.length > 0, kind.join(" "));
        assert.deepEqual(linesWithoutSource(a.out), linesWithoutSource(b.out), kind.join(" "));
      }
    } finally {
      await db.drop();
    }
  },
});
