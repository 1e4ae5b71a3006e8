/**
 * Attacks on the readers that look at a file before they open it (a run folder's evidence, an argument file, the
 * rows key, a log's notes, the span daemon's `received.spans`, a run's pack as the stores and the single-payload
 * reader index it, the viewer's live tail and payload view, a listing's first and last lines of events.jsonl,
 * the catalog's hash of a file and its folder store's read): each refuses a named pipe it sees, but one swapped
 * in after the look was opened, and an open of a pipe waits for a writer for ever, so a process that can write
 * the folder held the reader (a verify, a build, a run's writer twenty times a second) with a pipe and a file
 * renamed in turn at the path. Each reader now opens without waiting (O_NONBLOCK) and refuses what it opened
 * when it is not the plain file it looked at.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { collectOutputs } from "../../lib/provrun/run/outputter.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("FIFO swap attacks");
const READS = 3000;
/** Far past the second or two the reads take on a loaded machine: only a reader that waits on a pipe reaches it. */
const PATIENCE_MS = 120_000;

const here = new URL(".", import.meta.url).pathname;

/**
 * Runs a Deno script of this folder as a child, with all permissions or a command's permission set (deno.json's
 * `permissions`: Deno then refuses `/proc/self/fd/`, as it does to the commands themselves).
 */
function child(
  script: string,
  args: string[],
  stdout: "piped" | "null" = "null",
  permissions = "-A",
): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", permissions, "--no-prompt", join(here, script), ...args],
    stdout,
    stderr: "null",
  }).spawn();
}

for (
  const [reader, name, permissions] of [
    ["capped", "events.jsonl"],
    ["capped-sync", "manifest.json"],
    ["bounded", "witness.vkey"],
    ["received", "received.spans"],
    ["packed", "payloads.pack"],
    ["pack-reader", "payloads.pack"],
    ["sha256", "0a1b2c"],
    ["live-tail", "events.jsonl"],
    ["run-lines", "events.jsonl"],
    ["view-payload", `payloads/${"ab".repeat(32)}`],
    ["catalog-hash", "data.csv"],
    ["store-read", "data.csv"],
    // as the commands run: under their permission sets, where Deno refuses /proc/self/fd/ and a reader that
    // opened the path again waited on a pipe swapped in after its check
    ["sha256", "0a1b2c", "-P=prove"],
    ["sha256", "0a1b2c", "-P=provr"],
    ["live-tail", "events.jsonl", "-P=prove"],
    ["run-lines", "events.jsonl", "-P=prove"],
    ["view-payload", `payloads/${"ab".repeat(32)}`, "-P=prove"],
    ["catalog-hash", "data.csv", "-P=provr"],
    ["store-read", "data.csv", "-P=provr"],
  ] as [string, string, string?][]
) {
  const under = permissions === undefined ? "" : ` under ${permissions}`;
  Deno.test(`the ${reader} reader${under}, with a pipe and a file swapped at ${name}, reads or refuses and never waits on the pipe`, async () => {
    const top = await Deno.makeTempDir({ prefix: "attack-fifo-swap-" });
    const dir = join(top, "evidence");
    await Deno.mkdir(join(dir, name, ".."), { recursive: true });
    const swapper = child("_fifo_swap_child.ts", [dir, name]);
    try {
      assert.ok((await new Deno.Command("mkfifo", { args: [join(dir, "fifo")] }).output()).success, "mkfifo");
      await Deno.writeTextFile(join(dir, "file"), "a file\n");
      const reads = child(
        "_fifo_read_child.ts",
        [reader, join(dir, name), String(READS)],
        "piped",
        permissions,
      );
      const timer = setTimeout(() => reads.kill("SIGKILL"), PATIENCE_MS);
      const out = new TextDecoder().decode((await reads.output()).stdout);
      clearTimeout(timer);
      const done = /^done \d+ \d+/.test(out);
      tally.add(`${reader} reads${under} of ${name} swapped with a pipe`, { stopped: done, recorded: done });
      assert.ok(done, `the ${reader} reader waited on the pipe: ${JSON.stringify(out)}`);
    } finally {
      swapper.kill("SIGKILL");
      await swapper.status;
      await Deno.remove(top, { recursive: true });
    }
  });
}

Deno.test("a named pipe an agent made in output/ does not hold the collection of the run's outputs", async () => {
  const folder = await Deno.makeTempDir({ prefix: "attack-fifo-output-" });
  const pipe = join(folder, "output", "answer.txt");
  try {
    await Deno.mkdir(join(folder, "output"));
    await Deno.writeTextFile(join(folder, "output", "report.md"), "# report\n");
    assert.ok((await new Deno.Command("mkfifo", { args: [pipe] }).output()).success, "mkfifo");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const waited = new Promise<"waited">((resolve) => timer = setTimeout(() => resolve("waited"), 60_000));
    const found = await Promise.race([collectOutputs(folder), waited]).finally(() => clearTimeout(timer));
    // a reader left waiting is let go: opening the pipe both ways never waits
    if (found === "waited") Deno.openSync(pipe, { read: true, write: true }).close();
    const paths = found === "waited" ? "waited a minute" : found.outputs.map((f) => f.path).join(", ");
    tally.add("an agent's pipe in output/", { stopped: paths === "report.md", recorded: found !== "waited" });
    assert.equal(paths, "report.md");
  } finally {
    await Deno.remove(folder, { recursive: true });
  }
});

Deno.test("FIFO swap attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
