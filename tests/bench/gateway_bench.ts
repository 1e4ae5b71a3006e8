/**
 * The model gateway's cost, each beside its reference in the same run:
 *
 * - a request that does not stream, through the gateway (forwarded with the key, recorded as `model_called`), to
 *   a fake provider on 127.0.0.1, against the same request sent straight to that provider. Target: at most 2 ms
 *   added (median). The gateway writes the call's record before it answers (so that the record comes before
 *   anything the program does with the answer): that is in the figure. The requests come 10 ms apart, as a
 *   program's model calls come with work between them;
 * - a streamed request's time to its first token (the first chunk of the body) through the gateway, against the
 *   same straight to the provider. Target: at most 1 ms added (median). Only the stream's last event waits for
 *   the record;
 * - recording a 1 MB response (reading what it says, storing it as a payload, writing the event), against writing
 *   its payload alone. Target: at most 1.5 times. The request was stored before, as the gateway stores it while
 *   the provider works (once the answer's headers came, or after a stream's first chunk went on).
 * @module
 */
import { join } from "node:path";
import type { Json } from "../../lib/provevi/evidence/event.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { EvidenceRecorder } from "../../lib/provrun/run/recorder.ts";
import { ModelGateway } from "../../lib/provrun/gateway/gateway.ts";
import { GatewayCall } from "../../lib/provrun/gateway/gateway_call.ts";
import { ANTHROPIC_MESSAGES } from "../../lib/provrun/gateway/anthropic_api.ts";
import { median, report } from "./_report.ts";

const ROUNDS = 200;
const REPLY = {
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5",
  content: [{ type: "text", text: "Revenue grew 12% in Q3." }],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 30, output_tokens: 12 },
};
const encoder = new TextEncoder();

/** A provider on 127.0.0.1: JSON at once, or a stream whose first event comes at once and the rest 20 ms later. */
function provider(): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json();
    if (!body.stream) return Response.json(REPLY);
    const stream = new ReadableStream<Uint8Array>({
      async start(c) {
        c.enqueue(
          encoder.encode(
            `event: message_start\ndata: ${
              JSON.stringify({ type: "message_start", message: { ...REPLY, content: [] } })
            }\n\n`,
          ),
        );
        await new Promise((r) => setTimeout(r, 20));
        c.enqueue(encoder.encode(`event: message_stop\ndata: {"type":"message_stop"}\n\n`));
        c.close();
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  });
}

async function timed(url: string, headers: HeadersInit, stream: boolean): Promise<number> {
  const body = JSON.stringify({
    model: "claude-sonnet-4-5",
    max_tokens: 10,
    stream,
    messages: [{ role: "user", content: "hi" }],
  });
  const t = performance.now();
  const r = await fetch(url, { method: "POST", headers, body });
  if (!stream) {
    await r.arrayBuffer();
    return performance.now() - t;
  }
  const reader = r.body!.getReader();
  await reader.read(); // the first token
  const first = performance.now() - t;
  while (!(await reader.read()).done) { /* the rest */ }
  return first;
}

/** Medians of direct and gateway requests, interleaved so that load on the machine falls on both alike. */
async function compare(direct: string, gateway: ModelGateway, stream: boolean): Promise<[number, number]> {
  const a: number[] = [];
  const b: number[] = [];
  const headers = { "x-api-key": gateway.token, "content-type": "application/json" };
  for (let i = 0; i < 20; i++) await timed(`${gateway.url}/v1/messages`, headers, stream); // warm up
  for (let i = 0; i < ROUNDS; i++) {
    a.push(
      await timed(`${direct}/v1/messages`, { "x-api-key": "k", "content-type": "application/json" }, stream),
    );
    b.push(await timed(`${gateway.url}/v1/messages`, headers, stream));
  }
  return [median(b), median(a)];
}

/**
 * Recording a 1 MB response against writing its payload alone, each with bytes never stored before, in either
 * order by turns (the first write of a pair pays more of the disk's backlog), as the gateway records it: the
 * bytes go to be stored, their JSON is read, and the call's event is written.
 */
async function recording(recorder: EvidenceRecorder): Promise<[number, number]> {
  const record: number[] = [];
  const write: number[] = [];
  const filler = "x".repeat(1024 * 1024);
  for (let i = 0; i < 60; i++) {
    const body = (tag: string) =>
      encoder.encode(JSON.stringify({ ...REPLY, content: [{ type: "text", text: `${tag}${i}${filler}` }] }));
    const one = body("record");
    const other = body("write");
    const call = new GatewayCall(
      {
        recorder,
        component: "ModelGateway",
        provider: "anthropic",
        price: null,
        span: { provider: "anthropic", address: "127.0.0.1", port: 8080, conversationId: null },
      },
      {
        api: ANTHROPIC_MESSAGES,
        bytes: encoder.encode(`{"model":"claude-sonnet-4-5","n":${i}}`),
        model: "claude-sonnet-4-5",
      },
    );
    call.storeRequest();
    await recorder.flush();
    const bare = async () => {
      const t = performance.now();
      await recorder.payload(other);
      write.push(performance.now() - t);
    };
    if (i % 2) await bare();
    const t = performance.now();
    call.storeResponse(one);
    const parsed = JSON.parse(new TextDecoder().decode(one)) as Json;
    await call.ok({ status: 200, body: parsed, bytes: one, stream: null });
    record.push(performance.now() - t);
    if (!(i % 2)) await bare();
  }
  return [median(record), median(write)];
}

/** Runs the benchmark. */
export async function main(): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "gateway-bench-" });
  const upstream = provider();
  const direct = `http://127.0.0.1:${upstream.addr.port}`;
  const writer = await new FileStore({ runs: join(dir, "runs") }).openRun("run-20261201T000000Z-0000bench");
  const recorder = new EvidenceRecorder(writer, { actor: "bench", mode: "strict" });
  await recorder.record({ type: "run_created", component: "bench", data: {} });
  const gateway = ModelGateway.start({
    provider: "anthropic",
    upstream: direct,
    key: "sk-bench",
    recorder,
    component: "ModelGateway",
    responseBytes: 32 * 1024 * 1024,
  });
  try {
    const [through, straight] = await compare(direct, gateway, false);
    report(
      `gateway, a request not streamed (added ${(through - straight).toFixed(2)} ms)`,
      through,
      straight,
      "ms",
      "at most 2 ms added",
    );
    const [first, firstDirect] = await compare(direct, gateway, true);
    report(
      `gateway, time to first token streamed (added ${(first - firstDirect).toFixed(2)} ms)`,
      first,
      firstDirect,
      "ms",
      "at most 1 ms added",
    );
    const [recorded, written] = await recording(recorder);
    report("gateway, recording a 1 MB response", recorded, written, "ms", "at most 1.5");
  } finally {
    await gateway.close();
    await upstream.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();
