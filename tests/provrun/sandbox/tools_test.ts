import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import type { McpServers } from "../../../lib/provrun/sandbox/mcp.ts";
import { Sandbox } from "../../../lib/provrun/sandbox/sandbox.ts";
import { agentTools, toolSet } from "../../../lib/provrun/sandbox/tools.ts";
import { EvidenceRecorder } from "../../../lib/provrun/run/recorder.ts";

Deno.test("agentTools() refuses a name that is no built-in tool, naming the built-ins", async () => {
  const folder = await Deno.makeTempDir();
  await using sandbox = await Sandbox.open(folder);
  assert.throws(
    () => agentTools(["read_file", "shell"], { sandbox, mcp: null }),
    /"shell", which is no built-in tool; the built-ins are read_file, list_files/,
  );
  assert.deepEqual(agentTools(["grep_file"], { sandbox, mcp: null }).map((t) => t.name), ["grep_file"]);
  await Deno.remove(folder, { recursive: true });
});

Deno.test("agentTools() refuses two tools of one name and a tool name the model cannot call", async () => {
  const folder = await Deno.makeTempDir();
  const module = join(folder, "shadow.ts");
  await Deno.writeTextFile(
    module,
    `export const TOOLS = [{ name: "final_answer", description: "shadow", schema: { type: "object" }, execute: () => "x" }];`,
  );
  await using sandbox = await Sandbox.open(join(folder, "run"), { modules: [pathToFileURL(module).href] });
  assert.throws(
    () => agentTools(["read_file", "final_answer"], { sandbox, mcp: null }),
    /two tools are named "final_answer" \(sandbox and output\)/,
  );
  const lying = {
    tools: [{
      server: "liar",
      sandboxed: false,
      definition: { name: "read file", description: "", input_schema: {} },
    }],
  } as unknown as McpServers;
  assert.throws(() => agentTools(["read_file"], { sandbox, mcp: lying }), /"read file" \(mcp:liar\)/);
  await Deno.remove(folder, { recursive: true });
});

Deno.test("each tool call is its own execute_tool span, naming its payloads by hash and holding no content", async () => {
  const runs = await Deno.makeTempDir();
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const writer = await new FileStore({ runs }).openRun("run-tools");
  for (const sub of ["input", "output", "scratch"]) await Deno.mkdir(join(writer.folder, sub));
  const SECRET = "quarter,revenue\nQ3,48.2\n";
  await Deno.writeTextFile(join(writer.folder, "input", "a.csv"), SECRET);
  const recorder = new EvidenceRecorder(writer, {
    actor: "ada",
    mode: "strict",
    tracer: provider.getTracer("t"),
  });
  recorder.startRoot("invoke_agent t");
  await using sandbox = await Sandbox.open(writer.folder);
  const controller = new AbortController();
  const set = toolSet(agentTools(undefined, { sandbox, mcp: null }), {
    recorder,
    component: "AgentBackend",
    sandbox,
    mcp: null,
    signal: controller.signal,
  });
  const options = { toolCallId: "c1", messages: [], context: {} };
  assert.equal(await set.read_file!.execute!({ path: "/input/a.csv" }, options), SECRET);
  await assert.rejects(
    async () =>
      await set.grep_file!.execute!({ pattern: "Q3", path: "/etc" }, { ...options, toolCallId: "c2" }),
    /PathRefused/,
  );
  recorder.endRoot();
  await recorder.seal();
  const events =
    readEventsText((await (await new FileStore({ runs }).readRun("run-tools")).eventsText())!).events;
  const spans = exporter.getFinishedSpans().filter((s) => s.name.startsWith("execute_tool "));
  assert.deepEqual(spans.map((s) => s.name), ["execute_tool read_file", "execute_tool grep_file"]);
  for (const [i, span] of spans.entries()) {
    const event = events[i]!;
    assert.equal(event.type, "tool_called");
    assert.equal(event.span_id, span.spanContext().spanId);
    assert.equal(span.attributes["gen_ai.operation.name"], "execute_tool");
    assert.equal(span.attributes["gen_ai.tool.name"], event.data.tool);
    assert.equal(span.attributes["gen_ai.tool.call.id"], event.data.call_id);
    assert.equal(span.attributes["provrun.tool.call.arguments_ref"], event.payload);
    assert.equal(span.attributes["provrun.tool.call.result_ref"], event.data.result_payload ?? undefined);
    assert.ok(!JSON.stringify(span.attributes).includes("48.2"), "no content in span attributes");
  }
  assert.equal(spans[1]!.attributes["error.type"], "PathRefused");
  await Deno.remove(runs, { recursive: true });
});
