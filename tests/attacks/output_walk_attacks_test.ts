/**
 * Attacks on the run's end, which walks `output/` and hashes each file it lists, by a process the run left
 * behind: it swaps a subfolder of `output/` for a link to a folder of the user's (`~/.ssh`) and back, as fast as
 * it can. The walk listed the subfolder, then hashed `output/<sub>/<file>` by its path, whose no-follow open
 * guards the last part only: the user's key was hashed and recorded as the run's output (its hash and size in
 * the evidence). The outputs are now walked through `open_tree.ts` (each folder reached checked to be the one
 * listed, each file opened by its name there and hashed by its descriptor): no file of the user's is recorded,
 * and a subfolder changed while it was walked is a problem of the run's end.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("output walk attacks");
const here = new URL(".", import.meta.url).pathname;
const KEY = "the user's key, which no run may record\n";
const WALKS = 1000;

for (const permissions of ["-A", "-P=provr"]) {
  Deno.test(`the run's end (${permissions}) records no file of the user's while a subfolder of output/ is swapped for a link to the user's folder`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "attack-output-walk-" });
    const swapper = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--no-prompt",
        join(here, "_folder_swap_child.ts"),
        join(dir, "run", "output"),
        "sub",
        join(dir, "secrets"),
      ],
      stdout: "null",
      stderr: "null",
    });
    await Deno.mkdir(join(dir, "secrets"));
    await Deno.writeTextFile(join(dir, "secrets", "id_rsa"), KEY);
    await Deno.mkdir(join(dir, "run", "output", "sub"), { recursive: true });
    await Deno.writeTextFile(join(dir, "run", "output", "sub", "id_rsa"), "the run's own file\n");
    const child = swapper.spawn();
    try {
      // the walks start once the swapper swaps
      while (!(await Deno.lstat(join(dir, "run", "output", ".sub-link")).then(() => true, () => false))) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const walks = await walksUnder(permissions, join(dir, "run"));
      const recorded = walks.recorded;
      tally.add(`a subfolder swapped for a link (${permissions})`, {
        stopped: recorded === 0,
        recorded: walks.done === WALKS,
      });
      assert.equal(recorded, 0, `the user's key was recorded as an output in ${recorded} of ${WALKS} walks`);
      assert.equal(walks.done, WALKS);
    } finally {
      child.kill();
      await child.status;
      await Deno.remove(dir, { recursive: true });
    }
  });
}

/** Walks the run's output/ `WALKS` times in a child under the permissions, counting walks that recorded the key. */
async function walksUnder(permissions: string, folder: string): Promise<{ done: number; recorded: number }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      permissions,
      "--no-prompt",
      join(here, "_output_walk_child.ts"),
      folder,
      String(WALKS),
      sha256Hex(KEY),
    ],
    cwd: join(here, "..", ".."),
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout).trim());
}

Deno.test("output walk attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
