/**
 * A run's program that puts a link in place of its `output/` or `input/` folder itself, to a folder of the user's
 * (`~/.ssh`): the run's end walked the folder the link names and recorded each file of the user's as an output
 * of the run (its path, hash and size in the evidence), and the run completed; its check of links looked inside
 * the folder, never at it. The folder itself a link is now a link found: no file behind it is recorded, and the
 * run fails, naming it.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { RunFile } from "../../lib/provrun/run/run_file.ts";
import { runFile } from "../../lib/provrun/runner/run.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("folder link attacks");

for (const sub of ["output", "input"]) {
  Deno.test(`a run's program that puts a link to a folder of the user's in place of ${sub}/ has the run fail, recording none of its files`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "attack-folder-link-" });
    try {
      await Deno.mkdir(join(dir, "secrets"));
      await Deno.writeTextFile(join(dir, "secrets", "id_rsa"), "the user's key\n");
      const program = join(dir, "fake-codex");
      await Deno.writeTextFile(
        program,
        `#!/usr/bin/env python3\nimport os, shutil\nshutil.rmtree(${
          JSON.stringify(sub)
        }, ignore_errors=True)\nos.symlink(${JSON.stringify(join(dir, "secrets"))}, ${
          JSON.stringify(sub)
        })\n`,
        { mode: 0o755 },
      );
      const outcome = await runFile(
        RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: analyst
  backend: codex
  program: ${JSON.stringify(program)}
  model: openai:gpt-fake
  provider: { base_url: "http://127.0.0.1:9/v1", api_key_env: FAKE_OPENAI_KEY }
  limits: { seconds: 60 }
prompt: List the outputs.
`),
        { runs: join(dir, "runs"), env: (n) => (n === "FAKE_OPENAI_KEY" ? "sk-fake" : Deno.env.get(n)) },
      );
      const events = await Deno.readTextFile(join(outcome.folder, "evidence", "events.jsonl"));
      const leaked = events.includes("id_rsa");
      const named = outcome.status === "failed" &&
        new RegExp(`${sub}( |/ )is a`).test(outcome.error?.message ?? "");
      tally.add(`${sub}/ as a link to a folder of the user's`, { stopped: !leaked, recorded: named });
      assert.ok(!leaked, "a file of the user's was recorded as the run's");
      assert.ok(named, JSON.stringify({ status: outcome.status, error: outcome.error?.message }));
      assert.equal(await Deno.readTextFile(join(dir, "secrets", "id_rsa")), "the user's key\n");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("folder link attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
