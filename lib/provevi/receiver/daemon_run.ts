/**
 * A run open with the span daemon (`prove serve`): the batches it took for the run, the two keys that open its
 * doors (the writer's, to seal it; the ingest key, for its program's spans), its budget, and whether it is still
 * live in the store: not sealed there, and its writer still holding the writer's lock. Each key is kept as its
 * SHA-256 only, and compared in constant time.
 *
 * Only the run's writer may append to its chain, so the daemon writes each request's body, as it arrives, to
 * `received.spans` in the run folder (beside `evidence/`, a payload pack: one append a request, before the
 * request is answered), and keeps in memory only the small events that will name them: one `spans_received` a
 * request, and the receiver's problems. At the seal it hands the events to the writer, which has taken the bodies
 * from the file as they came (`received_bodies.ts`: each checked against its hash and stored as a payload), takes
 * the rest, and chains the events. What the daemon holds for a run in
 * memory is bounded by the run's limits, whatever the run sends.
 * @module
 */
import { join } from "node:path";
import type { EventInit } from "../evidence/chain.ts";
import { EvidenceError } from "../evidence/errors.ts";
import { nowUtc } from "../evidence/event.ts";
import { sha256Hex } from "../evidence/hash.ts";
import { packRecord, packRecordSize } from "../evidence/payload_pack.ts";
import type { RunRecord } from "../evidence/record.ts";
import { SpansFile, type StoredSpan } from "../evidence/spans_file.ts";
import { runWriterState, WRITER_LOCK } from "../evidence/writer_process.ts";
import { problemData } from "../telemetry/telemetry_events.ts";
import { newSecret, secretDigest } from "../guard/local_secret.ts";
import { RunBudget, type RunLimits } from "./run_budget.ts";
import { type BatchEncoding, RECEIVER_COMPONENT } from "./span_events.ts";
import { appendWhole } from "../evidence/append_whole.ts";
import { IrregularFile, openPlainFileSync, type PlainFile } from "../evidence/open_file.ts";
import { openFileNoWaitSync } from "../evidence/fd_file.ts";
import type { ReceiverRun } from "./span_intake.ts";

const utf8 = new TextEncoder();

function bytesOf(content: unknown): Uint8Array {
  if (content instanceof Uint8Array) return content;
  return utf8.encode(typeof content === "string" ? content : JSON.stringify(content) ?? "null");
}

/** The largest record made in the daemon's reused buffer; a larger one gets an array of its own. */
const SCRATCH_MAX = 4 * 1024 * 1024;
/** One buffer for the records appended: each is written whole before `payload` returns. */
let scratch = new Uint8Array(0);

/** A body's record in `received.spans` ({@linkcode packRecord}'s bytes), in the reused buffer when it fits. */
function recordOf(sha256: string, bytes: Uint8Array): Uint8Array {
  const size = packRecordSize(bytes.length);
  if (size > SCRATCH_MAX) return packRecord(sha256, bytes);
  if (scratch.length < size) scratch = new Uint8Array(Math.max(size, 256 * 1024));
  const out = scratch.subarray(0, size);
  const { written } = utf8.encodeInto(`${sha256} ${bytes.length}\n`, out);
  out.set(bytes, written);
  out[size - 1] = 0x0a;
  return out;
}

/**
 * The file in a run folder where the span daemon keeps the protobuf bodies it took for the run, until its seal:
 * the run's writer makes their rows as it takes them.
 */
export const RECEIVED_FILE = "received.spans";
/** The file where it keeps the OTLP/JSON bodies, whose rows it wrote itself. */
export const RECEIVED_JSON_FILE = "received-json.spans";

/** Where a run is, as the store tells it. */
export type StoreState = "live" | "sealed" | "cut";

/**
 * Whether a run is still live in its store: its manifest absent, and its writer's lock held (or no lock to tell,
 * on a file system without locks). A run whose writer was killed is `cut`; one sealed in the store, `sealed`.
 *
 * @param record The run as the store reads it.
 * @returns The state.
 */
export async function storeState(record: RunRecord): Promise<StoreState> {
  if (record.folder === null) return "cut";
  // the lock first: the seal writes the manifest before it lets go of the lock
  const writer = await runWriterState(record.folder, null);
  if ((await record.manifestText().catch(() => null)) !== null) return "sealed";
  return writer === "gone" ? "cut" : "live";
}

/** The writer's lock file of a run, kept open by the daemon between its requests (`storeStateNow`). */
export interface HeldLockFile {
  file: Deno.FsFile | null;
  /** When a look last found no `evidence/manifest.json` (`performance.now()`); null when none stands. */
  noManifestAt?: number | null;
}

/**
 * Whether a run is live, told without waiting when it can be: its writer's lock held (by another process; a
 * shared lock is refused) and no `evidence/manifest.json`, checked in that order as {@linkcode storeState}
 * does, with calls that return at once. Each of the daemon's requests asks it, and the four file operations
 * of `storeState`, awaited one after the other, are each a round trip to the runtime's threads, which on a
 * loaded machine waits for a core. Anything else (no lock, a free lock, a manifest, an error) is asked of the
 * store with {@linkcode storeState}.
 *
 * @param record The run as the store reads it.
 * @param lock The lock file kept open from the run's previous request, if any: while the writer holds its lock
 * the file stays open here, so that a request costs one try of the lock, not an open and a close too. Once the
 * lock is free (the writer let go of it, or is gone) the file is closed, and the next request opens it again.
 * @returns The state.
 */
export function storeStateNow(record: RunRecord, lock: HeldLockFile = { file: null }): Promise<StoreState> {
  const folder = record.folder;
  if (folder === null) return Promise.resolve("cut");
  let held = false;
  try {
    // opened to read and write, which waits for no FIFO's writer: a FIFO the run's program put in the lock's
    // place held a read-only open, and with it the daemon's every request
    lock.file ??= openFileNoWaitSync(join(folder, WRITER_LOCK), { follow: false, write: true });
    held = !lock.file.tryLockSync(false);
  } catch {
    /* no lock file, or no locks here */
  } finally {
    if (!held) closeLock(lock); // a shared lock this took is let go with the file
  }
  if (held && noManifest(folder, lock)) return Promise.resolve("live");
  return storeState(record);
}

/**
 * How long a look that found no manifest stands while the writer's lock stays held, in milliseconds. A seal
 * gives the manifest its name and lets go of the lock at once after (`FileRunWriter.seal`), and a free lock is
 * seen at each request; so the look is needed only between those two calls, a few microseconds, where a request
 * that looked just before the name was given slips through whether it looked or not. A look for a missing file
 * costs an error made and thrown, tens of microseconds a request.
 */
const MANIFEST_LOOK_MS = 25;

/** True when `evidence/manifest.json` is absent: looked for, or known from a look of the last few milliseconds. */
function noManifest(folder: string, lock: HeldLockFile): boolean {
  const now = performance.now();
  const at = lock.noManifestAt ?? null;
  if (at !== null && now - at < MANIFEST_LOOK_MS) return true;
  lock.noManifestAt = null;
  try {
    Deno.lstatSync(join(folder, "evidence", "manifest.json"));
    return false;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) return false;
  }
  lock.noManifestAt = now;
  return true;
}

/** Closes a kept lock file. */
export function closeLock(lock: HeldLockFile): void {
  try {
    lock.file?.close();
  } catch { /* closed already */ }
  lock.file = null;
  lock.noManifestAt = null;
}

/** The keys a run gets when it opens: only its writer receives them. */
export interface RunKeys {
  /** The writer's key: it seals the run. */
  writer: string;
  /** The ingest key: its program sends spans with it, and can do nothing else. */
  ingest: string;
}

/** A run open with the daemon. */
export class DaemonRun implements ReceiverRun {
  /** True once the run's writer sealed it with the daemon, or the daemon let it go. */
  sealed = false;
  /** Why the daemon let the run go (sealed or cut in the store, past its limits), when it did. */
  released: string | null = null;
  /** Requests refused with the run's key (its own program's: a bad body, past a limit, after its end). */
  refused = 0;
  readonly events: Omit<EventInit, "actor">[] = [];
  readonly budget: RunBudget;
  /** `received.spans` and `received-json.spans`, each open to append from its first body on. */
  readonly #files: Record<BatchEncoding, { name: string; file: PlainFile | null }> = {
    protobuf: { name: RECEIVED_FILE, file: null },
    json: { name: RECEIVED_JSON_FILE, file: null },
  };
  /** `spans.jsonl`, open to append from the first rows on. */
  #rows: SpansFile | null = null;
  /** The bodies in the file, by SHA-256: a body sent twice is kept once. */
  readonly #kept = new Set<string>();
  readonly writerDigest: Uint8Array;
  readonly ingestDigest: Uint8Array;
  /** The writer's lock file, open while the writer holds it, for {@linkcode storeStateNow}. */
  readonly lock: HeldLockFile = { file: null };
  #tail: Promise<unknown> = Promise.resolve();

  /**
   * @param runId The run's ID.
   * @param inStore The run as the store reads it, for its state.
   * @param limits What the run may send in all.
   */
  private constructor(
    readonly runId: string,
    readonly inStore: RunRecord,
    { limits, keys }: { limits: RunLimits; keys: RunKeys },
  ) {
    this.writerDigest = secretDigest(keys.writer);
    this.ingestDigest = secretDigest(keys.ingest);
    this.budget = new RunBudget(limits, () => this.release("it passed its limits", { tellWriter: true }));
  }

  /**
   * Opens a run with new keys.
   *
   * @param runId The run's ID.
   * @param options The run's record in the store and its limits.
   * @returns The run and its keys, which only the opener receives.
   */
  static open(runId: string, options: { record: RunRecord; limits: RunLimits }): {
    run: DaemonRun;
    keys: RunKeys;
  } {
    const keys = { writer: newSecret(), ingest: newSecret() };
    return { run: new DaemonRun(runId, options.record, { limits: options.limits, keys }), keys };
  }

  /** The spans taken. */
  get spans(): number {
    return this.budget.spans;
  }

  /** Holds one event for the seal, with the time the daemon took it. */
  record(init: Omit<EventInit, "actor">): Promise<unknown> {
    if (this.sealed) return Promise.reject(new Error(`run ${this.runId} is sealed`));
    this.events.push({ ...init, time: init.time ?? nowUtc() });
    return Promise.resolve();
  }

  /** Holds several events for the seal. */
  recordMany(inits: readonly Omit<EventInit, "actor">[]): Promise<unknown> {
    if (this.sealed) return Promise.reject(new Error(`run ${this.runId} is sealed`));
    const time = nowUtc();
    for (const init of inits) this.events.push({ ...init, time: init.time ?? time });
    return Promise.resolve();
  }

  /**
   * Appends a body to the run's `received.spans` with one write, before its request is answered: it survives
   * the daemon's end. It is fsynced with the run's evidence at the seal, when the writer stores it as a payload.
   *
   * @returns Its SHA-256.
   * @throws EvidenceError when the file cannot take it (the request gets 503, and is sent again).
   */
  payload(content: unknown): Promise<string> {
    return this.payloadOf(bytesOf(content), "protobuf");
  }

  /**
   * Appends a request's body to the file of its encoding (`received.spans` for protobuf, whose rows the run's
   * writer makes; `received-json.spans` for OTLP/JSON, whose rows were written here), as
   * {@linkcode DaemonRun.payload}.
   */
  payloadOf(bytes: Uint8Array, encoding: BatchEncoding): Promise<string> {
    if (this.sealed) return Promise.reject(new Error(`run ${this.runId} is sealed`));
    const sha = sha256Hex(bytes);
    if (this.#kept.has(sha)) return Promise.resolve(sha);
    const kept = this.#files[encoding];
    const path = join(this.inStore.folder!, kept.name);
    const record = recordOf(sha, bytes);
    try {
      // the run's program writes its run folder: never through a link it planted, nor into its FIFO
      kept.file ??= openPlainFileSync(path, { write: true, create: true, mode: 0o600 });
      // a record cut part way would hide the ones after it: appendWhole takes it back
      appendWhole(kept.file, record);
    } catch (error) {
      // a link, FIFO or hard link in its place is no passing fault: the request is refused, and the run told
      if (error instanceof IrregularFile) {
        return Promise.reject(new IrregularFile(kept.name, error.reason, { cause: error }));
      }
      return Promise.reject(
        new EvidenceError(`cannot write to ${path}: ${(error as Error).message}`, { cause: error }),
      );
    }
    this.#kept.add(sha);
    return Promise.resolve(sha);
  }

  /**
   * Appends a request's span rows to the run's `spans.jsonl` with one write to the file it keeps open, before
   * the body: a request whose rows fail leaves nothing behind (the exporter sends it again).
   *
   * @throws EvidenceError when the file cannot take them.
   */
  addRows(rows: readonly StoredSpan[]): void {
    if (this.sealed) throw new Error(`run ${this.runId} is sealed`);
    (this.#rows ??= new SpansFile(this.inStore.folder!)).append(rows);
  }

  /** Closes `received.spans` and `spans.jsonl`: the run takes no more bodies. */
  closeFile(): void {
    for (const kept of Object.values(this.#files)) {
      try {
        kept.file?.close();
      } catch { /* closed already */ }
      kept.file = null;
    }
    this.#rows?.close(); // kept: a later write opens the file for itself
    closeLock(this.lock);
  }

  /**
   * Takes nothing more for the run, for a reason. A run past its limits keeps what it sent before, and one
   * problem for its writer's seal (`tellWriter`) that says why the rest was refused; a run sealed or cut in the
   * store has no writer left to tell, and the daemon forgets it.
   *
   * @param reason Why, in a few words.
   * @param options Whether the run's writer will still seal it with the daemon, and is to be told.
   */
  release(reason: string, { tellWriter }: { tellWriter: boolean }): void {
    if (this.released !== null) return;
    this.released = reason;
    this.closeFile();
    if (tellWriter) {
      // what the run sent before its limit is kept (on disk, and in a few small events) for its writer's seal
      this.events.push({
        type: "telemetry_problem",
        component: RECEIVER_COMPONENT,
        data: problemData(
          `prove serve takes no more spans for run ${this.runId} after ${this.budget.spans}, because ${reason} ` +
            `(${this.budget.limits.maxSpans} spans, ${this.budget.limits.maxBytes} bytes); the spans taken ` +
            `before are kept`,
        ),
      });
    } else {
      this.sealed = true;
      this.events.length = 0;
    }
  }

  /** Runs one request after the previous ones of this run, so the events keep the order of the requests. */
  queue(fn: () => Promise<Response>): Promise<Response> {
    const next = this.#tail.then(fn, fn);
    this.#tail = next.catch(() => {});
    return next;
  }

  /** Waits for the requests under way. */
  async settle(): Promise<void> {
    await this.#tail;
  }
}
