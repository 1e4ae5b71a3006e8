/**
 * `deno task test`: runs the tests (`deno test --parallel` with the `test` permission set of deno.json), then
 * ends with one line that lists the test groups skipped for want of a peer and the `.ci/peers/*.sh` that would
 * enable them (`tests/_peers.ts`). Arguments go to `deno test`; without a path, it runs `tests/`.
 *
 * Files run several at a time (`DENO_JOBS`, 4 unless set): many tests wait on child processes, servers and
 * timers rather than on a core, so more files than cores keep both cores busy.
 * @module
 */
import { permissionFlags } from "../cli/_permissions.ts";
import { skippedLine } from "./_peers.ts";

const ROOT = new URL("../", import.meta.url).pathname;

/** Runs the tests; returns `deno test`'s exit code. */
export async function testTask(args: string[]): Promise<number> {
  // A path given (`deno task test tests/cli/`, `./tests/x_test.ts`) runs instead of the whole of tests/.
  const paths = args.some((a) => !a.startsWith("-") && (a.includes("/") || a.endsWith(".ts")))
    ? []
    : ["tests/"];
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", ...permissionFlags("test"), "--parallel", ...args, ...paths],
    cwd: ROOT,
    env: { DENO_JOBS: Deno.env.get("DENO_JOBS") || "4" },
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const { code } = await child.status;
  const skipped = skippedLine();
  if (skipped) console.log(skipped);
  return code;
}

if (import.meta.main) Deno.exitCode = await testTask(Deno.args);
