/**
 * Test helpers for folders: catalog snapshots are read-only, so a test's temp folder is made writable before
 * it is removed; fixtures are copied with `cp -r`, as a user would.
 * @module
 */

/**
 * Gives the owner write permission on a folder and everything below it (`chmod -R u+w`).
 *
 * @param path The folder.
 * @example
 * ```ts ignore
 * await makeWritable(snapshot.path);
 * ```
 */
export async function makeWritable(path: string): Promise<void> {
  await new Deno.Command("chmod", { args: ["-R", "u+w", path] }).output();
}

/**
 * Removes a temp folder that may hold read-only snapshots.
 *
 * @param path The folder.
 * @example
 * ```ts ignore
 * const dir = await Deno.makeTempDir();
 * await removeWritable(dir);
 * ```
 */
export async function removeWritable(path: string): Promise<void> {
  await makeWritable(path);
  await Deno.remove(path, { recursive: true });
}

/**
 * Copies a folder and what it holds (`cp -r`).
 *
 * @param from The folder to copy.
 * @param to Where the copy goes.
 * @example
 * ```ts ignore
 * await copyFolder("fixtures/runs", join(dir, "runs"));
 * ```
 */
export async function copyFolder(from: string, to: string): Promise<void> {
  await new Deno.Command("cp", { args: ["-r", from, to] }).output();
}
