/**
 * The evidence of the telemetry policy in a run: `telemetry_blocked` for each attempt that the policy blocked,
 * and `telemetry_problem` for each problem that a run found, such as a library that set up its own telemetry.
 * @module
 */
import type { EvidenceEvent, Json } from "../evidence/event.ts";

/** The data of a `telemetry_blocked` event. */
export interface BlockedData {
  /** What was blocked, such as `destination`, `network` or `ai.experimental_telemetry`. */
  path: string;
  /** The npm package the attempt came from, or `null` when it is not known. */
  library: string | null;
  /** What was attempted, such as the URL of a variable that matched no destination. */
  detail: string | null;
  [key: string]: Json;
}

/**
 * The data of a `telemetry_blocked` event.
 *
 * @param path What was blocked, such as `destination` or `network`.
 * @param options `library`: the package the attempt came from; `detail`: what was attempted.
 * @returns The event's data.
 * @throws TypeError when `path` is not a non-empty text.
 * @example
 * ```ts
 * import { blockedData } from "./telemetry_events.ts";
 * blockedData("destination", { detail: "OTEL_EXPORTER_OTLP_ENDPOINT https://evil.example:443" });
 * // { path: "destination", library: null, detail: "OTEL_EXPORTER_OTLP_ENDPOINT https://evil.example:443" }
 * ```
 */
export function blockedData(
  path: string,
  options: { library?: string | null; detail?: string | null } = {},
): BlockedData {
  if (typeof path !== "string" || path === "") {
    throw new TypeError("blockedData() needs the path that was blocked");
  }
  for (const key of ["library", "detail"] as const) {
    const value = options[key];
    if (value !== undefined && value !== null && typeof value !== "string") {
      throw new TypeError(`blockedData(): ${key} must be a text or null`);
    }
  }
  return { path, library: options.library ?? null, detail: options.detail ?? null };
}

/**
 * The data of a `telemetry_problem` event.
 *
 * @param problem The problem, in one line.
 * @param options `library`: the package it concerns.
 * @returns The event's data.
 * @example
 * ```ts
 * import { problemData } from "./telemetry_events.ts";
 * problemData("OTEL_DENO is set: Deno exports its own spans, and a run cannot turn that off");
 * ```
 */
export function problemData(
  problem: string,
  options: { library?: string | null } = {},
): { problem: string; library: string | null } {
  if (typeof problem !== "string" || problem === "") {
    throw new TypeError("problemData() needs the problem's text");
  }
  return { problem, library: options.library ?? null };
}

/** One telemetry event of a run, as `prove telemetry` shows it. */
export interface TelemetryItem {
  seq: number;
  time: string;
  kind: "blocked" | "problem";
  /** For a blocked attempt: what was blocked. */
  path: string | null;
  library: string | null;
  detail: string | null;
  /** For a problem: its text. */
  problem: string | null;
}

const text = (value: Json | undefined): string | null =>
  value === undefined || value === null ? null : typeof value === "string" ? value : JSON.stringify(value);

/**
 * The `telemetry_blocked` and `telemetry_problem` events of a run, in order.
 *
 * @param events The run's events.
 * @returns One item per event.
 * @example
 * ```ts
 * import { telemetryItems } from "./telemetry_events.ts";
 * telemetryItems([]); // []
 * ```
 */
export function telemetryItems(events: readonly EvidenceEvent[]): TelemetryItem[] {
  const items: TelemetryItem[] = [];
  for (const e of events) {
    if (e.type === "telemetry_blocked") {
      items.push({
        seq: e.seq,
        time: e.time,
        kind: "blocked",
        path: text(e.data.path),
        library: text(e.data.library),
        detail: text(e.data.detail),
        problem: null,
      });
    } else if (e.type === "telemetry_problem") {
      const { problem, library, ...rest } = e.data;
      items.push({
        seq: e.seq,
        time: e.time,
        kind: "problem",
        path: null,
        library: text(library),
        detail: null,
        problem: text(problem) ?? (Object.keys(rest).length ? JSON.stringify(rest) : ""),
      });
    }
  }
  return items;
}
