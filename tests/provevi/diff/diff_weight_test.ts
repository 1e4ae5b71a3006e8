/**
 * `prove diff` parses both runs' lines and keeps their events: a run whose events.jsonl holds lines of many small
 * values (`{"a":[{},{},…]}`, each under a line's 16 MiB) took the heap at some 30 times its text, unweighed (a
 * file at the cap: some 15 GiB). Its lines are weighed as the verifier weighs them, scaled here by `weight`.
 */
import assert from "node:assert/strict";
import { EvidenceReadError } from "../../../lib/provevi/evidence/errors.ts";
import { jsonLineWeight } from "../../../lib/provevi/evidence/json_depth.ts";
import { linesOf, stepsFrom } from "../../../lib/provevi/diff/run_steps.ts";

const RUN = "run-20261129T120000Z-0badc0de";
const FIXTURE = new URL(`../../../fixtures/runs/${RUN}/evidence/events.jsonl`, import.meta.url).pathname;
const DENSE = `{"a":[${"{},".repeat(20_000)}{}]}`;
const NOTHING = { from: 0, lines: 0, steps: 0, tokens: { input: 0, output: 0 } };

Deno.test("a run's steps are read within the weight of its lines: past it, one line naming the line", async () => {
  const text = await Deno.readTextFile(FIXTURE);
  const { lines, cutLine } = linesOf(text);
  const legit = lines.reduce((n, l) => n + jsonLineWeight(l), 0);
  const weight = legit + jsonLineWeight(DENSE);
  // the run itself is read whole at that weight
  assert.ok(
    stepsFrom(lines, { runId: RUN, cutLine, shared: NOTHING, weight }).events.length === lines.length,
  );
  const tampered = [...lines.slice(0, 2), DENSE, DENSE, ...lines.slice(2)];
  assert.throws(
    () => stepsFrom(tampered, { runId: RUN, cutLine, shared: NOTHING, weight }),
    (error: unknown) =>
      error instanceof EvidenceReadError &&
      /^run "run-\S+": events\.jsonl would take more than \d+ bytes of memory read, by line 4; run prove verify run-\S+ to see what is wrong$/
        .test(error.message),
  );
});
