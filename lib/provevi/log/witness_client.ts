/**
 * Asking witnesses to cosign a log's checkpoint (the client side of C2SP tlog-witness): each witness is sent
 * the checkpoint with a consistency proof from the size it has (learnt from its 409 answer when unknown), and
 * the cosignatures it returns are added to the checkpoint, which the log keeps as its witnessed one. An answer's
 * line is kept only as a witness's: none under the log's own name or a key that signed the checkpoint already,
 * and none of a witness whose key the caller gives that does not verify on this checkpoint (a cosignature of
 * another or an older one): a verifier refuses a note with a known key's signature that fails, so one such line
 * kept would spoil the witnessed checkpoint for every proof made from it.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import type { CosignatureVerifier } from "./cosignature.ts";
import type { LogStorage } from "./log_storage.ts";
import { proveConsistency } from "./log_proofs.ts";
import { type Note, parseNote } from "./note.ts";
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
 * @param options `witnesses`: the keys of witnesses whose cosignatures must verify on this checkpoint to be kept
 *   (a policy's); a witness's line under another key is kept unchecked, as a verifier without its key ignores it.
 * @returns The checkpoint with the cosignatures gathered, and each witness's answer (a 200 whose lines were all
 *   left out becomes a 502 saying so).
 * @throws ProveviError when the log has no checkpoint yet.
 */
export async function cosignLatest(
  log: LogStorage,
  urls: readonly string[],
  options: { witnesses?: readonly CosignatureVerifier[] } = {},
): Promise<{ note: string; replies: WitnessReply[] }> {
  const note = await log.checkpoint();
  if (note === null) {
    throw new ProveviError(`the log of ${log.where} is empty: there is nothing to cosign yet`);
  }
  const signed = parseNote(note);
  const size = Number(signed.text.split("\n")[1]);
  const replies = await Promise.all(urls.map((url) => submit(log, url, note, size)));
  const lines = new Set(signed.signatures.map((s) => s.line));
  const before = lines.size;
  for (const [i, r] of replies.entries()) {
    if (r.status !== 200) continue;
    const kept = r.text.split("\n").filter((line) => cosignatureOf(signed, line, options.witnesses ?? []));
    for (const line of kept) lines.add(line);
    if (kept.length === 0) {
      replies[i] = { url: r.url, status: 502, text: "its answer held no cosignature of this checkpoint" };
    }
  }
  const cosigned = `${signed.text}\n${[...lines].map((l) => `${l}\n`).join("")}`;
  if (lines.size > before) await log.saveWitnessed(cosigned);
  return { note: cosigned, replies };
}

/**
 * True when an answer's line may be kept on the checkpoint as a witness's cosignature: a signature line, not
 * under the checkpoint's origin (the log's name) nor a key that signed it already, and verifying on its text when
 * it is of a key among `known`.
 */
function cosignatureOf(signed: Note, line: string, known: readonly CosignatureVerifier[]): boolean {
  if (!line.startsWith("\u2014 ")) return false;
  let s: Note["signatures"][number] | undefined;
  try {
    s = parseNote(`${signed.text}\n${line}\n`).signatures[0];
  } catch {
    return false;
  }
  if (s === undefined || s.name === signed.text.split("\n")[0]) return false;
  if (signed.signatures.some((o) => o.name === s.name && o.keyId === s.keyId)) return false;
  const key = known.find((k) => k.name === s.name && k.keyId === s.keyId);
  return key === undefined || key.verify(new TextEncoder().encode(signed.text), s.signature);
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
