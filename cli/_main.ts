/**
 * Turns a command's result into an exit code: user mistakes are one line `NAME: …` on standard error with the
 * error's exit code; usage errors exit 2; anything else is a bug and is re-thrown.
 * @module
 */
import { type Command, CommanderError } from "commander";
import { ProveviError } from "../lib/provevi/evidence/errors.ts";
import { CatalogError } from "../lib/provcat/errors.ts";
import type { Io } from "./_io.ts";

/** A usage error, as argparse would reject it: exit 2. */
export class UsageError extends ProveviError {
  override readonly exitCode = 2;
  /** @param message What is wrong with the command line. */
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/**
 * A mistake a user can make, by its class: provevi's errors (and provrun's, which extend them, and the CLI's
 * `UsageError`) and provcat's, which cannot extend provevi's (provcat imports nothing of provevi). Each carries
 * the exit code it gives.
 */
function isUserError(error: unknown): error is ProveviError | CatalogError {
  return error instanceof ProveviError || error instanceof CatalogError;
}

function isOsError(error: unknown): error is Error {
  return Object.values(Deno.errors).some((kind) => error instanceof kind);
}

/**
 * Runs a commander program whose actions set `result.code`, mapping errors to exit codes.
 *
 * @param program The program, built for this call.
 * @param args The arguments, without the program's name.
 * @param options `io`: where to write; `result`: the exit code the actions set.
 * @returns The exit code.
 */
export async function runProgram(
  program: Command,
  args: string[],
  options: { io: Io; result: { code: number } },
): Promise<number> {
  const { io, result } = options;
  const name = program.name();
  const configure = (cmd: Command) => {
    cmd.exitOverride();
    cmd.configureOutput({
      writeOut: (s) => io.out(s.replace(/\n$/, "")),
      writeErr: (s) => io.err(s.replace(/\n$/, "")),
      // One line: commander puts its "(Did you mean verify?)" on a line of its own.
      outputError: (s, write) =>
        write(
          `${name}: ${s.replace(/^error: /, "").trim().replace(/\n\(Did you mean /, " (did you mean ")}\n`,
        ),
      // commander reads NO_COLOR, FORCE_COLOR and CLICOLOR_FORCE to choose colours; the tasks' --allow-env
      // lists none of them, so asking would end `--help` with NotCapable. The help is plain text.
      getOutHasColors: () => false,
      getErrHasColors: () => false,
    });
    for (const sub of cmd.commands) configure(sub);
  };
  configure(program);
  try {
    await program.parseAsync(args, { from: "user" });
    return result.code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (isUserError(error)) {
      io.err(`${name}: ${error.message.split("\n")[0]}`);
      return error.exitCode;
    }
    // An error of the operating system (a path that is a file, a folder Deno may not read) is about what the
    // user typed, not a bug: one line, naming the path, exit 1.
    if (isOsError(error)) {
      io.err(`${name}: ${error.name}: ${error.message.split("\n")[0]}; check the paths given`);
      return 1;
    }
    throw error;
  }
}
