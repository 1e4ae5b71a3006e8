import assert from "node:assert/strict";
import { CHAT_CUT, chatOfCall, chatOfSession } from "../../../lib/provevi/viewer/chat_view.ts";

const roles = (chat: ReturnType<typeof chatOfCall>) => chat.messages.map((m) => m.role);
const types = (chat: ReturnType<typeof chatOfCall>) =>
  chat.messages.map((m) => m.parts.map((p) => p.type).join(","));

Deno.test("chatOfCall() reads the AI SDK's prompt and reply as provrun's capture records them", () => {
  const chat = chatOfCall(
    {
      params: {
        tools: [{ type: "function", name: "read_file" }],
        prompt: [
          { role: "system", content: "You are a careful analyst." },
          { role: "user", content: [{ type: "text", text: "What was the growth in Q3?" }] },
          {
            role: "assistant",
            content: [{
              type: "tool-call",
              toolCallId: "c1",
              toolName: "read_file",
              input: { path: "/input/x.csv" },
            }],
          },
          {
            role: "tool",
            content: [{
              type: "tool-result",
              toolCallId: "c1",
              toolName: "read_file",
              output: { type: "error-text", value: "NotFound" },
            }],
          },
        ],
      },
    },
    { content: [{ type: "reasoning", text: "hmm" }, { type: "text", text: "Revenue grew 12%." }] },
  );
  assert.deepEqual(roles(chat), ["system", "user", "assistant", "tool", "assistant"]);
  assert.deepEqual(types(chat), ["text", "text", "tool_call", "tool_result", "reasoning,text"]);
  const call = chat.messages[2]!.parts[0]!;
  assert.equal(call.name, "read_file");
  assert.match(call.args!, /"path": "\/input\/x.csv"/);
  assert.equal(chat.messages[3]!.parts[0]!.error, true);
  assert.equal(chat.messages[4]!.reply, true);
});

Deno.test("chatOfCall() reads the bodies the model gateway keeps: Anthropic, OpenAI Chat Completions, Responses", () => {
  const anthropic = chatOfCall(
    {
      system: [{ type: "text", text: "Be brief." }],
      messages: [
        { role: "user", content: "Q3?" },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "a" } }],
        },
        {
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: "quarter,revenue",
            is_error: false,
          }],
        },
      ],
    },
    { content: [{ type: "thinking", thinking: "…" }, { type: "text", text: "12%" }] },
  );
  assert.deepEqual(roles(anthropic), ["system", "user", "assistant", "user", "assistant"]);
  assert.deepEqual(types(anthropic), ["text", "text", "tool_call", "tool_result", "reasoning,text"]);
  const chat = chatOfCall(
    {
      messages: [
        { role: "developer", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "Q3?" }] },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", function: { name: "grep", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c1", content: "Q3,48.2" },
      ],
    },
    { choices: [{ message: { role: "assistant", content: "12%" } }] },
  );
  assert.deepEqual(roles(chat), ["system", "user", "assistant", "tool", "assistant"]);
  assert.equal(chat.messages[3]!.parts[0]!.id, "c1");
  const responses = chatOfCall(
    {
      instructions: "Be brief.",
      input: [
        { role: "user", content: [{ type: "input_text", text: "Q3?" }] },
        { type: "function_call", call_id: "f1", name: "shell", arguments: '{"cmd":"ls"}' },
        { type: "function_call_output", call_id: "f1", output: "a.csv" },
      ],
    },
    { output: [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "12%" }] }] },
  );
  assert.deepEqual(roles(responses), ["system", "user", "assistant", "tool", "assistant"]);
  assert.deepEqual(types(responses), ["text", "text", "tool_call", "tool_result", "text"]);
});

Deno.test("chatOfSession() reads a program's session file line by line, and a list of messages", () => {
  const transcript = [
    { type: "summary", summary: "not a message" },
    { type: "user", message: { role: "user", content: "Q3?" } },
    { type: "assistant", message: { role: "assistant", content: [{ type: "text", text: "12%" }] } },
  ].map((l) => JSON.stringify(l)).join("\n") + '\n{"type":"assistant","mess';
  const chat = chatOfSession(transcript);
  assert.deepEqual(roles(chat), ["user", "assistant"]);
  assert.equal(chat.cut, true, "a last line read in part is said to be cut");
  const rollout = [
    { type: "session_meta", payload: { id: "x" } },
    {
      type: "response_item",
      payload: { type: "message", role: "user", content: [{ type: "input_text", text: "Q3?" }] },
    },
    {
      type: "response_item",
      payload: { type: "function_call", call_id: "f", name: "shell", arguments: "{}" },
    },
  ].map((l) => JSON.stringify(l)).join("\n");
  assert.deepEqual(roles(chatOfSession(rollout)), ["user", "assistant"]);
  assert.deepEqual(
    roles(chatOfSession([{ role: "user", content: "hi" }, { role: "assistant", content: "yo" }])),
    [
      "user",
      "assistant",
    ],
  );
});

Deno.test("a conversation is bounded: long texts are cut and only the last messages kept", () => {
  const long = "x".repeat(CHAT_CUT.text + 50);
  const many = Array.from(
    { length: CHAT_CUT.messages + 20 },
    (_, i) => ({ role: "user", content: `m${i} ${long}` }),
  );
  const chat = chatOfCall({ messages: many }, { content: [{ type: "text", text: "done" }] });
  assert.equal(chat.messages.length, CHAT_CUT.messages);
  assert.equal(chat.skipped, 21);
  assert.equal(chat.cut, true);
  assert.ok(chat.messages[0]!.parts[0]!.text!.length <= CHAT_CUT.text + 1);
  assert.equal(chat.messages.at(-1)!.reply, true);
  // A payload of no known shape is no conversation, and nothing throws.
  assert.deepEqual(chatOfCall(42, "text").messages, []);
  assert.deepEqual(chatOfSession({ nothing: true }).messages, []);
});
