/**
 * The trust policy of a checkpoint: the log keys that may sign it, the witnesses whose cosignatures count, and
 * the quorum of them it needs (C2SP tlog-policy's `log`, `witness` and `quorum`, given as verifier keys). A
 * checkpoint is trusted when a log key signed it for its origin and at least `quorum` distinct witnesses
 * cosigned it.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import { type Checkpoint, parseCheckpoint } from "./checkpoint.ts";
import { type CosignatureVerifier, cosignatureVerifier } from "./cosignature.ts";
import {
  COSIGNATURE_TYPE,
  ED25519_TYPE,
  ed25519Verifier,
  type NoteVerifier,
  openNote,
  parseVkey,
} from "./note.ts";

/** Whom a checkpoint must be signed by. */
export interface TrustPolicy {
  /** The log keys: a checkpoint's origin must be one's name. */
  logs: NoteVerifier[];
  /** The witnesses. */
  witnesses: CosignatureVerifier[];
  /** How many distinct witnesses must have cosigned. */
  quorum: number;
}

/** A checkpoint that a policy trusts, and who signed it. */
export interface TrustedCheckpoint {
  checkpoint: Checkpoint;
  /** The note text that was signed. */
  text: string;
  log: NoteVerifier;
  /** The witnesses whose cosignatures verified, with their times. */
  witnesses: { name: string; vkey: string; time: number }[];
}

/** Why a checkpoint is not trusted: a code and one line. */
export interface CheckpointRefusal {
  code: "log.checkpoint_unreadable" | "log.untrusted" | "log.quorum";
  message: string;
}

/**
 * Reads a log verifier key (`<name>+<hex>+<base64>`, signature type 0x01).
 *
 * @param vkey The key text.
 * @returns The verifier.
 * @throws ProveviError when it is not such a key.
 * @example
 * ```ts
 * import { FileStore, logVerifier, RunFile, runFile, runProof, verifyRun } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const runs = await Deno.makeTempDir();
 * const { runId, folder } = await runFile(RunFile.parse(`
 * run: { org: acme, domain: demo, env: dev }
 * agent: { name: hello, backend: call, model: "test:", script: { model: echo-1, turns: [{ text: Hello. }] } }
 * prompt: Say hello.
 * `), { runs });
 * await using store = new FileStore({ runs });
 * await runProof(store, runId, { write: true });
 * const key = await store.log.key();
 * const log = { logs: [logVerifier(key!.verifier.vkey)], witnesses: [], quorum: 0 };
 * const check = await verifyRun(await store.readRun(runId), { log });
 * assert.equal(check.ok, true);
 * ```
 */
export function logVerifier(vkey: string): NoteVerifier {
  const k = parseVkey(vkey);
  if (k.type !== ED25519_TYPE) {
    throw new ProveviError(`the log key ${k.name} is of signature type ${k.type}, not Ed25519 (1)`);
  }
  return ed25519Verifier(k.name, k.publicKey);
}

/**
 * Reads a witness verifier key (signature type 0x04, cosignature/v1).
 *
 * @param vkey The key text.
 * @returns The verifier.
 * @throws ProveviError when it is not such a key.
 * @example
 * ```ts
 * import { ProveviError, witnessVerifier } from "@mahacata/prove";
 * import { Witness } from "./witness.ts";
 * import assert from "node:assert/strict";
 *
 * const witness = new Witness({
 *   name: "witness.example/w1",
 *   seed: crypto.getRandomValues(new Uint8Array(32)),
 *   state: await Deno.makeTempDir(),
 *   logs: [],
 * });
 * assert.equal(witnessVerifier(witness.verifier.vkey).name, "witness.example/w1");
 * assert.throws(() => witnessVerifier("not a key"), ProveviError);
 * ```
 */
export function witnessVerifier(vkey: string): CosignatureVerifier {
  const k = parseVkey(vkey);
  if (k.type !== COSIGNATURE_TYPE) {
    throw new ProveviError(
      `the witness key ${k.name} is of signature type ${k.type}, not cosignature/v1 (4)`,
    );
  }
  return cosignatureVerifier(k.name, k.publicKey);
}

/**
 * Checks a checkpoint against a policy.
 *
 * @param note The checkpoint, a signed note with its cosignatures.
 * @param policy The policy.
 * @returns The trusted checkpoint, or why it is refused.
 * @example
 * ```ts ignore
 * import { checkCheckpoint, logVerifier } from "./trust_policy.ts";
 * const result = checkCheckpoint(note, { logs: [logVerifier(vkey)], witnesses: [], quorum: 0 });
 * ```
 */
export function checkCheckpoint(
  note: string,
  policy: TrustPolicy,
): { ok: true; trusted: TrustedCheckpoint } | { ok: false; refusal: CheckpointRefusal } {
  const refuse = (code: CheckpointRefusal["code"], message: string) => ({
    ok: false as const,
    refusal: { code, message },
  });
  let opened;
  let checkpoint: Checkpoint;
  try {
    opened = openNote(note, [...policy.logs, ...policy.witnesses]);
    checkpoint = parseCheckpoint(opened.text);
  } catch (error) {
    return refuse("log.checkpoint_unreadable", `the checkpoint cannot be read: ${(error as Error).message}`);
  }
  const log = opened.verified.find((v) => policy.logs.includes(v) && v.name === checkpoint.origin);
  if (!log || opened.failed.some((v) => policy.logs.includes(v))) {
    return refuse(
      "log.untrusted",
      `the checkpoint of ${checkpoint.origin} is not signed by a trusted log key (${
        policy.logs.map((l) => l.name).join(", ") || "none given"
      })`,
    );
  }
  const witnesses = policy.witnesses.filter((w) => opened.verified.includes(w) && !opened.failed.includes(w))
    .map((w) => {
      const sig = opened.signatures.find((s) => s.name === w.name && s.keyId === w.keyId)!;
      return { name: w.name, vkey: w.vkey, time: w.timeOf(sig.signature) ?? 0 };
    });
  if (witnesses.length < policy.quorum) {
    return refuse(
      "log.quorum",
      `the checkpoint of ${checkpoint.origin} at size ${checkpoint.size} is cosigned by ${witnesses.length} of the trusted witnesses, and the quorum is ${policy.quorum}`,
    );
  }
  return { ok: true, trusted: { checkpoint, text: opened.text, log, witnesses } };
}
