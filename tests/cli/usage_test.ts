/**
 * A wrong command line (an unknown flag or command, a missing argument or option, a value that is not one of
 * the choices) exits 2, as argparse does, with one line on standard error naming the program; never 1, which
 * says that a run failed or does not verify.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { provr } from "../../cli/provr.ts";
import { provtrace } from "../../cli/provtrace.ts";

const RUNS = new URL("../../fixtures/runs", import.meta.url).pathname;
const ID = "run-20261129T120000Z-0badc0de";
const NO_DB = join(RUNS, "no-such-trace.db"); // a usage error is told before the database is opened

const CASES: [typeof prove, string[]][] = [
  [prove, ["--runs", RUNS, "payload", ID, "zzzz"]],
  [prove, ["--runs", "/nonexistent", "payload", ID, "not-hex"]],
  [prove, ["--runs", RUNS, "payload", ID]],
  [prove, ["--runs", RUNS, "show"]],
  [prove, ["--runs", RUNS, "show", ID, "--bogus"]],
  [prove, ["--runs", RUNS, "bogus"]],
  [prove, ["--runs", RUNS, "verfy", ID]], // commander's "(Did you mean verify?)" is on the same line
  [prove, ["--runs", RUNS, "verify", ID, "--jsno"]],
  [prove, ["--runs", RUNS, "runs", "--status", "done"]],
  [prove, ["--runs", RUNS, "runs", "--since", "yesterdayish"]],
  [prove, ["--runs", RUNS, "runs", "--limit", "-1"]],
  [prove, ["--runs", RUNS, "runs", "--agent", "x", "--version", "zz"]],
  [prove, ["--runs", RUNS, "assess", ID, "q", "1", "--event", "x"]],
  [prove, ["--runs", RUNS, "assess", ID, "q", "1", "--event", "1", "--span", "ab"]],
  [prove, ["--runs", RUNS, "export", ID]],
  [prove, ["--runs", RUNS, "serve", "--port", "x"]],
  [prove, ["--runs", RUNS, "ui", "--port", "99999"]],
  [prove, ["--runs", RUNS, "verify"]],
  [prove, ["--runs", RUNS, "verify", ID, "--nope"]],
  [prove, ["keygen"]],
  [prove, ["policy"]],
  [prove, ["--runs", RUNS, "telemetry"]],
  [prove, ["--runs", RUNS, "mlflow"]],
  [provr, ["run"]],
  [provr, ["run", "run.yaml", "--frobnicate"]],
  [provr, ["bogus"]],
  [provr, ["rn", "run.yaml"]],
  [provr, ["catalog", "pin"]],
  [provtrace, ["export", "--db", NO_DB, "--kind", "bogus"]],
  [provtrace, ["export", "--db", NO_DB, "--kind", "sft", "--per", "bogus"]],
  [provtrace, ["export", "--db", NO_DB, "--kind", "steps", "--status", "done"]],
  [provtrace, ["export", "--db", NO_DB, "--kind", "steps", "--assessment", "quality"]],
  [provtrace, ["export", "--kind", "steps"]],
  [provtrace, ["build", "--db", NO_DB]],
  [provtrace, ["query", "--db", NO_DB]],
  [provtrace, ["bogus"]],
];

Deno.test("every wrong command line of prove, provr and provtrace exits 2 with one line", async () => {
  const wrong: string[] = [];
  for (const [cli, args] of CASES) {
    const io = bufferIo();
    const code = await cli(args, io);
    const line = `${cli.name} ${args.join(" ")}: exit ${code}, ${JSON.stringify(io.stderr)}`;
    const [first, ...more] = io.stderr.join("\n").split("\n");
    if (code !== 2 || more.length || !first!.startsWith(`${cli.name}: `)) wrong.push(line);
    assert.equal(io.stdout.join(""), "", line);
  }
  assert.deepEqual(wrong, []);
});
