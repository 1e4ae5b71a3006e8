import assert from "node:assert/strict";
import { join } from "node:path";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";

/** Starts `provr run` on a run whose model answers after a minute; resolves once the model call has started. */
async function startSlowRun() {
  const dir = await Deno.makeTempDir();
  const file = join(dir, "run.yaml");
  await Deno.writeTextFile(
    file,
    `run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: q
  backend: call
  model: "test:"
  stream: true
  script: { turns: [{ text: "late", delay_ms: 60000 }] }
prompt: hi
`,
  );
  const runs = join(dir, "runs");
  const cli = new URL("../../cli/provr.ts", import.meta.url).pathname;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-sys",
      "--allow-run",
      cli,
      "--runs",
      runs,
      "run",
      file,
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const deadline = Date.now() + 30_000;
  let started = false;
  while (!started && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    try {
      for await (const e of Deno.readDir(runs)) {
        if (e.name.startsWith(".")) continue; // the store's log
        const text = await Deno.readTextFile(join(runs, e.name, "evidence", "events.jsonl")).catch(() => "");
        started = text.includes('"prompt_rendered"');
      }
    } catch { /* not yet */ }
  }
  assert.ok(started, "the run reached its model call");
  return { dir, runs, child };
}

for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  Deno.test(`${signal} ends provr run with run_failed, CancelledError, sealed, verifiable, and exit ${code}`, async () => {
    const { dir, runs, child } = await startSlowRun();
    child.kill(signal);
    const out = await child.output();
    const stdout = new TextDecoder().decode(out.stdout).trim();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, code, stderr);
    // The run ID and folder are on standard error from the start, so a run cut short can be found.
    assert.match(stderr, new RegExp(`^provr: run ${stdout} in ${runs}/${stdout}\n`));
    const store = new FileStore({ runs });
    const record = await store.readRun(stdout);
    const events = readEventsText((await record.eventsText())!).events;
    assert.equal(events.at(-1)!.type, "run_failed");
    assert.equal(events.at(-1)!.data.error, "CancelledError");
    assert.deepEqual((await verifyRun(record)).problems, []);
    const io = bufferIo();
    assert.equal(await prove(["--runs", runs, "runs"], io), 0);
    assert.match(io.stdout[1]!, new RegExp(`^${stdout} +cancelled `));
    await Deno.remove(dir, { recursive: true });
  });
}

Deno.test("a provr run killed by SIGKILL stays cut: prove runs and prove show say cut at seq N, not running", async () => {
  const { dir, runs, child } = await startSlowRun();
  child.kill("SIGKILL");
  const out = await child.output();
  const id = new TextDecoder().decode(out.stderr).match(/^provr: run (\S+) in /)![1]!;
  const list = bufferIo();
  assert.equal(await prove(["--runs", runs, "runs"], list), 0);
  assert.match(list.stdout[1]!, new RegExp(`^${id} +cut at seq \\d+ `));
  const cut = bufferIo();
  assert.equal(await prove(["--runs", runs, "runs", "--status", "cut", "--json"], cut), 0);
  assert.deepEqual(JSON.parse(cut.text()).map((r: { run_id: string }) => r.run_id), [id]);
  const shown = bufferIo();
  assert.equal(await prove(["--runs", runs, "show", "latest"], shown), 0);
  assert.match(shown.stderr.join("\n"), new RegExp(`^${id}: cut at seq \\d+: its writer is gone`));
  await Deno.remove(dir, { recursive: true });
});
