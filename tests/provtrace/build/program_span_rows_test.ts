import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT_CONTEXT, SpanStatusCode, trace } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { receiver } from "../../../lib/provevi/receiver/run_receiver.ts";
import { buildTrace } from "../../../lib/provtrace/build/build.ts";
import { EvidenceRecorder } from "../../../lib/provrun/run/recorder.ts";
import { removeWritable } from "../../_files.ts";
import { MLFLOW_PYTHON, MLFLOW_URI, needMlflow } from "../../provevi/mlflow/_mlflow_peer.ts";
import { ask } from "../_runs.ts";

const TRACES = 24;
const PATHS = ["data/q1.csv", "data/q2.csv", "data/q3.csv"];

/**
 * A program's GenAI spans, as an agent program that follows OpenTelemetry's GenAI conventions sends them: each
 * trace an `invoke_agent` root (every fifth one failed), a `chat` call with usage, and `execute_tool read_file`
 * calls with their arguments and results as attributes (every seventh one failed). Returns the OTLP/HTTP
 * protobuf bodies (one request of the whole batch) and what was sent.
 */
function genAiSpans(): { bodies: Uint8Array<ArrayBuffer>[]; failedRoots: Set<string>; q3Reads: Set<string> } {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer("agent-program", "1.0.0");
  const failedRoots = new Set<string>();
  const q3Reads = new Set<string>();
  let call = 0;
  for (let t = 0; t < TRACES; t++) {
    const root = tracer.startSpan("invoke_agent analyst", {
      attributes: { "gen_ai.operation.name": "invoke_agent" },
    });
    const ctx = trace.setSpan(ROOT_CONTEXT, root);
    const chat = tracer.startSpan("chat gpt-4o", {
      attributes: {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.usage.input_tokens": 100 + t,
        "gen_ai.usage.output_tokens": 7,
        "gen_ai.response.finish_reasons": ["tool_calls"],
      },
    }, ctx);
    chat.end();
    for (let k = 0; k < 1 + (t % 3); k++) {
      const path = PATHS[(t + k) % PATHS.length]!;
      const tool = tracer.startSpan("execute_tool read_file", {
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "read_file",
          "gen_ai.tool.call.id": `call_${++call}`,
          "gen_ai.tool.call.arguments": JSON.stringify({ path }),
          "gen_ai.tool.call.result": JSON.stringify({ bytes: 40 + k }),
        },
      }, ctx);
      if (call % 7 === 0) tool.setStatus({ code: SpanStatusCode.ERROR, message: "no such file" });
      else if (path === "data/q3.csv") q3Reads.add(root.spanContext().traceId);
      tool.end();
    }
    if (t % 5 === 0) {
      root.recordException(Object.assign(new Error("the model gave up"), { name: "AgentError" }));
      root.setStatus({ code: SpanStatusCode.ERROR, message: "the model gave up" });
      failedRoots.add(root.spanContext().traceId);
    }
    root.end();
  }
  const spans = memory.getFinishedSpans();
  const bodies: Uint8Array<ArrayBuffer>[] = [];
  for (let i = 0; i < spans.length; i += 40) {
    bodies.push(new Uint8Array(ProtobufTraceSerializer.serializeRequest(spans.slice(i, i + 40))!));
  }
  return { bodies, failedRoots, q3Reads };
}

/** A sealed run of a file store whose receiver took the bodies, and its trace database. */
async function builtRun(bodies: Uint8Array<ArrayBuffer>[]): Promise<{ db: string } & AsyncDisposable> {
  const root = await Deno.makeTempDir({ prefix: "provtrace-received-" });
  const runs = join(root, "runs");
  const store = new FileStore({ runs });
  const writer = await store.openRun("run-20261130T120000Z-0000a9e7");
  const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict" });
  await recorder.record({ type: "run_created", component: "RunContext", data: { agent: "program" } });
  {
    await using spans = receiver(store, recorder);
    for (const body of bodies) {
      const r = await fetch(spans.tracesUrl, {
        method: "POST",
        headers: { ...spans.headers, "content-type": "application/x-protobuf" },
        body,
      });
      assert.equal(r.status, 200);
      await r.body?.cancel();
    }
  }
  await recorder.record({ type: "run_completed", component: "RunContext", data: { status: "completed" } });
  await recorder.seal();
  const db = join(root, "trace.db");
  const built = await buildTrace({ store: "file", runs, db });
  assert.deepEqual(built.refused, []);
  return { db, [Symbol.asyncDispose]: () => removeWritable(root) };
}

/** "The traces with a call of read_file whose path is data/q3.csv", in SQL over the trace database. */
const Q3_READS = `
  SELECT DISTINCT s.trace_id FROM trace_tool_calls c
  JOIN trace_spans s ON s.run_id = c.run_id AND s.span_id = c.span_id
  WHERE c.tool = 'read_file' AND json_extract(c.arguments, '$.path') = 'data/q3.csv' AND c.error IS NULL
  ORDER BY 1`;

Deno.test("a program's received spans are rows with their own status and error, and its GenAI tool and model calls are rows with their arguments", async () => {
  const sent = genAiSpans();
  await using run = await builtRun(sent.bodies);
  const reads = ask(run.db, Q3_READS).rows.map((r) => r.trace_id);
  assert.deepEqual(reads, [...sent.q3Reads].sort());
  // the failed roots are ERROR, with the exception's type and the status message
  const roots = ask(
    run.db,
    "SELECT trace_id, status, error, kind, origin FROM trace_spans WHERE name = 'invoke_agent analyst' ORDER BY trace_id",
  ).rows;
  assert.equal(roots.length, TRACES);
  assert.deepEqual(
    roots.filter((r) => r.status === "ERROR").map((r) => r.trace_id),
    [...sent.failedRoots].sort(),
  );
  for (const r of roots) {
    assert.equal(r.kind, "AGENT");
    assert.equal(r.origin, "receiver");
    assert.equal(r.error, r.status === "ERROR" ? "AgentError: the model gave up" : null);
  }
  // a failed tool call keeps its error; every call its arguments and result
  const calls =
    ask(run.db, "SELECT tool, arguments, result, error, error_message, executed_by FROM trace_tool_calls")
      .rows;
  assert.ok(calls.length > TRACES);
  assert.ok(
    calls.every((c) => c.executed_by === "program" && /"path":"data\/q\d\.csv"/.test(String(c.arguments))),
  );
  assert.ok(calls.some((c) => c.error === "Error" && c.error_message === "no such file"));
  // the model calls, with their usage
  const models = ask(
    run.db,
    "SELECT model, provider, input_tokens, output_tokens, total_tokens, finish_reason FROM trace_model_calls ORDER BY input_tokens",
  )
    .rows;
  assert.equal(models.length, TRACES);
  assert.deepEqual({ ...models[0] }, {
    model: "gpt-4o",
    provider: "openai",
    input_tokens: 100,
    output_tokens: 7,
    total_tokens: 107,
    finish_reason: "tool_calls",
  });
});

/** MLflow's own answer to the same question, through its Python client's `search_traces`. */
const MLFLOW_ANSWER = `
import json, sys
import mlflow
uri, experiment = sys.argv[1], sys.argv[2]
mlflow.set_tracking_uri(uri)
traces = mlflow.search_traces(locations=[experiment], return_type="list", max_results=1000)
reads, failed = set(), set()
for t in traces:
    otel = t.info.trace_id.removeprefix("tr-")
    if str(getattr(t.info.state, "value", t.info.state)) == "ERROR":
        failed.add(otel)
    for s in t.data.spans:
        a = s.attributes or {}
        if a.get("gen_ai.tool.name") != "read_file" or s.status.status_code.value == "ERROR":
            continue
        args = a.get("gen_ai.tool.call.arguments", s.inputs)
        if isinstance(args, str):
            args = json.loads(args)
        if isinstance(args, dict) and args.get("path") == "data/q3.csv":
            reads.add(otel)
print(json.dumps({"traces": len(traces), "reads": sorted(reads), "failed": sorted(failed)}))
`;
import { peerTest } from "../../_peers.ts";

peerTest("mlflow", {
  name:
    "the calls of a tool with given arguments in a program's spans: provtrace answers as MLflow's search_traces does",
  fn: async () => {
    const { uri, python } = needMlflow();
    const sent = genAiSpans();
    await using run = await builtRun(sent.bodies);
    const created = await fetch(`${uri}/api/2.0/mlflow/experiments/create`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: `provtrace-received-${crypto.randomUUID()}` }),
    });
    const { experiment_id } = await created.json() as { experiment_id: string };
    for (const body of sent.bodies) {
      const r = await fetch(`${uri}/v1/traces`, {
        method: "POST",
        headers: { "content-type": "application/x-protobuf", "x-mlflow-experiment-id": experiment_id },
        body,
      });
      assert.equal(r.status, 200, await r.text());
    }
    const out = await new Deno.Command(python ?? MLFLOW_PYTHON!, {
      args: ["-c", MLFLOW_ANSWER, uri ?? MLFLOW_URI!, experiment_id],
      env: { MLFLOW_DISABLE_TELEMETRY: "true", DO_NOT_TRACK: "true" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const mlflow = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      traces: number;
      reads: string[];
      failed: string[];
    };
    assert.equal(mlflow.traces, TRACES);
    const ours = ask(run.db, Q3_READS).rows.map((r) => r.trace_id);
    assert.ok(ours.length > 0);
    assert.deepEqual(ours, mlflow.reads);
    const failed = ask(
      run.db,
      "SELECT trace_id FROM trace_spans WHERE parent_span_id IS NULL AND origin = 'receiver' AND status = 'ERROR' ORDER BY 1",
    ).rows.map((r) => r.trace_id);
    assert.deepEqual(failed, mlflow.failed);
  },
});
