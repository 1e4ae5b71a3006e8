/**
 * Puts a named pipe and a plain file in turn at one path, as fast as it can, until it is killed: the attacker of
 * `fifo_swap_attacks_test.ts`, who swaps a pipe in between a reader's look at a file and its open.
 * Arguments: the folder (holding `fifo` and `file`) and the name to swap at.
 * @module
 */
const [dir, name] = Deno.args as [string, string];
const at = `${dir}/${name}`;
for (;;) {
  for (const from of ["fifo", "file"]) {
    try {
      Deno.linkSync(`${dir}/${from}`, `${at}.swap`);
      Deno.renameSync(`${at}.swap`, at);
    } catch { /* a link left by a kill: the next turn replaces it */ }
  }
}
