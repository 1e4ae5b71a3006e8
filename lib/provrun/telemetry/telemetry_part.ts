/**
 * The run's telemetry as a part of the run: it is opened before the run folder (so a run it refuses leaves
 * nothing), gives the run its tracer, records its facts in `run_created`, writes what it found at the start after
 * `run_created`, flushes before the run's last event and closes before the seal.
 * @module
 */
import type { EvidenceStore } from "../../provevi/mod.ts";
import { TelemetryPolicy } from "../../provevi/telemetry/mod.ts";
import type { PartRun, RunPart } from "../run/run_part.ts";
import type { RunFile } from "../run/run_file.ts";
import { RunTelemetry } from "./run_telemetry.ts";
import type { DeclaredNames } from "./declared_names.ts";
import { processEnviron } from "./telemetry_env.ts";
import type { SpanRedactor } from "./senders.ts";

/** Options of {@linkcode TelemetryPart.open}. */
export interface TelemetryPartOptions {
  /** The store: provrun's spans go to it. */
  store: EvidenceStore;
  /** The operator's policy; else the file that PROVRUN_TELEMETRY_POLICY names; else one that approves nothing. */
  policy?: TelemetryPolicy;
  /** The variables the telemetry reads; the process's by default. */
  environ?: Readonly<Record<string, string | undefined>>;
  /** Refuse a run whose process may reach a destination host the policy does not list (true by default). */
  guardNet?: boolean;
  /** What the run declared (its tools and model), for names below `bodies`. */
  declared?: DeclaredNames;
  /** The redaction hook of the spans that leave (see {@linkcode SpanRedactor}). */
  redact?: SpanRedactor;
}

/**
 * The telemetry part of a run.
 *
 * @example
 * ```ts
 * import { FileStore, TelemetryPolicy } from "../../provevi/mod.ts";
 * import { RunFile } from "../run/run_file.ts";
 * import { TelemetryPart } from "./telemetry_part.ts";
 * const file = await RunFile.load("fixtures/tour/run.yaml");
 * const part = await TelemetryPart.open("run-x", file, {
 *   store: new FileStore({ runs: "/tmp/runs" }),
 *   policy: TelemetryPolicy.denyAll(),
 *   environ: {},
 * });
 * await part.close();
 * ```
 */
export class TelemetryPart implements RunPart {
  readonly name = "telemetry";
  readonly #telemetry: RunTelemetry;
  #closed = false;

  private constructor(telemetry: RunTelemetry) {
    this.#telemetry = telemetry;
  }

  /**
   * Opens the run's telemetry: the policy narrowed by the run file's section, the network guard, the run's own
   * tracer provider.
   *
   * @param runId The run's ID.
   * @param file The run file.
   * @param options The store, the policy, the variables.
   * @throws TelemetryPolicyError when the run file's section would widen the policy; TelemetryRefused when the
   *   process may reach a destination host that the policy does not list.
   */
  static async open(runId: string, file: RunFile, options: TelemetryPartOptions): Promise<TelemetryPart> {
    const { environ, unreadable } = options.environ
      ? { environ: options.environ, unreadable: [] }
      : processEnviron();
    const policy = options.policy ?? await TelemetryPolicy.fromEnvironment({ environ });
    const telemetry = await RunTelemetry.open({
      runId,
      policy,
      section: file.data.telemetry,
      environ,
      unreadable,
      store: options.store,
      ...(options.guardNet === undefined ? {} : { guardNet: options.guardNet }),
      ...(options.declared ? { declared: options.declared } : {}),
      ...(options.redact ? { redact: options.redact } : {}),
    });
    return new TelemetryPart(telemetry);
  }

  /** The run's policy: the operator's, narrowed by the run file. */
  get policy(): TelemetryPolicy {
    return this.#telemetry.policy;
  }

  /** The run's tracer and its own tracer provider. */
  get tracing(): RunPart["tracing"] {
    return { tracer: this.#telemetry.tracer, provider: this.#telemetry.provider };
  }

  /** The telemetry facts of `run_created`. */
  facts(): ReturnType<NonNullable<RunPart["facts"]>> {
    return this.#telemetry.facts;
  }

  /** Writes the blocked attempts and the problems found at the start. */
  async afterCreated(run: PartRun): Promise<void> {
    await this.#telemetry.start(run.ctx.recorder);
  }

  /** Checks the globals again, and writes the library spans and the export failures so far. */
  async beforeLastEvent(): Promise<void> {
    await this.#telemetry.beforeLastEvent();
  }

  /** Flushes the spans to the store and the approved destination, before the seal. */
  async beforeSeal(): Promise<void> {
    await this.close();
  }

  /** Shuts the tracer provider down, once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#telemetry.close();
  }
}
