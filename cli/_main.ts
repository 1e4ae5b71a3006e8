/**
 * Turns a command's result into an exit code: user mistakes are one line `NAME: …` on standard error with the
 * error's exit code; usage errors exit 2; anything else is a bug and is re-thrown.
 * @module
 */
import { type Command, CommanderError } from "commander";
import { ProveviError } from "../lib/provevi/errors.ts";
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
 * Runs a commander program whose actions set `result.code`, mapping errors to exit codes.
 *
 * @param program The program, built for this call.
 * @param args The arguments, without the program's name.
 * @param io Where to write.
 * @returns The exit code.
 */
export async function runProgram(
  program: Command,
  args: string[],
  io: Io,
  result: { code: number },
): Promise<number> {
  const name = program.name();
  const configure = (cmd: Command) => {
    cmd.exitOverride();
    cmd.configureOutput({
      writeOut: (s) => io.out(s.replace(/\n$/, "")),
      writeErr: (s) => io.err(s.replace(/\n$/, "")),
      outputError: (s, write) => write(`${name}: ${s.replace(/^error: /, "").trim()}\n`),
    });
    for (const sub of cmd.commands) configure(sub);
  };
  configure(program);
  try {
    await program.parseAsync(args, { from: "user" });
    return result.code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof ProveviError) {
      io.err(`${name}: ${error.message}`);
      return error.exitCode;
    }
    throw error;
  }
}
