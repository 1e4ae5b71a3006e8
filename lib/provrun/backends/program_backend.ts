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
import type { Json } from "../../provevi/mod.ts";
import {
  openWithDaemon,
  ProveviError,
  readDaemonFile,
  receiver,
  type RunReceiver,
} from "../../provevi/mod.ts";
import { type BackendJob, type BackendUpdate, InProcessBackend } from "./backend.ts";
import { decideToolCall, runGrants, type ToolGrants } from "./tool_grants.ts";
import { errorMessage } from "../run/recorder.ts";
import { CancelledError } from "../run/errors.ts";
import type { ProgramSteps } from "./_program_files.ts";
import { forgetProcess, stopGroup, watchProcess } from "../sandbox/reaper.ts";

/** What a program backend needs to start its program. */
export interface ProgramSetup {
  job: BackendJob;
  /** The program's config home inside the run folder (`<run>/agent`). */
  home: string;
  /** The run's span receiver: its own, or the run's address at `prove serve`; send its `headers` with spans. */
  spans: RunReceiver;
  /** The hook listener's URL (POST a hook's JSON input there). */
  hookUrl: string;
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
}

/** How often a program's session files are read for `limits.tokens`. */
const TOKEN_POLL_MS = 250;

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
  /** Writes the program's config into `home` and gives its command line and environment. */
  protected abstract prepare(setup: ProgramSetup, program: string): Promise<ProgramLaunch>;
  /** The reply a hook gets for a `PreToolUse` decision, or for any other event (`decision` null). */
  protected hookReply(event: string, decision: { allow: boolean; reason: string } | null): unknown {
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
    if (serve) return await openWithDaemon(await readDaemonFile(serve), job.ctx.recorder);
    return receiver(job.ctx.spanRows ?? {}, job.ctx.recorder);
  }

  protected async work(
    job: BackendJob,
    signal: AbortSignal,
    emit: (u: BackendUpdate) => void,
  ): Promise<string | null> {
    const { recorder, folder } = job.ctx;
    const agent = job.agent;
    const component = this.component;
    const home = join(folder, "agent");
    await Deno.mkdir(home, { recursive: true });
    // The program's config holds the run's span key and hook address: for the user's eyes only.
    if (Deno.build.os !== "windows") await Deno.chmod(home, 0o700);
    const grants: ToolGrants = runGrants(folder, {
      hosts: agent.net ?? [],
      unsandboxed: agent.allow_unsandboxed ?? [],
    });
    const counts = { hooks: 0, refused: 0 };
    // first: a daemon that cannot open the run fails it before anything of the program starts
    await using spans = await this.spanReceiver(job);
    const step = recorder.startStep({ component, spanName: `invoke_agent ${this.name}` });
    const ctx = step.span.spanContext();
    const traceparent = `00-${ctx.traceId}-${ctx.spanId}-01`;
    const token = Array.from(
      crypto.getRandomValues(new Uint8Array(16)),
      (b) => b.toString(16).padStart(2, "0"),
    )
      .join("");
    const hooks = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
      if (request.method !== "POST" || new URL(request.url).pathname !== `/hook/${token}`) {
        return new Response("not found", { status: 404 });
      }
      const text = await request.text();
      let input: Record<string, unknown>;
      try {
        input = JSON.parse(text);
        if (typeof input !== "object" || input === null) throw new Error("not an object");
      } catch {
        return Response.json({ error: "a hook's input is a JSON object" }, { status: 400 });
      }
      const event = typeof input.hook_event_name === "string" ? input.hook_event_name : "unknown";
      const tool = typeof input.tool_name === "string" ? input.tool_name : null;
      const blocking = event === "PreToolUse";
      let decision = blocking
        ? decideToolCall(tool ?? "", (input.tool_input ?? {}) as Record<string, unknown>, grants)
        : null;
      counts.hooks++;
      try {
        await recorder.record({
          type: "hook_called",
          component,
          payload: await recorder.payload(text),
          data: {
            program: this.name,
            event,
            tool,
            tool_use_id: typeof input.tool_use_id === "string" ? input.tool_use_id : null,
            blocking,
            decision: decision === null ? null : decision.allow ? "allow" : "deny",
            reason: decision?.reason ?? null,
          },
        }, step.span);
      } catch (error) {
        // The evidence cannot take the call: a blocking hook fails closed.
        if (blocking) {
          decision = { allow: false, reason: `the run's evidence cannot be written: ${errorMessage(error)}` };
        }
      }
      if (decision && !decision.allow) counts.refused++;
      return Response.json(this.hookReply(event, decision));
    });
    const hookUrl = `http://127.0.0.1:${hooks.addr.port}/hook/${token}`;
    let status = "failed";
    let exit: { code: number; signal: string | null } | null = null;
    let stderr = "";
    try {
      const prompt = renderProgramPrompt(job);
      const program = agent.program ?? this.defaultProgram;
      const launch = await this.prepare(
        { job, home, spans, hookUrl, traceparent, prompt, env: this.env },
        program,
      );
      await recorder.step(
        "sandbox_started",
        { component, spanName: `create_agent ${agent.name}` },
        () =>
          Promise.resolve({
            data: {
              backend: this.name,
              model: agent.model,
              program,
              args: launch.args.map((a) => (a === prompt ? "<prompt>" : a)),
              cwd: folder,
              config_home: relative(folder, home),
              session_id: job.sessionId ?? null,
              receiver: spans.tracesUrl,
              traceparent,
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
              ...launch.facts,
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
      signal.throwIfAborted();
      let child: Deno.ChildProcess;
      try {
        child = new Deno.Command(launch.command, {
          args: launch.args,
          cwd: folder,
          env: launch.env,
          clearEnv: true,
          stdin: "null",
          stdout: "piped",
          stderr: "piped",
          // its own process group, so that what it starts (a tool's commands) is stopped with it, and the
          // reaper kills the group if provr itself is killed
          detached: true,
        }).spawn();
      } catch (error) {
        throw new ProveviError(
          `cannot start ${launch.command} for the ${this.name} backend: ${
            errorMessage(error)
          }; install it, set ` +
            `agent.program to its path, and let provr run it (--allow-run)`,
          { cause: error },
        );
      }
      const group = child.pid;
      watchProcess(-group);
      let killer: ReturnType<typeof setTimeout> | null = null;
      let stopping = false;
      const stop = () => {
        if (stopping) return;
        stopping = true;
        // the whole group: SIGTERM, then SIGKILL after 5 s; without a reaper, the program's own process
        void stopGroup(group, 5000).then((ended) => {
          if (ended !== null) return;
          try {
            child.kill("SIGTERM");
          } catch { /* gone already */ }
          killer = setTimeout(() => {
            try {
              child.kill("SIGKILL");
            } catch { /* gone already */ }
          }, 5000);
        });
      };
      signal.addEventListener("abort", stop, { once: true });
      // limits.tokens: the tokens the program reports in its session files, read as it runs; limits.steps,
      // for a program with no turn limit of its own: its model responses, read the same way
      let overLimit: CancelledError | null = null;
      const limit = agent.limits?.tokens;
      const stepLimit = launch.steps ? agent.limits?.steps : undefined;
      let stepLimited = false;
      let polling = false;
      const poll = limit === undefined && stepLimit === undefined ? null : setInterval(async () => {
        if (polling || overLimit || stepLimited) return;
        polling = true;
        try {
          const used = limit === undefined ? 0 : await launch.tokens();
          if (limit !== undefined && used > limit && !overLimit) {
            overLimit = new CancelledError(`the run passed its limit of ${limit} tokens (${used})`);
            stop();
          } else if (stepLimit !== undefined) {
            const steps = await launch.steps!();
            if (steps.responses >= stepLimit && steps.toolPending) {
              stepLimited = true;
              stop();
            }
          }
        } catch {
          /* a session file being written: read it again at the next tick */
        } finally {
          polling = false;
        }
      }, TOKEN_POLL_MS);
      const out = await child.output().finally(() => {
        if (poll !== null) clearInterval(poll);
      });
      signal.removeEventListener("abort", stop);
      if (killer !== null) clearTimeout(killer);
      // what the program left running (a command a tool started in the background) ends with it
      await stopGroup(group, 1000);
      forgetProcess(-group);
      if (!overLimit && limit !== undefined) {
        // a program that passed its limit in its last answer, after the last read
        const used = await launch.tokens().catch(() => 0);
        if (used > limit) {
          overLimit = new CancelledError(`the run passed its limit of ${limit} tokens (${used})`);
        }
      }
      stderr = decoder.decode(out.stderr);
      exit = { code: out.code, signal: out.signal };
      // Spans under way are answered before the receiver stops; none is taken after this.
      await hooks.shutdown();
      await spans.close();
      if (spans.strangers > 0) {
        await recorder.record({
          type: "telemetry_problem",
          component: "SpanReceiver",
          data: {
            problem: `the run's span receiver refused ${spans.strangers} requests without the run's key ` +
              `(something other than the run's program tried to send it spans)`,
            library: null,
          },
        });
      }
      for (const [kind, path] of await launch.sessionFiles()) {
        const bytes = await Deno.readFile(path);
        const lines = bytes.reduce((n, b) => (b === 10 ? n + 1 : n), 0);
        await recorder.record({
          type: "trace_imported",
          component,
          confidence: "parsed",
          payload: await recorder.payload(bytes),
          data: { program: this.name, kind, path: relative(folder, path), bytes: bytes.byteLength, lines },
        }, step.span);
      }
      if (signal.aborted) throw signal.reason;
      if (overLimit) throw overLimit;
      if (!stepLimited && out.code !== 0 && launch.atTurnLimit?.(decoder.decode(out.stdout))) {
        stepLimited = true;
      }
      if (stepLimited) {
        // as the agent backend at limits.steps: the run ends with what the program has written
        status = "step_limit";
        const answer = await launch.answer(decoder.decode(out.stdout)).catch(() => null);
        if (answer !== null) emit({ type: "text", text: answer });
        return answer;
      }
      if (out.code !== 0) {
        const said = stderr.trim() || decoder.decode(out.stdout).trim();
        const last = said.split("\n").filter((l) => l.trim() !== "").pop() ?? "";
        throw new ProveviError(
          `${program} exited with code ${out.code}${last ? `: ${last.slice(0, 300)}` : ""}`,
        );
      }
      const answer = await launch.answer(decoder.decode(out.stdout));
      if (answer !== null) emit({ type: "text", text: answer });
      status = "ok";
      return answer;
    } finally {
      await hooks.shutdown().catch(() => {});
      await spans.close().catch(() => {});
      const data = {
        status,
        exit_code: exit?.code ?? null,
        signal: exit?.signal ?? null,
        ...(agent.limits?.steps === undefined ? {} : { step_limit: agent.limits.steps }),
        spans: spans.spans,
        spans_refused: spans.refused,
        hooks: counts.hooks,
        refused: counts.refused,
      };
      if (recorder.broken) step.span.end();
      else {
        await step.end("sandbox_completed", {
          data,
          payload: stderr ? await recorder.payload(stderr).catch(() => null) : null,
        }).catch(() => {});
      }
    }
  }
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
