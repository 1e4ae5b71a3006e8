/**
 * Attacks on the files of a run folder that the toolkit opens to write or lock (the writer's lock, the live feed,
 * the assessments), run as the commands run, under their permission sets: there Deno drops `O_NOFOLLOW` (a link
 * planted at the name was followed) and refuses `/proc/self/fd/`, so the checked descriptor was opened again by
 * its path, and a pipe renamed to it in between held a read-only open for ever, while a dangling link planted at
 * a file to make was refused as "does not exist". Each is now opened once, by the one no-follow open, and checked
 * by what it opened: a link is refused in one line and nothing is made or written where it points.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Tally } from "./_tally.ts";

const tally = new Tally("write swap attacks");
const here = new URL(".", import.meta.url).pathname;
const OPENS = 1500;
/** Far past the second or two the opens take on a loaded machine: only a writer that waits on a pipe reaches it. */
const PATIENCE_MS = 120_000;

const WRITERS: [string, string][] = [
  ["lock-hold", ".writer.lock"],
  ["lock-state", ".writer.lock"],
  ["live-feed", "live.jsonl"],
  ["assessment", "assessments.jsonl"],
];

function child(script: string, args: string[], permissions: string[], stdout: "piped" | "null" = "piped") {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...permissions, "--no-prompt", join(here, script), ...args],
    stdout,
    stderr: "null",
  }).spawn();
}

for (const [writer, name] of WRITERS) {
  for (const permissions of ["-P=prove", "-P=provr"]) {
    Deno.test(`the ${writer} writer under ${permissions} makes nothing through a dangling link planted as ${name}, and says so`, async () => {
      const top = await Deno.makeTempDir({ prefix: "attack-write-dangling-" });
      try {
        const folder = join(top, "run");
        await Deno.mkdir(folder);
        await Deno.symlink(join(top, "made"), join(folder, name));
        const out = new TextDecoder().decode(
          (await child("_write_swap_child.ts", [writer, folder, "1"], [permissions]).output()).stdout,
        ).trim();
        const made = await Deno.lstat(join(top, "made")).then(() => true, () => false);
        // runWriterState reads the lock and tells nothing by a link (it says what run_created records)
        const said = writer === "lock-state" ? out === "wrote" : /is a link|no lock taken/.test(out);
        tally.add(`${writer} through a dangling link at ${name} under ${permissions}`, {
          stopped: !made,
          recorded: said,
        });
        assert.equal(made, false, `a file was made where the link points: ${out}`);
        assert.ok(said, out);
      } finally {
        await Deno.remove(top, { recursive: true });
      }
    });
  }
  const ways: [string, string[], number][] = [["-P=prove", ["-P=prove"], OPENS]];
  // a reader with no leave to write the lock (a user's read-only look): it opened the lock again to read only,
  // and a pipe renamed to it in between held that open for ever (some 1 in 10,000 opens)
  if (writer === "lock-state") {
    ways.push(["leave to read only", ["--allow-read", "--allow-env", "--allow-sys"], 20_000]);
  }
  for (const plant of ["pipe", "link"]) {
    for (const [under, flags, opens] of ways) {
      Deno.test(`the ${writer} writer under ${under}, with a ${plant} and a file swapped at ${name}, never waits nor writes through`, async () => {
        const top = await Deno.makeTempDir({ prefix: "attack-write-swap-" });
        const folder = join(top, "run");
        const victim = join(top, "victim");
        await Deno.mkdir(folder);
        await Deno.writeTextFile(victim, "the user's own\n");
        const swapper = child("_fifo_swap_child.ts", [folder, name], ["-A"], "null");
        try {
          if (plant === "pipe") {
            assert.ok((await new Deno.Command("mkfifo", { args: [join(folder, "fifo")] }).output()).success);
          } else await Deno.symlink(victim, join(folder, "fifo"));
          await Deno.writeTextFile(join(folder, "file"), "");
          const writes = child("_write_swap_child.ts", [writer, folder, String(opens)], flags);
          const timer = setTimeout(() => writes.kill("SIGKILL"), PATIENCE_MS);
          const out = new TextDecoder().decode((await writes.output()).stdout);
          clearTimeout(timer);
          const done = /^done \d+ \d+/.test(out);
          const kept = await Deno.readTextFile(victim) === "the user's own\n";
          tally.add(`${writer} under ${under} with a ${plant} swapped at ${name}`, {
            stopped: done && kept,
            recorded: done,
          });
          assert.ok(done, `the ${writer} writer waited on the pipe: ${JSON.stringify(out)}`);
          assert.ok(kept, "the file the link names was written");
        } finally {
          swapper.kill("SIGKILL");
          await swapper.status;
          await Deno.remove(top, { recursive: true });
        }
      });
    }
  }
}

Deno.test("write swap attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
