/**
 * The tools a provider ran inside a model's reply: each written as `tool_called` just after its `model_called`,
 * with confidence `parsed`, no `started_at`, and its span inside the model call's span.
 * @module
 */
import type { LanguageModelV4Content } from "@ai-sdk/provider";
import type { Json } from "../../provevi/mod.ts";
import { toolContent } from "../../provevi/telemetry/mod.ts";
import { setSpanContent } from "../run/_span_content.ts";
import type { EvidenceRecorder, OpenStep } from "../run/recorder.ts";
import { tryJson } from "./call_request.ts";
import type { CaptureOptions } from "./capture_options.ts";

/**
 * Writes `tool_called` for each tool the provider ran in one reply: the arguments from its tool call, the
 * result from its tool result. provrun did not see it run, so it has no `started_at`, and confidence `parsed`.
 */
export async function recordProviderTools(
  recorder: EvidenceRecorder,
  step: OpenStep,
  options: CaptureOptions,
  content: LanguageModelV4Content[],
): Promise<void> {
  const calls = new Map<string, { name: string; input: string }>();
  for (const c of content) {
    if (c.type === "tool-call" && c.providerExecuted) {
      calls.set(c.toolCallId, { name: c.toolName, input: c.input });
    }
  }
  for (const r of content) {
    if (r.type !== "tool-result" || r.preliminary) continue;
    const call = calls.get(r.toolCallId);
    const args = call ? await recorder.payload(JSON.stringify(tryJson(call.input))) : null;
    const result = await recorder.payload(JSON.stringify(r.result));
    const child = step.within(() =>
      recorder.startStep({
        component: options.component,
        spanName: `execute_tool ${r.toolName}`,
        attributes: {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": r.toolName,
          "gen_ai.tool.call.id": r.toolCallId,
          "gen_ai.tool.type": "extension",
          ...(args ? { "provrun.tool.call.arguments_ref": args } : {}),
          ...(result ? { "provrun.tool.call.result_ref": result } : {}),
        },
      })
    );
    setSpanContent(child.span, () => toolContent(call ? tryJson(call.input) : null, r.result as Json));
    const ids = child.span.spanContext();
    try {
      await recorder.record({
        type: "tool_called",
        component: options.component,
        trace_id: ids.traceId,
        span_id: ids.spanId,
        parent_span_id: step.span.spanContext().spanId,
        confidence: "parsed",
        payload: args,
        data: {
          tool: r.toolName,
          call_id: r.toolCallId,
          error: r.isError ? "ProviderToolError" : null,
          result_payload: result,
          executed_by: "provider",
          sandboxed: false,
        },
      });
    } finally {
      child.span.end();
    }
  }
}
