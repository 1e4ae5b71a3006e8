/**
 * The live recipe of docs/ui.md, as written, each terminal a process of its own: the first makes the store and
 * serves it with `PROVRUN_TELEMETRY_POLICY` exported, the second runs the file again with the policy on its
 * command line, and the viewer streams the answer. Without the policy in the second terminal, provr writes no
 * live feed, which is why the recipe gives it.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { denoDir } from "../../_children.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const DOC = await Deno.readTextFile(join(ROOT, "docs", "ui.md"));

/** The run file the recipe writes: the text between `cat > slow.yaml <<'EOF'` and `EOF`. */
const SLOW = /cat > slow\.yaml <<'EOF'\n([\s\S]*?)\nEOF/.exec(DOC)![1]! + "\n";
const POLICY = /cat > viewer-policy\.yaml <<'EOF'\n([\s\S]*?)\nEOF/.exec(DOC)![1]! + "\n";

/** A terminal's `deno task …` in a folder, with its environment. */
function task(cwd: string, env: Record<string, string>, ...args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "--config", join(ROOT, "deno.json"), ...args],
    cwd,
    // Typed in `cwd`: a `deno task` around this test has set INIT_CWD to its own folder, which a nested one keeps.
    env: { ...env, INIT_CWD: cwd },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function done(child: Deno.ChildProcess): Promise<string> {
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.ok(out.success, text);
  return text;
}

/** The text items the viewer's live feed of the run sends, until the run ends (the feed closes then). */
async function streamed(url: string, runId: string): Promise<string[]> {
  const body = await (await fetch(`${url}api/runs/${runId}/live`)).text();
  return [...body.matchAll(/^event: text\ndata: (.*)$/gm)].map((m) => JSON.parse(m[1]!).text as string);
}

/** Runs the second terminal while the first serves, and gives what the viewer streamed of its run. */
async function secondTerminal(
  folder: string,
  url: string,
  env: Record<string, string>,
): Promise<{ texts: string[]; live: boolean }> {
  const before = new Set(
    ((await (await fetch(`${url}api/runs`)).json()).runs as { run_id: string }[]).map((r) => r.run_id),
  );
  const run = task(folder, env, "provr", "run", "slow.yaml");
  let runId: string | null = null;
  const deadline = Date.now() + 60_000;
  while (runId === null && Date.now() < deadline) {
    const page = await (await fetch(`${url}api/runs`)).json() as { runs: { run_id: string }[] };
    runId = page.runs.find((r) => !before.has(r.run_id))?.run_id ?? null;
    if (runId === null) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.ok(runId, "the second terminal's run reached the store");
  const texts = await streamed(url, runId);
  await done(run);
  const runs = join(folder, ".provrun-runs");
  const live = await Deno.stat(join(runs, runId, "live.jsonl")).then(() => true, () => false);
  return { texts, live };
}

Deno.test({
  name: "the live recipe of docs/ui.md streams the answer from a second terminal, as written",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const folder = await Deno.makeTempDir({ prefix: "prove-ui-recipe-" });
    // The runs of a sqlite store go under the store's own runs root: the same for both terminals.
    const base = {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: folder,
      // The scratch home's own cache would be a fresh one: every npm package fetched, every module compiled.
      DENO_DIR: denoDir(),
      PROVRUN_RUNS: join(folder, ".provrun-runs"),
    };
    const policy = join(folder, "viewer-policy.yaml");
    let ui: Deno.ChildProcess | null = null;
    try {
      await Deno.writeTextFile(policy, POLICY);
      await Deno.writeTextFile(join(folder, "slow.yaml"), SLOW);
      const first = { ...base, PROVRUN_TELEMETRY_POLICY: policy };
      await done(task(folder, first, "provr", "run", "slow.yaml"));
      ui = task(folder, first, "prove", "--store", "sqlite:///evidence.db", "ui", "--port", "0");
      const reader = ui.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let seen = "";
      while (!/open (http:\S+)/.test(seen)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`prove ui ended: ${seen}`);
        seen += value;
      }
      reader.releaseLock();
      const url = /open (http:\S+)/.exec(seen)![1]!;
      const answer = /- text: "([^"]+)"/.exec(SLOW)![1]!;
      const recipe = await secondTerminal(folder, url, { ...base, PROVRUN_TELEMETRY_POLICY: policy });
      assert.ok(recipe.live, "provr wrote the live feed");
      assert.ok(recipe.texts.length > 3, `the answer came in pieces: ${recipe.texts.length}`);
      assert.equal(recipe.texts.join(""), answer);
      // The second terminal without the policy, as the recipe once read: nothing streams.
      const bare = await secondTerminal(folder, url, base);
      assert.equal(bare.live, false);
      assert.deepEqual(bare.texts, []);
    } finally {
      if (ui) {
        ui.kill("SIGTERM");
        await ui.status;
        await ui.stdout.cancel().catch(() => {});
        await ui.stderr.cancel().catch(() => {});
      }
      await Deno.remove(folder, { recursive: true });
    }
  },
});
