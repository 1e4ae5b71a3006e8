/**
 * The writer of the seal's fault-injection test: runs a small run and, at the seal, kills itself with
 * SIGKILL just before its Nth filesystem step (`N` and `before` as arguments), or (`half`) in the middle of
 * the seal's first file write, after half its bytes. Not a test itself; tests/attacks/seal_faults_test.ts starts it.
 * @module
 */
import { RunFile, runFile } from "../../lib/provrun/mod.ts";

const [runs, nth, mode] = Deno.args;
const target = Number(nth);
let count = 0;

function inSeal(): boolean {
  return /\bseal\b/.test(new Error().stack ?? "");
}

function step(): void {
  if (!inSeal()) return;
  count += 1;
  if (count === target) Deno.kill(Deno.pid, "SIGKILL");
}

const open = Deno.open;
const rename = Deno.rename;
const writeTextFile = Deno.writeTextFile;
const sync = Deno.FsFile.prototype.sync;
const syncSync = Deno.FsFile.prototype.syncSync;
Object.assign(Deno, {
  open: (...args: Parameters<typeof Deno.open>) => (step(), open(...args)),
  rename: (...args: Parameters<typeof Deno.rename>) => (step(), rename(...args)),
  writeTextFile: async (path: string | URL, data: string, options?: Deno.WriteFileOptions) => {
    if (inSeal() && mode === "half") {
      await writeTextFile(path, data.slice(0, Math.floor(data.length / 2)), options);
      Deno.kill(Deno.pid, "SIGKILL");
    }
    step();
    return await writeTextFile(path, data, options);
  },
});
Deno.FsFile.prototype.sync = function (this: Deno.FsFile) {
  step();
  return sync.call(this);
};
Deno.FsFile.prototype.syncSync = function (this: Deno.FsFile) {
  step();
  return syncSync.call(this);
};

const file = RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: writer
  backend: call
  model: "test:"
  script: { turns: [{ text: "48.2" }] }
prompt: Write the answer.
outputs: [answer.txt]
`);
const outcome = await runFile(file, { runs });
console.log(JSON.stringify({ runId: outcome.runId, status: outcome.status, steps: count }));
