/**
 * A run's program plants, in its run folder, where the seal writes or reads after the program's end: a folder in
 * place of `.manifest.json.tmp` or `evidence/manifest.json` (the seal failed, "Directory not empty", and the run
 * stayed unsealed), or another file, a folder, a FIFO or a link in place of `evidence/events.jsonl`, or the file
 * removed (the seal sealed the lines it wrote while the file at the name held others: provr called the run
 * completed and every check failed it); the same of `evidence/payloads.pack`; `evidence/payloads/` removed (the
 * seal's fsync of it failed unhandled, and provr ended with "Uncaught (in promise)"). Each run must seal, verify, and leave the user's file as it was: a folder
 * is moved aside whole, and the writer puts its own lines and records back at their names from its descriptors.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { findRun } from "../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { RunFile } from "../../lib/provrun/run/run_file.ts";
import { runFile } from "../../lib/provrun/runner/run.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("seal plant attacks");

/** Python, run in the run folder after the run started (`t` the name, `victim` a file of the user's). */
const PLANTS: Record<string, [string, string]> = {
  "a folder as .manifest.json.tmp": [".manifest.json.tmp", `os.makedirs(t + "/inside")`],
  "a folder as evidence/manifest.json": ["evidence/manifest.json", `os.makedirs(t + "/inside")`],
  "a folder as log.tlog-proof": ["log.tlog-proof", `os.makedirs(t + "/inside")`],
  "another file in place of events.jsonl": [
    "evidence/events.jsonl",
    `os.remove(t); open(t, "w").write("{}\\n")`,
  ],
  "a folder in place of events.jsonl": ["evidence/events.jsonl", `os.remove(t); os.makedirs(t + "/inside")`],
  "a FIFO in place of events.jsonl": ["evidence/events.jsonl", `os.remove(t); os.mkfifo(t)`],
  "a link to a file of the user's in place of events.jsonl": [
    "evidence/events.jsonl",
    `os.remove(t); os.symlink(victim, t)`,
  ],
  "events.jsonl removed": ["evidence/events.jsonl", `os.remove(t)`],
  "payloads.pack removed": ["evidence/payloads.pack", `os.remove(t)`],
  "another file in place of payloads.pack": [
    "evidence/payloads.pack",
    `os.remove(t); open(t, "w").write("x")`,
  ],
  "a folder in place of payloads.pack": [
    "evidence/payloads.pack",
    `os.remove(t); os.makedirs(t + "/inside")`,
  ],
  // the seal's fsync of the folder failed while the log's commit was awaited: an unhandled rejection ended provr
  "evidence/payloads/ removed": ["evidence/payloads", `import shutil; shutil.rmtree(t)`],
  // the seal wrote the manifest (and, put back, the events) into the folder the link named
  "evidence/ moved away and a link to a folder of the user's in its place": [
    "evidence",
    `os.rename(t, "elsewhere"); os.symlink(os.path.dirname(victim), t)`,
  ],
};

for (const [name, [target, plant]] of Object.entries(PLANTS)) {
  Deno.test({
    name: `a run's program that leaves ${name} has its run sealed whole, and verified`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const dir = await Deno.makeTempDir({ prefix: "seal-plant-" });
      const runs = join(dir, "runs");
      const victim = join(dir, "victim.txt");
      await Deno.writeTextFile(victim, "the user's own\n");
      const program = join(dir, "fake-codex");
      await Deno.writeTextFile(
        program,
        `#!/usr/bin/env python3\nimport os\nvictim = ${JSON.stringify(victim)}\nt = ${
          JSON.stringify(target)
        }\n${plant}\n`,
        { mode: 0o755 },
      );
      try {
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
          { runs, env: (n) => (n === "FAKE_OPENAI_KEY" ? "sk-fake" : Deno.env.get(n)) },
        );
        const check = await verifyRun(await findRun(outcome.folder));
        // nothing of the run written beside the user's file (the folder a link named)
        const strays = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name)
          .filter((n) => !["runs", "victim.txt", "fake-codex"].includes(n));
        const stopped = await Deno.readTextFile(victim) === "the user's own\n" && strays.length === 0;
        const recorded = outcome.status === "completed" && outcome.manifest !== null && check.ok;
        tally.add(name, { stopped, recorded });
        assert.ok(stopped, `the user's file was written, or the run's beside it: ${strays.join(", ")}`);
        assert.ok(
          recorded,
          JSON.stringify({ status: outcome.status, error: outcome.error?.message, problems: check.problems }),
        );
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

Deno.test("seal plant attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
