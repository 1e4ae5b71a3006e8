/**
 * Asking witnesses to cosign a log's checkpoint (the client side of C2SP tlog-witness): each witness is sent
 * the checkpoint with a consistency proof from the size it has (learnt from its 409 answer when unknown), and
 * the cosignatures it returns are added to the checkpoint, which the log keeps as its witnessed one.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import type { LogStorage } from "./log_storage.ts";
import { proveConsistency } from "./log_proofs.ts";
import { parseNote } from "./note.ts";
import { addCheckpointBody } from "./witness.ts";

/** What one witness answered. */
export interface WitnessReply {
  url: string;
  /** The HTTP status (0 when the witness could not be reached). */
  status: number;
  /** The signature lines it gave (on 200), or its message. */
  text: string;
}

/**
 * Sends the log's latest checkpoint to witnesses and keeps it with their cosignatures.
 *
 * @param log The store's log.
 * @param urls The witnesses' submission prefixes, such as `http://127.0.0.1:8123`.
 * @returns The checkpoint with the cosignatures gathered, and each witness's answer.
 * @throws ProveviError when the log has no checkpoint yet.
 */
export async function cosignLatest(
  log: LogStorage,
  urls: readonly string[],
): Promise<{ note: string; replies: WitnessReply[] }> {
  const note = await log.checkpoint();
  if (note === null) {
    throw new ProveviError(`the log of ${log.where} is empty: there is nothing to cosign yet`);
  }
  const size = Number(parseNote(note).text.split("\n")[1]);
  const replies = await Promise.all(urls.map((url) => submit(log, url, note, size)));
  const lines = new Set(parseNote(note).signatures.map((s) => s.line));
  for (const r of replies) {
    if (r.status !== 200) continue;
    for (const line of r.text.split("\n")) if (line.startsWith("\u2014 ")) lines.add(line);
  }
  const cosigned = `${parseNote(note).text}\n${[...lines].map((l) => `${l}\n`).join("")}`;
  if (replies.some((r) => r.status === 200)) await log.saveWitnessed(cosigned);
  return { note: cosigned, replies };
}

async function submit(log: LogStorage, url: string, note: string, size: number): Promise<WitnessReply> {
  let old = 0;
  for (let attempt = 0; attempt < 3; attempt++) {
    let proof: Uint8Array[] = [];
    if (old > size) {
      return { url, status: 409, text: `the witness has size ${old}, above the log's ${size}: a rollback` };
    }
    if (old > 0) proof = (await proveConsistency(log, old, size)).proof;
    let response: Response;
    try {
      response = await fetch(`${url.replace(/\/$/, "")}/add-checkpoint`, {
        method: "POST",
        body: addCheckpointBody(old, proof, note),
      });
    } catch (error) {
      return { url, status: 0, text: (error as Error).message };
    }
    const text = await response.text();
    if (response.status === 409 && /^\d+\n?$/.test(text)) {
      old = Number(text.trim());
      continue;
    }
    return { url, status: response.status, text: text.trim() };
  }
  return { url, status: 409, text: "the witness's size kept changing" };
}
