/**
 * `deno task test:examples`: runs the `@example` of every export of the public API (`deno test --doc` on the
 * files that declare the names of `mod.ts`; tests/api_test.ts checks that each has one that asserts). Its own
 * task, which `.ci/run` and `deno task ok` run after the tests: each example is a module of its own, loaded in a
 * worker of its own with the whole library (about 0.7 s each, 165 of them), which would double the README's
 * test command on two cores.
 * @module
 */
import { permissionFlags } from "../cli/_permissions.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const PARTS = ["provcat", "provevi", "provrun", "provtrace"];

/** The files that declare the exports of `mod.ts`, and the part modules, for `deno test --doc`. */
export async function exampleFiles(): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--json", "mod.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error("deno doc --json mod.ts failed");
  const doc = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    nodes: Record<string, { symbols: { declarations: { location: { filename: string } }[] }[] }>;
  };
  const files = new Set<string>([`${ROOT}mod.ts`, ...PARTS.map((p) => `${ROOT}lib/${p}/mod.ts`)]);
  for (const symbol of Object.values(doc.nodes)[0]!.symbols) {
    for (const d of symbol.declarations) files.add(new URL(d.location.filename).pathname);
  }
  return [...files].sort();
}

/** Runs the examples; returns `deno test`'s exit code. */
export async function examplesTask(args: string[]): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "--doc", ...permissionFlags("test"), "--parallel", ...args, ...await exampleFiles()],
    cwd: ROOT,
    stdin: "null",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  return (await child.status).code;
}

if (import.meta.main) Deno.exitCode = await examplesTask(Deno.args);
