/**
 * Runs for the attacks on `prove diff`, `prove cost` and the readers of a run's payloads: two runs of one
 * model call each in a file store, whose payloads (the prompt, the request, the response) the attack gives,
 * written through the store's writer (chained, sealed), so only what the payloads hold is hostile.
 * @module
 */
import { join } from "node:path";
import { EventChain, type EventInit } from "../../lib/provevi/evidence/chain.ts";
import { formatMicros } from "../../lib/provevi/evidence/event.ts";
import { utf8 } from "../../lib/provevi/evidence/hash.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { findRun } from "../../lib/provevi/runs/mod.ts";
import { diffRuns } from "../../lib/provevi/diff/mod.ts";

/** The payloads of one run: each a text. */
export interface CallPayloads {
  prompt: string;
  request: string;
  response: string;
  /** The data of `run_created`, as JSON text, written over the sealed line (`{"org":"acme","agent":"q"}`). */
  created?: string;
}

/** The payloads of a plain run. */
export const PLAIN: CallPayloads = {
  prompt: "What is it?",
  request: '{"prompt":[1]}',
  response: '{"text":"a"}',
};

/**
 * Writes a run of one model call into the store at `runs`.
 *
 * @param runs The runs root.
 * @param runId The run's ID.
 * @param payloads Its payloads.
 */
export async function writeCallRun(runs: string, runId: string, payloads: CallPayloads): Promise<void> {
  await using store = new FileStore({ runs });
  const writer = await store.openRun(runId);
  const chain = new EventChain(runId);
  let clock = Date.UTC(2026, 10, 29, 12, 0, 0) * 1000;
  const add = async (init: Omit<EventInit, "actor" | "time" | "trace_id" | "span_id">) => {
    clock += 1500;
    const next = chain.next({
      actor: "ada@example.com",
      time: formatMicros(clock),
      trace_id: "4bf92f3577b34da6a3ce929d0e0e4736",
      span_id: "0000000000000001",
      ...init,
    });
    await writer.append(next.line, next.event);
    chain.accept(next);
  };
  await add({
    type: "run_created",
    component: "RunContext",
    data: { org: "acme", agent: "q" },
  });
  await add({
    type: "prompt_rendered",
    component: "CallBackend",
    payload: await writer.putPayload(utf8(payloads.prompt)),
    data: {},
  });
  const request = await writer.putPayload(utf8(payloads.request));
  await add({
    type: "model_called",
    component: "CallBackend",
    payload: request,
    data: {
      provider: "test",
      model: "answer",
      input_tokens: 1,
      output_tokens: 1,
      response_payload: await writer.putPayload(utf8(payloads.response)),
    },
  });
  await add({ type: "run_completed", component: "RunContext", data: { status: "completed" } });
  await writer.seal({ sealed_at: formatMicros(clock + 1000) });
  if (payloads.created === undefined) return;
  // the writer refuses data nested so deep: the line is written in its place, as a hostile run's may be
  const path = join(runs, runId, "evidence", "events.jsonl");
  const text = await Deno.readTextFile(path);
  await Deno.writeTextFile(
    path,
    text.replace('"data":{"agent":"q","org":"acme"}', `"data":${payloads.created}`),
  );
}

/**
 * `prove diff`'s reading of two runs in a new folder: what it gave, or the error it threw (its name and message).
 *
 * @param a Run A's payloads, where they are not {@linkcode PLAIN}'s.
 * @param b Run B's payloads, where they are not {@linkcode PLAIN}'s.
 * @returns Each divergence's detail, a line each, or the error.
 */
export async function diffOf(
  a: Partial<CallPayloads>,
  b: Partial<CallPayloads>,
): Promise<{ detail?: string; error?: string }> {
  const dir = await Deno.makeTempDir({ prefix: "attack-diff-" });
  try {
    const runs = join(dir, "runs");
    await writeCallRun(runs, "run-20261129T120000Z-0000000a", { ...PLAIN, ...a });
    await writeCallRun(runs, "run-20261129T120000Z-0000000b", { ...PLAIN, ...b });
    await using store = new FileStore({ runs });
    const first = await findRun("run-20261129T120000Z-0000000a", { store });
    const other = await findRun("run-20261129T120000Z-0000000b", { store });
    try {
      const diff = await diffRuns(first, other);
      return { detail: diff.differences.map((d) => d.detail).join("\n") };
    } catch (error) {
      return { error: `${(error as Error).name}: ${(error as Error).message}`.slice(0, 300) };
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
