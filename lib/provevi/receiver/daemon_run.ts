/**
 * A run open with the span daemon (`prove serve`): what the daemon holds for it until the run's writer seals
 * it (its `span_recorded` and `telemetry_problem` events, their payloads), the two keys that open its doors (the
 * writer's, to seal it; the ingest key, for its program's spans), its budget, and whether it is still live in
 * the store: not sealed there, and its writer still holding the writer's lock. Each key is kept as its SHA-256
 * only, and compared in constant time.
 *
 * Issue #33 will have the daemon write spans to the run's evidence as they arrive: this class is the one place
 * that holds them, behind the `ReceiverRun` shape the intake writes to.
 * @module
 */
import { createHash } from "node:crypto";
import type { EventInit } from "../evidence/chain.ts";
import type { RunRecord } from "../evidence/record.ts";
import { runWriterState } from "../evidence/writer_process.ts";
import { problemData } from "../telemetry/telemetry_events.ts";
import { newSecret, secretDigest } from "../guard/local_secret.ts";
import { RunBudget, type RunLimits } from "./run_budget.ts";
import { RECEIVER_COMPONENT } from "./span_events.ts";
import type { ReceiverRun } from "./span_intake.ts";

const utf8 = new TextEncoder();

function bytesOf(content: unknown): Uint8Array {
  if (content instanceof Uint8Array) return content;
  return utf8.encode(typeof content === "string" ? content : JSON.stringify(content) ?? "null");
}

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
  readonly payloads = new Map<string, Uint8Array>();
  readonly budget: RunBudget;
  readonly writerDigest: Uint8Array;
  readonly ingestDigest: Uint8Array;
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

  /** Holds one event for the seal. */
  record(init: Omit<EventInit, "actor">): Promise<unknown> {
    if (this.sealed) return Promise.reject(new Error(`run ${this.runId} is sealed`));
    this.events.push(init);
    return Promise.resolve();
  }

  /** Holds several events for the seal. */
  recordMany(inits: readonly Omit<EventInit, "actor">[]): Promise<unknown> {
    if (this.sealed) return Promise.reject(new Error(`run ${this.runId} is sealed`));
    for (const init of inits) this.events.push(init);
    return Promise.resolve();
  }

  /** Holds a payload for the seal; returns its SHA-256. */
  payload(content: unknown): Promise<string> {
    const bytes = bytesOf(content);
    const sha = createHash("sha256").update(bytes).digest("hex");
    this.payloads.set(sha, bytes);
    return Promise.resolve(sha);
  }

  /**
   * Lets go of what the run held, for a reason. A run past its limits keeps one problem for its writer's seal
   * (`tellWriter`), which says what was let go; a run sealed or cut in the store has no writer left to tell, and
   * takes nothing more.
   *
   * @param reason Why, in a few words.
   * @param options Whether the run's writer will still seal it with the daemon, and is to be told.
   */
  release(reason: string, { tellWriter }: { tellWriter: boolean }): void {
    if (this.released !== null) return;
    this.released = reason;
    // the spans go; the problems (few, and bounded) stay for the writer
    const kept = this.events.filter((e) => e.type !== "span_recorded");
    const dropped = this.events.length - kept.length;
    this.events.splice(0, this.events.length, ...kept);
    this.payloads.clear();
    if (tellWriter) {
      this.events.push({
        type: "telemetry_problem",
        component: RECEIVER_COMPONENT,
        data: problemData(
          `prove serve let go of the ${dropped} spans it held for run ${this.runId}, unwritten, because ${reason} ` +
            `(${this.budget.limits.maxSpans} spans, ${this.budget.limits.maxBytes} bytes); their rows stay in ` +
            `spans.jsonl`,
        ),
      });
    } else this.sealed = true;
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
