import assert from "node:assert/strict";
import { join } from "node:path";
import type { FeedItem } from "../../../lib/provevi/live/feed.ts";
import { replay } from "../../../lib/provevi/live/replay.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { LIVE_FILE } from "../../../lib/provrun/telemetry/live_feed.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";

const ANSWER = "Revenue grew 12% in Q3, from 43.0 to 48.2 million USD.";

function file(options: { stream: boolean; telemetry?: string; turn?: string }): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: q
  backend: call
  stream: ${options.stream}
  model: "test:"
  script:
    model: answer-1
    turns:
      - ${options.turn ?? `text: "${ANSWER}"`}
        usage: { input: 14, output: 9 }
${options.telemetry ?? ""}
prompt: What was the revenue growth?
`);
}

const policy = (level: string) =>
  TelemetryPolicy.parse(`version: 1\ndestinations:\n  browser:\n    kind: live\n    receives: ${level}\n`);

/** The items with consecutive text joined and numbers dropped: what a viewer ends up showing. */
function joined(items: FeedItem[]): unknown[] {
  const out: unknown[] = [];
  for (const item of items) {
    const { n: _n, ...rest } = item;
    const last = out.at(-1) as { type: string; text: string } | undefined;
    if (item.type === "text" && last?.type === "text") last.text += item.text;
    else out.push(structuredClone(rest));
  }
  return out;
}

async function liveRun(
  run: RunFile,
  level: string | null,
): Promise<{ store: FileStore; runs: string; runId: string; folder: string; items: FeedItem[] }> {
  const runs = await Deno.makeTempDir();
  const store = new FileStore({ runs });
  const items: FeedItem[] = [];
  const outcome = await runFile(run, {
    store,
    environ: {},
    policy: level === null ? TelemetryPolicy.denyAll() : policy(level),
    onFeed: (item) => items.push(item),
  });
  return { store, runs, runId: outcome.runId, folder: outcome.folder, items };
}

for (const stream of [true, false]) {
  Deno.test(`a live feed and a replay of the same run give the same items, apart from how the text is cut (${stream ? "streamed" : "not streamed"})`, async () => {
    const { store, runs, runId, folder, items } = await liveRun(file({ stream }), "bodies");
    try {
      const texts = items.filter((i) => i.type === "text");
      assert.ok(texts.length >= 1);
      if (stream) assert.ok(texts.length > 1, "a streamed answer comes in pieces");
      assert.equal(texts.map((t) => t.text).join(""), ANSWER);
      assert.deepEqual(items.map((i) => i.n), items.map((_, i) => i + 1));
      const replayed = await replay(store, runId, "bodies");
      assert.deepEqual(joined(items), joined(replayed));
      assert.deepEqual(items.at(-1), { type: "done", n: items.length, run_id: runId, status: "completed" });
      const written = (await Deno.readTextFile(join(folder, LIVE_FILE))).trim().split("\n").map((l) =>
        JSON.parse(l)
      );
      assert.deepEqual(written, items);
    } finally {
      await Deno.remove(runs, { recursive: true });
    }
  });
}

Deno.test("a live feed below bodies has no text, and equals the replay at that level", async () => {
  const { store, runs, runId, items } = await liveRun(file({ stream: true }), "names");
  try {
    assert.equal(items.some((i) => i.type === "text"), false);
    const call = items.find((i) => i.type === "event" && i.event === "model_called");
    assert.ok(
      call && call.type === "event" && call.data.input_tokens === undefined && call.payload === undefined,
    );
    assert.deepEqual(items, await replay(store, runId, "names"));
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("a run file's telemetry section lowers the live feed's level", async () => {
  const run = file({
    stream: true,
    telemetry: "telemetry:\n  destinations:\n    browser: { receives: usage }",
  });
  const { runs, items } = await liveRun(run, "bodies");
  try {
    assert.equal(items.some((i) => i.type === "text"), false);
    const call = items.find((i) => i.type === "event" && i.event === "model_called");
    assert.ok(call && call.type === "event" && call.data.input_tokens === 14);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("with no live destination a run shows nothing live and writes no live file", async () => {
  const { runs, folder, items } = await liveRun(file({ stream: true }), null);
  try {
    assert.deepEqual(items, []);
    await assert.rejects(Deno.stat(join(folder, LIVE_FILE)), Deno.errors.NotFound);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("a stream cut part way: the live pieces hold the text so far, which the replay gives after step_failed", async () => {
  const run = file({ stream: true, turn: `text: "a stream that breaks here"\n        cut_after: 2` });
  const { store, runs, runId, items } = await liveRun(run, "bodies");
  try {
    const live = items.filter((i) => i.type === "text").map((i) => i.text).join("");
    assert.ok(live.length > 0);
    const replayed = await replay(store, runId, "bodies");
    const failed = replayed.findIndex((i) => i.type === "event" && i.event === "step_failed");
    const after = replayed[failed + 1];
    assert.ok(after?.type === "text");
    assert.equal(after.text, live);
    assert.deepEqual(
      items.at(-1),
      { ...replayed.at(-1)!, n: items.length },
    );
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("a cancelled run ends its live feed and its replay as cancelled", async () => {
  const run = file({ stream: true, turn: `text: "slow"\n        delay_ms: 5000` });
  const controller = new AbortController();
  const runs = await Deno.makeTempDir();
  const store = new FileStore({ runs });
  const items: FeedItem[] = [];
  try {
    const outcome = await runFile(run, {
      store,
      environ: {},
      policy: policy("names"),
      signal: controller.signal,
      onFeed: (item) => {
        items.push(item);
        if (item.type === "event" && item.event === "prompt_rendered") controller.abort();
      },
    });
    const last = items.at(-1);
    assert.equal(last?.type === "done" && last.status, "cancelled");
    const replayed = await replay(store, outcome.runId, "names");
    assert.deepEqual(replayed.at(-1), {
      type: "done",
      n: replayed.length,
      run_id: outcome.runId,
      status: "cancelled",
    });
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});
