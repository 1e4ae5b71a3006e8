import assert from "node:assert/strict";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { otlpExporter, otlpHeaders } from "../../../lib/provrun/telemetry/otlp_exporter.ts";
import { OTLP_TRACE_REQUEST } from "../../../lib/provevi/telemetry/otlp_proto.ts";

/** A server that keeps each request's headers and body. */
function collector() {
  const got: { headers: Headers; body: Uint8Array }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    got.push({ headers: req.headers, body: new Uint8Array(await req.arrayBuffer()) });
    return new Response(null, { status: 200 });
  });
  const url = `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}/v1/traces`;
  return { got, url, [Symbol.asyncDispose]: () => server.shutdown() };
}

type Attr = { key: string; value: Record<string, unknown> };

for (const protocol of ["http/protobuf", "http/json"] as const) {
  Deno.test(`otlpExporter() over ${protocol} sends a whole temperature as a double and the run's headers`, async () => {
    await using c = collector();
    const exporter = otlpExporter({
      url: c.url,
      protocol,
      environ: { OTEL_EXPORTER_OTLP_HEADERS: "x-mlflow-experiment-id=7,x-other=a%20b" },
      timeoutMillis: 5000,
    });
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const span = provider.getTracer("provrun").startSpan("chat gpt-4o", {
      attributes: {
        "gen_ai.request.temperature": 0,
        "gen_ai.request.top_p": 1,
        "gen_ai.request.max_tokens": 512,
        "gen_ai.request.seed": 7,
      },
    });
    span.end();
    await provider.forceFlush();
    await provider.shutdown();
    assert.equal(c.got.length, 1);
    const { headers, body } = c.got[0]!;
    assert.equal(headers.get("x-mlflow-experiment-id"), "7");
    assert.equal(headers.get("x-other"), "a b");
    let attrs: Attr[];
    if (protocol === "http/json") {
      const request = JSON.parse(new TextDecoder().decode(body));
      attrs = request.resourceSpans[0].scopeSpans[0].spans[0].attributes;
      const of = (key: string) => attrs.find((a) => a.key === key)!.value;
      assert.deepEqual(of("gen_ai.request.temperature"), { doubleValue: 0 });
      assert.deepEqual(of("gen_ai.request.top_p"), { doubleValue: 1 });
      assert.ok("intValue" in of("gen_ai.request.max_tokens"), "an int stays an int");
    } else {
      const request = OTLP_TRACE_REQUEST.toObject(OTLP_TRACE_REQUEST.decode(body), {
        longs: String,
        oneofs: true,
      });
      attrs = request.resource_spans[0].scope_spans[0].spans[0].attributes;
      const of = (key: string) => attrs.find((a) => a.key === key)!.value;
      assert.equal(of("gen_ai.request.temperature").value, "double_value");
      assert.equal(of("gen_ai.request.temperature").double_value, 0);
      assert.equal(of("gen_ai.request.top_p").double_value, 1);
      assert.equal(of("gen_ai.request.max_tokens").value, "int_value");
      assert.equal(of("gen_ai.request.seed").int_value, "7");
      // the times pass unchanged: nanoseconds past 2^53
      const sent = request.resource_spans[0].scope_spans[0].spans[0];
      assert.ok(BigInt(sent.start_time_unix_nano) > 1_700_000_000_000_000_000n);
    }
  });
}

Deno.test("otlpHeaders() reads key=value pairs, URL-decoded, and leaves out a part it cannot read", () => {
  assert.deepEqual(otlpHeaders("a=1, b = x%3Dy ,bad,=v,c=%E0%A4%A"), { a: "1", b: "x=y" });
  assert.deepEqual(otlpHeaders(undefined), {});
});
