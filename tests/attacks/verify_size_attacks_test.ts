/**
 * A run folder changed where `prove verify` (and the viewer's verdict) reads it whole: an output replaced by a
 * sparse file of 64 GiB. The verifier hashed it to the end, at the speed of the disk's zeros (past 30 s here; a
 * file can claim terabytes), before it compared its size with the recorded one. It must name the output as
 * changed by its size, at once.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { findRun, verifyRun } from "../../lib/provevi/runs/mod.ts";
import { beforeTimeout, standInRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("verify size attacks");

Deno.test({
  name: "an output replaced by a sparse file of 64 GiB is changed by its size, not hashed to its end",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "verify-size-" });
    try {
      const program = join(dir, "fake-codex");
      await Deno.writeTextFile(
        program,
        `#!/usr/bin/env python3\nimport os\nos.makedirs("output", exist_ok=True)\nopen("output/a.txt", "w").write("ok")\n`,
        { mode: 0o755 },
      );
      const outcome = await standInRun(program, { runs: join(dir, "runs"), prompt: "Write output/a.txt." });
      assert.equal(outcome.status, "completed", outcome.error?.message);
      await Deno.truncate(join(outcome.folder, "output", "a.txt"), 64 * 1024 ** 3);
      const check = await beforeTimeout(verifyRun(await findRun(outcome.folder)), 120_000);
      assert.notEqual(check, "timeout", "the verifier was still hashing the sparse file after 120 s");
      if (check === "timeout") return;
      const found = check.problems.map((p) => `${p.code} ${p.file}`);
      // named by its size, which only a verifier that did not hash it says
      const stopped = /it holds 68719476736 bytes, recorded/.test(check.problems[0]?.message ?? "");
      const recorded = JSON.stringify(found) === JSON.stringify(["output.changed output/a.txt"]);
      tally.add("an output replaced by a sparse file of 64 GiB", { stopped, recorded });
      assert.ok(stopped && recorded, JSON.stringify(check.problems));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "verify size attacks: the tally",
  fn: () => {
    console.log(tally.line());
    assert.equal(tally.missed.length, 0, tally.line());
  },
});
