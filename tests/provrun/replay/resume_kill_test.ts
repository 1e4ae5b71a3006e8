/**
 * kill -9 of provr at each of some forty points of a run (before and in the middle of an event's line, in the
 * middle of a payload, inside a model call, before and after a tool runs, at three moments of the seal), on a
 * run that streams and on one that does not, then `provr resume`'s library: each resumed run verifies with its
 * cut run as one history (no event lost), no call of the tool that counts its own side effects is repeated, a
 * call that was requested and may have run stops the resume unless its tool is idempotent, and the outputs are
 * those of a run that was never cut. The points run a few at a time (two cores).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { sha256Hex } from "../../../lib/provevi/evidence/hash.ts";
import { ResumeStopped, RunNotReplayable } from "../../../lib/provrun/replay/replay_errors.ts";
import { resumeRun } from "../../../lib/provrun/replay/resume_run.ts";
import { RunFile } from "../../../lib/provrun/run/run_file.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { countingTools, startCounter } from "./_counter.ts";

const CHILD = new URL("./_kill_child.ts", import.meta.url).pathname;

/** One tool call per model call, so that the nth call of each kind is the same on every run. */
function runText(options: { host: string; stream: boolean }): string {
  const turns = [
    `{ tool_calls: [{ name: write_file, args: { path: /output/a.txt, content: alpha } }] }`,
    `{ tool_calls: [{ name: count, args: { n: 1 } }], usage: { input: 11, output: 2 } }`,
    `{ tool_calls: [{ name: read_file, args: { path: /output/a.txt } }] }`,
    `{ tool_calls: [{ name: stamp, args: { n: 2 } }] }`,
    `{ tool_calls: [{ name: count, args: { n: 3 } }] }`,
    `{ tool_calls: [{ name: read_file, args: { path: /input/missing.csv } }] }`,
    `{ tool_calls: [{ name: note, args: { text: checked } }] }`,
    `{ tool_calls: [{ name: write_file, args: { path: /output/b.txt, content: beta } }] }`,
    `{ text: "All done: alpha, beta.", usage: { input: 40, output: 6 } }`,
  ];
  return `run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: counter
  backend: agent
  model: "test:"
  stream: ${options.stream}
  tools_folder: tools
  net: ["${options.host}"]
  script:
    turns:
${turns.map((t) => `      - ${t}`).join("\n")}
prompt: Count, stamp, write.
outputs: [answer.txt]
`;
}

/** A folder with a run file and its tools, counting under a token of its own. */
async function pointFolder(base: string, name: string, options: { host: string; stream: boolean }) {
  const dir = join(base, name);
  await Deno.mkdir(dir, { recursive: true });
  await countingTools(dir, { host: options.host, token: name });
  const file = join(dir, "run.yaml");
  await Deno.writeTextFile(file, runText(options));
  return { dir, file, runs: join(dir, "runs") };
}

/** The outputs of a run folder, by path, as hashes. */
async function outputs(folder: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for await (const e of Deno.readDir(join(folder, "output"))) {
    if (e.isFile) out[e.name] = sha256Hex(await Deno.readFile(join(folder, "output", e.name)));
  }
  return out;
}

/** The points to kill at, from the shape of a run that was not cut. */
function pointsOf(shape: { events: number; payloads: number }): string[] {
  const spread = (
    n: number,
    count: number,
  ) => [...new Set(Array.from({ length: count }, (_, i) => 1 + Math.round((i * (n - 1)) / (count - 1))))];
  return [
    ...spread(shape.events, 12).map((n) => `event:${n}`),
    ...spread(shape.events - 1, 4).map((n) => `torn:${n + 1}`),
    ...spread(shape.payloads, 4).map((n) => `payload:${n}`),
    "model:1",
    "model:4",
    "model:9",
    "tool:2",
    "tool:4",
    "tool:5",
    "tool-start:5",
    "tool:7",
    "seal:tmp",
    "seal:rename",
    "seal:done",
  ];
}

type Verdict = "resumed" | "stopped" | "sealed" | "empty";

async function killAndResume(
  point: string,
  options: { base: string; host: string; stream: boolean; expected: Record<string, string> },
  counter: ReturnType<typeof startCounter>,
): Promise<Verdict> {
  const name = `${options.stream ? "s" : "g"}-${point.replace(":", "-")}`;
  const where = await pointFolder(options.base, name, options);
  const child = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-prompt", CHILD, where.runs, where.file, point],
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(
    child.signal,
    "SIGKILL",
    `${name}: the child was not killed: ${new TextDecoder().decode(child.stderr)}`,
  );
  // the store keeps its log in .log/ under the runs root
  const ids = (await Array.fromAsync(Deno.readDir(where.runs)).catch(() => [])).filter((e) =>
    !e.name.startsWith(".")
  );
  if (ids.length === 0) return "empty"; // killed before the run folder: nothing was recorded
  const store = new FileStore({ runs: where.runs });
  const cut = await store.readRun(ids[0]!.name);
  try {
    const resumed = await resumeRun(cut, { store });
    assert.equal(resumed.run.status, "completed", `${name}: ${JSON.stringify(resumed.run.error)}`);
    assert.ok(resumed.check?.ok, `${name}: ${JSON.stringify(resumed.check?.problems)}`);
    assert.deepEqual(await outputs(resumed.run.folder), options.expected, name);
    const told = counter.of(name);
    assert.ok(
      told["count-call-2-1"] === 1 && told["count-call-5-1"] === 1,
      `${name}: ${JSON.stringify(told)}`,
    );
    return "resumed";
  } catch (error) {
    if (error instanceof ResumeStopped) return "stopped";
    if (error instanceof RunNotReplayable && /is sealed/.test(error.message)) return "sealed";
    if (error instanceof RunNotReplayable && /has no events|has no run_created/.test(error.message)) {
      return "empty";
    }
    throw new Error(`${name}: ${(error as Error).message}`, { cause: error });
  } finally {
    await store.close();
    // The side effect that must not be repeated never is, however the run was cut and resumed.
    const repeated = Object.entries(counter.of(name)).filter(([call, n]) =>
      call.startsWith("count-") && n > 1
    );
    assert.deepEqual(repeated, [], name);
  }
}

Deno.test("kill -9 of provr at 40 points of a run, then resume: the pair verifies, nothing is lost, no side effect is repeated", async () => {
  const base = await Deno.makeTempDir({ prefix: "resume-kill-" });
  await using counter = startCounter();
  try {
    const tally: Record<Verdict, number> = { resumed: 0, stopped: 0, sealed: 0, empty: 0 };
    let points = 0;
    for (const stream of [false, true]) {
      const ref = await pointFolder(base, `ref-${stream}`, { host: counter.host, stream });
      const outcome = await runFile(await RunFile.load(ref.file), { runs: ref.runs });
      assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
      const expected = await outputs(outcome.folder);
      const events =
        (await Deno.readTextFile(join(outcome.folder, "evidence", "events.jsonl"))).split("\n").length - 1;
      const payloads =
        JSON.parse(await Deno.readTextFile(join(outcome.folder, "evidence", "manifest.json"))).payloads
          .length;
      const all = pointsOf({ events, payloads }).filter((_, i) => !stream || i % 3 === 0);
      for (let i = 0; i < all.length; i += 3) {
        const batch = all.slice(i, i + 3);
        const verdicts = await Promise.all(
          batch.map((p) => killAndResume(p, { base, host: counter.host, stream, expected }, counter)),
        );
        for (const v of verdicts) tally[v] += 1;
        points += batch.length;
      }
    }
    console.log(
      `kill -9 at ${points} points: ${tally.resumed} resumed and verified as one history, ${tally.stopped} stopped ` +
        `at a call that may have run, ${tally.sealed} sealed already, ${tally.empty} killed before the first event; ` +
        `0 events lost, 0 calls of count repeated`,
    );
    assert.ok(points >= 30, `${points} points`);
    assert.ok(tally.resumed >= 20 && tally.stopped >= 2, JSON.stringify(tally));
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});
