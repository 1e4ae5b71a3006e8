/**
 * A witness (C2SP tlog-witness): for each log it knows, it keeps the latest checkpoint it cosigned, and cosigns a
 * new one only when a consistency proof shows that it extends that one. So it never cosigns two roots for one
 * size, nor a smaller tree. Its state is one file per log, `<state>/<SHA-256 of the origin>`, the checkpoint
 * with its cosignature, replaced atomically (written aside, fsynced, renamed, the folder fsynced), under a lock
 * file that one witness process at a time holds while it checks and writes: it survives kill -9.
 * @module
 */
import { readLogText } from "./log_file_read.ts";
import { writeScratchSync } from "./log_file_write.ts";
import { Buffer } from "node:buffer";
import { join } from "node:path";
import { sha256Hex } from "../evidence/hash.ts";
import { ProveviError } from "../evidence/errors.ts";
import { type Checkpoint, parseCheckpoint } from "./checkpoint.ts";
import { cosigner } from "./cosignature.ts";
import { syncPaths } from "./file_log.ts";
import { EMPTY_ROOT, HASH_SIZE, sameHash, verifyConsistency } from "./merkle.ts";
import { type NoteSigner, type NoteVerifier, openNote, parseNote, signatureLine } from "./note.ts";
import type { CosignatureVerifier } from "./cosignature.ts";

/** An answer of the witness: the HTTP status, the body, and its content type. */
export interface WitnessAnswer {
  status: number;
  body: string;
  contentType: string;
}

/** How a witness is made. */
export interface WitnessOptions {
  /** The witness's name (its key's name). */
  name: string;
  /** The 32-byte Ed25519 seed of its key. */
  seed: Uint8Array;
  /** The folder of its state. */
  state: string;
  /** The keys of the logs it witnesses (Ed25519 note keys, named by the logs' origins). */
  logs: readonly NoteVerifier[];
  /** The clock, in seconds, for tests. */
  now?: () => number;
}

const TEXT = "text/plain; charset=utf-8";

/**
 * A witness.
 *
 * @example
 * ```ts ignore
 * import { Witness } from "./witness.ts";
 * const witness = new Witness({ name: "witness.example/w1", seed, state: "/var/lib/witness", logs: [logKey] });
 * const answer = await witness.addCheckpoint(body);
 * ```
 */
export class Witness {
  readonly #signer: NoteSigner;
  /** The witness's verifier key (cosignature/v1). */
  readonly verifier: CosignatureVerifier;
  readonly #state: string;
  readonly #logs: readonly NoteVerifier[];
  #queue: Promise<unknown> = Promise.resolve();

  /** @param options The witness's name, key, state folder and logs. */
  constructor(options: WitnessOptions) {
    const { signer, verifier } = cosigner(
      options.name,
      options.seed,
      options.now ? { now: options.now } : {},
    );
    this.#signer = signer;
    this.verifier = verifier;
    this.#state = options.state;
    this.#logs = options.logs;
  }

  /**
   * Takes an `add-checkpoint` request body and answers as C2SP tlog-witness says: 200 with the cosignature, 400
   * for a malformed body, 403 for a checkpoint no known key of its log signed, 404 for an unknown log, 409 with
   * the size it has when `old` is not that size, 422 for a bad proof or another root at the size it has.
   *
   * @param body The request body.
   * @returns The answer.
   */
  addCheckpoint(body: string): Promise<WitnessAnswer> {
    const run = this.#queue.then(() => this.#locked(() => this.#add(body)));
    this.#queue = run.catch(() => {});
    return run;
  }

  /**
   * The latest checkpoint it cosigned for a log, with the log's signature and its own, or null.
   *
   * @param originHash The lowercase hex SHA-256 of the log's origin.
   */
  async latest(originHash: string): Promise<string | null> {
    if (!/^[0-9a-f]{64}$/.test(originHash)) return null;
    return await readLogText(join(this.#state, originHash));
  }

  async #locked<T>(fn: () => Promise<T>): Promise<T> {
    await Deno.mkdir(this.#state, { recursive: true });
    using lock = await Deno.open(join(this.#state, "lock"), { create: true, write: true });
    await lock.lock(true);
    return await fn();
  }

  async #add(body: string): Promise<WitnessAnswer> {
    const answer = (status: number, text: string, contentType = TEXT) => ({
      status,
      body: text,
      contentType,
    });
    const request = parseRequest(body);
    if (typeof request === "string") return answer(400, `${request}\n`);
    let opened;
    let checkpoint: Checkpoint;
    try {
      const text = parseNote(request.note).text;
      checkpoint = parseCheckpoint(text);
      opened = openNote(request.note, this.#logs.filter((l) => l.name === checkpoint.origin));
    } catch (error) {
      return answer(400, `${(error as Error).message}\n`);
    }
    if (!this.#logs.some((l) => l.name === checkpoint.origin)) {
      return answer(404, `unknown log ${checkpoint.origin}\n`);
    }
    if (opened.verified.length === 0 || opened.failed.length > 0) {
      return answer(403, `the checkpoint is not signed by a known key of ${checkpoint.origin}\n`);
    }
    if (request.old > checkpoint.size) {
      return answer(400, `old size ${request.old} is above ${checkpoint.size}\n`);
    }
    const file = join(this.#state, sha256Hex(checkpoint.origin));
    const stored = await readState(file);
    const have = stored?.size ?? 0;
    if (request.old !== have) return answer(409, `${have}\n`, "text/x.tlog.size");
    if (checkpoint.size === 0 && !sameHash(checkpoint.root, EMPTY_ROOT)) {
      return answer(422, "a checkpoint of size 0 must have the root of the empty tree\n");
    }
    const oldRoot = stored?.root ?? EMPTY_ROOT;
    if (request.old === 0 && request.proof.length > 0) return answer(422, "old size 0 takes no proof\n");
    if (!verifyConsistency(request.old, checkpoint.size, request.proof, oldRoot, checkpoint.root)) {
      return answer(422, `the checkpoint is not consistent with the one of size ${have} it cosigned\n`);
    }
    const line = signatureLine(
      this.#signer.name,
      this.#signer.keyId,
      this.#signer.sign(new TextEncoder().encode(opened.text)),
    );
    const logLines = opened.signatures.filter((s) =>
      opened.verified.some((v) => v.name === s.name && v.keyId === s.keyId)
    );
    const kept = `${opened.text}\n${[...logLines.map((s) => s.line), line].map((l) => `${l}\n`).join("")}`;
    await writeAtomically(file, kept);
    return answer(200, `${line}\n`);
  }
}

/** Reads the checkpoint a witness keeps for a log. */
async function readState(file: string): Promise<Checkpoint | null> {
  const text = await readLogText(file);
  if (text === null) return null;
  try {
    return parseCheckpoint(parseNote(text).text);
  } catch (error) {
    throw new ProveviError(`the witness's state ${file} is not a checkpoint; restore it from a copy`, {
      cause: error,
    });
  }
}

async function writeAtomically(file: string, text: string): Promise<void> {
  const tmp = `${file}.tmp`;
  // made new, never written through a link planted at its name (the rename would then put the link in place)
  writeScratchSync(tmp, new TextEncoder().encode(text));
  await syncPaths([tmp], []);
  await Deno.rename(tmp, file);
  await syncPaths([], [join(file, "..")]);
}

/**
 * Reads an `add-checkpoint` body: `old <size>`, at most 63 proof hashes, an empty line, the checkpoint.
 *
 * @param body The body.
 * @returns Its parts, or why it is malformed.
 */
export function parseRequest(body: string): { old: number; proof: Uint8Array[]; note: string } | string {
  const split = body.indexOf("\n\n");
  if (split < 0) return "no empty line before the checkpoint";
  const head = body.slice(0, split).split("\n");
  const old = /^old (0|[1-9][0-9]*)$/.exec(head[0] ?? "");
  if (!old || !Number.isSafeInteger(Number(old[1]))) return "the first line is not old <size>";
  const lines = head.slice(1);
  if (lines.length > 63) return "more than 63 proof lines";
  const proof: Uint8Array[] = [];
  for (const l of lines) {
    if (!/^[A-Za-z0-9+/]{43}=$/.test(l)) return `a proof line is not a hash in base64: ${l.slice(0, 60)}`;
    const h = new Uint8Array(Buffer.from(l, "base64"));
    if (h.length !== HASH_SIZE) return "a proof line is not 32 bytes";
    proof.push(h);
  }
  return { old: Number(old[1]), proof, note: body.slice(split + 2) };
}

/**
 * The body of an `add-checkpoint` request.
 *
 * @param old The size the witness has.
 * @param proof The consistency proof from that size.
 * @param note The checkpoint.
 * @returns The body.
 */
export function addCheckpointBody(old: number, proof: readonly Uint8Array[], note: string): string {
  return `old ${old}\n${proof.map((h) => `${Buffer.from(h).toString("base64")}\n`).join("")}\n${note}`;
}
