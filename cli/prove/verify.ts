/**
 * `prove verify`: the evidence, the outputs and the committed bundle of a run checked.
 * @module
 */
import { addVerifyCommand } from "../_commands.ts";
import type { ProveContext } from "./_context.ts";

/** Adds the command to `prove`. */
export function addVerify({ program, io, result }: ProveContext): void {
  addVerifyCommand(program, {
    io,
    result,
    help: {
      command: "Check the evidence, the outputs and the committed bundle of a run.",
      run: "a run ID under the runs root, or a run folder's path",
      bundle: "the pinned URI of the bundle, instead of the run folder's bundle.json",
      requireBundle: "fail a run that has no committed bundle to compare with",
    },
  });
}
