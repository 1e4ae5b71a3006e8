import { deepEqual, equal } from "node:assert/strict";
import {
  chatContent,
  finishReason,
  inputMessages,
  outputMessages,
  systemInstructions,
  toolContent,
  toolDefinitions,
} from "../../../lib/provevi/telemetry/genai_messages.ts";
import type { Json } from "../../../lib/provevi/evidence/event.ts";

// An agent's second model call as the evidence keeps its options: a system message, the user's question with a
// file, the model's tool call, and the tool's result.
const prompt: Json = [
  { role: "system", content: "Answer from the files." },
  {
    role: "user",
    content: [
      { type: "text", text: "What was Q3's growth?" },
      { type: "file", mediaType: "image/png", data: { type: "data", data: { $payload: "ab".repeat(32) } } },
      {
        type: "file",
        mediaType: "application/pdf",
        data: { type: "url", url: "https://example.com/q3.pdf" },
      },
    ],
  },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "Read the CSV." },
      { type: "tool-call", toolCallId: "c1", toolName: "read_file", input: { path: "/input/q3.csv" } },
    ],
  },
  {
    role: "tool",
    content: [{
      type: "tool-result",
      toolCallId: "c1",
      toolName: "read_file",
      output: { type: "text", value: "q,12%" },
    }],
  },
];

Deno.test("inputMessages() gives the chat history in the conventions' shape, files by their payload's hash", () => {
  deepEqual(inputMessages(prompt), [
    {
      role: "user",
      parts: [
        { type: "text", content: "What was Q3's growth?" },
        { type: "file", mime_type: "image/png", modality: "image", file_id: `sha256:${"ab".repeat(32)}` },
        {
          type: "uri",
          mime_type: "application/pdf",
          modality: "application",
          uri: "https://example.com/q3.pdf",
        },
      ],
    },
    {
      role: "assistant",
      parts: [
        { type: "reasoning", content: "Read the CSV." },
        { type: "tool_call", id: "c1", name: "read_file", arguments: { path: "/input/q3.csv" } },
      ],
    },
    { role: "tool", parts: [{ type: "tool_call_response", id: "c1", response: "q,12%" }] },
  ]);
});

Deno.test("systemInstructions() and toolDefinitions() give the system text and the tools offered, or null", () => {
  deepEqual(systemInstructions(prompt), [{ type: "text", content: "Answer from the files." }]);
  equal(systemInstructions((prompt as Json[]).slice(1)), null);
  const schema = { type: "object", properties: { path: { type: "string" } } };
  deepEqual(
    toolDefinitions([
      { type: "function", name: "read_file", description: "Reads a file.", inputSchema: schema },
      { type: "provider", id: "openai.web_search", name: "web_search", args: {} },
    ]),
    [
      { type: "function", name: "read_file", description: "Reads a file.", parameters: schema },
      { type: "provider", name: "web_search" },
    ],
  );
  equal(toolDefinitions(undefined), null);
});

Deno.test("outputMessages() reads a reply's content, and a streamed reply's text and parts, with the finish reason", () => {
  deepEqual(
    outputMessages({
      content: [
        { type: "text", text: "Let me look." },
        { type: "tool-call", toolCallId: "c2", toolName: "list_files", input: '{"path":"/input"}' },
      ],
      finish_reason: { unified: "tool-calls", raw: "tool_use" },
    }),
    [{
      role: "assistant",
      parts: [
        { type: "text", content: "Let me look." },
        { type: "tool_call", id: "c2", name: "list_files", arguments: { path: "/input" } },
      ],
      finish_reason: "tool_call",
    }],
  );
  deepEqual(
    outputMessages({
      text: "Revenue grew 12%.",
      parts: [
        { type: "reasoning-delta", id: "r", delta: "Sum " },
        { type: "reasoning-delta", id: "r", delta: "it." },
        { type: "finish", finishReason: { unified: "stop" } },
      ],
      finish_reason: "stop",
    }),
    [{
      role: "assistant",
      parts: [{ type: "reasoning", content: "Sum it." }, { type: "text", content: "Revenue grew 12%." }],
      finish_reason: "stop",
    }],
  );
});

Deno.test("finishReason() gives the conventions' spellings of the AI SDK's reasons", () => {
  deepEqual(
    ["stop", "length", "tool-calls", "content-filter", "error", "other"].map(finishReason),
    ["stop", "length", "tool_call", "content_filter", "error", "other"],
  );
});

Deno.test("chatContent() and toolContent() give JSON text of each content attribute", () => {
  const attrs = chatContent(
    { prompt, tools: [{ type: "function", name: "read_file", inputSchema: {} }] },
    { content: [{ type: "text", text: "12%" }], finish_reason: { unified: "stop" } },
  );
  deepEqual(Object.keys(attrs).sort(), [
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
  ]);
  deepEqual(JSON.parse(attrs["gen_ai.output.messages"]!)[0].parts, [{ type: "text", content: "12%" }]);
  deepEqual(toolContent('{"path":"a.csv"}', { rows: 3 }), {
    "gen_ai.tool.call.arguments": '{"path":"a.csv"}',
    "gen_ai.tool.call.result": '{"rows":3}',
  });
  deepEqual(Object.keys(toolContent({ path: "x" }, undefined)), ["gen_ai.tool.call.arguments"]);
});
