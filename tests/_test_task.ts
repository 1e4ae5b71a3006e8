/**
 * `deno task test` and `deno task test:peers`: run the tests (`deno test --parallel` with the `test`
 * permission set of deno.json), then end with one line that lists the test groups skipped for want of a peer
 * and what would enable them (`tests/_peers.ts`). Arguments go to `deno test`; without a path, it runs
 * `tests/`.
 *
 * `deno task test` is the peer-free part: every test but those declared with `peerTest()`, in an environment
 * without the peers' variables, so that a test that reaches a peer without declaring it fails here instead
 * of hiding in the other part. `deno task test:peers` (`--peers`) runs only the `peerTest()` tests, of the
 * files that declare some; `.ci/run` runs both.
 *
 * Files run several at a time (`DENO_JOBS`, 6 unless set; 4 for the peers): many tests wait on child
 * processes, servers and timers rather than on a core, so more files than cores keep both cores busy (on the
 * 2-core machine, 6 at a time took 254 s and 485 CPU s where 4 took 280 s and 501 CPU s, one run after the
 * other). The type check of the same files (`deno check`, what `deno test` does first by itself, on one core)
 * runs beside the tests instead of before them, and fails the task as it would have failed `deno test`: on a
 * fresh clone it takes half a minute of one core, while the other stood idle.
 * @module
 */
import { join, relative } from "node:path";
import { permissionFlags } from "../cli/_permissions.ts";
import { NO_PEERS_VARIABLE, PEER_TEST_PREFIX, peerVariables, skippedLine } from "./_peers.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** The flag of `deno task test:peers`, taken off the arguments before they go to `deno test`. */
export const PEERS_FLAG = "--peers";

/** Every test file under tests/, relative to the repository's root, sorted. */
export async function testFiles(dir = join(ROOT, "tests")): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) found.push(...await testFiles(path));
    else if (entry.isFile && /_test\.ts$/.test(entry.name)) found.push(relative(ROOT, path));
  }
  return found.sort();
}

/** The files under tests/ that a module imports by a relative path, and theirs in turn, itself included. */
export async function localClosure(file: string): Promise<string[]> {
  const seen = new Set<string>();
  const visit = async (path: string) => {
    // The library's own imports are not followed: what a test reaches of the peers is in tests/.
    if (seen.has(path) || !path.startsWith("tests/")) return;
    seen.add(path);
    const text = await Deno.readTextFile(join(ROOT, path));
    for (const [, spec] of text.matchAll(/^(?:import|export)\b[^;]*?from\s+"(\.{1,2}\/[^"]+\.ts)"/gms)) {
      await visit(relative(ROOT, join(ROOT, path, "..", spec!)));
    }
  };
  await visit(file);
  return [...seen];
}

/** The test files that declare tests with `peerTest()` (they import tests/_peers.ts): those of test:peers. */
export async function peerTestFiles(): Promise<string[]> {
  const files: string[] = [];
  for (const file of await testFiles()) {
    if ((await localClosure(file)).includes("tests/_peers.ts")) files.push(file);
  }
  return files;
}

/** The environment of the peer-free run: this one without any peer's variable, and peer tests turned off. */
export function peerFreeEnv(env: Record<string, string> = Deno.env.toObject()): Record<string, string> {
  const peers = new Set(peerVariables());
  const kept = Object.entries(env).filter(([name]) => !peers.has(name));
  return { ...Object.fromEntries(kept), [NO_PEERS_VARIABLE]: "1" };
}

/**
 * What `deno publish` type-checks: the modules deno.json exports. The whole test run checks them beside the
 * test files, once, so that tests/cli/publish_test.ts runs `deno publish --dry-run --no-check` (a fresh clone
 * took 20 CPU s to check that graph a second time).
 */
export async function exportedFiles(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json"))) as {
    exports: Record<string, string>;
  };
  return Object.values(config.exports).map((path) => relative(ROOT, join(ROOT, path)));
}

/**
 * The files `deno test` would type-check for these arguments: the test files under each folder given (under
 * tests/ without one), and each file given.
 */
export async function checkedFiles(paths: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    const full = join(ROOT, path);
    // A path that is not there goes as given: deno test and deno check each say so in their own words.
    const info = await Deno.stat(full).catch(() => null);
    if (info?.isDirectory) files.push(...await testFiles(full));
    else files.push(relative(ROOT, full));
  }
  return files;
}

/** Type-checks the files with `deno check`; returns its exit code, and prints what it said only if it failed. */
async function typeCheck(files: string[]): Promise<number> {
  if (files.length === 0) return 0;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["check", "-q", ...files],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    await Deno.stderr.write(out.stdout);
    await Deno.stderr.write(out.stderr);
    console.error(`the type check of the test files failed (deno check exited with ${out.code})`);
  }
  return out.code;
}

/** Runs the tests and their type check side by side; returns `deno test`'s exit code, or the check's. */
export async function testTask(args: string[]): Promise<number> {
  const peers = args.includes(PEERS_FLAG);
  const rest = args.filter((a) => a !== PEERS_FLAG);
  // A path given (`deno task test tests/cli/`, `./tests/x_test.ts`) runs instead of the whole of tests/.
  const given = rest.filter((a) => !a.startsWith("-") && (a.includes("/") || a.endsWith(".ts")));
  const paths = given.length ? [] : peers ? await peerTestFiles() : ["tests/"];
  const filter = peers ? ["--filter", `/^${PEER_TEST_PREFIX.replace("[", "\\[")}/`] : [];
  const env = peers ? Deno.env.toObject() : peerFreeEnv();
  // --no-check unless asked otherwise: the check runs beside the tests (typeCheck), not before them.
  const noCheck = rest.some((a) => a === "--check" || a.startsWith("--no-check")) ? [] : ["--no-check"];
  const exported = paths.includes("tests/") ? await exportedFiles() : [];
  const checked = noCheck.length
    ? typeCheck([...exported, ...await checkedFiles([...given, ...paths])])
    : Promise.resolve(0);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", ...permissionFlags("test"), "--parallel", ...noCheck, ...filter, ...rest, ...paths],
    cwd: ROOT,
    clearEnv: true,
    // the peer-backed tests stay at 4: their peers (MLflow, Phoenix, PostgreSQL) are shared by the files at once
    env: { ...env, DENO_JOBS: Deno.env.get("DENO_JOBS") || (peers ? "4" : "6") },
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const { code } = await child.status;
  const checkCode = await checked;
  const skipped = skippedLine(Deno.env, { peerFree: !peers });
  if (skipped) console.log(skipped);
  return code !== 0 ? code : checkCode;
}

if (import.meta.main) Deno.exitCode = await testTask(Deno.args);
