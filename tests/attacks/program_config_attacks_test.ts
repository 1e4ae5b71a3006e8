/**
 * A `codex` run whose program rewrites the config that holds its hooks. provr writes Codex's hooks into the run's
 * own config home (`<run>/.codex`); Codex's sandbox keeps that folder read-only to the commands it runs, and
 * provr hashes the files that can carry hooks when the program starts. Here the program is a stand-in that does
 * what a compromised or misled program outside that sandbox could: it asks its `PreToolUse` hook once, rewrites,
 * removes or adds a hook file in each way it can, and asks again. Each attempt must be stopped (the second call is
 * refused and the run fails with `HooksChanged`) and recorded (the refusal is a `hook_called` event, the failure
 * names the file, and the evidence verifies).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { findRun } from "../../lib/provevi/runs/find_run.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { eventsOf } from "../provrun/backends/_programs.ts";
import { standInRun } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("program config attacks");

/** What the stand-in does to its config home between its two tool calls (Python, `home` is the folder). */
const ATTACKS: Record<string, string> = {
  "append to config.toml": `open(home + "/config.toml", "a").write("\\n# hooks dropped\\n")`,
  "replace config.toml by a rename": [
    `open(home + "/config.new", "w").write(open(home + "/config.toml").read().split("[[hooks.")[0])`,
    `os.replace(home + "/config.new", home + "/config.toml")`,
  ].join("\n"),
  "remove config.toml": `os.remove(home + "/config.toml")`,
  "add a hooks.json": `open(home + "/hooks.json", "w").write("{}")`,
  "add a requirements.toml": `open(home + "/requirements.toml", "w").write("")`,
  "rewrite hook-headers":
    `os.chmod(home + "/hook-headers", 0o600); open(home + "/hook-headers", "a").write("x: y\\n")`,
};

/** A stand-in for Codex: reads its PreToolUse hook from the config provr wrote, calls it, attacks, calls again. */
function standIn(attack: string): string {
  return `#!/usr/bin/env python3
import json, os, subprocess
home = os.environ["CODEX_HOME"]
# provr writes each hook's command as a JSON string, which TOML reads alike; the first is PreToolUse's
lines = open(home + "/config.toml").read().split("\\n")
pre = lines.index("[[hooks.PreToolUse]]")
command = json.loads(next(l for l in lines[pre:] if l.startswith("command = "))[len("command = "):])
def call(n):
    hook = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "call_%d" % n,
            "tool_input": {"command": "ls output"}}
    subprocess.run(["sh", "-c", command], input=json.dumps(hook).encode(), check=False)
call(1)
${attack}
call(2)
`;
}

for (const [name, attack] of Object.entries(ATTACKS)) {
  Deno.test({
    name: `a codex run whose program ${name} between two tool calls refuses the second and fails, named`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const dir = await Deno.makeTempDir({ prefix: "program-config-" });
      try {
        const program = join(dir, "fake-codex");
        await Deno.writeTextFile(program, standIn(attack), { mode: 0o755 });
        const outcome = await standInRun(program, {
          runs: join(dir, "runs"),
          agent: ["allow_unsandboxed: [Bash]"],
          seconds: 120,
        });
        const events = await eventsOf(join(dir, "runs"), outcome.runId);
        const pre = events.filter((e) => e.type === "hook_called" && e.data.event === "PreToolUse");
        const started = events.find((e) => e.type === "sandbox_started")!;
        const failed = events.find((e) => e.type === "run_failed");
        const stopped = outcome.status === "failed" && outcome.error?.name === "HooksChanged" &&
          pre.map((e) => e.data.decision).join() === "allow,deny";
        const recorded = /changed the config that holds its hooks/.test(String(pre[1]?.data.reason)) &&
          /\.codex\/(config\.toml|hooks\.json|requirements\.toml|hook-headers) was (changed|made|removed)/
            .test(
              JSON.stringify(failed?.data),
            ) &&
          (await verifyRun(await findRun(outcome.folder))).ok;
        tally.add(name, { stopped, recorded });
        assert.ok(stopped, JSON.stringify({ error: outcome.error, pre: pre.map((e) => e.data) }));
        assert.ok(recorded, JSON.stringify({ pre: pre.map((e) => e.data), failed: failed?.data }));
        // the files were hashed as provr wrote them, before the program started
        const guarded = started.data.guarded as Record<string, string | null>;
        assert.match(String(guarded[".codex/config.toml"]), /^[0-9a-f]{64}$/);
        assert.equal(guarded[".codex/hooks.json"], null);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}

Deno.test({
  name: "program config attacks: the tally",
  fn: () => {
    console.log(tally.line());
    assert.equal(tally.missed.length, 0, tally.line());
  },
});
