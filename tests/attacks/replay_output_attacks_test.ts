/**
 * Attacks on a replay or a resume by what the recorded run's folder holds now: an output the run recorded, replaced by a
 * sparse file of 1.5 GiB after the source verified (a process the run left behind, or anyone who can write the
 * folder, can). The replay copies each recorded
 * output where tools do not run again, and read the file whole before it hashed it: gigabytes of provr's memory
 * for a file that could never match. It now reads no more than the size the run recorded: the replay is refused,
 * in one line, before a byte is read (the replay's run fails, naming the output). And a cut run's program that left
 * a sparse file of 1.5 GiB in its output/: its resume read it whole into memory to copy it; a file past the run's
 * limit of one output is now not copied, and each file is streamed.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { recorded } from "../provrun/replay/_setup.ts";
import { cutRun } from "../provrun/replay/_runs.ts";
import { measuredInChild } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("replay output attacks");

Deno.test("a replay whose recorded output became a sparse file of 1.5 GiB is refused without reading it", async () => {
  await using r = await recorded();
  const events = await r.events();
  const output = events.find((e) => e.type === "output_artifact_created")!;
  const path = join(r.source.folder!, "output", output.data.path as string);
  // made a sparse file once the source has verified, and measured, in a process of its own: this one's RSS
  // counts what the files running beside it hold
  const { grew, got: result } = await measuredInChild<string>(
    "./_replay_output_work.ts",
    "replay",
    r.runs,
    r.outcome.runId,
    path,
  );
  console.log(`the replay: ${Math.round(grew / 2 ** 20)} MiB more memory`);
  tally.add("a recorded output swapped for a sparse file of 1.5 GiB", {
    stopped: grew < 512 * 1024 ** 2,
    recorded: /^failed: .*output\/.* is not what it recorded/.test(result),
  });
  // the replay's run fails, naming the output, as it does for any output that is not what the run recorded
  assert.match(result, /^failed: .*output\/.* is not what it recorded/);
  assert.equal(result.split("\n").length, 1);
  assert.ok(grew < 512 * 1024 ** 2, `the replay took ${Math.round(grew / 2 ** 20)} MiB`);
});

Deno.test("a resume of a cut run whose program left a sparse file of 1.5 GiB in output/ does not read it", async () => {
  await using r = await recorded();
  const events = await r.events();
  const keep = events.findIndex((e) => e.type === "tool_called" && e.data.tool === "rate") + 1;
  const cut = await cutRun(r.runs, r.outcome.runId, keep);
  {
    using f = await Deno.open(join(r.runs, cut, "output", "big.bin"), { write: true, create: true });
    await f.truncate(1.5 * 1024 ** 3);
  }
  // measured in a process of its own: this one's RSS counts what the files running beside it hold
  const { grew, got: resumed } = await measuredInChild<{
    status: string;
    error: unknown;
    folder: string;
  }>("./_replay_output_work.ts", "resume", r.runs, cut);
  // the file, past the run's limit of one output (256 MB by default), is not copied: the resumed run goes on
  const copied = await Deno.lstat(join(resumed.folder, "output", "big.bin")).then(
    () => true,
    () => false,
  );
  console.log(`the resume: ${Math.round(grew / 2 ** 20)} MiB more memory`);
  tally.add("a sparse file of 1.5 GiB in a cut run's output/, resumed", {
    stopped: grew < 512 * 1024 ** 2 && !copied,
    recorded: resumed.status === "completed",
  });
  assert.ok(grew < 512 * 1024 ** 2, `the resume took ${Math.round(grew / 2 ** 20)} MiB`);
  assert.ok(!copied, "the sparse file was copied");
  assert.equal(resumed.status, "completed", JSON.stringify(resumed.error));
});

Deno.test("replay output attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
