/**
 * The signed seal of a run: an in-toto Statement (v1) of the run in a DSSE envelope, signed with Ed25519 through
 * WebCrypto. Its subjects are the evidence files and the outputs with their SHA-256 digests; its predicate holds
 * the run's ID, last hash, status, agent and version, and the inputs with their pins. It lies at
 * `evidence/attestation.dsse.json`, outside the manifest (which it covers) and inside the bundle.
 * @module
 */
import { replaceFileSync } from "./replace_file.ts";
import { createHash } from "node:crypto";
import { join } from "node:path";
import canonicalize from "canonicalize";
import type { EvidenceEvent, Json } from "./event.ts";
import { ProveviError } from "./errors.ts";
import { sha256Hex, utf8 } from "./hash.ts";
import { EVIDENCE_TEXT_MAX_BYTES, PACK_FILE, type PackSubject, packSubject } from "./payload_pack.ts";
import { PACK_MAX_BYTES } from "./payload_pack.ts";
import { readPlainBytes, strictUtf8 } from "./_attestation_files.ts";
import { readCappedSync } from "./open_file.ts";
import { readLinesCapped } from "./events_file.ts";
import { EVENT_LINE_MAX_BYTES, JSON_READ_WEIGHT, jsonLineWeight } from "./json_depth.ts";
import type { RunRecord } from "./record.ts";
import { signBytes, type SigningKey } from "./signing_key.ts";
import { recordedOutputs } from "./verify.ts";

/** The file of the attestation, under `evidence/`. */
export const ATTESTATION_FILE = "attestation.dsse.json";
/** The DSSE payload type of an in-toto statement. */
export const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";
/** The `_type` of an in-toto Statement v1. */
export const STATEMENT_TYPE = "https://in-toto.io/Statement/v1";
/** The `predicateType` of a run's statement. */
export const RUN_PREDICATE_TYPE = "https://mahacata.dev/provevi/run/v1";

/** A DSSE envelope, as `attestation.dsse.json` holds it. */
export interface DsseEnvelope {
  payloadType: string;
  /** The statement's bytes (RFC 8785 JSON), in base64. */
  payload: string;
  signatures: { keyid: string; sig: string }[];
}

/** An in-toto Statement v1 of a run. */
export interface RunStatement {
  _type: typeof STATEMENT_TYPE;
  subject: { name: string; digest: { sha256: string } }[];
  predicateType: typeof RUN_PREDICATE_TYPE;
  predicate: { [key: string]: Json };
}

/**
 * The statement of a run, built from its evidence alone, so that a verifier builds the same one and compares.
 *
 * @param eventsText The text of `events.jsonl`.
 * @param manifestText The text of `manifest.json`.
 * @param options `events`: the events already parsed from `eventsText`, to spare parsing them again; `pack`:
 * the run's `payloads.pack` ({@linkcode packSubject}), which stands for the payloads it holds; `weight`: the
 * most the lines it parses may weigh (`JSON_READ_WEIGHT` by default).
 * @returns The statement.
 * @throws ProveviError when the manifest is not a JSON object, or the lines it parses weigh past `weight`.
 * @example
 * ```ts ignore
 * import { runStatement } from "./attestation.ts";
 * const statement = runStatement(eventsText, manifestText);
 * statement.subject[0]!.name; // "evidence/events.jsonl"
 * ```
 */
export function runStatement(
  eventsText: string,
  manifestText: string,
  options: { events?: readonly EvidenceEvent[]; pack?: PackSubject | null; weight?: number } = {},
): RunStatement {
  const events = options.events ?? parseEvents(eventsText, options.weight ?? JSON_READ_WEIGHT);
  return statementOf(sha256Hex(eventsText), events, {
    manifestText,
    pack: options.pack ?? null,
  });
}

/**
 * The statement, from the SHA-256 of `events.jsonl` and the events it reads (the first, the inputs staged and
 * the outputs made; any others are passed over).
 */
function statementOf(
  eventsSha256: string,
  events: readonly EvidenceEvent[],
  { manifestText, pack }: { manifestText: string; pack: PackSubject | null },
): RunStatement {
  let manifest: { run_id?: unknown; payloads?: unknown; status?: unknown; last_hash?: unknown };
  try {
    manifest = JSON.parse(manifestText);
    if (typeof manifest !== "object" || manifest === null) throw new TypeError("not an object");
  } catch (error) {
    throw new ProveviError("cannot make the run's statement: manifest.json is not a JSON object", {
      cause: error,
    });
  }
  const subject: RunStatement["subject"] = [
    { name: "evidence/events.jsonl", digest: { sha256: eventsSha256 } },
    { name: "evidence/manifest.json", digest: { sha256: sha256Hex(manifestText) } },
  ];
  for (const p of Array.isArray(manifest.payloads) ? manifest.payloads : []) {
    if (typeof p?.sha256 === "string" && !pack?.packed.has(p.sha256)) {
      subject.push({ name: `evidence/payloads/${p.sha256}`, digest: { sha256: p.sha256 } });
    }
  }
  if (pack) subject.push({ name: `evidence/${PACK_FILE}`, digest: { sha256: pack.sha256 } });
  for (const out of recordedOutputs(events).values()) {
    subject.push({ name: `output/${out.path}`, digest: { sha256: out.sha256 } });
  }
  subject.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const created: EvidenceEvent | undefined = events[0]?.type === "run_created" ? events[0] : undefined;
  const inputs = events.filter((e) => e.type === "input_staged").map((e) => ({
    name: e.data?.name ?? null,
    uri: (Array.isArray(e.refs) ? e.refs[0] : null) ?? null,
    sha256: e.data?.sha256 ?? null,
  }));
  return {
    _type: STATEMENT_TYPE,
    subject,
    predicateType: RUN_PREDICATE_TYPE,
    predicate: {
      run_id: typeof manifest.run_id === "string" ? manifest.run_id : null,
      last_hash: typeof manifest.last_hash === "string" ? manifest.last_hash : null,
      status: typeof manifest.status === "string" ? manifest.status : null,
      agent: created?.data.agent ?? null,
      agent_version: created?.data.agent_version ?? null,
      signing_key: created?.data.signing_key ?? null,
      inputs,
    },
  };
}

/**
 * The events of a text, read as the statement needs them: the lines that parse as objects with a `data`. Only
 * the first line and the lines that may be an input or an output are parsed, since the statement reads no
 * other: a run of many events is not parsed again at its seal. (A line is RFC 8785 JSON, so its type is written
 * as it is, with no escapes.)
 */
function parseEvents(text: string, most: number): EvidenceEvent[] {
  const events: EvidenceEvent[] = [];
  let first = true;
  let weight = 0;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const wanted = first || line.includes('"input_staged"') || line.includes('"output_artifact_created"');
    first = false;
    if (!wanted) continue;
    // the lines kept are weighed before they are parsed, as every reader of events weighs them
    weight += jsonLineWeight(line);
    if (weight > most) {
      throw new ProveviError(
        `events.jsonl's lines of inputs and outputs would take more than ${most} bytes of memory read: no statement is made of them`,
      );
    }
    try {
      const e = JSON.parse(line);
      if (typeof e === "object" && e !== null && typeof e.data === "object" && e.data !== null) {
        events.push(e);
      }
    } catch { /* a line that is not JSON: the evidence check reports it */ }
  }
  return events;
}

/** The bytes a statement is signed as: its RFC 8785 JSON in UTF-8. */
export function statementBytes(statement: RunStatement): Uint8Array<ArrayBuffer> {
  return utf8(canonicalize(statement)!) as Uint8Array<ArrayBuffer>;
}

/**
 * DSSE's pre-authentication encoding: `DSSEv1 <len(type)> <type> <len(body)> <body>`, what the signature signs.
 *
 * @param payloadType The payload type.
 * @param body The payload's bytes.
 * @returns The bytes to sign or to check.
 */
export function pae(payloadType: string, body: Uint8Array): Uint8Array<ArrayBuffer> {
  const type = utf8(payloadType);
  const head = utf8(`DSSEv1 ${type.length} ${payloadType} ${body.length} `);
  const out = new Uint8Array(head.length + body.length);
  out.set(head);
  out.set(body, head.length);
  return out;
}

/**
 * Signs a statement into a DSSE envelope.
 *
 * @param statement The run's statement.
 * @param key The signing key.
 * @returns The envelope.
 * @example
 * ```ts ignore
 * import { signStatement } from "./attestation.ts";
 * const envelope = await signStatement(statement, await readSigningKey("signing.key"));
 * ```
 */
export async function signStatement(statement: RunStatement, key: SigningKey): Promise<DsseEnvelope> {
  const body = statementBytes(statement);
  const sig = await signBytes(key, pae(IN_TOTO_PAYLOAD_TYPE, body));
  return {
    payloadType: IN_TOTO_PAYLOAD_TYPE,
    payload: toBase64(body),
    signatures: [{ keyid: key.keyid, sig: toBase64(sig) }],
  };
}

/**
 * Signs a sealed run: writes `evidence/attestation.dsse.json` in its folder.
 *
 * @param record The sealed run, with a folder on this machine.
 * @param key The signing key.
 * @returns The envelope written.
 * @throws ProveviError when the run is not sealed or has no folder here.
 * @example
 * ```ts ignore
 * import { attestRun } from "./attestation.ts";
 * await attestRun(record, await readSigningKey("signing.key"));
 * ```
 */
export async function attestRun(record: RunRecord, key: SigningKey): Promise<DsseEnvelope> {
  // The few small files of the seal are read and written with synchronous calls: each asynchronous one is a
  // trip to Deno's file thread and back, which cost more than the signature itself. Not events.jsonl, which
  // may be large: read with its lines' bounds.
  const evidence = record.folder === null ? null : join(record.folder, "evidence");
  const events = evidence === null ? null : await readEventsLines(evidence);
  const manifest = evidence === null ? null : readEvidenceSync(evidence, "manifest.json");
  if (evidence === null || events === null || manifest === null) {
    throw new ProveviError(
      `cannot sign run "${record.runId}": it is not a sealed run folder on this machine`,
    );
  }
  let pack: Uint8Array | null = null;
  try {
    pack = readCappedSync(join(evidence, PACK_FILE), PACK_MAX_BYTES);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const envelope = await signStatement(runStatement(events, manifest, { pack: packSubject(pack) }), key);
  replaceFileSync(join(evidence, ATTESTATION_FILE), attestationBytes(envelope), { scratch: record.folder! });
  return envelope;
}

/**
 * The bytes of `attestation.dsse.json` for a run's evidence, as a writer makes them at its seal, from the texts
 * it is about to write (see `SealInfo.signingKey`), or from what it kept of `events.jsonl` while it wrote it.
 *
 * @param events The text of `events.jsonl`, or its SHA-256 and the events a statement reads
 *   ({@linkcode EventsDigest}).
 * @param manifestText The text of `manifest.json`.
 * @param key The signing key.
 * @param options `pack`: the bytes of the run's `payloads.pack`, when it has one.
 * @returns The file's bytes.
 */
export async function sealAttestation(
  events: string | { sha256: string; events: readonly EvidenceEvent[] },
  manifestText: string,
  key: SigningKey,
  options: { pack?: Uint8Array | null } = {},
): Promise<Uint8Array> {
  const pack = packSubject(options.pack ?? null);
  const statement = typeof events === "string"
    ? runStatement(events, manifestText, { pack })
    : statementOf(events.sha256, events.events, { manifestText, pack });
  return attestationBytes(await signStatement(statement, key));
}

/**
 * What a writer keeps of `events.jsonl` as it writes it, for the statement of its seal: the file's SHA-256 and
 * the lines a statement reads (the first, the inputs staged, the outputs made), as text, so that a signed seal
 * reads nothing again and signs what the file holds whatever becomes of the event objects. The bytes of each
 * write are hashed when the next one comes, so that a last write of one line can still be taken back.
 */
export class EventsDigest {
  #hash = createHash("sha256");
  #kept: string[] = [];
  #pending: { bytes: Uint8Array; lines: readonly string[]; types: readonly string[] } | null = null;
  #done: { sha256: string; events: readonly EvidenceEvent[] } | null = null;

  /** One write of whole lines: its bytes, its lines and their events' types. */
  add(bytes: Uint8Array, lines: readonly string[], types: readonly string[]): void {
    if (this.#done !== null) throw new ProveviError("the events of a sealed run take no more lines");
    this.#flush();
    this.#pending = { bytes, lines, types };
  }

  /**
   * Takes back the last line written. True when that line was the whole last write, so the digest holds the
   * file; false when it cannot tell (a write of several lines, or a second line taken back): then the writer
   * must read the file back.
   */
  dropLast(): boolean {
    const whole = this.#pending !== null && this.#pending.lines.length === 1;
    this.#pending = null;
    return whole;
  }

  /** The file's SHA-256 and the events that a statement reads. Nothing may be added after. */
  finish(): { sha256: string; events: readonly EvidenceEvent[] } {
    if (this.#done === null) {
      this.#flush();
      this.#done = { sha256: this.#hash.digest("hex"), events: this.#kept.map((line) => JSON.parse(line)) };
    }
    return this.#done;
  }

  #flush(): void {
    if (this.#pending === null) return;
    const { bytes, lines, types } = this.#pending;
    this.#hash.update(bytes);
    for (let i = 0; i < lines.length; i++) {
      const type = types[i];
      if (this.#kept.length === 0 || type === "input_staged" || type === "output_artifact_created") {
        this.#kept.push(lines[i]!);
      }
    }
    this.#pending = null;
  }
}

/** The bytes of `attestation.dsse.json`: the envelope's RFC 8785 JSON and a newline. */
function attestationBytes(envelope: DsseEnvelope): Uint8Array {
  return utf8(canonicalize(envelope) + "\n");
}

/**
 * The text of an evidence file, as the run's record reads it: null when missing; a link, a file that is not
 * plain, or bytes that are not UTF-8 refused.
 */
function readEvidenceSync(evidence: string, name: string): string | null {
  const path = join(evidence, name);
  if (!evidenceFolder(evidence)) return null;
  const bytes = readPlainBytes(path);
  return bytes === null ? null : evidenceText(path, bytes);
}

/**
 * `events.jsonl` of a run's evidence, read with the bounds every reader of it keeps (`events_file.ts`): a line
 * past {@linkcode EVENT_LINE_MAX_BYTES} is refused as it comes, not read into memory with the rest.
 */
async function readEventsLines(evidence: string): Promise<string | null> {
  const path = join(evidence, "events.jsonl");
  if (!evidenceFolder(evidence)) return null;
  let bytes: Uint8Array;
  try {
    bytes = await readLinesCapped(path, EVIDENCE_TEXT_MAX_BYTES, EVENT_LINE_MAX_BYTES);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
  return evidenceText(path, bytes);
}

/** False when a run's evidence folder is missing; a link in its place is refused. */
function evidenceFolder(evidence: string): boolean {
  try {
    if (Deno.lstatSync(evidence).isSymlink) throw new ProveviError(`${evidence} is a link, not a folder`);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/** A file's bytes as text: they must be UTF-8, or the text would not be the bytes that were hashed. */
function evidenceText(path: string, bytes: Uint8Array): string {
  try {
    return strictUtf8.decode(bytes);
  } catch (error) {
    throw new ProveviError(`${path} is not valid UTF-8, so its text is not the bytes that were hashed`, {
      cause: error,
    });
  }
}

// The base64 of the TC39 proposal, built into V8: a tenth of the time of btoa over a string of char codes.
function toBase64(bytes: Uint8Array): string {
  return (bytes as Uint8Array & { toBase64(): string }).toBase64();
}
