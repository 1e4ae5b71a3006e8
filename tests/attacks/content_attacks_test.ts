/**
 * A run's content carried out through its spans: the prompt, the system instructions, a tool call's arguments
 * and result (a file holding a canary), and the model's answer. Below `bodies` none of it reaches a destination
 * (its name, attributes, events or status), and at `bodies` the store's index of spans keeps none of it; the
 * evidence holds each whole, as a payload.
 * @module
 */
import assert from "node:assert/strict";
import { OtlpReceiver } from "../../lib/provevi/receiver/otlp_receiver.ts";
import { TOOLS_ANSWER } from "../../fixtures/providers/fake_openai_tools_server.ts";
import { genaiRun } from "../provrun/telemetry/_genai_run.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("content attacks");

const CANARY = "canary-7f3a9c2e41d8b6-do-not-export";
const CSV = `quarter,revenue,note\nQ2,43.0,${CANARY}\nQ3,48.2,ok\n`;
const CONTENT: Record<string, string> = {
  "the user's prompt": "What was the revenue growth in Q3",
  "the system instructions": "Answer from the files under /input",
  "a tool call's arguments": "/input/q3.csv",
  "a tool's result": CANARY,
  "the model's answer": TOOLS_ANSWER,
};

Deno.test("below bodies, no content of a run reaches a destination; the evidence holds it", async () => {
  for (const level of ["names", "usage"] as const) {
    await using receiver = await OtlpReceiver.start();
    const run = await genaiRun({ url: receiver.tracesUrl, level, stream: true, csv: CSV });
    assert.equal(run.outcome.status, "completed");
    assert.ok(receiver.spans.length > 5);
    const sent = JSON.stringify(receiver.spans);
    const held = run.events.some((e) =>
      e.type === "tool_called" && typeof e.data.result_payload === "string"
    );
    for (const [what, text] of Object.entries(CONTENT)) {
      tally.add(`${what} at ${level}`, { stopped: !sent.includes(text), recorded: held });
    }
  }
  assert.deepEqual(tally.missed, []);
});

Deno.test("at bodies the store's index of spans keeps no content; the destination gets it", async () => {
  await using receiver = await OtlpReceiver.start();
  const run = await genaiRun({ url: receiver.tracesUrl, level: "bodies", stream: false, csv: CSV });
  assert.ok(run.index.length > 0, "the store kept the spans");
  assert.ok(JSON.stringify(receiver.spans).includes(CANARY), "the destination at bodies has the content");
  for (const [what, text] of Object.entries(CONTENT)) {
    tally.add(`${what} in the store's index`, {
      stopped: !run.index.includes(text),
      recorded: run.events.some((e) => e.type === "model_called" && typeof e.payload === "string"),
    });
  }
  assert.deepEqual(tally.missed, []);
  console.log(tally.line());
});
