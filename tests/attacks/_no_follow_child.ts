/**
 * Reads a path with `readCappedSync` under the permission set it is run with (not `--allow-all`, under which
 * Deno's `node:fs` keeps `O_NOFOLLOW`), and prints `read` or `refused: <message>`. The child of
 * `open_file_attacks_test.ts`.
 * @module
 */
import { readCappedSync } from "../../lib/provevi/evidence/open_file.ts";

try {
  readCappedSync(Deno.args[0]!, 4096);
  console.log("read");
} catch (error) {
  console.log(`refused: ${(error as Error).message}`);
}
