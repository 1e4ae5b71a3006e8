/**
 * A gateway call's content in the GenAI conventions' shapes (v1.41.1), from each provider API's request and
 * response as the program and the provider sent them.
 */
import assert from "node:assert/strict";
import type { Json } from "../../../lib/provevi/evidence/event.ts";
import { CONTENT_BYTES, CUT_MARK } from "../../../lib/provevi/telemetry/content_cap.ts";
import { gatewayContent } from "../../../lib/provrun/gateway/gateway_content.ts";

const parse = (out: Record<string, string>, key: string) => JSON.parse(out[key]!);

Deno.test("an Anthropic call: system, messages with a tool call and its result, tools, and the answer", () => {
  const request: Json = {
    system: [{ type: "text", text: "You are Claude Code." }],
    messages: [
      { role: "user", content: "What was Q3?" },
      {
        role: "assistant",
        content: [{ type: "thinking", thinking: "read it" }, {
          type: "tool_use",
          id: "toolu_1",
          name: "Read",
          input: { file_path: "/in/q.csv" },
        }],
      },
      {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: [{ type: "text", text: "Q3,48.2" }],
        }],
      },
    ],
    tools: [{ name: "Read", description: "Reads a file.", input_schema: { type: "object" } }, {
      type: "web_search_20250305",
      name: "web_search",
    }],
  };
  const response: Json = { content: [{ type: "text", text: "Revenue grew 12%." }], stop_reason: "end_turn" };
  const out = gatewayContent("anthropic-messages", { request, response, finish: "stop" });
  assert.deepEqual(parse(out, "gen_ai.system_instructions"), [{
    type: "text",
    content: "You are Claude Code.",
  }]);
  assert.deepEqual(parse(out, "gen_ai.input.messages"), [
    { role: "user", parts: [{ type: "text", content: "What was Q3?" }] },
    {
      role: "assistant",
      parts: [{ type: "reasoning", content: "read it" }, {
        type: "tool_call",
        id: "toolu_1",
        name: "Read",
        arguments: { file_path: "/in/q.csv" },
      }],
    },
    { role: "tool", parts: [{ type: "tool_call_response", id: "toolu_1", response: "Q3,48.2" }] },
  ]);
  assert.deepEqual(parse(out, "gen_ai.tool.definitions"), [
    { type: "function", name: "Read", description: "Reads a file.", parameters: { type: "object" } },
    { type: "web_search_20250305", name: "web_search" },
  ]);
  assert.deepEqual(parse(out, "gen_ai.output.messages"), [
    { role: "assistant", parts: [{ type: "text", content: "Revenue grew 12%." }], finish_reason: "stop" },
  ]);
});

Deno.test("an OpenAI Chat call: system and developer messages, tool calls with JSON arguments, a tool message", () => {
  const request: Json = {
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: [{ type: "text", text: "Q3?" }] },
      {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "call_1",
          type: "function",
          function: { name: "read_file", arguments: '{"path":"q.csv"}' },
        }],
      },
      { role: "tool", tool_call_id: "call_1", content: "Q3,48.2" },
    ],
    tools: [{ type: "function", function: { name: "read_file", description: "Reads.", parameters: {} } }],
  };
  const response: Json = {
    choices: [{
      message: {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_2", function: { name: "x", arguments: "not json" } }],
      },
    }],
  };
  const out = gatewayContent("openai-chat", { request, response, finish: "tool-calls" });
  assert.deepEqual(parse(out, "gen_ai.system_instructions"), [{ type: "text", content: "Be brief." }]);
  const input = parse(out, "gen_ai.input.messages");
  assert.deepEqual(input.map((m: { role: string }) => m.role), ["user", "assistant", "tool"]);
  assert.deepEqual(input[1].parts[0].arguments, { path: "q.csv" });
  assert.deepEqual(input[2].parts[0], { type: "tool_call_response", id: "call_1", response: "Q3,48.2" });
  assert.deepEqual(parse(out, "gen_ai.tool.definitions")[0], {
    type: "function",
    name: "read_file",
    description: "Reads.",
    parameters: {},
  });
  assert.deepEqual(parse(out, "gen_ai.output.messages"), [{
    role: "assistant",
    parts: [{ type: "tool_call", id: "call_2", name: "x", arguments: "not json" }],
    finish_reason: "tool_call",
  }]);
});

Deno.test("an OpenAI Responses call: instructions, input items, function calls and their output", () => {
  const request: Json = {
    instructions: "You are Codex.",
    input: [
      { type: "message", role: "developer", content: [{ type: "input_text", text: "sandbox: none" }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: "Q3?" }] },
      { type: "function_call", call_id: "c1", name: "exec_command", arguments: '{"cmd":"cat q.csv"}' },
      { type: "function_call_output", call_id: "c1", output: "Q3,48.2" },
    ],
    tools: [{ type: "function", name: "exec_command", description: "Runs.", parameters: { type: "object" } }],
  };
  const response: Json = {
    output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "12%" }] }],
  };
  const out = gatewayContent("openai-responses", { request, response, finish: "stop" });
  assert.deepEqual(parse(out, "gen_ai.system_instructions"), [
    { type: "text", content: "You are Codex." },
    { type: "text", content: "sandbox: none" },
  ]);
  assert.deepEqual(parse(out, "gen_ai.input.messages"), [
    { role: "user", parts: [{ type: "text", content: "Q3?" }] },
    {
      role: "assistant",
      parts: [{ type: "tool_call", id: "c1", name: "exec_command", arguments: { cmd: "cat q.csv" } }],
    },
    { role: "tool", parts: [{ type: "tool_call_response", id: "c1", response: "Q3,48.2" }] },
  ]);
  assert.deepEqual(parse(out, "gen_ai.output.messages")[0].parts, [{ type: "text", content: "12%" }]);
  assert.deepEqual(
    Object.keys(
      gatewayContent("openai-responses", { request: { input: "hi" }, response: null, finish: null }),
    ),
    [
      "gen_ai.input.messages",
    ],
  );
});

Deno.test("a long conversation is cut within the cap, its earliest messages left out and counted", () => {
  const messages = Array.from(
    { length: 400 },
    (_, i) => ({ role: "user", content: `message ${i} ` + "x".repeat(400) }),
  );
  const out = gatewayContent("anthropic-messages", { request: { messages }, response: null, finish: null });
  const text = out["gen_ai.input.messages"]!;
  assert.ok(new TextEncoder().encode(text).length <= CONTENT_BYTES);
  assert.ok(text.includes(CUT_MARK));
  const kept = JSON.parse(text);
  assert.match(
    kept[0].parts[0].content,
    /earlier messages left out/,
    "the messages left out are counted first",
  );
  assert.ok(kept.length > 1 && kept.length < 400);
  for (const junk of [null, "text", [], { messages: "no" }] as Json[]) {
    assert.deepEqual(
      parse(
        gatewayContent("anthropic-messages", { request: junk, response: junk, finish: null }),
        "gen_ai.input.messages",
      ),
      [],
    );
  }
});
