/**
 * Data carried out through names: the corpus's probes (hex and base64 texts of up to 200 characters) as a
 * tool name the model made up, a tool call's ID, the model a response claims and an error's name. Below
 * `bodies`, none reaches a destination; the names the run declared do.
 * @module
 */
import assert from "node:assert/strict";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { SpanStatusCode } from "@opentelemetry/api";
import type { Level } from "../../lib/provevi/telemetry/attributes.ts";
import { declaredNames } from "../../lib/provrun/telemetry/declared_names.ts";
import { cutSpan } from "../../lib/provrun/telemetry/span_cut.ts";
import { DEFAULT_TOOLS } from "../../lib/provrun/sandbox/tools.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("names attacks");

const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 37 + 11) % 256);
const HEX = Array.from(bytes(100), (b) => b.toString(16).padStart(2, "0")).join(""); // 200 characters
const B64 = btoa(String.fromCharCode(...bytes(150))); // 200 characters
const SHORT = "c2VjcmV0LWtleQ"; // base64 of a secret, 14 characters
const PROBES = { hex: HEX, base64: B64, short: SHORT };

function span(name: string, attributes: Record<string, string>, status?: string) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const s = provider.getTracer("provrun").startSpan(name, { attributes });
  if (status) s.setStatus({ code: SpanStatusCode.ERROR, message: status });
  s.end();
  return exporter.getFinishedSpans()[0]!;
}

function leaks(cut: ReturnType<typeof cutSpan>, probe: string): boolean {
  const texts = [cut.name, cut.status.message ?? "", ...Object.values(cut.attributes).map(String)];
  return texts.some((t) => t.includes(probe));
}

Deno.test("below bodies, a name the model or a tool chose goes as its label and a short hash unless the run declared it", () => {
  const declared = declaredNames(
    { model: "openai:gpt-4o", tools: ["read_file", "final_answer"] },
    DEFAULT_TOOLS,
  );
  const missed: string[] = [];
  for (const level of ["names", "usage"] as Level[]) {
    for (const [kind, probe] of Object.entries(PROBES)) {
      const attacks: [string, ReturnType<typeof span>][] = [
        [
          "a tool name the model made up",
          span(`execute_tool ${probe}`, {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": probe,
          }),
        ],
        ["a tool call's ID", span("execute_tool read_file", { "gen_ai.tool.call.id": probe })],
        ["the model a response claims", span("chat gpt-4o", { "gen_ai.response.model": probe })],
        ["the model of a request", span(`chat ${probe}`, { "gen_ai.request.model": probe })],
        ["an error's name", span("execute_tool read_file", { "error.type": probe }, probe)],
        ["a response's ID", span("chat gpt-4o", { "gen_ai.response.id": probe })],
      ];
      for (const [name, s] of attacks) {
        const cut = cutSpan(s, level, declared);
        const stopped = !leaks(cut, probe);
        if (!stopped) missed.push(`${level} ${kind} ${name}: ${cut.name} ${JSON.stringify(cut.attributes)}`);
        tally.add(`${level} ${kind} ${name}`, { stopped, recorded: true });
      }
    }
  }
  assert.deepEqual(missed, []);
  // What the run declared goes as it is; the probe goes as a label and a hash.
  const ok = cutSpan(
    span("execute_tool read_file", {
      "gen_ai.tool.name": "read_file",
      "gen_ai.request.model": "gpt-4o",
      "error.type": "NotCapable",
    }, "NotCapable"),
    "names",
    declared,
  );
  assert.equal(ok.name, "execute_tool read_file");
  assert.equal(ok.status.message, "NotCapable");
  assert.deepEqual(ok.attributes, {
    "gen_ai.tool.name": "read_file",
    "gen_ai.request.model": "gpt-4o",
    "error.type": "NotCapable",
  });
  const hashed = cutSpan(span(`execute_tool ${SHORT}`, { "gen_ai.tool.name": SHORT }), "names", declared);
  assert.match(hashed.name, /^execute_tool tool:[0-9a-f]{12}$/);
  assert.match(String(hashed.attributes["gen_ai.tool.name"]), /^tool:[0-9a-f]{12}$/);
  // At bodies, the destination is trusted with everything.
  assert.equal(cutSpan(span(`execute_tool ${HEX}`, {}), "bodies", declared).name, `execute_tool ${HEX}`);
});

Deno.test("the names attack counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});
