import assert from "node:assert/strict";
import { join } from "node:path";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { MockLanguageModelV4 } from "ai/test";
import { simulateReadableStream, streamText } from "ai";
import { captureModel } from "../../../lib/provrun/backends/capture.ts";
import { EvidenceRecorder } from "../../../lib/provrun/run/recorder.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { startFakeOpenAI } from "../../../fixtures/providers/fake_openai_server.ts";

function runFileFor(baseUrl: string, model: string, stream: boolean): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: revenue-question
  backend: call
  model: "openai-compatible:${model}"
  provider: { base_url: "${baseUrl}" }
  stream: ${stream}
  settings: { temperature: 0 }
prompt: What was the revenue growth in Q3?
outputs: [answer.txt]
`);
}

async function eventsOf(runs: string, runId: string) {
  const record = await (new FileStore({ runs })).readRun(runId);
  return { record, events: readEventsText((await record.eventsText())!).events };
}

async function payloadJson(runs: string, runId: string, sha: string) {
  const record = await (new FileStore({ runs })).readRun(runId);
  return JSON.parse(new TextDecoder().decode(await record.payload(sha)));
}

for (const stream of [false, true]) {
  Deno.test(`openai-compatible (${stream ? "SSE" : "JSON"}): the recorded request and reply match what crossed the wire`, async () => {
    await using server = startFakeOpenAI();
    const runs = await Deno.makeTempDir();
    const outcome = await runFile(runFileFor(server.baseUrl, "fake-4o", stream), { runs });
    assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
    assert.equal(outcome.text, "Revenue grew 12% in Q3.");
    const { events, record } = await eventsOf(runs, outcome.runId);
    const call = events.find((e) => e.type === "model_called")!;
    assert.equal(call.data.provider, "openai-compatible.chat");
    assert.equal(call.data.model, "fake-4o");
    assert.equal(call.data.answered_by, "fake-4o-2026-11-01");
    assert.equal(call.data.input_tokens, 21);
    assert.equal(call.data.output_tokens, 7);
    assert.equal(call.data.cache_read_tokens, 5);
    assert.equal(call.data.finish_reason, "stop");
    assert.equal(call.data.streamed, stream);
    assert.equal(server.bodies.length, 1);
    const request = await payloadJson(runs, outcome.runId, call.payload!);
    assert.deepEqual(request.wire, JSON.parse(server.bodies[0]!));
    const reply = await payloadJson(runs, outcome.runId, call.data.response_payload as string);
    if (stream) assert.equal(reply.text, "Revenue grew 12% in Q3.");
    else assert.deepEqual(reply.response.body, JSON.parse(server.replies[0]!));
    assert.equal(
      await Deno.readTextFile(join(outcome.folder, "output", "answer.txt")),
      "Revenue grew 12% in Q3.",
    );
    assert.deepEqual((await verifyRun(record)).problems, []);
    await Deno.remove(runs, { recursive: true });
  });
}

Deno.test("openai-compatible: an error status fails the run with step_failed and run_failed, sealed", async () => {
  await using server = startFakeOpenAI();
  const runs = await Deno.makeTempDir();
  const outcome = await runFile(runFileFor(server.baseUrl, "error-503", false), { runs });
  assert.equal(outcome.status, "failed");
  const { events, record } = await eventsOf(runs, outcome.runId);
  const types = events.map((e) => e.type);
  assert.deepEqual(types.slice(-2), ["step_failed", "run_failed"]);
  const failed = events.at(-2)!;
  assert.equal(failed.data.step, "model_called");
  assert.match(String(failed.data.message), /overloaded/);
  assert.ok(failed.payload, "the request of a failed call is kept");
  assert.equal(outcome.manifest?.status, "failed");
  assert.deepEqual((await verifyRun(record)).problems, []);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("openai-compatible: a stream cut part way records what arrived, then step_failed", async () => {
  await using server = startFakeOpenAI();
  const runs = await Deno.makeTempDir();
  const outcome = await runFile(runFileFor(server.baseUrl, "cut", true), { runs });
  assert.equal(outcome.status, "failed");
  const { events } = await eventsOf(runs, outcome.runId);
  const failed = events.find((e) => e.type === "step_failed")!;
  assert.equal(failed.data.step, "model_called");
  assert.equal(failed.data.partial, true);
  const reply = await payloadJson(runs, outcome.runId, failed.data.response_payload as string);
  assert.equal(reply.text, "Revenue grew ");
  assert.equal(events.at(-1)!.type, "run_failed");
  assert.ok((await verifyRun(await findRun(outcome.folder))).ok);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("a stream that carries an error part is recorded as step_failed with what arrived, not as a model call that went well", async () => {
  const runs = await Deno.makeTempDir();
  const writer = await new FileStore({ runs }).openRun("run-stream-error");
  const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict" });
  recorder.startRoot("invoke_agent t");
  const usage = {
    inputTokens: { total: 3, noCache: 3, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 1, text: 1, reasoning: 0 },
  };
  const mock = new MockLanguageModelV4({
    doStream: () =>
      Promise.resolve({
        stream: simulateReadableStream({
          chunks: [
            { type: "stream-start", warnings: [] },
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "Revenue grew " },
            { type: "error", error: new Error("the provider broke mid-stream") },
            { type: "finish", finishReason: { unified: "error", raw: "error" }, usage },
          ] as never,
        }),
      }),
  });
  const counted: number[] = [];
  const model = captureModel(mock as never, recorder, {
    component: "CallBackend",
    onUsage: (u) => counted.push(u.input + u.output),
  });
  const parts: string[] = [];
  for await (const part of streamText({ model, prompt: "hi", onError: () => {} }).fullStream) {
    parts.push(part.type);
  }
  assert.ok(parts.includes("error"));
  recorder.endRoot();
  await recorder.seal();
  const events =
    readEventsText((await (await new FileStore({ runs }).readRun("run-stream-error")).eventsText())!)
      .events;
  assert.deepEqual(events.map((e) => e.type), ["step_failed"]);
  const failed = events[0]!;
  assert.equal(failed.data.step, "model_called");
  assert.equal(failed.data.partial, true);
  assert.match(String(failed.data.message), /broke mid-stream/);
  assert.deepEqual(counted, [4], "the tokens of a failed call still count toward the limit");
  const reply = await payloadJson(runs, "run-stream-error", failed.data.response_payload as string);
  assert.equal(reply.text, "Revenue grew ");
  assert.deepEqual(reply.parts.find((p: { type: string }) => p.type === "error").error, {
    name: "Error",
    message: "the provider broke mid-stream",
  });
  await Deno.remove(runs, { recursive: true });
});
