/**
 * Asking witnesses to cosign a log's checkpoint (the client side of C2SP tlog-witness): each witness is sent
 * the checkpoint with a consistency proof from the size it has (learnt from its 409 answer when unknown), and
 * the cosignatures it returns are added to the checkpoint, which the log keeps as its witnessed one.
 *
 * A witness is another party, and what it answers goes into the note every verifier of the log reads, where one
 * signature that fails for a trusted key refuses the whole note (C2SP signed-note). So its answer is read with a
 * time limit and a cap, and only lines that can be a cosignature of this checkpoint are kept: a line in the log's
 * own name, a line that does not verify for a witness whose key is given, and two different lines for one key
 * (one of them a forgery or a replay) are dropped, and at most {@linkcode MAX_LINES_PER_WITNESS} are taken of one
 * witness.
 * @module
 */
import { readBytesCapped } from "../guard/body_bytes.ts";
import { ProveviError } from "../evidence/errors.ts";
import { parseCheckpoint } from "./checkpoint.ts";
import type { CosignatureVerifier } from "./cosignature.ts";
import type { LogStorage } from "./log_storage.ts";
import { proveConsistency } from "./log_proofs.ts";
import { type NoteSignature, parseNote } from "./note.ts";
import { addCheckpointBody } from "./witness.ts";

/** What one witness answered. */
export interface WitnessReply {
  url: string;
  /**
   * The HTTP status (0 when the witness could not be reached or did not answer in time; 502 when it answered 200
   * with no cosignature that could be kept, or an answer past its cap).
   */
  status: number;
  /** The signature lines kept of it (on 200), or its message: one line of printable text, at most 300 characters. */
  text: string;
}

/** The most bytes of a witness's answer read. */
export const MAX_WITNESS_ANSWER = 64 * 1024;
/** The most cosignature lines taken of one witness (one per key it holds). */
export const MAX_LINES_PER_WITNESS = 4;
/** A note holds at most this many signatures (`parseNote`). */
const MAX_SIGNATURES = 100;
/** The bytes of a cosignature/v1 signature: its time and an Ed25519 signature. */
const COSIGNATURE_BYTES = 72;

/** How `cosignLatest` asks. */
export interface CosignOptions {
  /** The witnesses whose keys are known: a line in one's name and key ID is kept only when it verifies. */
  witnesses?: readonly CosignatureVerifier[];
  /** How long one witness has to answer, request and answer together (30 s). */
  timeoutMs?: number;
}

/**
 * Sends the log's latest checkpoint to witnesses and keeps it with their cosignatures.
 *
 * @param log The store's log.
 * @param urls The witnesses' submission prefixes, such as `http://127.0.0.1:8123`.
 * @param options The witnesses' keys, when known, and the time each has to answer.
 * @returns The checkpoint with the cosignatures kept, and each witness's answer.
 * @throws ProveviError when the log has no checkpoint yet.
 */
export async function cosignLatest(
  log: LogStorage,
  urls: readonly string[],
  options: CosignOptions = {},
): Promise<{ note: string; replies: WitnessReply[] }> {
  const note = await log.checkpoint();
  if (note === null) {
    throw new ProveviError(`the log of ${log.where} is empty: there is nothing to cosign yet`);
  }
  const parsed = parseNote(note);
  const size = Number(parsed.text.split("\n")[1]);
  const timeoutMs = options.timeoutMs ?? 30_000;
  const answers = await Promise.all(urls.map((url) => submit(log, { url, note, size, timeoutMs })));
  const kept = keptLines(parsed, answers, options.witnesses ?? []);
  const replies = answers.map((a, i): WitnessReply => {
    if (a.status !== 200) return { url: a.url, status: a.status, text: oneLine(a.text) };
    const mine = kept.byWitness[i]!;
    if (mine.length > 0) return { url: a.url, status: 200, text: mine.join("\n") };
    return { url: a.url, status: 502, text: oneLine(`it answered 200 with ${kept.why[i]}`) };
  });
  const lines = [...parsed.signatures.map((s) => s.line), ...kept.byWitness.flat()];
  const cosigned = `${parsed.text}\n${lines.map((l) => `${l}\n`).join("")}`;
  if (replies.some((r) => r.status === 200)) await log.saveWitnessed(cosigned);
  return { note: cosigned, replies };
}

/**
 * The lines of each witness's 200 answer that may go into the note: cosignatures by shape, in no name of the
 * log's own signatures, verifying for a known witness's key, one line per key over all answers.
 */
function keptLines(
  note: { text: string; signatures: NoteSignature[] },
  answers: readonly { status: number; text: string }[],
  known: readonly CosignatureVerifier[],
): { byWitness: string[][]; why: string[] } {
  const message = new TextEncoder().encode(note.text);
  const origin = parseCheckpoint(note.text).origin;
  const keyOf = (s: { name: string; keyId: number }) => `${s.name} ${s.keyId}`;
  const logKeys = new Set(note.signatures.map(keyOf));
  const why = answers.map(() => "no cosignature line");
  const candidates = answers.map((a, i) => {
    if (a.status !== 200) return [];
    const out: NoteSignature[] = [];
    for (const line of a.text.split("\n")) {
      if (line === "" || out.length >= MAX_LINES_PER_WITNESS) continue;
      const s = signatureOf(note.text, line);
      if (s === null || s.signature.length !== COSIGNATURE_BYTES) {
        why[i] = "a line that is not a cosignature";
      } else if (s.name === origin || logKeys.has(keyOf(s))) {
        why[i] = `a line in the name of the log's own key ${s.name}`;
      } else {
        const verifier = known.find((k) => k.name === s.name && k.keyId === s.keyId);
        if (verifier && !verifier.verify(message, s.signature)) {
          why[i] = `a cosignature by ${s.name} that does not verify for this checkpoint`;
        } else out.push(s);
      }
    }
    return out;
  });
  // Two different lines for one key: one is a forgery or a replay, and without the key neither can be told.
  const linesOf = new Map<string, Set<string>>();
  for (const s of candidates.flat()) linesOf.set(keyOf(s), (linesOf.get(keyOf(s)) ?? new Set()).add(s.line));
  const taken = new Set<string>();
  let room = MAX_SIGNATURES - note.signatures.length;
  const byWitness = candidates.map((list, i) =>
    list.filter((s) => {
      if (linesOf.get(keyOf(s))!.size > 1) {
        why[i] = `a cosignature by ${s.name} that another witness's answer contradicts`;
        return false;
      }
      if (taken.has(s.line) || room <= 0) return false;
      taken.add(s.line);
      room--;
      return true;
    }).map((s) => s.line)
  );
  return { byWitness, why };
}

/** A line as a note's signature line, or null when it is not one. */
function signatureOf(text: string, line: string): NoteSignature | null {
  try {
    return parseNote(`${text}\n${line}\n`).signatures[0] ?? null;
  } catch {
    return null;
  }
}

/** A witness's text as one line of printable characters, at most 300 of them. */
function oneLine(text: string): string {
  // deno-lint-ignore no-control-regex -- a witness's text reaches a terminal: no escape, no line of its own
  const flat = text.trim().replace(/[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]+/g, " ");
  return flat.length > 300 ? `${flat.slice(0, 300)}…` : flat;
}

async function submit(
  log: LogStorage,
  ask: { url: string; note: string; size: number; timeoutMs: number },
): Promise<{ url: string; status: number; text: string }> {
  const { url, note, size, timeoutMs } = ask;
  let old = 0;
  for (let attempt = 0; attempt < 3; attempt++) {
    let proof: Uint8Array[] = [];
    if (old > size) {
      return { url, status: 409, text: `the witness has size ${old}, above the log's ${size}: a rollback` };
    }
    if (old > 0) proof = (await proveConsistency(log, old, size)).proof;
    const answer = await ask1(url, addCheckpointBody(old, proof, note), timeoutMs);
    if (answer.status === 409 && /^\d+\n?$/.test(answer.text)) {
      old = Number(answer.text.trim());
      continue;
    }
    return { url, status: answer.status, text: answer.text.trim() };
  }
  return { url, status: 409, text: "the witness's size kept changing" };
}

/** One request to a witness, its answer read within the time limit and the cap. */
async function ask1(url: string, body: string, timeoutMs: number): Promise<{ status: number; text: string }> {
  const signal = AbortSignal.timeout(timeoutMs);
  const over = new Error(`its answer is over ${MAX_WITNESS_ANSWER} bytes`);
  try {
    const response = await fetch(`${url.replace(/\/$/, "")}/add-checkpoint`, {
      method: "POST",
      body,
      redirect: "manual",
      signal,
    });
    if (response.body === null) return { status: response.status, text: "" };
    const bytes = await readBytesCapped(response.body, { max: MAX_WITNESS_ANSWER, tooLarge: () => over });
    return { status: response.status, text: new TextDecoder().decode(bytes) };
  } catch (error) {
    if (error === over) return { status: 502, text: over.message };
    if (signal.aborted) return { status: 0, text: `no answer within ${timeoutMs / 1000} s` };
    return { status: 0, text: (error as Error).message };
  }
}
