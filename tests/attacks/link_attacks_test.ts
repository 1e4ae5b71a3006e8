/**
 * Links planted in a run's `input/` or `output/` while it runs (a symbolic link or a hard link to a file
 * outside, a symbolic link out of `output/`): the filesystem tools never follow one or write through one, and
 * a link still there at the end of the run is recorded as a problem (the run fails, naming it).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { runFile } from "../../lib/provrun/runner/run.ts";
import { Sandbox } from "../../lib/provrun/sandbox/sandbox.ts";
import { agentFile, eventsOf } from "../provrun/_agent.ts";
import { gitCatalog } from "../provrun/_catalog.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("link attacks");

async function runFolder(): Promise<{ dir: string; run: string; outside: string; secret: string }> {
  const dir = await Deno.makeTempDir({ prefix: "attack-links-" });
  const run = join(dir, "run");
  for (const sub of ["input", "output", "scratch"]) await Deno.mkdir(join(run, sub), { recursive: true });
  const outside = join(dir, "outside");
  await Deno.mkdir(outside);
  const secret = join(outside, "secret.txt");
  await Deno.writeTextFile(secret, "the secret\n");
  return { dir, run, outside, secret };
}

Deno.test("the filesystem tools refuse every planted link, and write nothing outside output/", async () => {
  const { dir, run, outside, secret } = await runFolder();
  await Deno.symlink("/etc/passwd", join(run, "input", "passwd"));
  await Deno.symlink(secret, join(run, "input", "secret"));
  await Deno.link(secret, join(run, "input", "hard.txt"));
  await Deno.symlink(outside, join(run, "output", "out"));
  await Deno.symlink(secret, join(run, "output", "over.txt"));
  await Deno.link(secret, join(run, "output", "hard.txt"));
  await Deno.mkdir(join(run, "input", "sub"));
  await Deno.symlink(outside, join(run, "input", "sub", "up"));
  await using sandbox = await Sandbox.open(run);
  const attacks: [string, string, unknown][] = [
    ["read a symlink to /etc/passwd", "read_file", { path: "/input/passwd" }],
    ["read a symlink to a file outside", "read_file", { path: "/input/secret" }],
    ["read a hard link to a file outside", "read_file", { path: "/input/hard.txt" }],
    ["read through a symlinked folder", "read_file", { path: "/input/sub/up/secret.txt" }],
    ["read a hard link in output/", "read_file", { path: "/output/hard.txt" }],
    ["grep a symlinked file", "grep_file", { pattern: "secret", path: "/input/secret" }],
    ["grep through a symlinked folder", "grep_file", { pattern: "secret", path: "/input/sub/up" }],
    ["list through a symlinked folder", "list_files", { path: "/input/sub/up" }],
    ["write through a symlinked folder", "write_file", { path: "/output/out/new.txt", content: "x" }],
    ["write over a symlink to a file outside", "write_file", { path: "/output/over.txt", content: "x" }],
    ["write over a hard link to a file outside", "write_file", { path: "/output/hard.txt", content: "x" }],
  ];
  const missed: string[] = [];
  for (const [name, tool, args] of attacks) {
    let error: unknown = null;
    try {
      await sandbox.call(tool, args);
    } catch (e) {
      error = e;
    }
    const stopped = error instanceof Error && error.name === "PathRefused";
    if (!stopped) missed.push(`${name}: ${error}`);
    tally.add(name, { stopped, recorded: stopped });
  }
  // A grep of the whole input/ skips the links; a listing names them as links.
  assert.deepEqual(await sandbox.call("grep_file", { pattern: "secret|root" }), []);
  const listed = await sandbox.call("list_files", {}) as { path: string; kind: string }[];
  assert.deepEqual(listed.filter((e) => e.kind === "link").map((e) => e.path).sort(), [
    "/input/passwd",
    "/input/secret",
    "/input/sub/up",
  ]);
  assert.deepEqual(missed, []);
  assert.equal(await Deno.readTextFile(secret), "the secret\n");
  assert.deepEqual((await Array.fromAsync(Deno.readDir(outside))).map((e) => e.name), ["secret.txt"]);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a link planted in output/ during a run is recorded as a problem at its end, and the run is sealed", async () => {
  await using t = await gitCatalog({ "finance/revenue.csv": "quarter,revenue\nQ3,48.2\n" });
  const turns = `      - tool_calls: [{ id: s1, name: spin }]
      - tool_calls: [{ id: w1, name: write_file, args: { path: /output/answer.txt, content: "48.2" } }]
      - text: "done"`;
  const file = agentFile(turns, {
    extra: `  tools_folder: fixtures/agent/tools\n  limits: { tool_seconds: 2 }`,
    inputs: `inputs:\n  - { uri: "data://acme/demo/dev/finance/revenue.csv", as: revenue.csv }`,
  });
  const running = runFile(file, { catalog: t.catalog, runs: t.runs });
  // Plant the link while the first tool spins.
  let planted = false;
  const until = Date.now() + 60_000; // generous: on a busy machine the run's folder may come late
  while (!planted && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 25));
    try {
      for await (const e of Deno.readDir(t.runs)) {
        if (e.name.startsWith(".")) continue; // the store's log
        await Deno.symlink("/etc/passwd", join(t.runs, e.name, "output", "leak"));
        planted = true;
      }
    } catch {
      // The run folder is not made yet.
    }
  }
  const outcome = await running;
  assert.ok(planted);
  const { events, record } = await eventsOf(t.runs, outcome.runId);
  const failed = events.at(-1)!;
  const recorded = failed.type === "run_failed" && failed.data.error === "LinkFound" &&
    /output\/leak is a symbolic link/.test(String(failed.data.message));
  tally.add("a symlink left in output/", { stopped: outcome.status === "failed", recorded });
  assert.ok(recorded, JSON.stringify(failed.data));
  assert.ok(events.some((e) => e.type === "output_artifact_created" && e.data.path === "answer.txt"));
  // The record is sealed and its chain holds; the check of the outputs names the link too.
  assert.equal(outcome.manifest?.status, "failed");
  assert.deepEqual((await verifyRun(record)).problems.map((p) => [p.code, p.file]), [[
    "output.not_plain",
    "output/leak",
  ]]);
});

Deno.test("the link attack counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});
