// A test file of its own: it registers a global tracer provider, which no other test may see.
import assert from "node:assert/strict";
import { trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { globalTracerProviderSet } from "../../../lib/provrun/telemetry/telemetry_env.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";

Deno.test("a global tracer provider registered by someone: provrun does not use it and writes telemetry_problem", async () => {
  const memory = new InMemorySpanExporter();
  const global = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  assert.equal(globalTracerProviderSet(), false);
  assert.ok(trace.setGlobalTracerProvider(global));
  const runs = await Deno.makeTempDir();
  try {
    assert.equal(globalTracerProviderSet(), true);
    const store = new FileStore({ runs });
    const outcome = await runFile(
      RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada }
agent: { name: q, backend: call, model: "test:", script: { turns: [{ text: "hi" }] } }
prompt: Hello?
`),
      { store, environ: {} },
    );
    assert.equal(outcome.status, "completed");
    const events = readEventsText((await (await store.readRun(outcome.runId)).eventsText())!).events;
    const problems = events.filter((e) => e.type === "telemetry_problem");
    assert.equal(problems.length, 1);
    assert.match(
      problems[0]!.data.problem as string,
      /^a global OpenTelemetry tracer provider is registered/,
    );
    assert.deepEqual(memory.getFinishedSpans(), []);
  } finally {
    trace.disable();
    await Deno.remove(runs, { recursive: true });
  }
  assert.equal(globalTracerProviderSet(), false);
});
