/**
 * The hash chain: builds each event of a run with its sequence number and the SHA-256 of the line before it.
 * @module
 */
import { type Confidence, eventLine, type EvidenceEvent, type Json, nowUtc } from "./event.ts";
import { chainedEventLine } from "./event_line.ts";
import { sha256Hex } from "./hash.ts";
import { deeperThan, EVENT_LINE_MAX_BYTES, MAX_JSON_DEPTH } from "./json_depth.ts";
import { EvidenceError } from "./errors.ts";

/** What a step knows of its event; the chain fills in `run_id`, `seq`, `prev` and, unless given, `time`. */
export interface EventInit {
  type: string;
  component: string;
  actor: string;
  refs?: string[];
  data?: { [key: string]: Json };
  payload?: string | null;
  confidence?: Confidence;
  trace_id?: string | null;
  span_id?: string | null;
  parent_span_id?: string | null;
  started_at?: string | null;
  time?: string;
  /**
   * True when the event's maker built `data` so that `JSON.stringify(data)` is its RFC 8785 text: every
   * object's keys in sorted order (none an array index), every text well formed, every number finite. The line
   * is then made without a walk over `data`. For a maker with one event per item on a hot path (the span
   * receiver), whose tests show its lines equal the general canonicalizer's.
   */
  dataCanonical?: boolean;
}

/** An event and its canonical line, ready to append. */
export interface ChainedEvent {
  event: EvidenceEvent;
  line: string;
}

/**
 * Builds the events of one run in order. {@linkcode EventChain.next} makes the next event without moving the
 * chain; {@linkcode EventChain.accept} moves it once the line is written, so a lost event leaves no gap.
 *
 * @example
 * ```ts
 * import { EventChain } from "./chain.ts";
 * const chain = new EventChain("run-20261031T182026Z-f9c3b25f");
 * const first = chain.next({ type: "run_created", component: "RunContext", actor: "me" });
 * chain.accept(first);
 * first.event.prev; // null
 * ```
 */
export class EventChain {
  #seq: number;
  #prev: string | null;

  /**
   * @param runId The run's ID.
   * @param options Where to resume: the next `seq` and the hash of the last line.
   */
  constructor(readonly runId: string, options: { seq?: number; prev?: string | null } = {}) {
    this.#seq = options.seq ?? 0;
    this.#prev = options.prev ?? null;
  }

  /** The sequence number the next event gets. */
  get seq(): number {
    return this.#seq;
  }

  /** The SHA-256 of the last accepted line, or null before the first. */
  get lastHash(): string | null {
    return this.#prev;
  }

  /**
   * Makes the next event and its line.
   *
   * @param init The step's fields.
   * @returns The event and its canonical line; the chain does not move until {@linkcode accept}.
   */
  next(init: EventInit): ChainedEvent {
    const event: EvidenceEvent = {
      run_id: this.runId,
      seq: this.#seq,
      time: init.time ?? nowUtc(),
      type: init.type,
      component: init.component,
      actor: init.actor,
      refs: init.refs ?? [],
      data: init.data ?? {},
      payload: init.payload ?? null,
      confidence: init.confidence ?? "observed",
      prev: this.#prev,
      trace_id: init.trace_id ?? null,
      span_id: init.span_id ?? null,
      parent_span_id: init.parent_span_id ?? null,
      started_at: init.started_at ?? null,
    };
    const line = chainedEventLine(event, init.dataCanonical) ?? eventLine(event);
    // a line no reader takes (line.too_deep) is refused here, so that a run's own writer cannot make it
    if (line.length > 2 * MAX_JSON_DEPTH && deeperThan(event.data, MAX_JSON_DEPTH - 1)) {
      throw new EvidenceError(
        `the ${init.type} event's data nests arrays and objects more than ${
          MAX_JSON_DEPTH - 1
        } deep: no reader takes it; record the value as a payload`,
      );
    }
    // and a line past the bound a reader takes of one line (a UTF-16 unit is at most 3 bytes of UTF-8)
    if (
      line.length > EVENT_LINE_MAX_BYTES / 3 && new TextEncoder().encode(line).length > EVENT_LINE_MAX_BYTES
    ) {
      throw new EvidenceError(
        `the ${init.type} event's line holds more than ${EVENT_LINE_MAX_BYTES} bytes: no reader takes it; record the value as a payload`,
      );
    }
    return { event, line };
  }

  /**
   * Moves the chain past a written event.
   *
   * @param written The event that {@linkcode next} made and the store wrote.
   * @throws RangeError when `written` is not the chain's next event.
   */
  accept(written: ChainedEvent): void {
    if (written.event.seq !== this.#seq) {
      throw new RangeError(`event ${written.event.seq} is not the next event ${this.#seq} of the chain`);
    }
    this.#seq += 1;
    this.#prev = sha256Hex(written.line);
  }
}
