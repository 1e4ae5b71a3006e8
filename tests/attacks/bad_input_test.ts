/**
 * Bad input, as a careless user or an attacker gives it: each is one line on standard error (`provr: …` or
 * `prove: …`), never a stack trace and never a hang; a run that fails this way is recorded and sealed.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { provr } from "../../cli/provr.ts";
import { answerRunText } from "./_setup.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("bad inputs");

const GOOD = answerRunText();

const BOMB = `a: &a ["x","x","x","x","x","x","x","x","x"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
version: 1
`;

/** Runs a command in-process, bounded in time: a hang is a failure, not a stuck suite. */
async function command(
  which: "provr" | "prove",
  args: string[],
): Promise<{ code: number | "hang"; out: string; err: string }> {
  const io = bufferIo();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const code = await Promise.race([
    (which === "provr" ? provr : prove)(args, io),
    new Promise<"hang">((resolve) => timer = setTimeout(() => resolve("hang"), 30_000)),
  ]);
  clearTimeout(timer);
  // The line a run starts with (its ID and folder, so a run cut short can be found) is not an error's line.
  const err = io.stderr.filter((l) => !/^provr: run \S+ in /.test(l));
  return { code, out: io.stdout.join("\n"), err: err.join("\n") };
}

async function check(name: string, which: "provr" | "prove", args: string[], pattern: RegExp) {
  let result: { code: number | "hang"; out: string; err: string };
  let crashed: unknown = null;
  try {
    result = await command(which, args);
  } catch (error) {
    crashed = error;
    result = { code: 1, out: "", err: String((error as Error)?.stack ?? error) };
  }
  const oneLine = crashed === null && result.code !== "hang" && result.code !== 0 &&
    result.err.split("\n").length === 1 && result.err.startsWith(`${which}: `) &&
    !/\n\s+at /.test(result.err);
  tally.add(name, { stopped: oneLine && pattern.test(result.err), recorded: true });
  assert.ok(oneLine, `${name}: ${result.code} ${result.err}`);
  assert.match(result.err, pattern, name);
  return result;
}

Deno.test("every bad input of the corpus is one line, never a stack trace or a hang", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-input-" });
  const runs = join(dir, "runs");
  const good = join(dir, "good.yaml");
  await Deno.writeTextFile(good, GOOD);
  const fifo = join(dir, "fifo");
  await new Deno.Command("mkfifo", { args: [fifo] }).output();
  const bomb = join(dir, "bomb.yaml");
  await Deno.writeTextFile(bomb, BOMB);
  const latin1 = join(dir, "latin1.yaml");
  await Deno.writeFile(latin1, Uint8Array.from([...new TextEncoder().encode(GOOD.slice(0, -2)), 0xff, 0x0a]));
  const limits = async (name: string, line: string) => {
    const path = join(dir, `${name}.yaml`);
    await Deno.writeTextFile(path, GOOD.replace("  script:", `  limits: { ${line} }\n  script:`));
    return path;
  };
  const withScript = async (name: string, script: string) => {
    const path = join(dir, `${name}.yaml`);
    await Deno.writeTextFile(
      path,
      GOOD.replace('"test:"', JSON.stringify(`test:${script}`)).replace(/ {2}script:.*\n/, ""),
    );
    return path;
  };

  await check("policy: an alias bomb", "provr", ["--runs", runs, "run", "--policy", bomb, good], /alias/);
  await check("policy: /dev/zero", "provr", ["--runs", runs, "run", "--policy", "/dev/zero", good], /device/);
  await check("policy: a FIFO", "provr", ["--runs", runs, "run", "--policy", fifo, good], /FIFO/);
  await check("run file: /dev/zero", "provr", ["--runs", runs, "run", "/dev/zero"], /device/);
  await check("run file: a FIFO", "provr", ["--runs", runs, "run", fifo], /FIFO/);
  await check("run file: not UTF-8", "provr", ["--runs", runs, "run", latin1], /not UTF-8/);
  await check("run file: an alias bomb", "provr", ["--runs", runs, "run", bomb], /alias|unknown key/);
  await check("test: script /dev/zero", "provr", [
    "--runs",
    runs,
    "run",
    await withScript("zero", "/dev/zero"),
  ], /device/);
  await check(
    "test: script a FIFO",
    "provr",
    ["--runs", runs, "run", await withScript("fifo", fifo)],
    /FIFO/,
  );
  await check("limits.seconds: 3000000", "provr", [
    "--runs",
    runs,
    "run",
    await limits("s1", "seconds: 3000000"),
  ], /at most 2147483/);
  await check(
    "limits.seconds: 0",
    "provr",
    ["--runs", runs, "run", await limits("s0", "seconds: 0")],
    /more than 0/,
  );
  await check(
    "limits.tool_seconds: 3000000",
    "provr",
    ["--runs", runs, "run", await limits("t1", "tool_seconds: 3000000")],
    /at most 2147483/,
  );
  await check("--runs /etc/passwd (provr)", "provr", ["--runs", "/etc/passwd", "run", good], /passwd/);
  await check("--runs /proc/x (provr)", "provr", ["--runs", "/proc/x", "run", good], /proc/);
  await check("--runs /etc/passwd (prove)", "prove", ["--runs", "/etc/passwd", "runs"], /passwd/);
  await check(
    "--config /nonexistent",
    "provr",
    ["--runs", runs, "run", "--config", "/nonexistent", good],
    /nonexistent/,
  );

  // A tools module that does not load fails its run, which is recorded and sealed, with one line.
  for (
    const [name, text] of [
      ["a syntax error", "export const TOOLS = [;\n"] as const,
      ["a throw at import", 'throw new Error("boom at import");\nexport const TOOLS = [];\n'] as const,
    ]
  ) {
    const folder = join(dir, `tools-${name.replaceAll(" ", "-")}`);
    await Deno.mkdir(folder);
    await Deno.writeTextFile(join(folder, "bad.ts"), text!);
    const path = join(dir, `agent-${name.replaceAll(" ", "-")}.yaml`);
    await Deno.writeTextFile(path, answerRunText({ toolsFolder: folder }));
    const r = await check(`tools module: ${name}`, "provr", ["--runs", runs, "run", path], /ToolSetError/);
    const manifest = JSON.parse(await Deno.readTextFile(join(runs, r.out, "evidence", "manifest.json")));
    assert.equal(manifest.status, "failed");
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("the bad input counts", () => {
  console.log(tally.line({ stopped: "one-line errors" }));
  assert.equal(tally.missed.length, 0, tally.line({ stopped: "one-line errors" }));
});
