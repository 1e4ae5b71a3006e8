/**
 * The check of a run's attestation (`evidence/attestation.dsse.json`): a DSSE envelope in RFC 8785 form, its
 * statement the one the run's evidence gives, byte for byte, and, with trusted keys, signed by one of them. The
 * signing is `attestation.ts`.
 * @module
 */
import { join } from "node:path";
import type { EvidenceEvent } from "./event.ts";
import { EVIDENCE_TEXT_MAX_BYTES, packSubject } from "./payload_pack.ts";
import { readCappedSync } from "./open_file.ts";
import type { RunRecord } from "./record.ts";
import type { TrustedKey } from "./signing_key.ts";
import { type Problem, problem } from "./problem.ts";
import type { ProblemCode } from "./problem_codes.ts";
import canonicalize from "canonicalize";
import { strictUtf8 } from "./_attestation_files.ts";
import { ATTESTATION_FILE, IN_TOTO_PAYLOAD_TYPE, pae, runStatement, statementBytes } from "./attestation.ts";

/** What {@linkcode checkAttestation} found. */
export interface AttestationCheck {
  problems: Problem[];
  notes: string[];
  /** The IDs of the trusted keys whose signature verified. */
  signedBy: string[];
}

/** An envelope as read: its payload's bytes and its signatures' bytes, each with its keyid ("" when unset). */
interface ReadEnvelope {
  payloadType: unknown;
  body: Uint8Array;
  signatures: { keyid: string; sig: Uint8Array<ArrayBuffer> }[];
}

/**
 * Checks a run's attestation: present when the run records a signing key (`run_created`'s `data.signing_key`),
 * an envelope in RFC 8785 form, its statement the one the run's evidence gives, byte for byte, and, with trusted
 * keys, signed by one of them.
 *
 * @param record The run.
 * @param events The run's events, as the evidence check read them.
 * @param options `trust`: the keys whose signature is required; without any, the signature is not checked.
 *   `texts`: the texts of `events.jsonl` and `manifest.json` as the evidence check read them (null for a file
 *   that could not be read), so that they are not read again.
 * @returns Problems, notes for the verdict, and the keys that signed.
 * @example
 * ```ts ignore
 * import { checkAttestation } from "./attestation_check.ts";
 * const { problems } = await checkAttestation(record, events, { trust: [await readTrustedKey("k.pub")] });
 * ```
 */
export async function checkAttestation(
  record: RunRecord,
  events: readonly EvidenceEvent[],
  options: {
    trust?: readonly TrustedKey[];
    texts?: { events: string | null; manifest: string | null };
  } = {},
): Promise<AttestationCheck> {
  const trust = options.trust ?? [];
  const out: AttestationCheck = { problems: [], notes: [], signedBy: [] };
  const created = events[0]?.type === "run_created" ? events[0] : undefined;
  const recorded = typeof created?.data.signing_key === "string" ? created.data.signing_key : null;
  const file = `evidence/${ATTESTATION_FILE}`;
  const push = (code: ProblemCode, message: string) =>
    out.problems.push(problem(code, message, { file: ATTESTATION_FILE }));
  let text: string | null = null;
  try {
    text = record.folder === null
      ? null
      : readPlain(join(record.folder, "evidence", ATTESTATION_FILE), envelopeMost(options.texts));
  } catch (error) {
    const why = error instanceof TypeError ? "it is not UTF-8" : (error as Error).message;
    push("attestation.unreadable", `${file} cannot be read: ${why}`);
    return out;
  }
  if (text === null) return unsigned(out, push, { recorded, trusted: trust.length > 0, file });
  const envelope = readEnvelope(text);
  if (envelope === null) {
    push(
      "attestation.not_envelope",
      `${file} is not a DSSE envelope (payloadType, payload in base64, signatures each with sig in base64 and keyid a text)`,
    );
    return out;
  }
  checkEnvelopeForm(text, envelope.payloadType, { push, file });
  const matched = await statementMatches(record, events, envelope.body, { ...options, push, file });
  const sigs = envelope.signatures;
  if (recorded !== null && !sigs.some((s) => s.keyid === recorded)) {
    push("attestation.key_absent", `${file} has no signature by key ${recorded}, which run_created records`);
  }
  if (trust.length === 0) {
    out.notes.push(
      `the run is signed by key ${
        sigs.map((s) => s.keyid || "(no keyid)").join(", ") || "(none)"
      }; the signature was not checked (pass --trust KEYFILE)`,
    );
    return out;
  }
  // The evidence check or the comparison above has said what is wrong; a signature over it proves nothing.
  if (!matched) return out;
  if (typeof envelope.payloadType === "string") {
    out.signedBy.push(...await trustedSigners(envelope.payloadType, envelope.body, sigs, trust));
  }
  if (out.signedBy.length === 0) {
    push(
      "attestation.untrusted",
      `${file} has no valid signature by a trusted key (trusted: ${trust.map((k) => k.keyid).join(", ")})`,
    );
  }
  return out;
}

/** Reports a problem with the code and one line. */
type Push = (code: ProblemCode, message: string) => void;

/** The verdict on a run without an attestation: a problem when it should be signed, else a note. */
function unsigned(
  out: AttestationCheck,
  push: Push,
  run: { recorded: string | null; trusted: boolean; file: string },
): AttestationCheck {
  if (run.recorded !== null) {
    push(
      "attestation.missing",
      `${run.file} is missing, but run_created records that the run is signed by key ${run.recorded}`,
    );
  } else if (run.trusted) {
    push(
      "attestation.missing",
      `${run.file} is missing: the run is not signed, and --trust requires a signature by a trusted key`,
    );
  } else out.notes.push("the run is not signed");
  return out;
}

/** The envelope's form: one byte form, and the in-toto payload type. */
function checkEnvelopeForm(text: string, payloadType: unknown, to: { push: Push; file: string }): void {
  // One byte form, as every JSON file of the evidence: the bundle holds these bytes, and a second form of the
  // same envelope would be a second file that verifies.
  if (canonicalize(JSON.parse(text)) + "\n" !== text) {
    to.push(
      "attestation.not_canonical",
      `${to.file} is not in RFC 8785 canonical form with one newline at its end`,
    );
  }
  if (payloadType !== IN_TOTO_PAYLOAD_TYPE) {
    to.push(
      "attestation.payload_type",
      `${to.file} has payloadType ${JSON.stringify(payloadType)}, not ${IN_TOTO_PAYLOAD_TYPE}`,
    );
  }
}

/**
 * Whether the signed payload is the statement the run's evidence gives; reports it when not. Without both files
 * the evidence check has its problem, and there is no statement to compare: then no key is said to have signed.
 */
async function statementMatches(
  record: RunRecord,
  events: readonly EvidenceEvent[],
  body: Uint8Array,
  options: {
    texts?: { events: string | null; manifest: string | null };
    push: (code: ProblemCode, message: string) => void;
    file: string;
  },
): Promise<boolean> {
  const [eventsText, manifestText] = options.texts
    ? [options.texts.events, options.texts.manifest]
    : await Promise.all([record.eventsText().catch(() => null), record.manifestText().catch(() => null)]);
  if (eventsText === null || manifestText === null) return false;
  let expected: Uint8Array | null = null;
  try {
    const pack = packSubject(await record.payloadPack().catch(() => null));
    expected = statementBytes(runStatement(eventsText, manifestText, { events, pack }));
  } catch {
    return false; // a manifest that is not an object: the evidence check reports it
  }
  if (sameBytes(body, expected)) return true;
  options.push(
    "attestation.statement",
    `${options.file} states another run than the folder holds: its statement is not the one the evidence gives (subjects, last hash, inputs); the run was changed after it was signed`,
  );
  return false;
}

/**
 * The trusted keys that signed: a signature counts for a key when it verifies with that key's public key over
 * the PAE. Its keyid is a hint (DSSE): a keyid that is set is tried only with the trusted key of that ID; an
 * empty one with every trusted key.
 */
async function trustedSigners(
  payloadType: string,
  body: Uint8Array,
  sigs: ReadEnvelope["signatures"],
  trust: readonly TrustedKey[],
): Promise<string[]> {
  const signed = pae(payloadType, body);
  const by: string[] = [];
  for (const key of trust) {
    for (const s of sigs) {
      if (s.keyid !== "" && s.keyid !== key.keyid) continue;
      if (await crypto.subtle.verify("Ed25519", key.key, s.sig, signed)) {
        by.push(key.keyid);
        break;
      }
    }
  }
  return by;
}

/**
 * Reads a DSSE envelope: a JSON object with `payload` (base64), `payloadType`, and `signatures`, a list of
 * objects each with `sig` (base64) and `keyid` (a text, or unset: the same as empty). Other fields are ignored,
 * as DSSE says. Null when the text is not one.
 */
function readEnvelope(text: string): ReadEnvelope | null {
  try {
    const e = JSON.parse(text);
    if (typeof e !== "object" || e === null || Array.isArray(e)) return null;
    if (typeof e.payload !== "string" || !("payloadType" in e) || !Array.isArray(e.signatures)) return null;
    const signatures: ReadEnvelope["signatures"] = [];
    for (const s of e.signatures as unknown[]) {
      const sig = s as { keyid?: unknown; sig?: unknown } | null;
      if (typeof sig !== "object" || sig === null || Array.isArray(sig) || typeof sig.sig !== "string") {
        return null;
      }
      if (sig.keyid !== undefined && typeof sig.keyid !== "string") return null;
      signatures.push({ keyid: sig.keyid ?? "", sig: fromBase64(sig.sig) });
    }
    return { payloadType: e.payloadType, body: fromBase64(e.payload), signatures };
  } catch {
    return null;
  }
}

/**
 * The most bytes the envelope of a run's statement can hold, given the texts of its evidence: the statement holds
 * no more than they give (a subject for each payload the manifest lists and each output an event records, each at
 * most about twice its text there; the inputs and names of the events), in base64 (4 bytes for 3), with a few
 * signatures. A text's length in UTF-16 units is at least a third of its UTF-8 bytes. The evidence cap when the
 * texts are not known.
 */
function envelopeMost(texts: { events: string | null; manifest: string | null } | undefined): number {
  if (texts === undefined || texts.events === null || texts.manifest === null) return EVIDENCE_TEXT_MAX_BYTES;
  return Math.min(
    EVIDENCE_TEXT_MAX_BYTES,
    3 * 3 * (texts.events.length + texts.manifest.length) + 1024 * 1024,
  );
}

/**
 * A small file read synchronously, refused (before it is read) past `most` bytes; not UTF-8 throws a TypeError,
 * a BOM is kept.
 */
function readPlain(path: string, most: number): string | null {
  let bytes: Uint8Array;
  try {
    bytes = readCappedSync(path, most);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  return strictUtf8.decode(bytes);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const STANDARD_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const URL_SAFE_BASE64 = /^[A-Za-z0-9_-]*={0,2}$/;

/**
 * Base64 as DSSE allows it: the standard alphabet or the URL-safe one (RFC 4648), not both in one value, with
 * or without its padding, and nothing else (no whitespace).
 * @throws TypeError or SyntaxError for a text that is not one.
 */
function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const alphabet = STANDARD_BASE64.test(text) ? "base64" : URL_SAFE_BASE64.test(text) ? "base64url" : null;
  if (alphabet === null) throw new TypeError("not base64");
  return (Uint8Array as unknown as {
    fromBase64(text: string, o: { alphabet: string; lastChunkHandling: string }): Uint8Array<ArrayBuffer>;
  }).fromBase64(text, { alphabet, lastChunkHandling: "loose" });
}
