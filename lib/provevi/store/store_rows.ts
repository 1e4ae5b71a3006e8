/**
 * What the rows of a run must hold in an indexed store (sqlite, postgres), derived from its events. Each
 * store's writer writes these rows and the check of a run compares the stored rows with them, so the two
 * cannot drift apart.
 * @module
 */
import { parseWeighed } from "../evidence/json_depth.ts";
import { EVENT_FIELDS, type EvidenceEvent, type Json } from "../evidence/event.ts";
import { type AgentOfRun, agentOfRun, runParams } from "../experiments/agent_class.ts";
import { statusOf } from "../evidence/manifest.ts";
import { join } from "node:path";
import { sha256Hex } from "../evidence/hash.ts";
import { readEventsFileText, readEvidenceText } from "./file_store.ts";

/** A value an indexed store keeps in a column (SQLite's and PostgreSQL's text, integers and null). */
export type SqlValue = string | number | null;

/** An event field that `provevi_events` keeps as a column: every field but the lists and objects. */
type EventColumn = Exclude<keyof EvidenceEvent, "refs" | "data">;

/**
 * The columns of `provevi_events`, besides the line itself: the event's fields in the format's order, less
 * `refs` (in `provevi_event_refs`) and `data` (read from the line), so that a new field cannot be left out.
 */
export const EVENT_COLUMNS: readonly EventColumn[] = EVENT_FIELDS.filter(
  (f): f is EventColumn => f !== "refs" && f !== "data",
);

/** One `provevi_events` row. */
export type EventRow = { [K in EventColumn]: SqlValue } & { line: string };

/** What a text column cannot hold as it is: a NUL, or half of a surrogate pair. */
// deno-lint-ignore no-control-regex -- the NUL is what the expression is for
const UNHELD = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * A text as a text column holds it. PostgreSQL's `text` refuses a NUL, and SQLite cuts a text at one when it is
 * read; both put U+FFFD in place of half of a surrogate pair (it has no UTF-8 form). So each of those is written
 * as its JSON escape (`\u0000`, `\ud800`), which every column holds; any other text is held as it is. The
 * event's line keeps the value itself; a row's columns and the row check use this form, and so do the questions
 * across runs for what they are asked. The escape is idempotent, so a value escaped twice is escaped once.
 *
 * @param value Any text.
 * @returns The text a column holds for it.
 * @example
 * ```ts
 * import { columnText } from "./store_rows.ts";
 * columnText("ada\u0000x"); // "ada\\u0000x", six characters where the NUL was
 * columnText("ada"); // "ada"
 * ```
 */
export function columnText(value: string): string {
  if (!value.includes("\u0000") && value.isWellFormed()) return value;
  return value.replace(UNHELD, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * A value as a column holds it: a text through {@linkcode columnText}, anything else as it is.
 * @param value A value to write to a column, or to compare with one.
 */
export function columnValue<T>(value: T): T {
  return (typeof value === "string" ? columnText(value) : value) as T;
}

/** An object whose texts are each as a column holds them ({@linkcode columnValue}). */
function columnsOf<T extends object>(row: T): T {
  const out = { ...row };
  for (const key of Object.keys(out) as (keyof T)[]) out[key] = columnValue(out[key]);
  return out;
}

/**
 * The `provevi_events` row of an event and its line: each column as {@linkcode columnText} holds it, the line
 * as it is (a canonical line escapes what a column cannot hold).
 *
 * @param event The parsed event.
 * @param line Its canonical line.
 */
export function eventRow(event: EvidenceEvent, line: string): EventRow {
  const row = { line } as EventRow;
  for (const c of EVENT_COLUMNS) row[c] = columnValue((event[c] ?? null) as SqlValue);
  return row;
}

/**
 * The `provevi_event_refs` URIs of an event, in order, as the column holds them.
 * @param event The parsed event.
 */
export function eventRefs(event: EvidenceEvent): string[] {
  return Array.isArray(event.refs) ? event.refs.map((uri) => columnText(String(uri))) : [];
}

/** The experiment a run names, from its `run_created` event. */
export interface ExperimentOfRun {
  /** The experiment's URI without its selector. */
  experiment: string;
  /** The URI pinned to a commit, or null. */
  pin: string | null;
  /** The SHA-256 of experiment.yaml at the pin, or null. */
  sha256: string | null;
}

const text = (v: Json | undefined): string | null => (typeof v === "string" && v !== "" ? v : null);

/** The URI without its `?…` selector or `#…` fragment. */
export function withoutSelector(uri: string): string {
  return uri.replace(/[?#].*$/, "");
}

/**
 * The experiment that a `run_created` event names, or null.
 * @param event The run's `run_created` event.
 */
export function experimentOfRun(event: EvidenceEvent): ExperimentOfRun | null {
  const written = text(event.data.experiment);
  const pin = text(event.data.experiment_pin);
  if (!written && !pin) return null;
  return {
    experiment: withoutSelector(written ?? pin!),
    pin,
    sha256: text(event.data.experiment_sha256),
  };
}

/** The fields of a `provevi_runs` row that its events fix. */
export interface RunFields {
  org: string | null;
  domain: string | null;
  env: string | null;
  actor: string | null;
  mode: string | null;
  agent: string | null;
  agent_version: string | null;
  experiment: string | null;
  experiment_pin: string | null;
  experiment_sha256: string | null;
  parent_run: string | null;
  started_at: string | null;
}

/** The names of {@linkcode RunFields}, in column order. */
export const RUN_FIELD_COLUMNS: readonly (keyof RunFields)[] = [
  "org",
  "domain",
  "env",
  "actor",
  "mode",
  "agent",
  "agent_version",
  "experiment",
  "experiment_pin",
  "experiment_sha256",
  "parent_run",
  "started_at",
];

/**
 * The run's fields from its `run_created` event (all null when it has none).
 * @param created The event, or null.
 */
export function runFields(created: EvidenceEvent | null): RunFields {
  const empty: RunFields = {
    org: null,
    domain: null,
    env: null,
    actor: null,
    mode: null,
    agent: null,
    agent_version: null,
    experiment: null,
    experiment_pin: null,
    experiment_sha256: null,
    parent_run: null,
    started_at: null,
  };
  if (!created || created.type !== "run_created") return empty;
  const d = created.data;
  const agent: AgentOfRun | null = agentOfRun(created);
  const experiment = experimentOfRun(created);
  return {
    org: text(d.org),
    domain: text(d.domain),
    env: text(d.env),
    actor: text(d.actor) ?? (created.actor || null),
    mode: text(d.mode),
    agent: agent?.agent ?? null,
    agent_version: agent?.version ?? null,
    experiment: experiment?.experiment ?? null,
    experiment_pin: experiment?.pin ?? null,
    experiment_sha256: experiment?.sha256 ?? null,
    parent_run: text(d.parent_run),
    started_at: created.time,
  };
}

/** A run's status and end as its events give them. */
export interface RunEnd {
  /** `running` until an ending event; `completed` or `failed` after it; `incomplete` when sealed without. */
  status: string;
  /** The time of the ending event, or null. */
  ended_at: string | null;
}

/** The rows that a run's `run_created` event implies, each text as a column holds it. */
export interface CreatedRows {
  /** The run's fields in `provevi_runs`. */
  fields: RunFields;
  /** Its settings, `provevi_run_params` (canonical JSON by key). */
  params: Map<string, string>;
  /** Its agent class and version, or null. */
  agent: AgentOfRun | null;
  /** Its experiment and version, or null. */
  experiment: ExperimentOfRun | null;
}

/**
 * What a `run_created` event implies, as the writers write it and the row check compares it: one function,
 * so that the two hold the same form of every text ({@linkcode columnText}).
 *
 * @param created The run's `run_created` event, or null.
 * @returns The rows.
 */
export function createdRows(created: EvidenceEvent | null): CreatedRows {
  const isCreated = created !== null && created.type === "run_created";
  const agent = isCreated ? agentOfRun(created) : null;
  const experiment = isCreated ? experimentOfRun(created) : null;
  const params = new Map<string, string>();
  if (isCreated) { for (const [key, value] of runParams(created)) params.set(key, columnText(value)); }
  return {
    fields: columnsOf(runFields(created)),
    params,
    agent: agent === null ? null : columnsOf(agent),
    experiment: experiment === null ? null : columnsOf(experiment),
  };
}

/**
 * The status and end of a run from its last event and whether it was sealed.
 * @param last The last event, or null.
 * @param sealed Whether the run was sealed.
 */
export function runEnd(last: EvidenceEvent | null, sealed: boolean): RunEnd {
  const status = statusOf(last);
  if (status !== "incomplete") return { status, ended_at: last!.time };
  return { status: sealed ? "incomplete" : "running", ended_at: null };
}

/** The columns of `provevi_runs` that a seal sets. */
export interface SealRow {
  last_hash: string | null;
  manifest_sha256: string;
  sealed_at: string;
  status: string;
  ended_at: string | null;
}

/**
 * The seal's columns of a run, read from its folder, for a row that missed its run's seal: the writer stopped
 * (a kill, a machine gone, a server away) after the folder's manifest took its name and before the row was
 * updated. The folder is the record and the row its index, so the row is completed from it, with the values
 * the writer would have written. Null unless the folder is sealed and its manifest's last hash is the hash of
 * its last line (anything else is for the checks to report, not to copy into the row).
 *
 * @param folder The run folder.
 * @returns The columns, or null.
 */
export async function sealRowOfFolder(folder: string): Promise<SealRow | null> {
  try {
    // A run still being written has no manifest: its events are not read.
    const text = await readEvidenceText(join(folder, "evidence", "manifest.json"));
    if (text === null) return null;
    const eventsText = await readEventsFileText(join(folder, "evidence", "events.jsonl"));
    if (eventsText === null || (eventsText !== "" && !eventsText.endsWith("\n"))) return null; // a torn line
    const body = eventsText.slice(0, -1);
    const lastLine = eventsText === "" ? null : body.slice(body.lastIndexOf("\n") + 1);
    const manifest = parseWeighed(text) as { last_hash?: unknown; sealed_at?: unknown };
    if (manifest.last_hash !== (lastLine === null ? null : sha256Hex(lastLine))) return null;
    if (typeof manifest.sealed_at !== "string") return null;
    const last = lastLine === null ? null : JSON.parse(lastLine) as EvidenceEvent;
    return sealRow(text, manifest as { last_hash: string | null; sealed_at: string }, last);
  } catch {
    return null;
  }
}

/**
 * The seal's columns of a run: from its manifest's text and fields and its last event.
 *
 * @param manifestText The text of `manifest.json`.
 * @param manifest Its last hash and seal time.
 * @param last The run's last event.
 * @returns The columns.
 */
export function sealRow(
  manifestText: string,
  manifest: { last_hash: string | null; sealed_at: string },
  last: EvidenceEvent | null,
): SealRow {
  return columnsOf({
    last_hash: manifest.last_hash,
    manifest_sha256: sha256Hex(manifestText),
    sealed_at: manifest.sealed_at,
    ...runEnd(last, true),
  });
}
