/**
 * Walks a run's `output/` as the run's end does, many times, and prints how many walks ended and how many
 * recorded a file of the given hash: the walker of `output_walk_attacks_test.ts`, run with all permissions or
 * provr's permission set. Arguments: the run folder, the number of walks, the SHA-256 of the user's file.
 * @module
 */
import { collectOutputs } from "../../lib/provrun/run/outputter.ts";

const [folder, walks, sha256] = Deno.args as [string, string, string];
let [done, recorded] = [0, 0];
for (let i = 0; i < Number(walks); i++) {
  const found = await collectOutputs(folder);
  if (found.outputs.some((o) => o.sha256 === sha256)) recorded += 1;
  done += 1;
}
console.log(JSON.stringify({ done, recorded }));
