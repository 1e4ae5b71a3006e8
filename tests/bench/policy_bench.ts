/**
 * How many spans per second one core cuts to a destination's level and checks for plain names:
 * `attributesFor` plus `plainAttribute` over a span of 40 realistic attributes, counted in the process's own CPU
 * time (so other work on a shared machine weighs little), beside a bare copy of the same attributes in the same
 * rounds. The target is 100,000 spans/s.
 *
 * ```sh
 * deno run --allow-env tests/bench/policy_bench.ts
 * ```
 * @module
 */
import process from "node:process";
import { attributesFor } from "../../lib/provevi/telemetry/attributes.ts";
import { plainAttribute } from "../../lib/provevi/telemetry/plain_name.ts";
import { median } from "./_report.ts";

/** A chat span as the AI SDK and provrun write it: names, usage, and some bodies. */
export function realisticSpan(i: number): Record<string, unknown> {
  return {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "gen_ai.system": "openai",
    "gen_ai.request.model": "openrouter/meta-llama/llama-3-70b",
    "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
    "gen_ai.response.id": `chatcmpl-${i.toString(36)}AbCdEf012345`,
    "gen_ai.response.finish_reasons": ["stop"],
    "gen_ai.agent.name": "revenue-agent",
    "gen_ai.agent.id": "agent_7f3a2b",
    "gen_ai.conversation.id": `conv_${i}`,
    "gen_ai.tool.name": "read_file",
    "gen_ai.tool.call.id": `call_${i}`,
    "gen_ai.tool.type": "function",
    "gen_ai.output.type": "text",
    "error.type": "RateLimitError",
    "server.address": "api.openai.com",
    "server.port": 443,
    "provrun.run_id": "run-20261129T120000Z-0badc0de",
    "gen_ai.usage.input_tokens": 1200 + i % 7,
    "gen_ai.usage.output_tokens": 310,
    "gen_ai.usage.cache_read.input_tokens": 1024,
    "gen_ai.usage.reasoning_tokens": 64,
    "gen_ai.usage.total_tokens": 1510,
    "gen_ai.usage.cost": 0.00123,
    "gen_ai.request.temperature": 0.2,
    "gen_ai.request.max_tokens": 1024,
    "gen_ai.request.top_p": 0.95,
    "gen_ai.request.top_k": 40,
    "gen_ai.request.frequency_penalty": 0,
    "gen_ai.request.seed": 42,
    "gen_ai.input.messages":
      '[{"role":"user","parts":[{"type":"text","content":"Sum the revenue in input/revenue.csv by quarter"}]}]',
    "gen_ai.output.messages":
      '[{"role":"assistant","parts":[{"type":"text","content":"Q1 12.4M, Q2 13.1M"}]}]',
    "gen_ai.system_instructions": "You are a careful analyst. Use only the files you are given.",
    "gen_ai.tool.call.arguments": '{"path":"input/revenue.csv"}',
    "gen_ai.tool.call.result": "quarter,revenue\nQ1,12.4\nQ2,13.1\n",
    "gen_ai.tool.description": "Reads a file of the run's input folder",
    "ai.prompt.messages_ref": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "ai.settings.maxRetries": 2,
    "http.response.status_code": 200,
    "provrun.step": "model_called",
  };
}

/** The reference: the least work any cut does, a copy of the 40 attributes into a new object. */
function copy(span: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key in span) out[key] = span[key];
  return out;
}

/** Spans handled per second of the process's own CPU time: a machine busy with other work weighs little. */
function perCpuSecond(
  each: (span: Record<string, unknown>) => void,
  spans: Record<string, unknown>[],
): number {
  const start = process.cpuUsage();
  for (const span of spans) each(span);
  const used = process.cpuUsage(start);
  return spans.length / ((used.user + used.system) / 1e6);
}

/**
 * Runs the benchmark and prints spans per second of CPU time, beside the reference measured in the same rounds.
 *
 * @param options `spans`: how many spans a round (50,000 by default).
 * @returns Spans per second, the median of five rounds.
 * @example
 * ```ts
 * import { main } from "./policy_bench.ts";
 * const perSecond = main({ spans: 2_000, print: () => {} });
 * ```
 */
export function main(options: { spans?: number; print?: (line: string) => void } = {}): number {
  const n = options.spans ?? 50_000;
  // Each span has its own IDs (a response, a conversation, a call), as real spans do: no verdict of them is
  // remembered from another span; the names (models, tools, providers) repeat, as they do.
  let next = 0;
  const fresh = () => Array.from({ length: n }, () => realisticSpan(next++));
  if (Object.keys(realisticSpan(0)).length !== 40) throw new Error("the span must have 40 attributes");
  let sink = 0;
  const cut = (span: Record<string, unknown>) => {
    const kept = attributesFor(span, "usage");
    for (const key in span) if (plainAttribute(key, span[key])) sink++;
    if (kept["gen_ai.request.model"] === undefined) sink = -1;
  };
  const bare = (span: Record<string, unknown>) => {
    if (copy(span)["gen_ai.request.model"] === undefined) sink = -1;
  };
  perCpuSecond(cut, fresh()); // warm up
  perCpuSecond(bare, fresh());
  const rates: number[] = [];
  const references: number[] = [];
  for (let round = 0; round < 5; round++) {
    rates.push(perCpuSecond(cut, fresh()));
    references.push(perCpuSecond(bare, fresh()));
  }
  const perSecond = median(rates);
  const reference = median(references);
  const print = options.print ?? console.log;
  print(
    `policy check (attributesFor at usage + plainAttribute on 40 attributes, spans per CPU second): ${
      Math.round(perSecond).toLocaleString("en-US")
    } spans/s; reference (a bare copy of the attributes) ${
      Math.round(reference).toLocaleString("en-US")
    } spans/s; ` +
      `ratio ${(perSecond / reference).toFixed(2)} (target >= 100,000 spans/s: ${
        perSecond >= 100_000 ? "met" : "missed"
      }) [${sink > 0 ? "ok" : "wrong"}]`,
  );
  return perSecond;
}

if (import.meta.main) main();
