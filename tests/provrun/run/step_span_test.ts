/**
 * A step whose span opens later (`startStep`'s `spanLater`, which the gateway uses to keep the span's cost off
 * the way to a stream's first token) has the span it would have had: the same parent, a start at the step's
 * start (its event's `started_at`), its attributes, and an end after its work, on the same clock.
 */
import assert from "node:assert/strict";
import { SpanKind } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { EvidenceRecorder } from "../../../lib/provrun/run/recorder.ts";
import { newRunId } from "../../../lib/provrun/run/run_context.ts";
import { removeWritable } from "../../_files.ts";

const ms = (time: [number, number]) => time[0] * 1000 + time[1] / 1e6;
const epochMs = (text: string) => Date.parse(text) + Number(`0.${text.split(".")[1]?.slice(3, 6) ?? "0"}`);

for (const later of [false, true]) {
  Deno.test(`a step's span ${later ? "opened at its first use" : "opened at once"} is a child of the current step, starts at the step's start and ends after its work`, async () => {
    const runs = await Deno.makeTempDir({ prefix: "provrun-step-span-" });
    try {
      const exporter = new InMemorySpanExporter();
      const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
        .getTracer("test");
      const writer = await new FileStore({ runs }).openRun(newRunId());
      const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict", tracer });
      const root = recorder.startRoot("invoke_agent test");
      const outer = recorder.startStep({ component: "test", spanName: "outer" });
      const before = Date.now();
      const step = outer.within(() =>
        recorder.startStep({
          component: "test",
          spanName: "chat m-1",
          kind: SpanKind.CLIENT,
          attributes: { "gen_ai.operation.name": "chat" },
          ...(later ? { spanLater: true } : {}),
        })
      );
      await new Promise((r) => setTimeout(r, 30));
      step.span.setAttribute("gen_ai.request.max_tokens", 10);
      const event = await step.end("model_called", { data: {} });
      await outer.end("note_added", { data: {} });
      recorder.endRoot();
      const span = exporter.getFinishedSpans().find((s) => s.name === "chat m-1")!;
      assert.equal(span.parentSpanContext?.spanId, outer.span.spanContext().spanId);
      assert.equal(event?.parent_span_id, outer.span.spanContext().spanId);
      assert.equal(event?.span_id, span.spanContext().spanId);
      assert.equal(span.kind, SpanKind.CLIENT);
      assert.deepEqual(span.attributes, {
        "gen_ai.operation.name": "chat",
        "provrun.run_id": writer.runId,
        "gen_ai.request.max_tokens": 10,
      });
      const start = ms(span.startTime);
      assert.ok(
        Math.abs(start - epochMs(event!.started_at!)) < 10,
        "the span starts when the step started, not when it opened",
      );
      assert.ok(start >= before - 2, "and not before it");
      assert.ok(ms(span.duration) >= 25, `the span lasts the step's work (${ms(span.duration)} ms)`);
      assert.notEqual(root.spanContext().spanId, span.spanContext().spanId);
    } finally {
      await removeWritable(runs);
    }
  });
}
