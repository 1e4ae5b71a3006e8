/**
 * The shapes of a telemetry policy: its destinations, approved libraries and data. Shared by the policy and its
 * narrowing, so neither imports the other.
 * @module
 */
import type { Level } from "./attributes.ts";

/** Where spans may go: Logfire, an OTLP collector, MLflow, or a viewer of a run's live feed. */
export type DestinationKind = "logfire" | "otlp" | "mlflow" | "live";

/**
 * The kinds of destination.
 *
 * @example
 * ```ts
 * import { DESTINATION_KINDS } from "./policy_types.ts";
 * DESTINATION_KINDS.includes("otlp"); // true
 * ```
 */
export const DESTINATION_KINDS: readonly DestinationKind[] = ["logfire", "otlp", "mlflow", "live"];

/** Logfire's own base URL (its US region): the endpoint of a `logfire` destination that names none. */
export const LOGFIRE_ENDPOINT = "https://logfire-us.pydantic.dev";

/** A place outside the evidence that spans may go to. */
export interface Destination {
  /** The destination's name in the policy. */
  readonly name: string;
  /** Its kind. */
  readonly kind: DestinationKind;
  /** What it receives. */
  readonly receives: Level;
  /** Its endpoint as the policy writes it; `null` for a live viewer and for the copy in the store's own file. */
  readonly endpoint: string | null;
  /** The endpoint in normal form, or `null`. */
  readonly normalEndpoint: string | null;
}

/** An approved library: an npm package, the versions that were tested, and the destinations it may feed. */
export interface LibraryApproval {
  /** The npm package name, such as `ai` or `@opentelemetry/instrumentation-http`. */
  readonly name: string;
  /** A semver range, such as `>=7.0.0 <7.1.0`. */
  readonly versions: string;
  /** The names of the destinations its instrumentation may feed. */
  readonly telemetry: readonly string[];
}

/** The policy as data: what `digest()` hashes, and what `toJSON()` gives. */
export interface PolicyData {
  version: 1;
  libraries: Record<string, { versions: string; telemetry: string[] }>;
  destinations: Record<string, { kind: DestinationKind; receives: Level; endpoint?: string }>;
  hosts: string[];
}
