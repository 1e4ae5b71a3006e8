/**
 * Attacks on the files a command opens in a folder another party can write, where the open itself followed a
 * link: the writer's lock file of a run folder (`.writer.lock`), made with a plain open that creates and cuts it,
 * cut a file of the user's that a link planted there named; the live feed (`live.jsonl`), opened to append,
 * appended to it. Every such open now goes through `open_file.ts`,
 * in one step that neither follows a link nor waits on a FIFO (`fifo_swap_attacks_test.ts` swaps FIFOs in).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { holdWriterLock, releaseWriterLock, WRITER_LOCK } from "../../lib/provevi/evidence/writer_process.ts";
import { LIVE_FILE, LiveFeed } from "../../lib/provrun/telemetry/live_feed.ts";
import { ProveviError } from "../../lib/provevi/evidence/errors.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("links and FIFOs at files opened in a run folder");
const VICTIM = "the user's own file\n";

Deno.test("a run's writer does not cut the file a link planted at its lock file names", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-open-file-" });
  try {
    const folder = join(dir, "run");
    await Deno.mkdir(folder);
    const victim = join(dir, "victim.txt");
    await Deno.writeTextFile(victim, VICTIM);
    await Deno.symlink(victim, join(folder, WRITER_LOCK));
    const lock = holdWriterLock(folder);
    releaseWriterLock(folder, lock);
    const intact = await Deno.readTextFile(victim) === VICTIM;
    // no lock is held through the link: the run is told by its run_created record, as where there are no locks
    tally.add(".writer.lock as a link", { stopped: intact, recorded: lock === null });
    assert.ok(intact, "the victim's file was cut");
    assert.equal(lock, null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a run's live feed does not append to the file a link planted at live.jsonl names", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-open-file-" });
  try {
    const folder = join(dir, "run");
    await Deno.mkdir(folder);
    const victim = join(dir, "victim.txt");
    await Deno.writeTextFile(victim, VICTIM);
    await Deno.symlink(victim, join(folder, LIVE_FILE));
    const opened = await LiveFeed.open("run-x", folder, "bodies").then((feed) => feed, (error) => error);
    if (opened instanceof LiveFeed) {
      opened.text("a piece of the answer");
      await opened.close();
    }
    const intact = await Deno.readTextFile(victim) === VICTIM;
    const refused = opened instanceof ProveviError && /is a link, not a file/.test(opened.message);
    tally.add("live.jsonl as a link", { stopped: intact, recorded: refused });
    assert.ok(intact, "the victim's file was appended to");
    assert.ok(refused, String(opened));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a link at a run folder's file is not read through under a permission set, where node:fs drops O_NOFOLLOW", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-open-file-" });
  try {
    const victim = join(dir, "victim.txt");
    await Deno.writeTextFile(victim, VICTIM);
    await Deno.symlink(victim, join(dir, "manifest.json"));
    const child = join(new URL(".", import.meta.url).pathname, "_no_follow_child.ts");
    const { stdout } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", `--allow-read`, child, join(dir, "manifest.json")],
      stdout: "piped",
      stderr: "null",
    }).output();
    const said = new TextDecoder().decode(stdout).trim();
    const refused = /^refused: .*manifest\.json is a link, not a file$/.test(said);
    tally.add("manifest.json as a link, under --allow-read", { stopped: refused, recorded: refused });
    assert.ok(refused, said);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("open_file attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
