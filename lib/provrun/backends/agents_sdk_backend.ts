/**
 * The backend of an app built on the OpenAI Agents SDK, in process. The SDK keeps its trace processors for the
 * whole process (`setTraceProcessors`), so a run sets one processor of provr's there, a router, in place of all
 * others: the SDK's default exporter, which sends traces to OpenAI, is off from then on and never put back. The
 * router gives each SDK span to the run whose app made it (the app runs inside its run's async context), so runs
 * of the SDK in one process at once keep their spans apart; a span made outside every run goes nowhere.
 * @module
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Span as SdkSpan, SpanData, Trace as SdkTrace, TracingProcessor } from "@openai/agents-core";
import { type BackendJob, InProcessBackend } from "./backend.ts";
import { AGENTS_SDK_COMPONENT, ProvrunTracingProcessor } from "./agents_sdk_processor.ts";

/** An app built on the OpenAI Agents SDK, as a run runs it: the prompt in, the final answer out. */
export type AgentsSdkApp = (input: {
  /** The run's prompt. */
  prompt: string;
  /** Aborted when the run is cancelled or passes a limit. */
  signal: AbortSignal;
  /** The run folder (`input/`, `output/`, `scratch/`). */
  folder: string;
}) => Promise<string | null>;

/** The run whose app is running in the current async context. */
const current = new AsyncLocalStorage<ProvrunTracingProcessor>();

/** The SDK's one processor once a run of it has started: each span to its run's processor. */
class RunRouter implements TracingProcessor {
  readonly #bySpan = new Map<string, ProvrunTracingProcessor>();

  onTraceStart(_trace: SdkTrace): Promise<void> {
    return Promise.resolve();
  }

  onTraceEnd(_trace: SdkTrace): Promise<void> {
    return Promise.resolve();
  }

  onSpanStart(span: SdkSpan<SpanData>): Promise<void> {
    const run = current.getStore();
    if (run === undefined) return Promise.resolve();
    this.#bySpan.set(span.spanId, run);
    return run.onSpanStart(span);
  }

  onSpanEnd(span: SdkSpan<SpanData>): Promise<void> {
    // by the span's start, in case the SDK ends it from another context
    const run = this.#bySpan.get(span.spanId);
    if (run === undefined) return Promise.resolve();
    this.#bySpan.delete(span.spanId);
    return run.onSpanEnd(span);
  }

  /** Forgets the spans of a run that has ended. */
  forget(run: ProvrunTracingProcessor): void {
    for (const [id, r] of this.#bySpan) if (r === run) this.#bySpan.delete(id);
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

const router = new RunRouter();

/**
 * The backend of an app built on the Agents SDK, in process: the SDK's spans are recorded by a
 * {@linkcode ProvrunTracingProcessor} of the run, and none goes to OpenAI.
 */
export class AgentsSdkBackend extends InProcessBackend {
  readonly name = "agents-sdk";
  readonly #app: AgentsSdkApp;

  /** @param app The app. */
  constructor(app: AgentsSdkApp) {
    super();
    this.#app = app;
  }

  protected async work(job: BackendJob, signal: AbortSignal): Promise<string | null> {
    const { recorder, folder } = job.ctx;
    // loaded only by a run of the SDK: the library's other users never load it
    const sdk = await import("@openai/agents-core");
    const processor = new ProvrunTracingProcessor(recorder);
    await recorder.step(
      "sandbox_started",
      { component: AGENTS_SDK_COMPONENT, spanName: "provrun.sandbox" },
      () =>
        Promise.resolve({
          data: {
            backend: this.name,
            model: job.agent.model,
            cwd: folder,
            in_process: true,
            trace_processors: ["ProvrunTracingProcessor"],
            gaps: [
              "the app runs in provr's process, outside Deno's sandbox: its tools run with provr's permissions",
              "model and tool calls are recorded from the SDK's spans, as the SDK reports them (confidence parsed)",
              "tracing is on while the app runs; the app's own setTracingDisabled(true) would leave the run " +
              "without its model and tool calls",
            ],
          },
        }),
    );
    // every time, in place of any processor added since: the default exporter to OpenAI among them
    sdk.setTraceProcessors([router]);
    sdk.setTracingDisabled(false);
    try {
      const answer = await current.run(processor, () => this.#app({ prompt: job.prompt, signal, folder }));
      return answer;
    } finally {
      await processor.shutdown();
      router.forget(processor);
      await recorder.record({
        type: "sandbox_completed",
        component: AGENTS_SDK_COMPONENT,
        data: { backend: this.name, spans: processor.spans },
      });
    }
  }
}
