/**
 * Writes a small, deterministic run through any store: the events of provrun-plan.txt, "Classes", with one
 * input, two payloads and one output. The test vectors in fixtures/ are this run.
 * @module
 */
import { join } from "node:path";
import { EventChain, type EventInit } from "../../lib/provevi/evidence/chain.ts";
import { formatMicros } from "../../lib/provevi/evidence/event.ts";
import { sha256Hex, utf8 } from "../../lib/provevi/evidence/hash.ts";
import type { Manifest } from "../../lib/provevi/evidence/manifest.ts";
import type { RunWriter } from "../../lib/provevi/store/store.ts";

/** The run ID of the sample run in fixtures/runs/. */
export const SAMPLE_RUN_ID = "run-20261129T120000Z-0badc0de";

/** The answer file the sample run writes to output/. */
export const SAMPLE_ANSWER = "Revenue grew 12% in Q3.\n";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const span = (n: number) => n.toString(16).padStart(16, "0");

/**
 * Writes the sample run through a writer, with fixed times, then seals it.
 *
 * @param writer The store's writer for the run.
 * @param options `extraEvents` adds steps before the end, to make bigger runs; `extraOutputs` adds outputs.
 * @returns The manifest.
 */
export async function writeSampleRun(
  writer: RunWriter,
  options: { extraEvents?: number; extraOutputs?: number; start?: number } = {},
): Promise<Manifest> {
  const chain = new EventChain(writer.runId);
  let clock = options.start ?? Date.UTC(2026, 10, 29, 12, 0, 0) * 1000;
  const add = async (init: Omit<EventInit, "actor" | "time">) => {
    clock += 1500;
    const next = chain.next({
      actor: "ada@example.com",
      time: formatMicros(clock),
      trace_id: TRACE,
      ...init,
    });
    await writer.append(next.line, next.event);
    chain.accept(next);
  };
  const runUri = `run://acme/demo/dev/${writer.runId}`;
  const input = "data+table://acme/demo/dev/evals/revenue";
  const pinned = `${input}?at=commit:3f2a9c1d5e7b8a90c1d2e3f4a5b6c7d8e9f0a1b2`;
  const inputSha = "b5bb9d8014a0f9b1d61e21e796d78dccdf1352f23cd32812f4850b878ae4944c";
  await add({
    type: "run_created",
    component: "RunContext",
    refs: [runUri],
    span_id: span(1),
    data: {
      org: "acme",
      domain: "demo",
      env: "dev",
      mode: "strict",
      agent: "revenue-question",
      backend: "call",
      model: "test:fixtures/models/answer.yaml",
      agent_version: "9d3b1c1bc3c3a6d0c2b4b0f6a8f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d",
      inputs: [input],
      parent_run: null,
      session_id: null,
      experiment: null,
      experiment_pin: null,
      experiment_sha256: null,
      store: "file",
      bundle: false,
      signing_key: null,
    },
  });
  await add({
    type: "access_requested",
    component: "StubBroker",
    refs: [input],
    span_id: span(2),
    parent_span_id: span(1),
    data: { mode: "mounted_snapshot" },
  });
  await add({
    type: "access_granted",
    component: "StubBroker",
    refs: [input],
    span_id: span(2),
    parent_span_id: span(1),
    data: { mode: "mounted_snapshot", expires_at: "2026-11-29T13:00:00.000000Z" },
  });
  await add({
    type: "context_resolved",
    component: "ProvcatResolver",
    refs: [input, pinned],
    span_id: span(3),
    parent_span_id: span(1),
    data: { pinned },
  });
  await add({
    type: "snapshot_materialized",
    component: "ProvcatResolver",
    refs: [pinned],
    span_id: span(3),
    parent_span_id: span(1),
    data: { kind: "file", sha256: inputSha, reused: false },
  });
  await add({
    type: "input_staged",
    component: "InProcessStager",
    refs: [pinned],
    span_id: span(4),
    parent_span_id: span(1),
    data: { name: "revenue.csv", kind: "file", sha256: inputSha },
  });
  await add({
    type: "sandbox_started",
    component: "CallBackend",
    refs: [],
    span_id: span(5),
    parent_span_id: span(1),
    data: { backend: "call", tools: [] },
  });
  const prompt = await writer.putPayload(utf8("What was the revenue growth in Q3? Answer in one line."));
  await add({
    type: "prompt_rendered",
    component: "CallBackend",
    payload: prompt,
    span_id: span(5),
    parent_span_id: span(1),
    data: { chars: 54, files: ["revenue.csv"] },
  });
  const request = await writer.putPayload(
    utf8(
      JSON.stringify({
        prompt: [{ role: "user", content: "What was the revenue growth in Q3? Answer in one line." }],
      }),
    ),
  );
  const response = await writer.putPayload(utf8(JSON.stringify({ text: SAMPLE_ANSWER })));
  await add({
    type: "model_called",
    component: "CallBackend",
    payload: request,
    span_id: span(6),
    parent_span_id: span(5),
    started_at: formatMicros(clock + 100),
    data: {
      provider: "test",
      model: "answer",
      answered_by: "answer",
      input_tokens: 14,
      output_tokens: 9,
      finish_reason: "stop",
      streamed: false,
      response_payload: response,
    },
  });
  for (let i = 0; i < (options.extraEvents ?? 0); i++) {
    await add({
      type: "note_added",
      component: "agent",
      span_id: span(5),
      parent_span_id: span(1),
      data: { n: i, text: "x".repeat(64) },
    });
  }
  await add({
    type: "sandbox_completed",
    component: "CallBackend",
    span_id: span(5),
    parent_span_id: span(1),
    data: { status: "ok", chars: SAMPLE_ANSWER.length },
  });
  await add({
    type: "input_verified",
    component: "InProcessStager",
    refs: [pinned],
    span_id: span(7),
    parent_span_id: span(1),
    data: { name: "revenue.csv", sha256: inputSha, expected: inputSha, ok: true },
  });
  const answer = utf8(SAMPLE_ANSWER);
  await Deno.mkdir(join(writer.folder, "output"), { recursive: true });
  await Deno.writeFile(join(writer.folder, "output", "answer.txt"), answer);
  await add({
    type: "output_artifact_created",
    component: "Outputter",
    refs: [`${runUri}/output/answer.txt`],
    span_id: span(8),
    parent_span_id: span(1),
    data: { path: "answer.txt", sha256: sha256Hex(answer), size: answer.length },
  });
  for (let i = 0; i < (options.extraOutputs ?? 0); i++) {
    const bytes = utf8(`output ${i}\n`);
    await Deno.writeFile(join(writer.folder, "output", `extra-${i}.txt`), bytes);
    await add({
      type: "output_artifact_created",
      component: "Outputter",
      refs: [`${runUri}/output/extra-${i}.txt`],
      span_id: span(8),
      parent_span_id: span(1),
      data: { path: `extra-${i}.txt`, sha256: sha256Hex(bytes), size: bytes.length },
    });
  }
  await add({
    type: "run_completed",
    component: "RunContext",
    refs: [runUri],
    span_id: span(1),
    data: { status: "completed" },
  });
  return await writer.seal({ sealed_at: formatMicros(clock + 1000) });
}
