/**
 * Puts a link to a folder of the user's and the run's own subfolder in turn at one path, as fast as it can, until
 * it is killed: the attacker of `output_walk_attacks_test.ts`, who swaps a link in for a subfolder between a
 * walk's listing and its reads. Each turn renames the two into place, so the path is never missing.
 * Arguments: the folder, the subfolder's name in it, and the user's folder.
 * @module
 */
const [dir, name, target] = Deno.args as [string, string, string];
const at = `${dir}/${name}`;
const real = `${dir}/.${name}-real`;
const link = `${dir}/.${name}-link`;
try {
  Deno.symlinkSync(target, link);
} catch { /* left by an earlier run */ }
for (;;) {
  try {
    Deno.renameSync(at, real);
    Deno.renameSync(link, at); // the link in place
    Deno.renameSync(at, link);
    Deno.renameSync(real, at); // the folder back
  } catch { /* a turn cut by a kill: the next one goes on */ }
}
