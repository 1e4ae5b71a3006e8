/**
 * The driver interface: {@linkcode EvidenceStore} gives a {@linkcode RunWriter} for each run and reads a run
 * back as a {@linkcode RunRecord}. Every store keeps `events.jsonl`, `payloads/` and `manifest.json` in the
 * run folder, so a bundle is the same whatever the store.
 * @module
 */
import type { EvidenceEvent } from "../evidence/event.ts";
import type { LostEvent, Manifest, PayloadLayout } from "../evidence/manifest.ts";
import type { RunRecord } from "../evidence/record.ts";
import type { StoredSpan } from "../evidence/spans_file.ts";
import type { TraceSpan } from "../evidence/run_spans.ts";
import type { SigningKey } from "../evidence/signing_key.ts";
import type { LogStorage } from "../log/log_storage.ts";
import type { Problem } from "../evidence/problem.ts";
import type { ReadEvents } from "../evidence/read_events.ts";

/** What the recorder tells a writer at the seal. */
export interface SealInfo {
  /** The seal time to record; now by default (a copy keeps the original's). */
  sealed_at?: string;
  /** Events that lenient mode could not write. */
  lost?: LostEvent[];
  /**
   * The key to sign the seal with: `evidence/attestation.dsse.json` is written and fsynced with the manifest,
   * before the folder is, so a sealed run that has its manifest after a crash has its signature too.
   */
  signingKey?: SigningKey;
  /**
   * The bytes of `attestation.dsse.json` to write with the manifest, in the same way: a copy of a signed run
   * keeps its signature (its evidence is the same bytes). Not with `signingKey`.
   */
  attestation?: Uint8Array;
}

/**
 * What a store gives for one run: it appends lines, stores payloads by their SHA-256 and seals the run.
 */
export interface RunWriter {
  /** The run's ID. */
  readonly runId: string;
  /** The run folder. */
  readonly folder: string;
  /**
   * Appends one event. The line is written before the promise resolves.
   * @param line The event's canonical line, without a newline.
   * @param event The parsed event of the line.
   */
  append(line: string, event: EvidenceEvent): Promise<void>;
  /**
   * Appends several events in one write, all or none (optional: a writer without it takes them one by one).
   * The lines are written before the promise resolves.
   * @param lines The events' canonical lines, in order, without newlines.
   * @param events The parsed events of the lines.
   */
  appendMany?(lines: readonly string[], events: readonly EvidenceEvent[]): Promise<void>;
  /**
   * Stores a payload once, under its SHA-256.
   * @returns The SHA-256.
   */
  putPayload(bytes: Uint8Array): Promise<string>;
  /**
   * Starts writing the payloads stored so far to disk, waited for by nothing, so that the seal has less to
   * write (optional: a writer without it leaves it all to the seal). It promises nothing the seal does not.
   */
  flushPayloads?(): void;
  /**
   * Writes the manifest and makes the run folder durable. After the seal the writer takes nothing more.
   * @returns The manifest written.
   */
  seal(info?: SealInfo): Promise<Manifest>;
  /**
   * Gives the run up unsealed (a copy that failed part way): closes its files; the run is never sealed, so it
   * never reaches the store's log. Optional: a writer without it is left as it is, and never sealed.
   */
  abandon?(): Promise<void>;
}

/** A store of run evidence, chosen by a store URI. */
export interface EvidenceStore extends AsyncDisposable {
  /** The store URI, such as `file` or `sqlite:////abs/evidence.db`. */
  readonly uri: string;
  /** The runs root, where run folders are made. */
  readonly runsRoot: string;
  /**
   * Opens a run to write.
   * @param runId The run's ID; it names the run folder under the runs root unless `folder` is given.
   * @param options `folder`; `payloads`: where the payloads go, `pack` (small ones in `payloads.pack`, manifest
   * format 2) by default, or `files` (each a file, format 1: a copy of a run of that format).
   * @throws ProveviError when the run exists already.
   */
  openRun(runId: string, options?: { folder?: string; payloads?: PayloadLayout }): Promise<RunWriter>;
  /**
   * Reads a run back.
   * @throws RunNotFound when the store has no such run.
   */
  readRun(runId: string): Promise<RunRecord>;
  /** The IDs of the store's runs, oldest first. */
  runIds(): Promise<string[]>;
  /** Closes the store. */
  close(): Promise<void>;
  /**
   * Keeps spans of a run that this store opened, as an index beside the evidence (`<run folder>/spans.jsonl`
   * in the file and sqlite stores): never part of the record, so no check covers them. Optional: a store
   * without it keeps no spans. `StoreSpanExporter` calls it.
   */
  addSpans?(runId: string, spans: readonly StoredSpan[]): Promise<void>;
  /**
   * The log of the store's sealed runs (docs/log.md): each seal appends its run. Optional: a store without one
   * keeps no log.
   */
  readonly log?: LogStorage;
  /**
   * Records where a run's bundle was committed, as its `bundle.json` says, so that the store's check compares the
   * two. Optional: an indexed store (sqlite, postgres) has it; the file store keeps `bundle.json` alone.
   */
  recordBundle?(runId: string, bundle: { uri: string; pinned: string | null }): Promise<void>;
  /**
   * Checks a run's rows against its folder: `folder` and `bundle` name a copy of the run on another machine;
   * `read` is that folder's `events.jsonl` and `manifest.json` as the caller read them (`verifyRun`'s read, with
   * their texts), which the rows are then compared with, not read and parsed again.
   * Optional: an indexed store has it, and `verifyRun` calls it.
   * @returns The problems; empty when the rows match.
   */
  checkRun?(
    runId: string,
    options: { folder: string | null; bundle: string | null; read?: ReadEvents | null },
  ): Promise<Problem[]>;
  /**
   * The spans of a trace, across the store's runs that carry its ID (the seed's `trace(trace_id)`), ordered by
   * start. Optional: the library's `trace(store, traceId)` reads every run of a store without it.
   */
  trace?(traceId: string): Promise<TraceSpan[]>;
}
