import { deepEqual, equal, rejects } from "node:assert/strict";
import { join } from "node:path";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import type { Json } from "../../../lib/provevi/evidence/event.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import type { RunWriter } from "../../../lib/provevi/store/store.ts";
import { answerOf, type FeedItem } from "../../../lib/provevi/live/feed.ts";
import { replay, ReplayRefused } from "../../../lib/provevi/live/replay.ts";

const RUN = "run-20261129T120000Z-0badc0de";

/** Writes a run: a whole answer, a stream cut part way, and the ending given. */
async function writeRun(
  writer: RunWriter,
  end: { type: string; data: { [key: string]: Json } } | null,
): Promise<void> {
  const chain = new EventChain(writer.runId);
  const add = async (type: string, data: { [key: string]: Json }) => {
    const next = chain.next({ type, component: "CallBackend", actor: "ada", data });
    await writer.append(next.line, next.event);
    chain.accept(next);
  };
  const put = (value: Json) => writer.putPayload(new TextEncoder().encode(JSON.stringify(value)));
  await add("run_created", { agent: "q", model: "test:answer" });
  await add("model_called", {
    model: "answer-1",
    input_tokens: 12,
    note: "free text",
    response_payload: await put({
      content: [{ type: "text", text: "Revenue grew " }, { type: "text", text: "12%." }],
    }),
  });
  await add("model_called", {
    model: "answer-1",
    response_payload: await put({ content: [{ type: "tool-call" }] }),
  });
  await add("step_failed", {
    step: "model_called",
    error: "APICallError",
    partial: true,
    response_payload: await put({ text: "a stream that", parts: [], partial: true }),
  });
  if (end) {
    await add(end.type, end.data);
    await writer.seal();
  }
}

async function withRun(
  end: { type: string; data: { [key: string]: Json } } | null,
  fn: (store: FileStore, folder: string) => Promise<void>,
): Promise<void> {
  const runs = await Deno.makeTempDir();
  try {
    const store = new FileStore({ runs });
    const writer = await store.openRun(RUN);
    await writeRun(writer, end);
    await fn(store, writer.folder);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
}

const shape = (items: FeedItem[]) =>
  items.map((i) =>
    i.type === "event"
      ? `${i.n} ${i.event}`
      : i.type === "text"
      ? `${i.n} text ${i.text}`
      : `${i.n} done ${i.status}`
  );

Deno.test("answerOf() reads a streamed reply's text and a whole reply's text parts, and null without an answer", () => {
  equal(answerOf({ text: "Revenue grew 12%.", parts: [] }), "Revenue grew 12%.");
  equal(
    answerOf({ content: [{ type: "text", text: "a" }, { type: "tool-call" }, { type: "text", text: "b" }] }),
    "ab",
  );
  equal(answerOf({ content: [{ type: "tool-call" }] }), null);
  equal(answerOf({ text: "" }), null);
  equal(answerOf("just text"), null);
  equal(answerOf(null), null);
});

Deno.test("answerOf() reads the bodies the model gateway keeps: an Anthropic message, a chat completion, a response", () => {
  equal(
    answerOf({
      type: "message",
      role: "assistant",
      content: [{ type: "thinking", thinking: "t" }, { type: "text", text: "a" }],
    }),
    "a",
  );
  equal(
    answerOf({
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content: "b" } }],
    }),
    "b",
  );
  equal(answerOf({ choices: [{ message: { role: "assistant", content: null, tool_calls: [] } }] }), null);
  equal(
    answerOf({
      object: "response",
      output: [
        { type: "reasoning", summary: [] },
        {
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: "c", annotations: [] }],
        },
      ],
    }),
    "c",
  );
  equal(
    answerOf({ object: "response", output: [{ type: "function_call", name: "x", arguments: "{}" }] }),
    null,
  );
});

Deno.test("replay() at bodies gives each answer as one text item before its call, and a cut stream's text after its step_failed", async () => {
  await withRun({ type: "run_completed", data: { status: "completed" } }, async (store) => {
    const items = await replay(store, RUN, "bodies");
    deepEqual(shape(items), [
      "1 run_created",
      "2 text Revenue grew 12%.",
      "3 model_called",
      "4 model_called",
      "5 step_failed",
      "6 text a stream that",
      "7 run_completed",
      "8 done completed",
    ]);
    const call = items[2] as FeedItem & { type: "event" };
    equal(call.data.note, "free text");
  });
});

Deno.test("replay() below bodies gives no text and cuts each event to the level", async () => {
  await withRun({ type: "run_completed", data: { status: "completed" } }, async (store) => {
    const items = await replay(store, RUN, "names");
    deepEqual(shape(items), [
      "1 run_created",
      "2 model_called",
      "3 model_called",
      "4 step_failed",
      "5 run_completed",
      "6 done completed",
    ]);
    const call = items[1] as FeedItem & { type: "event" };
    equal(call.data.note, undefined);
    equal(call.data.input_tokens, undefined);
    equal(((await replay(store, RUN, "usage"))[1] as FeedItem & { type: "event" }).data.input_tokens, 12);
  });
});

Deno.test("replay() gives nothing at level null, after the check", async () => {
  await withRun({ type: "run_completed", data: { status: "completed" } }, async (store) => {
    deepEqual(await replay(store, RUN, null), []);
  });
  await withRun(null, async (store) => {
    await rejects(replay(store, RUN, null), ReplayRefused);
  });
});

Deno.test("replay() ends a run that provrun cancelled as cancelled, and another failure as failed", async () => {
  await withRun(
    { type: "run_failed", data: { error: "CancelledError", message: "cancelled" } },
    async (store) => {
      deepEqual((await replay(store, RUN, "names")).at(-1), {
        type: "done",
        n: 6,
        run_id: RUN,
        status: "cancelled",
      });
    },
  );
  await withRun({ type: "run_failed", data: { error: "AccessDenied", message: "no" } }, async (store) => {
    deepEqual((await replay(store, RUN, "names")).at(-1), {
      type: "done",
      n: 6,
      run_id: RUN,
      status: "failed",
    });
  });
});

Deno.test("replay() refuses a run that has not ended", async () => {
  await withRun(null, async (store) => {
    await rejects(replay(store, RUN, "names"), (error: Error) => {
      equal(error instanceof ReplayRefused, true);
      equal(error.message.startsWith(`cannot replay run "${RUN}": it has not ended`), true);
      return true;
    });
  });
});

Deno.test("replay() refuses a run whose chain does not verify, before the first item", async () => {
  await withRun({ type: "run_completed", data: { status: "completed" } }, async (store, folder) => {
    const events = join(folder, "evidence", "events.jsonl");
    await Deno.chmod(events, 0o644).catch(() => {});
    const text = await Deno.readTextFile(events);
    await Deno.writeTextFile(events, text.replace('"input_tokens":12', '"input_tokens":13'));
    await rejects(replay(store, RUN, "bodies"), (error: Error) => {
      equal(error instanceof ReplayRefused, true);
      equal((error as ReplayRefused).problems.some((p) => p.code === "chain.broken"), true);
      return true;
    });
  });
});

Deno.test("replay() reads the folder it is given instead of asking the store", async () => {
  await withRun({ type: "run_completed", data: { status: "completed" } }, async (_store, folder) => {
    const elsewhere = new FileStore({ runs: "/nonexistent" });
    equal((await replay(elsewhere, RUN, "names", { folder })).length, 6);
  });
});
