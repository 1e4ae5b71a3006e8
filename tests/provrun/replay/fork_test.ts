/**
 * `forkRun`: the steps before N served from the source, step N on run live with the change (another model, a
 * key set, another prompt); the fork records where it came from and what it changed, keeps what the served
 * steps wrote, and verifies on its own; a step the source does not have is refused.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { forkRun } from "../../../lib/provrun/replay/fork_run.ts";
import { RunNotReplayable } from "../../../lib/provrun/replay/replay_errors.ts";
import { RunFileError } from "../../../lib/provrun/run/errors.ts";
import { recorded } from "./_setup.ts";

Deno.test("a fork at step 3 with another model serves steps 1 and 2, runs step 3 on with the new model, and verifies", async () => {
  await using r = await recorded();
  await Deno.writeTextFile(
    join(r.dir, "other.yaml"),
    `model: other-1\nturns:\n  - text: unused\n  - text: unused\n  - text: "The other model says 13%."\n`,
  );
  const fork = await forkRun(r.source, {
    store: r.store,
    catalog: r.catalog,
    at: 3,
    model: "test:other.yaml",
  });
  assert.equal(fork.run.status, "completed", JSON.stringify(fork.run.error));
  assert.equal(fork.run.text, "The other model says 13%.");
  assert.deepEqual(fork.served, { model_calls: 2, tool_calls: 3, tools_ran: 0 });
  const events = await r.events(fork.run.runId);
  assert.deepEqual(
    [
      events[0]!.data.forked_from,
      events[0]!.data.at,
      events[0]!.data.parent_run,
      events[0]!.data.fork_changes,
    ],
    [r.outcome.runId, 3, r.outcome.runId, { model: "test:other.yaml" }],
  );
  const calls = events.filter((e) => e.type === "model_called");
  assert.deepEqual(calls.map((c) => c.data.model), ["inline", "inline", "other.yaml"]);
  assert.deepEqual(calls.map((c) => Boolean(c.data.served_from)), [true, true, false]);
  assert.deepEqual([fork.divergence?.phase, fork.divergence?.what], ["setup", "settings"]);
  const step3 = fork.diff.differences.filter((d) => d.step === 3).map((d) => d.what);
  assert.ok(step3.includes("model_answer") && step3.includes("settings"), step3.join(", "));
  assert.ok((await verifyRun(await r.store.readRun(fork.run.runId))).ok);
});

Deno.test("a fork keeps what its served steps wrote: the built-in write_file of a served step writes again", async () => {
  await using r = await recorded();
  const fork = await forkRun(r.source, {
    store: r.store,
    catalog: r.catalog,
    at: 4,
    set: { "agent.instructions": "Be brief." },
  });
  assert.equal(fork.run.status, "completed", JSON.stringify(fork.run.error));
  assert.equal(await Deno.readTextFile(join(fork.run.folder, "output", "report.md")), "Q3: 48.2 (44.3 EUR)");
  assert.deepEqual((await r.events(fork.run.runId))[0]!.data.fork_changes, {
    set: { "agent.instructions": "Be brief." },
  });
  assert.equal(fork.divergence?.what, "settings");
});

Deno.test("a fork with another prompt records its hash; a step the source lacks and a key the run file refuses are refused", async () => {
  await using r = await recorded();
  const fork = await forkRun(r.source, { store: r.store, catalog: r.catalog, at: 1, prompt: "And Q4?" });
  assert.equal(fork.served.model_calls, 0);
  const changes = (await r.events(fork.run.runId))[0]!.data.fork_changes as { prompt_sha256: string };
  assert.match(changes.prompt_sha256, /^[0-9a-f]{64}$/);
  assert.deepEqual([fork.divergence?.phase, fork.divergence?.what], ["setup", "prompt"]);
  const before = await r.folders();
  for (const at of [0, 6]) {
    await assert.rejects(
      () => forkRun(r.source, { store: r.store, at }),
      (e) =>
        e instanceof RunNotReplayable && /has 4 model steps: fork it at a step from 1 to 5/.test(e.message),
    );
  }
  await assert.rejects(
    () => forkRun(r.source, { store: r.store, at: 2, set: { "agent.colour": "red" } }),
    (e) => e instanceof RunFileError && /agent\.colour .*unknown key/.test(e.message),
  );
  assert.deepEqual(await r.folders(), before);
});
