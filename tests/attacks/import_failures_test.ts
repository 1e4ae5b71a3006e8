/**
 * Tools modules that fail as they load (issue 23): each is one line of provr's own naming the module and the
 * error, the run fails sealed at `sandbox_started` (recorded), and nothing of Deno's uncaught-error text
 * reaches provr's output. A module that writes to stdout at import loads, its text kept in the record.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { provr } from "../../cli/provr.ts";
import { pathToFileURL } from "node:url";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { Sandbox } from "../../lib/provrun/sandbox/sandbox.ts";
import { ToolSetError } from "../../lib/provrun/run/errors.ts";
import { eventsOf } from "../provrun/_agent.ts";
import { answerRunText } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("import failures");
const FIXTURES = new URL("../../fixtures/attacks/import_failures/", import.meta.url).pathname;

/** Each failing module, and what its one line must say after the module's path. */
const FAILING: Record<string, RegExp> = {
  throws: /cannot be loaded: Error: boom at import;/,
  syntax: /cannot be loaded: .*SyntaxError/,
  missing:
    /cannot be loaded: .*the sandbox refuses the import of \.\/gone\.ts from .*tools\.ts: no such file/,
  exits: /cannot be loaded: NotCapable: the sandbox does not give the end of the sandbox process/,
};

async function runWith(name: string, runs: string) {
  const file = join(runs, `${name}.yaml`);
  await Deno.writeTextFile(file, answerRunText({ toolsFolder: join(FIXTURES, name) }));
  const io = bufferIo();
  const code = await provr(["--runs", runs, "run", file], io);
  const err = io.stderr.filter((l) => !/^provr: run \S+ in /.test(l));
  return { code, err, out: io.stdout };
}

Deno.test("a tools module that fails as it loads is one line of provr's own naming it, and the run fails sealed", async () => {
  const runs = await Deno.makeTempDir();
  const problems: string[] = [];
  try {
    for (const [name, pattern] of Object.entries(FAILING)) {
      const { code, err } = await runWith(name, runs);
      const line = err.join("\n");
      const oneLine = code !== 0 && err.length === 1 && line.startsWith("provr: ") &&
        line.includes(join(FIXTURES, name, "tools.ts")) && pattern.test(line) &&
        !/Uncaught|\n\s+at /.test(line);
      const runId = /run (run-\S+) failed/.exec(line)?.[1] ?? "";
      const { events, record } = await eventsOf(runs, runId);
      const failed = events.at(-1)?.type === "run_failed" &&
        String(events.at(-1)?.data.message ?? "").includes(`${name}/tools.ts`);
      const verified = (await verifyRun(record)).problems.length === 0;
      if (!oneLine || !failed || !verified) problems.push(`${name}: ${code} ${line} failed=${failed}`);
      tally.add(name, { stopped: oneLine, recorded: failed && verified });
    }
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
  assert.deepEqual(problems, []);
});

Deno.test("a tools module whose top-level await never ends meets the load limit, named, whatever the load", async () => {
  const dir = await Deno.makeTempDir();
  const module = pathToFileURL(join(FIXTURES, "hangs", "tools.ts")).href;
  let error: unknown = null;
  try {
    await (await Sandbox.open(dir, { modules: [module], loadSeconds: 3 })).close();
  } catch (e) {
    error = e;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const stopped = error instanceof ToolSetError &&
    error.message.includes(join(FIXTURES, "hangs", "tools.ts")) &&
    /did not finish loading within 3 s/.test(error.message) && !error.message.includes("\n");
  tally.add("hangs", { stopped, recorded: stopped });
  assert.ok(stopped, String(error));
});

Deno.test("a tools module that writes to stdout as it loads loads, and its text is in the record, not provr's output", async () => {
  const runs = await Deno.makeTempDir();
  try {
    const { code, out, err } = await runWith("prints", runs);
    const dirs = [...Deno.readDirSync(runs)].filter((e) => e.isDirectory && !e.name.startsWith(".")).map((
      e,
    ) => e.name);
    const { events } = await eventsOf(runs, dirs[0]!);
    const started = events.find((e) => e.type === "sandbox_started");
    const kept = String(started?.data.load_console ?? "");
    const ok = code === 0 && kept.includes("hello at import") && kept.includes('{"op":"ready"') &&
      ![...out, ...err].some((l) => l.includes("hello at import"));
    tally.add("prints", { stopped: ok, recorded: kept !== "" });
    assert.ok(ok, `${code} ${JSON.stringify(kept)} ${err}`);
  } finally {
    await Deno.remove(runs, { recursive: true });
  }
});

Deno.test("the import failure counts", () => {
  console.log(tally.line());
  assert.equal(tally.missed.length, 0, tally.line());
});
