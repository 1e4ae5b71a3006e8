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
 * Files run several at a time (`DENO_JOBS`, 4 unless set): many tests wait on child processes, servers and
 * timers rather than on a core, so more files than cores keep both cores busy.
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

/** Runs the tests; returns `deno test`'s exit code. */
export async function testTask(args: string[]): Promise<number> {
  const peers = args.includes(PEERS_FLAG);
  const rest = args.filter((a) => a !== PEERS_FLAG);
  // A path given (`deno task test tests/cli/`, `./tests/x_test.ts`) runs instead of the whole of tests/.
  const pathGiven = rest.some((a) => !a.startsWith("-") && (a.includes("/") || a.endsWith(".ts")));
  const paths = pathGiven ? [] : peers ? await peerTestFiles() : ["tests/"];
  const filter = peers ? ["--filter", `/^${PEER_TEST_PREFIX.replace("[", "\\[")}/`] : [];
  const env = peers ? Deno.env.toObject() : peerFreeEnv();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", ...permissionFlags("test"), "--parallel", ...filter, ...rest, ...paths],
    cwd: ROOT,
    clearEnv: true,
    env: { ...env, DENO_JOBS: Deno.env.get("DENO_JOBS") || "4" },
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const { code } = await child.status;
  const skipped = skippedLine(Deno.env, { peerFree: !peers });
  if (skipped) console.log(skipped);
  return code;
}

if (import.meta.main) Deno.exitCode = await testTask(Deno.args);
