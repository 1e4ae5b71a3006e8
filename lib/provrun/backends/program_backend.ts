/**
 * What the agent-program backends (`claude-code`, `codex`) share: provr starts the program headless in the run
 * folder, with a config home of its own inside the run (`agent/`), its OpenTelemetry export pointed at the
 * run's span receiver and `TRACEPARENT` set to the run's trace, and its hooks pointed at a hook listener of the
 * run on 127.0.0.1. Each hook event becomes one `hook_called` event; a blocking `PreToolUse` hook asks the
 * broker (`decideToolCall`) and refuses a call outside the run's grants. At the end the program's session
 * files (Claude Code's transcript, Codex's rollout) are hashed into the chain as raw bytes (`trace_imported`).
 *
 * The program gets only the variables named here (`clearEnv`): nothing of the user's settings, keys or
 * telemetry leaks in. Cancel and `limits.seconds` stop it (SIGTERM, then SIGKILL); so does `limits.tokens`, once
 * the tokens the program reports in its session files pass it, and the run fails with the agent backend's
 * `CancelledError` ("the run passed its limit of N tokens"). `limits.steps` is the program's own turn limit where
 * it has one (Claude Code's `--max-turns`); where it has none (Codex), provr stops the program once it has had
 * that many model responses and the last asked for a tool, and the run ends with what the program wrote, as an
 * agent run at its step limit does (`sandbox_completed` status `step_limit`).
 * @module
 */
import { join, relative } from "node:path";
import { type Attributes, type Span, SpanKind } from "@opentelemetry/api";
import type { Json } from "../../provevi/mod.ts";
import type { RunReceiver } from "../../provevi/receiver/mod.ts";
import { ProveviError } from "../../provevi/evidence/mod.ts";
import { type BackendJob, type BackendUpdate, InProcessBackend } from "./backend.ts";
import { runGrants, type ToolGrants } from "./tool_grants.ts";
import { parseRoute } from "./models.ts";
import { modelServer } from "./model_server.ts";
import type { AgentSpec } from "../run/run_file.ts";
import { type ProgramSteps, readProgramFile } from "./_program_files.ts";
import { type HookDecision, listenForHooks } from "./_program_hooks.ts";
import { type ProgramExit, runProgram } from "./_program_process.ts";
import { type FileGuard, guardFiles, HooksChanged } from "./_program_guard.ts";

/** What a program backend needs to start its program. */
export interface ProgramSetup {
  job: BackendJob;
  /** The program's config home inside the run folder (`<run>/agent`). */
  home: string;
  /** The run's span receiver: its own, or the run's address at `prove serve`; send its `headers` with spans. */
  spans: RunReceiver;
  /** The hook listener: POST a hook's JSON input to its URL with its headers (the run's hook key). */
  hook: { url: string; headers: Readonly<Record<string, string>> };
  /** `00-<trace>-<span>-01`: the program's spans join the run's trace under this span. */
  traceparent: string;
  /** The prompt, with the inputs and outputs named. */
  prompt: string;
  /** Reads provr's own variables (the API key). */
  env: (name: string) => string | undefined;
}

/** How a program is started, and what provr tells `sandbox_started` about it. */
export interface ProgramLaunch {
  command: string;
  args: string[];
  /** The program's whole environment. */
  env: Record<string, string>;
  /** Facts for `sandbox_started`: hooks (blocking or not), telemetry variables, gaps. */
  facts: { [key: string]: Json };
  /** Problems of telemetry that cannot be switched off from here (managed settings, …). */
  problems: string[];
  /** The final answer, read after the program exits. */
  answer(stdout: string): Promise<string | null>;
  /** The session files to import after the program exits: `[kind, path]`. */
  sessionFiles(): Promise<[string, string][]>;
  /** The tokens (input and output) the program has reported so far in its session files, for `limits.tokens`. */
  tokens(): Promise<number>;
  /**
   * The model responses so far, for `limits.steps`, when the program has no turn limit of its own: provr stops
   * the program once it has had that many and the last asked for a tool.
   */
  steps?(): Promise<ProgramSteps>;
  /** True when the program ended itself at its own turn limit (Claude Code's `--max-turns`). */
  atTurnLimit?(stdout: string): boolean;
  /**
   * The files that carry the program's hooks (absolute; present or not): hashed once written, each blocking
   * hook refused once one differs, and a difference after the program exits fails the run (`HooksChanged`).
   */
  guarded?: readonly string[];
}

const decoder = new TextDecoder();

/**
 * The base of the agent-program backends.
 */
export abstract class ProgramBackend extends InProcessBackend {
  abstract override readonly name: string;
  /** The class name written as `component`. */
  protected abstract readonly component: string;
  /** The program's default command. */
  protected abstract readonly defaultProgram: string;
  /** The program's config home, a folder of the run folder. */
  protected readonly homeFolder: string = "agent";
  /** Writes the program's config into `home` and gives its command line and environment. */
  protected abstract prepare(setup: ProgramSetup, program: string): Promise<ProgramLaunch>;
  /** The reply a hook gets for a `PreToolUse` decision, or for any other event (`decision` null). */
  protected hookReply(event: string, decision: HookDecision | null): unknown {
    if (decision === null) return {};
    return {
      hookSpecificOutput: {
        hookEventName: event,
        permissionDecision: decision.allow ? "allow" : "deny",
        permissionDecisionReason: decision.reason,
      },
    };
  }

  /** Reads provr's variables: `Deno.env`, unless a test gives its own. */
  env: (name: string) => string | undefined = (name) => {
    try {
      return Deno.env.get(name);
    } catch {
      return undefined;
    }
  };

  /**
   * The run's span receiver: the run's address at `prove serve` when `PROVE_SERVE` names the daemon's
   * connection file, else a receiver of the run's own.
   */
  protected async spanReceiver(job: BackendJob): Promise<RunReceiver> {
    const serve = this.env("PROVE_SERVE");
    // The receiver (protobufjs and the OTLP decoders) is imported by program runs only.
    const { openWithDaemon, readDaemonFile, receiver } = await import("../../provevi/receiver/mod.ts");
    if (serve) return await openWithDaemon(await readDaemonFile(serve), job.ctx.recorder);
    return receiver(job.ctx.spanRows ?? {}, job.ctx.recorder);
  }

  /** Writes a problem when something other than the run's program tried to send the run spans. */
  async #strangers(job: BackendJob, spans: RunReceiver): Promise<void> {
    if (spans.strangers === 0) return;
    await job.ctx.recorder.record({
      type: "telemetry_problem",
      component: "SpanReceiver",
      data: {
        problem: `the run's span receiver refused ${spans.strangers} requests or connections of strangers ` +
          `(without the run's key, for another Host, from a web page, or too slow or idle for its door): ` +
          `something other than the run's program tried to reach it`,
        library: null,
      },
    });
  }

  protected async work(
    job: BackendJob,
    signal: AbortSignal,
    emit: (u: BackendUpdate) => void,
  ): Promise<string | null> {
    const { ctx: { recorder, folder }, agent } = job;
    const home = join(folder, this.homeFolder);
    await Deno.mkdir(home, { recursive: true });
    // The program's config holds the run's span key and hook address: for the user's eyes only.
    if (Deno.build.os !== "windows") await Deno.chmod(home, 0o700);
    const grants: ToolGrants = runGrants(folder, {
      hosts: agent.net ?? [],
      unsandboxed: agent.allow_unsandboxed ?? [],
    });
    // first: a daemon that cannot open the run fails it before anything of the program starts
    await using spans = await this.spanReceiver(job);
    const step = recorder.startStep({
      component: this.component,
      spanName: `invoke_agent ${this.name}`,
      ...programAgentSpan(agent, { program: this.name, sessionId: job.sessionId ?? null, env: this.env }),
    });
    const ctx = step.span.spanContext();
    const traceparent = `00-${ctx.traceId}-${ctx.spanId}-01`;
    let guard: FileGuard | null = null;
    const hooks = listenForHooks({
      recorder,
      component: this.component,
      program: this.name,
      grants,
      span: step.span,
      ...(job.toolDescription ? { toolDescription: job.toolDescription } : {}),
      reply: (event, decision) => this.hookReply(event, decision),
      changed: async () => (await guard?.changed()) ?? [],
    });
    const end: ProgramEnd = { status: "failed", exit: null, stderr: "" };
    try {
      const prompt = renderProgramPrompt(job);
      const program = agent.program ?? this.defaultProgram;
      const launch = await this.prepare(
        { job, home, spans, hook: hooks, traceparent, prompt, env: this.env },
        program,
      );
      guard = await guardFiles(launch.guarded ?? [], folder);
      await this.#started(job, { program, prompt, launch, home, spans, traceparent, grants, guard });
      signal.throwIfAborted();
      const exit = await runProgram(launch, {
        backend: this.name,
        cwd: folder,
        limits: agent.limits,
        signal,
      });
      end.stderr = decoder.decode(exit.out.stderr);
      end.exit = { code: exit.out.code, signal: exit.out.signal };
      // Spans under way are answered before the receiver stops; none is taken after this.
      await hooks.shutdown();
      await spans.close();
      await this.#strangers(job, spans);
      await this.#importSessions(job, { launch, span: step.span });
      // after the session files, which show what the program did to the config
      const changes = await guard.changed();
      if (changes.length > 0) throw new HooksChanged(this.name, changes);
      return await this.#result({ program, launch, exit, end, signal, emit });
    } finally {
      await hooks.shutdown().catch(() => {});
      await spans.close().catch(() => {});
      await this.#completed(job, { step, end, spans, hooks });
    }
  }

  /** Ends the program's step with `sandbox_completed`: how it ended, and what its receivers took and refused. */
  async #completed(
    job: BackendJob,
    parts: {
      step: ReturnType<BackendJob["ctx"]["recorder"]["startStep"]>;
      end: ProgramEnd;
      spans: { spans: number; refused: number };
      hooks: ReturnType<typeof listenForHooks>;
    },
  ): Promise<void> {
    const { ctx: { recorder }, agent } = job;
    const { step, end, spans, hooks } = parts;
    const data = {
      status: end.status,
      exit_code: end.exit?.code ?? null,
      signal: end.exit?.signal ?? null,
      ...(agent.limits?.steps === undefined ? {} : { step_limit: agent.limits.steps }),
      spans: spans.spans,
      spans_refused: spans.refused,
      hooks: hooks.counts.hooks,
      refused: hooks.counts.refused,
      // requests at the hook listener without the run's hook key, for another Host, from a web page, too large
      hook_strangers: hooks.counts.strangers,
    };
    if (recorder.broken) step.span.end();
    else {
      await step.end("sandbox_completed", {
        data,
        payload: end.stderr ? await recorder.payload(end.stderr).catch(() => null) : null,
      }).catch(() => {});
    }
  }

  /** Writes `sandbox_started`, the problems of the launch, and `prompt_rendered`. */
  async #started(
    job: BackendJob,
    started: {
      program: string;
      prompt: string;
      launch: ProgramLaunch;
      home: string;
      spans: RunReceiver;
      traceparent: string;
      grants: ToolGrants;
      guard: FileGuard;
    },
  ): Promise<void> {
    const { recorder, folder } = job.ctx;
    const { agent } = job;
    const { program, prompt, launch, grants } = started;
    const component = this.component;
    await recorder.step(
      "sandbox_started",
      { component, spanName: "provrun.sandbox" },
      () =>
        Promise.resolve({
          data: {
            backend: this.name,
            model: agent.model,
            program,
            args: launch.args.map((a) => (a === prompt ? "<prompt>" : a)),
            cwd: folder,
            config_home: relative(folder, started.home),
            session_id: job.sessionId ?? null,
            receiver: started.spans.tracesUrl,
            traceparent: started.traceparent,
            variables: Object.keys(launch.env).sort(),
            permissions: {
              read: grants.read.map((p) => relative(folder, p)),
              write: grants.write.map((p) => relative(folder, p)),
              net: grants.hosts,
              unsandboxed: grants.unsandboxed,
            },
            unsandboxed: [{
              program,
              reason: "an agent program runs outside Deno's sandbox; its hooks ask provr",
            }],
            limits: {
              steps: agent.limits?.steps ?? null,
              tokens: agent.limits?.tokens ?? null,
              seconds: agent.limits?.seconds ?? null,
            },
            ...(launch.guarded ? { guarded: { ...started.guard.files } } : {}),
            ...launch.facts,
            ...job.facts,
          },
        }),
    );
    for (const problem of launch.problems) {
      await recorder.record({
        type: "telemetry_problem",
        component: "RunContext",
        data: { problem, library: this.name },
      });
    }
    await recorder.step("prompt_rendered", { component }, async () => ({
      payload: await recorder.payload(prompt),
      data: { chars: prompt.length, files: job.inputs.map((i) => i.name) },
    }));
  }

  /** Hashes the program's session files into the chain as raw bytes (`trace_imported`). */
  async #importSessions(job: BackendJob, options: { launch: ProgramLaunch; span: Span }): Promise<void> {
    const { recorder, folder } = job.ctx;
    for (const [kind, path] of await options.launch.sessionFiles()) {
      const bytes = await readProgramFile(path, folder);
      if (bytes === null) continue;
      const lines = bytes.reduce((n, b) => (b === 10 ? n + 1 : n), 0);
      await recorder.record({
        type: "trace_imported",
        component: this.component,
        confidence: "parsed",
        payload: await recorder.payload(bytes),
        data: { program: this.name, kind, path: relative(folder, path), bytes: bytes.byteLength, lines },
      }, options.span);
    }
  }

  /** The program's answer, or why the run fails: a cancel, a limit, an exit code other than 0. */
  async #result(ended: {
    program: string;
    launch: ProgramLaunch;
    exit: ProgramExit;
    end: ProgramEnd;
    signal: AbortSignal;
    emit: (u: BackendUpdate) => void;
  }): Promise<string | null> {
    const { launch, exit, end, signal, emit } = ended;
    const { out } = exit;
    const stdout = decoder.decode(out.stdout);
    if (signal.aborted) throw signal.reason;
    if (exit.overLimit) throw exit.overLimit;
    // as the agent backend at limits.steps: the run ends with what the program has written
    const stepLimited = exit.stepLimited || (out.code !== 0 && (launch.atTurnLimit?.(stdout) ?? false));
    if (stepLimited) {
      end.status = "step_limit";
      const answer = await launch.answer(stdout).catch(() => null);
      if (answer !== null) emit({ type: "text", text: answer });
      return answer;
    }
    if (out.code !== 0) {
      const said = end.stderr.trim() || stdout.trim();
      const last = said.split("\n").filter((l) => l.trim() !== "").pop() ?? "";
      throw new ProveviError(
        `${ended.program} exited with code ${out.code}${last ? `: ${last.slice(0, 300)}` : ""}`,
      );
    }
    const answer = await launch.answer(stdout);
    if (answer !== null) emit({ type: "text", text: answer });
    end.status = "ok";
    return answer;
  }
}

/** How the program's step ended, for `sandbox_completed`. */
interface ProgramEnd {
  status: string;
  exit: { code: number; signal: string | null } | null;
  stderr: string;
}

/** The prompt a program gets: the run's prompt, and where its inputs are and its outputs go. */
export function renderProgramPrompt(job: Pick<BackendJob, "prompt" | "inputs" | "outputs">): string {
  const lines = [job.prompt, ""];
  if (job.inputs.length) {
    lines.push("The run's inputs, read-only:");
    for (const i of job.inputs) lines.push(`- input/${i.name} (${i.kind})`);
  }
  lines.push(
    job.outputs.length
      ? `Write your results under output/: ${job.outputs.map((o) => `output/${o}`).join(", ")}.`
      : "Write any results under output/.",
  );
  return lines.join("\n");
}

/**
 * The kind and attributes of an agent program's `invoke_agent` span: the program is an agent in another
 * process (`CLIENT`), named by the program, with the provider and model of its route.
 */
function programAgentSpan(
  agent: AgentSpec,
  options: { program: string; sessionId: string | null; env: (name: string) => string | undefined },
): { kind: SpanKind; attributes: Attributes } {
  const route = parseRoute(agent);
  const server = modelServer(agent, options.env);
  return {
    kind: SpanKind.CLIENT,
    attributes: {
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.provider.name": server.provider,
      "gen_ai.agent.name": options.program,
      "gen_ai.request.model": route.model,
      ...(options.sessionId ? { "gen_ai.conversation.id": options.sessionId } : {}),
    },
  };
}
