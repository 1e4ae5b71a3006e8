import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { bufferIo } from "../../cli/_io.ts";
import { provtrace } from "../../cli/provtrace.ts";
import { copyFolder } from "../_files.ts";

const FIXTURE_RUNS = new URL("../../fixtures/runs/", import.meta.url).pathname;

async function scratch(): Promise<{ dir: string; runs: string; db: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "provtrace-cli-" });
  const runs = join(dir, "runs");
  await copyFolder(FIXTURE_RUNS, runs);
  return {
    dir,
    runs,
    db: join(dir, "trace.db"),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

Deno.test("provtrace build, runs, check, query and export work in-process, each a thin layer over the library", async () => {
  await using s = await scratch();
  let io = bufferIo();
  assert.equal(
    await provtrace(["build", "--store", "file", "--runs", s.runs, "--db", s.db], io),
    0,
    io.stderr.join("\n"),
  );
  assert.deepEqual(io.stdout, [
    "added run-20261129T120000Z-0badc0de (13 rows)",
    `${s.db}: 1 added, 0 already there, 0 not sealed, 0 refused`,
  ]);
  io = bufferIo();
  assert.equal(await provtrace(["build", "--store", "file", "--runs", s.runs, "--db", s.db], io), 0);
  assert.deepEqual(io.stdout, [`${s.db}: 0 added, 1 already there, 0 not sealed, 0 refused`]);

  io = bufferIo();
  assert.equal(await provtrace(["runs", "--db", s.db], io), 0);
  assert.match(io.stdout[0]!, /^RUN +STATUS +AGENT +CALLS +TOOLS +COST +VERIFIED +BUILD +LAST HASH$/);
  assert.match(
    io.stdout[1]!,
    /^run-20261129T120000Z-0badc0de +completed +revenue-question +1 +0 +- +yes +\S+ +[0-9a-f]{12}$/,
  );
  io = bufferIo();
  assert.equal(await provtrace(["runs", "--db", s.db, "--json"], io), 0);
  assert.equal(JSON.parse(io.text())[0].run_id, "run-20261129T120000Z-0badc0de");

  io = bufferIo();
  assert.equal(await provtrace(["check", "--db", s.db, "--runs", s.runs], io), 0);
  assert.deepEqual(io.stdout, [
    "run-20261129T120000Z-0badc0de  same",
    `${s.db}: 1 runs, each as its source holds it`,
  ]);
  io = bufferIo();
  assert.equal(
    await provtrace(["check", "--db", s.db, "--runs", s.runs, "--deep"], io),
    0,
    io.stderr.join("\n"),
  );
  assert.deepEqual(io.stdout, [
    "run-20261129T120000Z-0badc0de  same",
    `${s.db}: 1 runs, each as its source holds it`,
  ]);

  io = bufferIo();
  assert.equal(
    await provtrace(["query", "--db", s.db, "SELECT kind, count(*) AS n FROM trace_spans GROUP BY kind"], io),
    0,
  );
  assert.deepEqual(io.stdout, ["kind     n", "AGENT    1", "LLM      1", "UNKNOWN  6"]);

  io = bufferIo();
  assert.equal(await provtrace(["export", "--db", s.db, "--runs", s.runs, "--kind", "steps"], io), 0);
  const [line] = io.stdout.map((l) => JSON.parse(l));
  assert.equal(line.provenance.run_id, "run-20261129T120000Z-0badc0de");
  assert.equal(line.provenance.seq, 8);
  io = bufferIo();
  assert.equal(
    await provtrace(["export", "--db", s.db, "--runs", s.runs, "--kind", "sft", "--per", "run"], io),
    0,
  );
  assert.equal(io.stdout.length, 1);
  assert.ok(Array.isArray(JSON.parse(io.stdout[0]!).messages));
});

Deno.test("provtrace check exits 1 and names a run whose source changed", async () => {
  await using s = await scratch();
  assert.equal(await provtrace(["build", "--store", "file", "--runs", s.runs, "--db", s.db], bufferIo()), 0);
  const manifest = join(s.runs, "run-20261129T120000Z-0badc0de", "evidence", "manifest.json");
  await Deno.chmod(manifest, 0o644);
  const text = await Deno.readTextFile(manifest);
  await Deno.writeTextFile(manifest, text.replace(/"last_hash":"[0-9a-f]{4}/, '"last_hash":"0000'));
  const io = bufferIo();
  assert.equal(await provtrace(["check", "--db", s.db, "--runs", s.runs], io), 1);
  assert.match(io.stdout[0]!, /^run-20261129T120000Z-0badc0de {2}changed {2}the store's last hash is 0000/);
});

Deno.test("provtrace build refuses a run that does not verify: one line naming the problem, exit 1", async () => {
  await using s = await scratch();
  await copyFolder(
    new URL("../../fixtures/runs-tampered", import.meta.url).pathname,
    join(s.dir, "tampered"),
  );
  const io = bufferIo();
  assert.equal(
    await provtrace(["build", "--store", "file", "--runs", join(s.dir, "tampered"), "--db", s.db], io),
    1,
  );
  assert.equal(io.stderr.length, 1, io.stderr.join("\n"));
  assert.match(
    io.stderr[0]!,
    /^provtrace: refused run-20261129T120000Z-0badc0de: it does not verify: events\.jsonl line 10 \(seq 9\) has prev [0-9a-f]{64}, but line 9 hashes to [0-9a-f]{64}$/,
  );
});

Deno.test("provtrace gives one line and exit 1 for a database that is missing or not in WAL mode, and 2 for a wrong command line", async () => {
  await using s = await scratch();
  let io = bufferIo();
  assert.equal(await provtrace(["runs", "--db", s.db], io), 1);
  assert.match(
    io.stderr.join("\n"),
    /^provtrace: cannot open trace database ".*": there is no such file; make it with provtrace build/,
  );
  const plain = new DatabaseSync(s.db);
  plain.exec("CREATE TABLE t (x)");
  plain.close();
  io = bufferIo();
  assert.equal(await provtrace(["build", "--store", "file", "--runs", s.runs, "--db", s.db], io), 1);
  assert.equal(io.stderr.length, 1);
  assert.match(io.stderr[0]!, /journal mode delete, and a trace database must be in WAL mode/);
  io = bufferIo();
  assert.equal(await provtrace(["export", "--db", s.db], io), 2);
  io = bufferIo();
  assert.equal(await provtrace(["query", "--db", join(s.dir, "x.db"), "SELECT"], io), 1);
});

Deno.test("deno task provtrace builds under the task's own permission flags", async () => {
  await using s = await scratch();
  const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  const words = (config.tasks.provtrace as string).split(" ").slice(1);
  const out = await new Deno.Command(Deno.execPath(), {
    args: [...words, "build", "--store", "file", "--runs", s.runs, "--db", s.db],
    cwd: new URL("../../", import.meta.url).pathname,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const err = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, err);
  assert.doesNotMatch(err, /NotCapable/);
  assert.match(new TextDecoder().decode(out.stdout), /1 added/);
});

Deno.test("every provtrace command is documented in docs/provtrace.md", async () => {
  const io = bufferIo();
  await provtrace(["--help"], io);
  const help = io.stdout.join("\n");
  const commands = [...help.slice(help.indexOf("Commands:")).matchAll(/^ {2}([a-z][a-z-]*)/gm)]
    .map((m) => m[1]!)
    .filter((c) => c !== "help");
  assert.deepEqual(commands, ["build", "check", "runs", "export", "lineage", "query"]);
  const docs = await Deno.readTextFile(new URL("../../docs/provtrace.md", import.meta.url));
  assert.deepEqual(commands.filter((c) => !docs.includes(`provtrace ${c}`)), []);
});
