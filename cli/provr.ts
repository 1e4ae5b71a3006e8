/**
 * `provr`: runs agents on pinned data and records the evidence; shows and verifies runs.
 *
 * ```sh
 * provr [--runs DIR] [--store URI] run FILE [--policy FILE] [--sign-key FILE] [--json]
 * provr [--runs DIR] [--store URI] run --from RUN --at N [--model M] [--prompt FILE] [--set KEY=VALUE…] [--json]
 * provr [--runs DIR] [--store URI] replay RUN [--file FILE] [--json]
 * provr [--runs DIR] [--store URI] resume RUN [--json]
 * provr [--runs DIR] [--store URI] show RUN [--json]
 * provr [--runs DIR] [--store URI] verify RUN [--require-bundle] [--bundle URI] [--config FILE] [--tenant NAME]
 * provr catalog [--config FILE] [--tenant NAME] pin|ls|snapshot URI [--json]
 * provr catalog [--config FILE] [--tenant NAME] put URI PATH [--json]
 * provr catalog [--config FILE] [--tenant NAME] commit URI -m MESSAGE [--json]
 * ```
 * @module
 */
import "./_sandbox_role.ts"; // first: a compiled provr started as a sandbox process serves there and ends
import type { Io } from "./_io.ts";

// The command's libraries are imported, not only evaluated, after the sandbox role's check: a module graph is
// evaluated whole before any of it runs, so a static import here would run the command's 175 modules and their
// packages in every sandbox process of a compiled provr (#25: 0.27 CPU s a start through `deno run` instead of
// 0.06; `deno run` still reads the graph of a written-out `import()` before it starts, but does not run it).

/**
 * Runs `provr` with the given arguments.
 *
 * @param args The arguments, without the program's name.
 * @param io Where to write (this process's stdout and stderr by default).
 * @returns The exit code.
 * @example
 * ```ts
 * import { provr } from "./provr.ts";
 * const code = await provr(["verify", "fixtures/runs/run-20261129T120000Z-0badc0de"]);
 * ```
 */
export async function provr(args: string[], io?: Io): Promise<number> {
  const command = await import("./_provr.ts");
  return await command.provr(args, ...(io ? [io] : []));
}

if (import.meta.main) {
  const { enterUserFolder, processIo } = await import("./_io.ts");
  const problem = enterUserFolder();
  if (problem) {
    processIo().err(`provr: ${problem}`);
    Deno.exitCode = 1;
  } else Deno.exitCode = await provr(Deno.args);
}
