/**
 * What each `prove` command is given: the program to add itself to, where to write, the exit code it may
 * set, and the store scope that opens the store of `--store` and `--runs` around its work.
 * @module
 */
import type { Command } from "commander";
import type { storeScope } from "../_commands.ts";
import type { Io } from "../_io.ts";

/** The context of a `prove` command. */
export interface ProveContext {
  /** The `prove` program. */
  program: Command;
  /** Where to write. */
  io: Io;
  /** The exit code, 0 unless a command sets it. */
  result: { code: number };
  /** Runs work with the store that `--store` and `--runs` name open, and closes it after. */
  withStore: ReturnType<typeof storeScope>;
}
