import assert from "node:assert/strict";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readSpansFile, SPANS_FILE } from "../../../lib/provevi/evidence/spans_file.ts";
import { spanTime, StoreSpanExporter } from "../../../lib/provevi/telemetry/span_exporter.ts";

Deno.test("StoreSpanExporter hands spans to the store in process, linked by trace and span IDs", async () => {
  const runs = await Deno.makeTempDir();
  const store = new FileStore({ runs });
  const writer = await store.openRun("run-x");
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(new StoreSpanExporter(store, "run-x"))],
  });
  const tracer = provider.getTracer("provrun");
  const root = tracer.startSpan("invoke_agent q", { attributes: { "provrun.run_id": "run-x" } });
  root.end();
  await provider.forceFlush();
  const spans = await readSpansFile(writer.folder);
  assert.equal(spans.length, 1);
  assert.equal(spans[0]!.span_id, root.spanContext().spanId);
  assert.equal(spans[0]!.trace_id, root.spanContext().traceId);
  assert.equal(spans[0]!.parent_span_id, null);
  assert.deepEqual(spans[0]!.scope, { name: "provrun", version: null });
  assert.deepEqual(spans[0]!.attributes, { "provrun.run_id": "run-x" });
  // an index beside the evidence, never in it
  await Deno.stat(`${writer.folder}/${SPANS_FILE}`);
  await writer.seal();
  await provider.shutdown();
  await Deno.remove(runs, { recursive: true });
});

Deno.test("FileStore.addSpans() refuses a run that it did not open", async () => {
  const runs = await Deno.makeTempDir();
  await assert.rejects(new FileStore({ runs }).addSpans("run-y", []), /did not open it/);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("spanTime() writes an OpenTelemetry time as events do, with microseconds", () => {
  assert.equal(spanTime([1795996800, 123456789]), "2026-11-30T00:00:00.123456Z");
});
