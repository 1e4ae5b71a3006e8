import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore, readEventsText, verifyRun } from "../../lib/provevi/mod.ts";

Deno.test("Ctrl-C (SIGINT) ends provr run with run_failed, error CancelledError, sealed, nothing lost", async () => {
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
  // Wait until the model call has started, then press Ctrl-C.
  const deadline = Date.now() + 30_000;
  let started = false;
  while (!started && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    try {
      for await (const e of Deno.readDir(runs)) {
        const text = await Deno.readTextFile(join(runs, e.name, "evidence", "events.jsonl")).catch(() => "");
        started = text.includes('"prompt_rendered"');
      }
    } catch { /* not yet */ }
  }
  assert.ok(started, "the run reached its model call");
  child.kill("SIGINT");
  const out = await child.output();
  const stdout = new TextDecoder().decode(out.stdout).trim();
  assert.equal(out.code, 1, new TextDecoder().decode(out.stderr));
  const store = new FileStore({ runs });
  const record = await store.readRun(stdout);
  const events = readEventsText((await record.eventsText())!).events;
  assert.equal(events.at(-1)!.type, "run_failed");
  assert.equal(events.at(-1)!.data.error, "CancelledError");
  assert.deepEqual((await verifyRun(record)).problems, []);
  await Deno.remove(dir, { recursive: true });
});
