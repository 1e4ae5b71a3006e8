/**
 * Attacks with JSON nested deeper than a reader can walk: a run folder whose `events.jsonl` was rewritten with
 * 100,000 nested arrays in one event's data and its chain and manifest made again to match (anyone can: the chain
 * holds no secret). `JSON.parse`, the chain and the canonical form all took it, so the run verified; then
 * `prove show --json` ran out of stack in its key renaming and crashed with a stack trace, and so would any
 * reader that indents it, clones it to a worker or walks it with a call a level. Now a line nested deeper than
 * 256 is `line.too_deep` (the run does not verify, and readers that read its events skip the line), a spans or
 * assessments line such as it is unreadable as a line that is not JSON, and a writer refuses to make one.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { parseJson, TooDeepJson } from "../../lib/provevi/evidence/json_depth.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { sampleRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("deep JSON attacks");

const deep = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

/** A sealed sample run whose second event's data holds `nested`, with its chain and manifest made to match. */
async function forgedRun(nested: string): Promise<{ dir: string; folder: string }> {
  const { dir, folder } = await sampleRun("attack-deep-");
  const events = join(folder, "evidence", "events.jsonl");
  const lines = (await Deno.readTextFile(events)).trimEnd().split("\n");
  lines[1] = lines[1]!.replace('"data":{', `"data":{"deep":${nested},`);
  let prev = sha256Hex(lines[0]!);
  for (let i = 1; i < lines.length; i++) {
    if (i > 1) lines[i] = lines[i]!.replace(/"prev":"[0-9a-f]{64}"/, `"prev":"${prev}"`);
    prev = sha256Hex(lines[i]!);
  }
  await Deno.writeTextFile(events, lines.join("\n") + "\n");
  const manifestPath = join(folder, "evidence", "manifest.json");
  const manifest = await Deno.readTextFile(manifestPath);
  await Deno.writeTextFile(
    manifestPath,
    manifest.replace(/"last_hash":"[0-9a-f]{64}"/, `"last_hash":"${prev}"`),
  );
  return { dir, folder };
}

Deno.test("a forged run with 100,000 nested arrays in an event does not verify, and prove show --json does not crash", async () => {
  const { dir, folder } = await forgedRun(deep(100_000));
  try {
    const store = new FileStore({ runs: join(dir, "runs") });
    const record = await store.readRun(SAMPLE_RUN_ID);
    const check = await verifyRun(record);
    await store.close();
    const codes = check.problems.map((p) => p.code);
    const io = bufferIo();
    const code = await prove(["--runs", join(dir, "runs"), "show", "--json", folder], io);
    const stopped = !check.ok && codes.includes("line.too_deep") && (code === 0 || io.stderr.length > 0);
    tally.add("100,000 nested arrays in a verifying run", {
      stopped,
      recorded: codes.includes("line.too_deep"),
    });
    assert.ok(stopped, JSON.stringify({ codes, code, err: io.stderr }));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a run nested 200 deep still verifies: the bound is far past any writer's value", async () => {
  const { dir } = await forgedRun(deep(200));
  try {
    const store = new FileStore({ runs: join(dir, "runs") });
    const check = await verifyRun(await store.readRun(SAMPLE_RUN_ID));
    await store.close();
    assert.deepEqual(check.problems.map((p) => p.code), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a writer refuses an event whose data nests too deep, with one line, and its chain does not move", () => {
  const chain = new EventChain("run-20261129T120000Z-0badc0de");
  let refused: Error | null = null;
  try {
    chain.next({
      type: "model_called",
      component: "Model",
      actor: "me",
      data: { deep: JSON.parse(deep(1000)) },
    });
  } catch (error) {
    refused = error as Error;
  }
  const ok = refused !== null && refused.name === "EvidenceError" && !refused.message.includes("\n");
  tally.add("a writer asked to record 1,000 nested arrays", { stopped: ok, recorded: ok });
  assert.ok(ok, String(refused));
  assert.equal(chain.seq, 0);
});

Deno.test("parseJson refuses a text nested past the bound as a SyntaxError, and takes one at it", () => {
  assert.throws(() => parseJson(deep(257)), TooDeepJson);
  assert.throws(() => parseJson(deep(257)), SyntaxError);
  assert.deepEqual(parseJson(deep(2)), [[]]);
  assert.ok(Array.isArray(parseJson(deep(256))));
});

Deno.test("deep JSON attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
