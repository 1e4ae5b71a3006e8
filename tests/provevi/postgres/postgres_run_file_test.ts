/**
 * What a run records of its postgres store: run_created names the store the run was written to (from
 * `--store` or `run.store`), and a run file whose `run.store` holds a password is refused before anything is
 * recorded, since the run file itself is kept as evidence (`prove payload` reads it back from the store).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../../cli/_io.ts";
import { prove } from "../../../cli/prove.ts";
import { provr } from "../../../cli/provr.ts";
import { openStore } from "../../../lib/provevi/runs/open_store.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { freshDatabase } from "./_pg.ts";
import { peerTest } from "../../_peers.ts";

const RUN_FILE = (store: string) =>
  `run: { org: acme, domain: demo, env: dev, actor: ada${store} }
agent:
  name: q
  backend: call
  model: "test:"
  script: { turns: [{ text: "forty-two" }] }
prompt: What is the answer?
`;

Deno.test("a run file whose run.store holds a password is refused, naming the fix and not the password", () => {
  for (
    const store of [
      "postgresql://ada:s3cret@db.internal:5432/evidence",
      "postgres://ada:s3:cr/et@db.internal/evidence",
    ]
  ) {
    assert.throws(
      () => RunFile.parse(RUN_FILE(`, store: "${store}"`)),
      (e: Error) =>
        /run\.store \(line 1\): must be a store URI without a password \(the run file is kept as evidence: give it by PGPASSWORD or ~\/\.pgpass\)/
          .test(e.message) && !e.message.includes("s3"),
    );
  }
  for (
    const store of ["postgresql://ada@db.internal:5432/evidence", "postgresql://db.internal:5432/e", "file"]
  ) {
    assert.equal(RunFile.parse(RUN_FILE(`, store: "${store}"`)).data.run.store, store);
  }
});

peerTest("postgres", {
  name: "run_created names the postgres store the run was written to, from --store or run.store",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "provevi-pg-runfile-" });
    const db = await freshDatabase();
    try {
      const runs = join(dir, "runs");
      await Deno.writeTextFile(join(dir, "flag.yaml"), RUN_FILE(""));
      await Deno.writeTextFile(join(dir, "file.yaml"), RUN_FILE(`, store: "${db.uri}"`));
      const ids: string[] = [];
      for (
        const args of [["--store", db.uri, "--runs", runs, "run", join(dir, "flag.yaml")], [
          "--runs",
          runs,
          "run",
          join(dir, "file.yaml"),
        ]]
      ) {
        const io = bufferIo();
        assert.equal(await provr(args, io), 0, io.stderr.join("\n"));
        ids.push(io.stdout.at(-1)!);
      }
      await using store = await openStore(db.uri, { runs, readOnly: true });
      for (const id of ids) {
        const record = await store.readRun(id);
        const created = JSON.parse((await record.eventsText())!.split("\n")[0]!);
        assert.equal(created.type, "run_created");
        assert.equal(created.data.store, db.uri);
        // prove payload reads the run file kept as run_created's payload, through the postgres store.
        const io = bufferIo();
        const code = await prove(["--store", db.uri, "--runs", runs, "payload", id, created.payload], io);
        assert.equal(code, 0, io.stderr.join("\n"));
        assert.match(io.text(), /^run: \{ org: acme, domain: demo/);
      }
    } finally {
      await db.drop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
