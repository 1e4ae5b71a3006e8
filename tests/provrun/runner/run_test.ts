import assert from "node:assert/strict";
import type { EvidenceEvent } from "../../../lib/provevi/evidence/event.ts";
import type { EvidenceStore, RunWriter } from "../../../lib/provevi/store/store.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { newRunId } from "../../../lib/provrun/run/run_context.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";

const SCRIPT = `
  script:
    model: answer-1
    turns:
      - text: "Revenue grew 12% in Q3."
        usage: { input: 14, output: 9 }`;

function file(mode: "strict" | "lenient", extra = ""): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: ${mode} }
agent:
  name: q
  backend: call
  model: "test:"${SCRIPT}
${extra}
prompt: What was the revenue growth?
`);
}

/** A store whose writer fails to append the events of the types given. */
class FailingStore extends FileStore {
  constructor(runs: string, readonly failOn: Set<string>) {
    super({ runs });
  }
  override async openRun(runId: string): Promise<RunWriter> {
    const inner = await super.openRun(runId);
    const failOn = this.failOn;
    return {
      runId: inner.runId,
      folder: inner.folder,
      append: (line: string, event: EvidenceEvent) =>
        failOn.has(event.type) ? Promise.reject(new Error("the disk is full")) : inner.append(line, event),
      putPayload: (bytes) => inner.putPayload(bytes),
      seal: (info) => inner.seal(info),
    };
  }
}

async function events(store: EvidenceStore, runId: string) {
  return readEventsText((await (await store.readRun(runId)).eventsText())!).events;
}

Deno.test("newRunId() is run-<UTC time>-<8 hex>", () => {
  assert.match(newRunId(new Date(Date.UTC(2026, 10, 29, 12, 0, 0))), /^run-20261129T120000Z-[0-9a-f]{8}$/);
});

Deno.test("a sink that fails stops the run in strict mode, sealed with what was written", async () => {
  const runs = await Deno.makeTempDir();
  const store = new FailingStore(runs, new Set(["prompt_rendered"]));
  const outcome = await runFile(file("strict"), { store });
  assert.equal(outcome.status, "failed");
  assert.equal(outcome.error?.name, "EvidenceError");
  const types = (await events(store, outcome.runId)).map((e) => e.type);
  assert.deepEqual(types, ["run_created", "sandbox_started"]);
  assert.equal(outcome.manifest?.status, "incomplete");
  assert.ok((await verifyRun(await store.readRun(outcome.runId))).ok);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("a sink that fails does not stop the run in lenient mode; the manifest counts the loss", async () => {
  const runs = await Deno.makeTempDir();
  const store = new FailingStore(runs, new Set(["prompt_rendered"]));
  const outcome = await runFile(file("lenient"), { store });
  assert.equal(outcome.status, "completed");
  assert.equal(outcome.manifest?.lost.length, 1);
  assert.equal(outcome.manifest?.lost[0]?.type, "prompt_rendered");
  const types = (await events(store, outcome.runId)).map((e) => e.type);
  assert.ok(types.includes("model_called") && types.at(-1) === "run_completed");
  assert.ok((await verifyRun(await store.readRun(outcome.runId))).ok);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("a cancel ends the run with run_failed, error CancelledError, sealed", async () => {
  const runs = await Deno.makeTempDir();
  const controller = new AbortController();
  controller.abort();
  const outcome = await runFile(file("strict"), { runs, signal: controller.signal });
  assert.equal(outcome.status, "failed");
  const last = (await events(new FileStore({ runs }), outcome.runId)).at(-1)!;
  assert.equal(last.type, "run_failed");
  assert.equal(last.data.error, "CancelledError");
  assert.equal(outcome.manifest?.status, "failed");
  await Deno.remove(runs, { recursive: true });
});

Deno.test("a token limit ends the run the same way, recorded", async () => {
  const runs = await Deno.makeTempDir();
  const outcome = await runFile(file("strict").withAgent({ limits: { tokens: 10 } }), { runs });
  assert.equal(outcome.status, "failed");
  const all = await events(new FileStore({ runs }), outcome.runId);
  assert.ok(all.some((e) => e.type === "model_called"));
  assert.equal(all.at(-1)!.data.error, "CancelledError");
  assert.match(String(all.at(-1)!.data.message), /limit of 10 tokens \(23\)/);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("a seconds limit stops a slow model call; the run ends with run_failed, CancelledError, sealed", async () => {
  const runs = await Deno.makeTempDir();
  const slow = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: q
  backend: call
  model: "test:"
  script: { turns: [{ text: "late", delay_ms: 30000 }] }
  limits: { seconds: 0.3 }
prompt: hi
`);
  const started = performance.now();
  const outcome = await runFile(slow, { runs });
  // The scripted answer comes after 30 s: anything well under that was stopped by the limit, however busy the machine.
  assert.ok(performance.now() - started < 25_000, "the limit stopped the call");
  const all = await events(new FileStore({ runs }), outcome.runId);
  assert.equal(all.at(-1)!.type, "run_failed");
  assert.equal(all.at(-1)!.data.error, "CancelledError");
  assert.match(String(all.at(-1)!.data.message), /limit of 0\.3 seconds/);
  assert.ok(all.some((e) => e.type === "step_failed" && e.data.step === "model_called"));
  assert.equal(outcome.manifest?.status, "failed");
  await Deno.remove(runs, { recursive: true });
});
