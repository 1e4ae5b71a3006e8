/**
 * A model gateway over a run of a file store, for the gateway's tests and its benchmark: the recorder of a run
 * that has started, the gateway in front of a provider, and the events written so far.
 * @module
 */
import { join } from "node:path";
import type { EvidenceEvent } from "../../../lib/provevi/evidence/event.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { readEventsText } from "../../../lib/provevi/evidence/read_events.ts";
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";
import { EvidenceRecorder } from "../../../lib/provrun/run/recorder.ts";
import { type GatewayOptions, ModelGateway } from "../../../lib/provrun/gateway/gateway.ts";
import { newRunId } from "../../../lib/provrun/run/run_context.ts";
import { removeWritable } from "../../_files.ts";

/** A gateway, its run and what it wrote. */
export interface GatewayRun extends AsyncDisposable {
  gateway: ModelGateway;
  recorder: EvidenceRecorder;
  folder: string;
  /** The events written so far, once every queued one is. */
  events(): Promise<EvidenceEvent[]>;
  /** A payload's bytes. */
  payload(sha: string): Promise<Uint8Array>;
}

/** Starts a gateway over a new run (its `run_created` written) in a temporary runs root. */
export async function gatewayRun(
  options: Partial<Omit<GatewayOptions, "recorder">> & Pick<GatewayOptions, "provider" | "upstream">,
): Promise<GatewayRun> {
  const runs = await Deno.makeTempDir({ prefix: "provrun-gateway-" });
  const writer = await new FileStore({ runs }).openRun(newRunId());
  const recorder = new EvidenceRecorder(writer, { actor: "ada", mode: "strict" });
  await recorder.record({ type: "run_created", component: "test", data: {} });
  const gateway = ModelGateway.start({
    key: "sk-real-key",
    component: "ModelGateway",
    responseBytes: 32 * 1024 * 1024,
    ...options,
    recorder,
  });
  const folder = writer.folder;
  return {
    gateway,
    recorder,
    folder,
    async events() {
      await recorder.flush();
      return readEventsText(await Deno.readTextFile(join(folder, "evidence", "events.jsonl"))).events;
    },
    payload: (sha) => new FileRunRecord(writer.runId, folder).payload(sha),
    async [Symbol.asyncDispose]() {
      await gateway.close();
      await removeWritable(runs);
    },
  };
}

/** The headers a program sends: the run's token as its key, in its SDK's header. */
export function programHeaders(gateway: ModelGateway, family: "anthropic" | "openai"): HeadersInit {
  return family === "anthropic"
    ? { "x-api-key": gateway.token, "anthropic-version": "2023-06-01", "content-type": "application/json" }
    : { authorization: `Bearer ${gateway.token}`, "content-type": "application/json" };
}
