/**
 * The span bodies the receiver benchmarks post: OTLP/HTTP protobuf requests of 512 spans each, as Claude Code
 * sends them (names, usage, a few attributes), made with the real OpenTelemetry SDK and its
 * protobuf serializer.
 * @module
 */
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";

/** Spans a request, as an OTLP exporter batches them by default. */
export const BATCH = 512;

/**
 * Bodies of {@linkcode BATCH} spans each.
 *
 * @param batches How many bodies.
 * @returns The bodies.
 */
export function spanBodies(batches: number): Uint8Array<ArrayBuffer>[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer("claude_code", "2.1.332");
  const out: Uint8Array<ArrayBuffer>[] = [];
  for (let b = 0; b < batches; b++) {
    memory.reset();
    for (let i = 0; i < BATCH; i++) {
      tracer.startSpan(i % 2 ? "claude_code.llm_request" : "claude_code.tool", {
        attributes: {
          "gen_ai.request.model": "claude-sonnet-4-5",
          "gen_ai.usage.input_tokens": 1000 + i,
          "gen_ai.usage.output_tokens": 50,
          "session.id": "c0ffee",
          "tool.name": "Read",
        },
      }).end();
    }
    out.push(new Uint8Array(ProtobufTraceSerializer.serializeRequest(memory.getFinishedSpans())!));
  }
  return out;
}

/** Posts one body and waits for its answer; returns the milliseconds it took. */
export async function postOne(
  url: string,
  body: Uint8Array<ArrayBuffer>,
  headers: Readonly<Record<string, string>> = {},
): Promise<number> {
  const t = performance.now();
  const r = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-protobuf", ...headers },
    body,
  });
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  await r.arrayBuffer();
  return performance.now() - t;
}
