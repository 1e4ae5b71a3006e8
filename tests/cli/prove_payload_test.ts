import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { provr } from "../../cli/provr.ts";
import { copyFolder } from "../_files.ts";

const FIXTURES = new URL("../../fixtures/", import.meta.url).pathname;
const RUNS = join(FIXTURES, "runs");
const RUN = "run-20261129T120000Z-0badc0de";

async function run(args: string[], command = prove) {
  const io = bufferIo();
  const code = await command(args, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

Deno.test("prove payload prints one payload by the start of its hash, JSON pretty-printed, after checking it", async () => {
  const names = [...Deno.readDirSync(join(RUNS, RUN, "evidence", "payloads"))].map((e) => e.name).sort();
  const json = names.find((n) => {
    try {
      JSON.parse(Deno.readTextFileSync(join(RUNS, RUN, "evidence", "payloads", n)));
      return true;
    } catch {
      return false;
    }
  })!;
  const text = Deno.readTextFileSync(join(RUNS, RUN, "evidence", "payloads", json));
  const r = await run(["--runs", RUNS, "payload", "latest", json.slice(0, 10)]);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, JSON.stringify(JSON.parse(text), null, 2));
  const none = await run(["--runs", RUNS, "payload", RUN, "ffffffffffff"]);
  assert.equal(none.code, 1);
  assert.match(none.err, /^prove: run "run-20261129T120000Z-0badc0de" has no payload ffffffffffff$/);
  const bad = await run(["--runs", RUNS, "payload", RUN, "xyz"]);
  assert.equal(bad.code, 2); // a wrong command line
  assert.match(bad.err, /^prove: "xyz" is not a SHA-256/);
});

Deno.test("prove payload refuses a payload whose bytes no longer match its hash", async () => {
  const dir = await Deno.makeTempDir();
  await copyFolder(RUNS, join(dir, "runs"));
  const payloads = join(dir, "runs", RUN, "evidence", "payloads");
  const name = [...Deno.readDirSync(payloads)][0]!.name;
  await Deno.chmod(join(payloads, name), 0o644).catch(() => {});
  await Deno.writeTextFile(join(payloads, name), "changed");
  const r = await run(["--runs", join(dir, "runs"), "payload", RUN, name]);
  assert.equal(r.code, 1);
  assert.equal(r.err.split("\n").length, 1);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("prove verify on a failed run says that the run failed, and why, beside the verdict", async () => {
  const dir = await Deno.makeTempDir();
  const file = join(dir, "run.yaml");
  await Deno.writeTextFile(
    file,
    `run: { org: acme, domain: demo, env: dev, actor: ada }
agent: { name: q, backend: call, model: "test:", script: { turns: [{ error: { status: 500, message: boom } }] } }
prompt: hi
`,
  );
  const runs = join(dir, "runs");
  assert.equal((await run(["--runs", runs, "run", file], provr)).code, 1);
  const v = await run(["--runs", runs, "verify", "latest"]);
  assert.equal(v.code, 0, v.err);
  assert.match(
    v.out,
    /: the evidence and the outputs verify; no committed bundle to compare with\n( {2}note: .*\n)?.*: the run itself failed: AI_APICallError: boom$/,
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("prove show piped into head -1 ends quietly: a closed pipe is not a stack trace", async () => {
  const io = new URL("../../cli/_io.ts", import.meta.url).href;
  const script =
    `import { processIo } from "${io}"; const io = processIo(); for (let i = 0; i < 200000; i++) io.out("line " + i);`;
  const out = await new Deno.Command("sh", {
    args: ["-c", `"${Deno.execPath()}" eval '${script}' | head -1`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(new TextDecoder().decode(out.stdout), "line 0\n");
  assert.equal(new TextDecoder().decode(out.stderr), "");
});
