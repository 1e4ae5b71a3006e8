/**
 * The agent programs of the claude-code and codex tests: the real CLIs that .ci/peers/agents.sh installs, named
 * by PROVRUN_TEST_CLAUDE and PROVRUN_TEST_CODEX. Their tests are `peerTest("claude-code", …)` or
 * `peerTest("codex", …)` (`tests/_peers.ts`): in CI a missing program fails them; elsewhere they are skipped.
 * @module
 */
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { findRun } from "../../../lib/provevi/runs/find_run.ts";
import { indexedSpans } from "../../../lib/provevi/store/trace.ts";
import type { ReceivedSpan } from "../../../lib/provevi/receiver/otlp_wire.ts";
import { batchSpans } from "../../../lib/provevi/receiver/received_batch.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { PEERS } from "../../_peers.ts";

/** The path of a program, when its peer is set. */
export function program(peer: "claude-code" | "codex"): { path: string | undefined } {
  return { path: Deno.env.get(PEERS[peer].variables[0]) };
}

/** Fails in CI when the program's variable is unset. */
export function needed(path: string | undefined, variable: string): string {
  if (path === undefined) throw new Error(`${variable} is unset: .ci/peers/agents.sh installs the program`);
  return path;
}

/** The events of a run of a file store. */
export async function eventsOf(runs: string, runId: string) {
  const record = await new FileStore({ runs }).readRun(runId);
  return readEventsText((await record.eventsText())!).events;
}

/**
 * The span rows of a run folder, as a reader of the run's spans gets them: those of `spans.jsonl`, then those
 * of its protobuf bodies, made from their payloads (a run with prove serve keeps no rows of those).
 */
export async function spanRows(folder: string): Promise<{ trace_id: string; name: string }[]> {
  try {
    const record = await findRun(folder);
    return await indexedSpans(record, readEventsText((await record.eventsText()) ?? "").events);
  } catch {
    return [];
  }
}

/** The spans a run's receiver took: those of its `spans_received` events, read back from their payloads. */
export async function receivedSpans(runs: string, runId: string): Promise<ReceivedSpan[]> {
  const record = await new FileStore({ runs }).readRun(runId);
  const spans: ReceivedSpan[] = [];
  for (const e of readEventsText((await record.eventsText())!).events) {
    if (e.type === "spans_received") spans.push(...batchSpans(e, await record.payload(e.payload!)));
  }
  return spans;
}
