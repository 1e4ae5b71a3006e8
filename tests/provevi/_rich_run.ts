/**
 * Writes small runs with the fields the sqlite store indexes: an agent spec, an experiment and its pin, a
 * parent run, grants, a refusal and staged inputs.
 * @module
 */
import { EventChain, type EventInit } from "../../lib/provevi/evidence/chain.ts";
import { formatMicros } from "../../lib/provevi/evidence/event.ts";
import { utf8 } from "../../lib/provevi/evidence/hash.ts";
import type { Json } from "../../lib/provevi/evidence/event.ts";
import type { RunWriter } from "../../lib/provevi/store/store.ts";

/** What a rich run holds. */
export interface RichRun {
  agent?: string;
  model?: string;
  instructions?: string;
  prompt?: string;
  experiment?: string;
  experimentPin?: string;
  experimentSha256?: string;
  parentRun?: string;
  inputs?: string[];
  denied?: string[];
  settings?: { [key: string]: Json };
  /** Leave out the ending event and the seal. */
  unsealed?: boolean;
  notes?: number;
}

/**
 * Writes a rich run through a writer and seals it (unless `unsealed`).
 * @returns The number of events written.
 */
export async function writeRichRun(writer: RunWriter, run: RichRun = {}): Promise<number> {
  const chain = new EventChain(writer.runId);
  let clock = Date.UTC(2026, 10, 29, 12, 0, 0) * 1000;
  let count = 0;
  const add = async (init: Omit<EventInit, "actor" | "time">) => {
    clock += 1000;
    const next = chain.next({ actor: "ada@example.com", time: formatMicros(clock), ...init });
    await writer.append(next.line, next.event);
    chain.accept(next);
    count++;
  };
  const agent = run.agent ?? "revenue-question";
  const model = run.model ?? "test:answer";
  const spec: { [key: string]: Json } = {
    name: agent,
    backend: "call",
    model,
    instructions: run.instructions ?? "Answer in one line.",
    tools: ["read_file"],
    limits: { max_steps: 5, max_tokens: 1000 },
    settings: run.settings ?? { api_key: "sk-secret", temperature: 0 },
    prompt: run.prompt ?? "What was the revenue growth?",
    inputs: run.inputs ?? [],
  };
  const data: { [key: string]: Json } = {
    org: "acme",
    domain: "demo",
    env: "dev",
    actor: "ada@example.com",
    mode: "strict",
    agent,
    backend: "call",
    model,
    spec,
  };
  if (run.experiment) data.experiment = run.experiment;
  if (run.experimentPin) data.experiment_pin = run.experimentPin;
  if (run.experimentSha256) data.experiment_sha256 = run.experimentSha256;
  if (run.parentRun) data.parent_run = run.parentRun;
  await add({
    type: "run_created",
    component: "RunContext",
    refs: [`run://acme/demo/dev/${writer.runId}`],
    data,
  });
  for (const uri of run.inputs ?? []) {
    await add({
      type: "access_granted",
      component: "StubBroker",
      refs: [uri],
      data: { mode: "mounted_snapshot" },
    });
    const pinned = `${uri}?at=commit:${"c".repeat(40)}`;
    await add({
      type: "input_staged",
      component: "InProcessStager",
      refs: [pinned],
      data: { name: uri.split("/").pop()!, sha256: "b".repeat(64) },
    });
  }
  for (const uri of run.denied ?? []) {
    await add({
      type: "access_denied",
      component: "StubBroker",
      refs: [uri],
      data: { mode: "mounted_snapshot", reason: "not granted" },
    });
  }
  const payload = await writer.putPayload(utf8(`prompt of ${writer.runId}`));
  await add({ type: "prompt_rendered", component: "CallBackend", payload, data: { chars: 10 } });
  for (let i = 0; i < (run.notes ?? 0); i++) {
    await add({
      type: "note_added",
      component: "agent",
      span_id: "00000000000000a1",
      data: { text: `n${i}` },
    });
  }
  if (run.unsealed) return count;
  await add({ type: "run_completed", component: "RunContext", data: { status: "completed" } });
  await writer.seal();
  return count;
}
