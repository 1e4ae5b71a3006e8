import assert from "node:assert/strict";
import { join } from "node:path";
import { SqliteStore, verifyRun } from "../../../lib/provevi/mod.ts";

const WRITER = new URL("./_sqlite_writer.ts", import.meta.url).pathname;

function spawnWriter(
  db: string,
  runs: string,
  prefix: string,
  count: number,
  notes: number,
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      WRITER,
      db,
      runs,
      prefix,
      String(count),
      String(notes),
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** A small seeded generator (mulberry32), so the kill times are the same on every run of the test. */
function seeded(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function readLines(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    const parts = (rest + chunk).split("\n");
    rest = parts.pop()!;
    parts.forEach(onLine);
  }
}

Deno.test("a writer killed at random points leaves a file that opens, sealed runs that verify, and a cut run that says how far it got", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-kill-" });
  const random = seeded(20261129);
  const db = join(dir, "evidence.db");
  try {
    for (let round = 0; round < 5; round++) {
      const child = spawnWriter(db, dir, `run-k${round}`, 10_000, 3);
      const opened: string[] = [];
      const sealed: string[] = [];
      let ready!: () => void;
      const started = new Promise<void>((r) => (ready = r));
      const reading = readLines(child.stdout, (line) => {
        if (line.startsWith("open ")) (opened.push(line.slice(5)), ready());
        if (line.startsWith("sealed ")) sealed.push(line.slice(7));
      });
      const stderr = new Response(child.stderr).text();
      await started;
      await new Promise((r) => setTimeout(r, 20 + Math.floor(random() * 400)));
      child.kill("SIGKILL");
      const status = await child.status;
      await reading;
      assert.equal(status.signal, "SIGKILL", await stderr);

      await using store = new SqliteStore(db, { runs: dir });
      for (const id of sealed) {
        const check = await verifyRun(await store.readRun(id), { store });
        assert.deepEqual(check.problems, [], id);
      }
      const cut = opened.filter((id) => !sealed.includes(id));
      assert.ok(cut.length <= 1);
      for (const id of cut) {
        const row = await store.run(id);
        if (!row) continue; // killed before its row was committed: the store holds nothing of it
        const lines = (await Deno.readTextFile(join(dir, id, "evidence", "events.jsonl"))).split("\n").filter(
          Boolean,
        );
        const problems = await store.checkRun(id);
        const sealedFolder = await Deno.stat(join(dir, id, "evidence", "manifest.json")).then(
          () => true,
          () => false,
        );
        if (sealedFolder) {
          // Killed between the manifest and the row's seal: only the run's seal columns differ.
          for (const p of problems) {
            assert.match(p, /provevi_runs \(run_id "[^"]+"\): (manifest_sha256|last_hash|status|ended_at)/);
          }
          continue;
        }
        assert.ok(
          lines.length - row.events === 0 || lines.length - row.events === 1,
          `${row.events} rows, ${lines.length} lines`,
        );
        assert.ok(
          problems.includes(
            `run "${id}" was not sealed: provevi_events holds ${row.events} rows and events.jsonl ${lines.length} lines`,
          ),
          problems.join("\n"),
        );
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("four processes write 200 runs each into one file: every event is there and every run verifies", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-many-" });
  const db = join(dir, "evidence.db");
  try {
    new SqliteStore(db, { runs: dir }).close();
    const children = [0, 1, 2, 3].map((p) => spawnWriter(db, dir, `run-p${p}`, 200, 0));
    const outputs = await Promise.all(children.map((c) => c.output()));
    for (const o of outputs) assert.equal(o.code, 0, new TextDecoder().decode(o.stderr));
    await using store = new SqliteStore(db, { runs: dir, create: false });
    const ids = await store.runIds();
    assert.equal(ids.length, 800);
    const rows = store.db.prepare("SELECT count(*) AS n FROM provevi_events").get() as { n: number };
    let lines = 0;
    for (const id of ids) {
      lines +=
        (await Deno.readTextFile(join(dir, id, "evidence", "events.jsonl"))).split("\n").filter(Boolean)
          .length;
      const check = await verifyRun(await store.readRun(id), { store });
      assert.deepEqual(check.problems, [], id);
    }
    assert.equal(rows.n, lines);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("two workers and the main thread write one file at once", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-workers-" });
  const db = join(dir, "evidence.db");
  try {
    new SqliteStore(db, { runs: dir }).close();
    const results = [0, 1].map((w) => {
      const worker = new Worker(new URL("./_sqlite_writer.ts", import.meta.url).href, { type: "module" });
      return new Promise<{ sealed: string[]; error?: string }>((resolve) => {
        worker.onmessage = (e) => {
          worker.terminate();
          resolve(e.data);
        };
        worker.postMessage({ db, runs: dir, prefix: `run-w${w}`, count: 25, notes: 2 });
      });
    });
    const { writeRuns } = await import("./_sqlite_writer.ts");
    await writeRuns({ db, runs: dir, prefix: "run-main", count: 25, notes: 2 }, () => {});
    for (const r of await Promise.all(results)) {
      assert.equal(r.error, undefined);
      assert.equal(r.sealed.length, 25);
    }
    await using store = new SqliteStore(db, { runs: dir, create: false });
    const ids = await store.runIds();
    assert.equal(ids.length, 75);
    for (const id of ids) {
      assert.deepEqual((await verifyRun(await store.readRun(id), { store })).problems, [], id);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
