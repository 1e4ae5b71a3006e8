/**
 * `provtrace`: the trace database built from sealed runs (provtrace-spec.txt). Not built yet: this command
 * only says so, and exits 1.
 * @module
 */
import { type Io, processIo } from "./_io.ts";

/** Runs `provtrace`. @returns The exit code. */
export function provtrace(_args: string[], io: Io = processIo()): number {
  io.err("provtrace: the trace database is not built yet; see docs/ for what works today");
  return 1;
}

if (import.meta.main) Deno.exitCode = provtrace(Deno.args);
