/**
 * Sealed runs of a chosen size for the viewer's tests and benchmark, written through the file store as a
 * recorder writes them: a run whose model calls give long answers (each call's request holds the answers
 * before it, as an agent's conversation does), and a run of many steps.
 * @module
 */
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";

/** What to write. */
export interface RunShape {
  /** The length in characters of each model call's answer, in order. */
  answers?: number[];
  /** Model calls whose request and reply payloads are these bytes, as they are (after the answers). */
  raw?: Uint8Array[];
  /** Tool calls after the model calls, each its own span. */
  tools?: number;
  /** The run's ID. */
  runId?: string;
}

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

/**
 * Writes a sealed run into a file store's runs folder.
 *
 * @returns The run's ID.
 */
export async function writeRun(runs: string, shape: RunShape): Promise<string> {
  const store = new FileStore({ runs });
  const runId = shape.runId ?? "run-20261130T120000Z-0000b16e";
  const writer = await store.openRun(runId);
  const chain = new EventChain(runId);
  let span = 1;
  const add = async (init: Parameters<EventChain["next"]>[0]) => {
    const next = chain.next({ trace_id: TRACE, ...init });
    await writer.append(next.line, next.event);
    chain.accept(next);
  };
  const encoder = new TextEncoder();
  await add({
    type: "run_created",
    component: "RunContext",
    actor: "bench",
    data: { agent: "long-answers", model: "test:answer", backend: "call" },
    span_id: "0000000000000001",
  });
  const said: string[] = [];
  for (const [i, length] of (shape.answers ?? []).entries()) {
    const answer = `Answer ${i + 1}: ` +
      "revenue grew twelve percent ".repeat(Math.ceil(length / 28)).slice(0, length);
    const messages = [{ role: "user", content: "What was the revenue growth?" }];
    for (const previous of said) {
      messages.push({ role: "assistant", content: previous }, { role: "user", content: "And then?" });
    }
    const request = await writer.putPayload(encoder.encode(JSON.stringify({ prompt: messages })));
    const reply = await writer.putPayload(encoder.encode(JSON.stringify({ text: answer })));
    said.push(answer);
    await add({
      type: "model_called",
      component: "CallBackend",
      actor: "bench",
      data: { model: "answer", input_tokens: 10 * (i + 1), output_tokens: length, response_payload: reply },
      payload: request,
      span_id: (++span).toString(16).padStart(16, "0"),
      parent_span_id: "0000000000000001",
    });
  }
  for (const bytes of shape.raw ?? []) {
    const digest = await writer.putPayload(bytes);
    await add({
      type: "model_called",
      component: "CallBackend",
      actor: "bench",
      data: { model: "answer", response_payload: digest },
      payload: digest,
      span_id: (++span).toString(16).padStart(16, "0"),
      parent_span_id: "0000000000000001",
    });
  }
  for (let i = 0; i < (shape.tools ?? 0); i++) {
    await add({
      type: "tool_called",
      component: "AgentBackend",
      actor: "bench",
      data: { tool: "read_file", duration_ms: 1 },
      span_id: (++span).toString(16).padStart(16, "0"),
      parent_span_id: "0000000000000001",
    });
  }
  await add({
    type: "run_completed",
    component: "RunContext",
    actor: "bench",
    data: { status: "completed" },
    span_id: "0000000000000001",
  });
  await writer.seal();
  return runId;
}

/** Starts `prove ui` as the `prove` task does (its own permission flags); gives its URL, its pid and a stop. */
export async function proveUi(
  args: string[],
): Promise<{ url: string; pid: number; stop: () => Promise<number> }> {
  const root = new URL("../../../", import.meta.url).pathname;
  const config = JSON.parse(await Deno.readTextFile(`${root}deno.json`));
  const words = (config.tasks.prove as string).split(" ").slice(1);
  const child = new Deno.Command(Deno.execPath(), {
    args: [...words.slice(0, -1), `${root}${words.at(-1)!}`, ...args],
    cwd: root,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { PROVRUN_TELEMETRY_POLICY: "" },
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  while (!/open (http:\S+)/.test(seen)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`prove ui ended: ${seen} ${await new Response(child.stderr).text()}`);
    seen += value;
  }
  return {
    url: /open (http:\S+)/.exec(seen)![1]!,
    pid: child.pid,
    stop: async () => {
      child.kill("SIGTERM");
      reader.cancel().catch(() => {});
      await child.stderr.cancel().catch(() => {});
      return (await child.status).code;
    },
  };
}
