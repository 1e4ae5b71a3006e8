/**
 * A run's telemetry: its policy (narrowed by the run file), its own tracer provider (never a global one), and
 * what goes where. provrun's spans reach the store in process (`StoreSpanExporter`); an approved library's spans
 * become `span_recorded` events with their bodies in payloads; an OTLP destination gets spans only when the
 * policy approves the URL that a variable names, cut to the destination's level. Everything else is blocked
 * and recorded (`telemetry_blocked`), and what cannot be turned off from inside is recorded too
 * (`telemetry_problem`).
 * @module
 */
import { tracingChannel } from "node:diagnostics_channel";
import type { Span as ApiSpan, Tracer } from "@opentelemetry/api";
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
  type Span,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  blockedData,
  CONTENT_KEYS,
  type Destination,
  type Environ,
  type InstalledPackages,
  installedPackages,
  plainName,
  problemData,
  spanLibraries,
  spanTime,
  splitBody,
  storedSpan,
  StoreSpanExporter,
} from "../../provevi/telemetry/mod.ts";
import type { EvidenceStore, Json, TelemetryPolicy } from "../../provevi/mod.ts";
import type { EvidenceRecorder } from "../run/recorder.ts";
import { cutName, cutSpan } from "./span_cut.ts";
import { redacted, runSenders, type Sender, senderProcessor, type SpanRedactor } from "./senders.ts";
import { RootSummary } from "./root_summary.ts";
import { wantSpanContent } from "../run/_span_content.ts";
import type { DeclaredNames } from "./declared_names.ts";
import {
  denoExportsTelemetry,
  globalTracerProviderSet,
  guardNet,
  type NamedDestination,
  namedDestinations,
  recordableUrl,
  type TelemetryFacts,
  telemetryFacts,
} from "./telemetry_env.ts";

/** The instrumentation scope of provrun's own spans. */
export const PROVRUN_SCOPE = "provrun";

/**
 * The AI SDK's telemetry, off: pass it as `telemetry` to `generateText` and `streamText` (after any settings),
 * so neither the globally registered integrations (`registerTelemetry`) nor the `ai:telemetry` tracing channel
 * see the call.
 *
 * @example
 * ```ts
 * import { AI_TELEMETRY_OFF } from "./run_telemetry.ts";
 * // await generateText({ model, prompt, telemetry: AI_TELEMETRY_OFF });
 * ```
 */
export const AI_TELEMETRY_OFF: { readonly isEnabled: false } = Object.freeze({ isEnabled: false as const });

/** Options of {@linkcode RunTelemetry.open}. */
export interface RunTelemetryOptions {
  /** The run's ID, set on every span as `provrun.run_id`. */
  runId: string;
  /** The operator's policy, before the run file narrows it. */
  policy: TelemetryPolicy;
  /** The run file's `telemetry` section. */
  section?: unknown;
  /** The run's variables. */
  environ: Environ;
  /** Variables the process was not allowed to read. */
  unreadable?: readonly string[];
  /** The store: spans go to its `addSpans` when it has one. */
  store?: EvidenceStore;
  /** Refuse a run whose process may reach an unlisted destination host (see `guardNet`); true by default. */
  guardNet?: boolean;
  /** The installed packages that place a library span; `installedPackages()` by default. */
  installed?: InstalledPackages | null;
  /**
   * What the run declared (its tools and model): below `bodies`, a name the model or a tool chose goes to a
   * destination only when declared, else as its label and a short hash (`declared_names.ts`).
   */
  declared?: DeclaredNames;
  /** The redaction hook: sees each span that leaves for a destination, and may drop or replace attributes. */
  redact?: SpanRedactor;
}

/**
 * provrun's tracer: each span it starts is put in `own`, so that provrun's spans are told by who started them,
 * not by their scope's name, which any code holding the provider can give its tracer (`getTracer("provrun")`).
 */
function ownTracer(tracer: Tracer, started: (span: ApiSpan) => void): Tracer {
  return {
    startSpan(...args: Parameters<Tracer["startSpan"]>) {
      const span = tracer.startSpan(...args);
      started(span);
      return span;
    },
    startActiveSpan(name: string, ...rest: unknown[]) {
      const fn = rest.pop() as (span: ApiSpan) => unknown;
      return (tracer.startActiveSpan as (...args: unknown[]) => unknown)(name, ...rest, (span: ApiSpan) => {
        started(span);
        return fn(span);
      });
    },
  } as Tracer;
}

/** A span of provrun's as the store's index keeps it: without the content attributes (the payloads hold them). */
function withoutContent(span: ReadableSpan): ReadableSpan {
  const keys = Object.keys(span.attributes);
  if (!keys.some((k) => CONTENT_KEYS.has(k))) return span;
  const attributes: Record<string, unknown> = {};
  for (const k of keys) if (!CONTENT_KEYS.has(k)) attributes[k] = span.attributes[k];
  return new Proxy(span, {
    get: (target, key) => key === "attributes" ? attributes : Reflect.get(target, key, target),
  });
}

/** What a span's scope stands for in this run. */
interface Judgement {
  /** provrun's own span. */
  own: boolean;
  /** The library the policy approves it as, or `null`. */
  library: string | null;
  /** The names the scope may stand for (for a report when none is approved). */
  candidates: string[];
}

/**
 * The name and the status message of a library's span as its event and the store's index keep them: the name
 * when `plainSpanName` passes it, else its operation or `span` (as `cutName` gives), and the message when it is
 * a plain name, else `null`.
 */
function libraryHead(
  name: string,
  message: string | null,
  attributes: Readonly<Record<string, unknown>>,
): { name: string; status: string | null } {
  return {
    name: cutName(name, attributes as Parameters<typeof cutName>[1], "names"),
    status: message === null || plainName(message) ? message : null,
  };
}

const OWN: Judgement = Object.freeze({ own: true, library: null, candidates: [] });

/** A span processor that hands a changed copy of each finished span, or nothing, to another processor. */
class RoutingProcessor implements SpanProcessor {
  constructor(
    readonly inner: SpanProcessor,
    readonly route: (span: ReadableSpan) => ReadableSpan | null,
  ) {}
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    const routed = this.route(span);
    if (routed !== null) this.inner.onEnd(routed);
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

/**
 * The telemetry of one run. `runFile` opens it before the run folder (so a refused run leaves nothing), gives its
 * tracer to the recorder, records its facts in `run_created`, calls `start` after `run_created`,
 * `beforeLastEvent` before `run_completed` or `run_failed`, and `close` before the seal.
 *
 * @example
 * ```ts
 * import { TelemetryPolicy } from "../../provevi/mod.ts";
 * import { RunTelemetry } from "./run_telemetry.ts";
 * const telemetry = await RunTelemetry.open({ runId: "run-x", policy: TelemetryPolicy.denyAll(), environ: {} });
 * telemetry.tracer.startSpan("invoke_agent q").end();
 * await telemetry.close();
 * ```
 */
export class RunTelemetry {
  /** The run's policy: the operator's, narrowed by the run file. */
  readonly policy: TelemetryPolicy;
  /** The run's own tracer provider. Give it to an approved library; never register it globally. */
  readonly provider: BasicTracerProvider;
  /** provrun's tracer (scope `provrun`). */
  readonly tracer: Tracer;
  /** What `run_created` records. */
  readonly facts: TelemetryFacts;
  /** The OTLP destination spans are sent to (over HTTP or gRPC), or `null`. */
  readonly otlp: { destination: Destination; url: string } | null;
  /** Every destination spans are sent to: the OTLP one, and each Logfire one with its token set. */
  readonly senders: readonly Sender[];
  readonly #runId: string;
  readonly #named: NamedDestination[];
  readonly #environ: Environ;
  readonly #installed: InstalledPackages | null;
  readonly #judged = new Map<string, Judgement>();
  readonly #own = new WeakSet<object>();
  readonly #summary = new RootSummary();
  readonly #blockedScopes = new Set<string>();
  readonly #pending = new Set<Promise<unknown>>();
  readonly #problems = new Set<string>();
  readonly #written = new Set<string>();
  /** Why exports to a destination failed, in order, until they are written as telemetry problems. */
  readonly #exportFailures: string[] = [];
  /** Why the redaction hook stopped spans, until written as telemetry problems. */
  readonly #hookFailures = new Set<string>();
  readonly #senderProcessors: SpanProcessor[] = [];
  #recorder: EvidenceRecorder | null = null;
  #recording = false;
  #closed = false;
  /** Library spans that ended after the run's last event, so could not be recorded. */
  lateSpans = 0;

  private constructor(options: RunTelemetryOptions, policy: TelemetryPolicy, named: NamedDestination[]) {
    this.#runId = options.runId;
    this.#environ = options.environ;
    this.#installed = options.installed ?? null;
    this.#named = named;
    this.policy = policy;
    this.facts = telemetryFacts(options.environ, policy, named, options.unreadable ?? []);
    for (const name of options.unreadable ?? []) {
      this.#problems.add(
        `cannot read ${name}: allow it with --allow-env, or the run cannot tell whether it sends telemetry`,
      );
    }
    // Traces go only to the traces target (the first OTLP entry); the general endpoint, when the traces variable
    // overrides it, is there to be recorded and guarded, never sent to.
    this.senders = Object.freeze(runSenders(named));
    const otlp = this.senders.find((d) => d.destination.kind === "otlp");
    this.otlp = otlp ? { destination: otlp.destination, url: otlp.url } : null;

    const processors: SpanProcessor[] = [
      { // provrun.run_id on every span of the run, a library's too (the baggage processor of the design)
        onStart: (span: Span) => span.setAttribute("provrun.run_id", this.#runId),
        onEnd: (span: ReadableSpan) => {
          if (this.#own.has(span)) this.#summary.ended(span);
          else this.#onLibrarySpan(span);
        },
        forceFlush: () => this.#flushRecords(),
        shutdown: () => this.#flushRecords(),
      },
    ];
    const store = options.store;
    if (store?.addSpans) {
      const sink = { addSpans: store.addSpans.bind(store) };
      processors.push(
        new RoutingProcessor(
          new SimpleSpanProcessor(new StoreSpanExporter(sink, options.runId)),
          (span) => this.#forStore(span),
        ),
      );
    }
    for (const sender of this.senders) {
      const processor = senderProcessor(sender, {
        environ: options.environ,
        onFailure: (why) => this.#exportFailures.push(why),
      });
      this.#senderProcessors.push(processor);
      processors.push(new RoutingProcessor(processor, (span) => this.#outgoing(span, sender, options)));
    }
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": PROVRUN_SCOPE }),
      sampler: new AlwaysOnSampler(), // OTEL_TRACES_SAMPLER must not drop the run's own spans
      spanProcessors: processors,
    });
    // a destination at bodies gets the content of provrun's spans: only then is it put on them
    const content = this.senders.some((d) => d.destination.receives === "bodies");
    this.tracer = ownTracer(this.provider.getTracer(PROVRUN_SCOPE), (span) => {
      this.#own.add(span);
      if (content) wantSpanContent(span);
      this.#summary.started(span);
    });
  }

  /**
   * Narrows the policy with the run file's section, matches the variables, guards the network and makes the
   * run's tracer provider.
   *
   * @param options The run's ID, policy, section, variables and store.
   * @returns The run's telemetry.
   * @throws TelemetryPolicyError when the section would widen the policy; TelemetryRefused when the process
   *   may reach a destination host that the policy does not list.
   */
  static async open(options: RunTelemetryOptions): Promise<RunTelemetry> {
    const policy = options.policy.narrow(options.section);
    const named = namedDestinations(options.environ, policy);
    if (options.guardNet ?? true) await guardNet(named, policy);
    const installed = options.installed === undefined ? await installedPackages() : options.installed;
    return new RunTelemetry({ ...options, installed }, policy, named);
  }

  /**
   * Writes what the run found at its start, after `run_created`: a `telemetry_blocked` event for each variable
   * that names a place the policy does not approve and for the AI SDK's global telemetry, and a
   * `telemetry_problem` event for what cannot be turned off from inside (Deno's own export, a global tracer
   * provider, variables it could not read). From now on, approved library spans are recorded.
   *
   * @param recorder The run's recorder.
   */
  async start(recorder: EvidenceRecorder): Promise<void> {
    this.#recorder = recorder;
    for (const d of this.#named) {
      if (d.destination === null) {
        await this.#blocked("destination", { detail: `${d.variable} ${recordableUrl(d.url)}` });
      }
    }
    if (denoExportsTelemetry(this.#environ)) {
      await this.#problem(
        "OTEL_DENO is set; Deno exports its own spans, logs and metrics from the start of the process and a run " +
          "cannot turn that off: start provr without OTEL_DENO",
        "deno",
      );
    }
    for (const text of this.#problems) await this.#problem(text);
    await this.#checkGlobals();
    const integrations = (globalThis as { AI_SDK_TELEMETRY_INTEGRATIONS?: unknown[] })
      .AI_SDK_TELEMETRY_INTEGRATIONS;
    if (Array.isArray(integrations) && integrations.length > 0) {
      await this.#blocked("ai.telemetry_integrations", {
        library: "ai",
        detail:
          `${integrations.length} registered; provrun's model calls pass telemetry: { isEnabled: false }`,
      });
    }
    if (tracingChannel("ai:telemetry").hasSubscribers) {
      await this.#blocked("ai.tracing_channel", {
        library: "ai",
        detail: "ai:telemetry has subscribers; provrun's model calls pass telemetry: { isEnabled: false }",
      });
    }
    this.#recording = true;
  }

  /**
   * Before the run's last event: checks again that no library registered a global tracer provider during the
   * run, and writes the library spans that ended. Later library spans are counted in `lateSpans`, not written.
   */
  async beforeLastEvent(): Promise<void> {
    if (!this.#recorder || this.#closed) return;
    await this.#checkGlobals();
    // The spans so far go to the OTLP destination now, so that a refusal (an HTTP error, no connection, a time
    // out) is written in the run while it can be; the root span, which ends at the seal, is sent after it.
    await Promise.all(
      this.#senderProcessors.map((p) => p.forceFlush().catch(() => {/* noted by the exporter */})),
    );
    for (const why of this.#exportFailures.splice(0)) {
      await this.#problem(`${why}; the evidence holds every step, but the destination may lack spans`);
    }
    for (const why of this.#hookFailures) {
      await this.#problem(`${why}; those spans were not sent (the evidence holds every step)`);
    }
    this.#hookFailures.clear();
    await this.#flushRecords();
    this.#recording = false;
    this.#closed = true;
  }

  /** Flushes the spans to the store and to the approved destination, then shuts the provider down. */
  async close(): Promise<void> {
    this.#recording = false;
    this.#closed = true;
    try {
      await this.provider.forceFlush();
    } catch { /* an exporter's failure is not the run's: the evidence holds every step */ }
    try {
      await this.provider.shutdown();
    } catch { /* as above */ }
  }

  async #checkGlobals(): Promise<void> {
    if (globalTracerProviderSet()) {
      await this.#problem(
        "a global OpenTelemetry tracer provider is registered (@opentelemetry/api); provrun does not use it, " +
          "and code that does may send spans the policy does not approve: remove the call to " +
          "trace.setGlobalTracerProvider",
      );
    }
  }

  async #problem(text: string, library: string | null = null): Promise<void> {
    if (!this.#recorder || this.#written.has(text)) return;
    this.#written.add(text);
    await this.#recorder.record({
      type: "telemetry_problem",
      component: "RunContext",
      data: problemData(text, { library }),
    });
  }

  async #blocked(path: string, options: { library?: string | null; detail?: string | null }): Promise<void> {
    if (!this.#recorder) return;
    await this.#recorder.record({
      type: "telemetry_blocked",
      component: "RunContext",
      data: blockedData(path, options),
    });
  }

  /** What a span stands for: provrun's own when provrun's tracer started it, else a library by its scope. */
  #judge(span: ReadableSpan): Judgement {
    if (this.#own.has(span)) return OWN;
    const scope = span.instrumentationScope.name;
    let found = this.#judged.get(scope);
    if (!found) {
      const candidates = spanLibraries(scope, { installed: this.#installed });
      const library = candidates.find((name) => {
        const version = this.#installed?.get(name)?.version;
        return version !== undefined && this.policy.approvesVersion(name, version);
      }) ?? null;
      found = { own: false, library, candidates };
      this.#judged.set(scope, found);
    }
    return found;
  }

  #forStore(span: ReadableSpan): ReadableSpan | null {
    const judged = this.#judge(span);
    if (judged.own) return withoutContent(span);
    if (judged.library === null) return null;
    // The index keeps a library span's names and usage; its body is in the span_recorded event's payload,
    // and so are a name and a status message that are not names.
    const { name, status } = libraryHead(span.name, span.status.message ?? null, span.attributes);
    return {
      ...cutSpan(span, "bodies"),
      name,
      status: { code: span.status.code, ...(status === null ? {} : { message: status }) },
      attributes: splitBody(span.attributes).attributes,
      events: [],
    } as ReadableSpan;
  }

  /** A span as it leaves for a sender: fed by the policy, cut to the level, through the redaction hook. */
  #outgoing(
    span: ReadableSpan,
    sender: Sender,
    options: Pick<RunTelemetryOptions, "declared" | "redact">,
  ): ReadableSpan | null {
    const { destination } = sender;
    if (!this.#feeds(span, destination.name)) return null;
    const cut = cutSpan(span, destination.receives, options.declared);
    if (!options.redact) return cut;
    const out = redacted(cut, { hook: options.redact, destination });
    if ("span" in out) return out.span;
    this.#hookFailures.add(`${out.error} on a span for the destination ${destination.name}`);
    return null;
  }

  #feeds(span: ReadableSpan, destination: string): boolean {
    const judged = this.#judge(span);
    return judged.own || (judged.library !== null && this.policy.feeds(judged.library, destination));
  }

  #onLibrarySpan(span: ReadableSpan): void {
    const scope = span.instrumentationScope.name;
    const judged = this.#judge(span);
    if (judged.own) return;
    if (!this.#recording || !this.#recorder) {
      if (this.#closed) this.lateSpans++;
      return;
    }
    const write = judged.library === null
      ? this.#blockLibrary(scope, judged)
      : this.#recordLibrarySpan(span, judged.library);
    const tracked = write.catch(() => {}).finally(() => this.#pending.delete(tracked));
    this.#pending.add(tracked);
  }

  async #blockLibrary(scope: string, judged: Judgement): Promise<void> {
    if (this.#blockedScopes.has(scope)) return;
    this.#blockedScopes.add(scope);
    await this.#blocked("library", {
      library: judged.candidates[0] ?? null,
      detail: `spans of the scope ${JSON.stringify(scope)}: ${
        judged.candidates.length
          ? "the policy does not approve this library"
          : "no installed package has this name"
      }`,
    });
  }

  async #recordLibrarySpan(span: ReadableSpan, library: string): Promise<void> {
    const recorder = this.#recorder!;
    const stored = storedSpan(span);
    const { attributes, body } = splitBody(stored.attributes);
    // A library's span name or status message may hold a prompt ("chat " + prompt): only a name stays in the
    // event; the text goes in the payload with the body.
    const head = libraryHead(stored.name, stored.status.message, stored.attributes);
    const texts = {
      ...(head.name === stored.name ? {} : { name: stored.name }),
      ...(head.status === stored.status.message ? {} : { status_message: stored.status.message }),
    };
    const payload = body !== null || stored.events.length > 0 || Object.keys(texts).length > 0
      ? await recorder.payload({ attributes: body ?? {}, events: stored.events, ...texts })
      : null;
    await recorder.record({
      type: "span_recorded",
      component: "RunContext",
      confidence: "parsed",
      trace_id: stored.trace_id,
      span_id: stored.span_id,
      parent_span_id: stored.parent_span_id,
      started_at: spanTime(span.startTime),
      payload,
      data: {
        name: head.name,
        scope: stored.scope.name,
        library,
        version: this.#installed?.get(library)?.version ?? null,
        kind: stored.kind,
        end_time: stored.end_time,
        status: { code: stored.status.code, message: head.status },
        attributes: attributes as { [key: string]: Json },
      },
    });
  }

  async #flushRecords(): Promise<void> {
    while (this.#pending.size) await Promise.all([...this.#pending]);
  }
}
