/**
 * The guard of the files that carry an agent program's hooks. provr writes the program's config (its hooks, its
 * model provider, its telemetry) before the program starts; a program that rewrote it could drop the hooks, and
 * the blocking `PreToolUse` with them. The guard hashes each such file once provr has written it (a file that is
 * absent is held absent), and says which differ: the backend asks it at each blocking hook (a call after a change
 * is refused) and after the program exits (a change fails the run).
 * @module
 */
import { relative } from "node:path";
import { sha256Hex } from "../../provevi/evidence/hash.ts";
import { ProveviError } from "../../provevi/evidence/mod.ts";
import { IrregularFile, readRegularFile } from "../../provevi/evidence/open_file.ts";
import { PROGRAM_FILE_MAX_BYTES } from "./_program_files.ts";

/** The files a program's hooks live in, as hashed when the program started. */
export interface FileGuard {
  /** Each file by its path in the run folder, with its SHA-256 (hex) when it started, or null when absent. */
  readonly files: Readonly<Record<string, string | null>>;
  /** One line per file that differs now from its start (changed, removed or made), in path order. */
  changed(): Promise<string[]>;
}

/** The SHA-256 of a file in hex, or null when there is no file to read. */
async function hashOf(path: string): Promise<string | null> {
  let bytes: Uint8Array | null;
  try {
    // never through a link, never waiting on a FIFO the program put in the file's place (it held each hook)
    bytes = await readRegularFile(path, PROGRAM_FILE_MAX_BYTES);
  } catch (error) {
    // A file the program made unreadable, or a FIFO, link or folder in its place, is a change too; its hash
    // cannot be the one provr wrote.
    return `unreadable: ${error instanceof IrregularFile ? error.reason : String(error)}`;
  }
  return bytes === null ? null : sha256Hex(bytes);
}

/**
 * Hashes the files that carry a program's hooks, as they are now.
 *
 * @param paths The files (absolute), present or not.
 * @param folder The run folder, which `files` and the lines are relative to.
 * @returns The guard.
 */
export async function guardFiles(paths: readonly string[], folder: string): Promise<FileGuard> {
  const start = new Map<string, string | null>();
  for (const path of [...paths].sort()) start.set(path, await hashOf(path));
  const files: Record<string, string | null> = {};
  for (const [path, hash] of start) files[relative(folder, path)] = hash;
  return {
    files: Object.freeze(files),
    changed: async () => {
      const lines: string[] = [];
      for (const [path, was] of start) {
        const now = await hashOf(path);
        if (now === was) continue;
        const name = relative(folder, path);
        lines.push(
          was === null ? `${name} was made` : now === null ? `${name} was removed` : `${name} was changed`,
        );
      }
      return lines;
    },
  };
}

/**
 * A run whose program changed the files that carry its hooks, after provr wrote them: the hooks that decide and
 * record its tool calls may have been dropped, so the run fails.
 *
 * @example
 * ```ts
 * import { HooksChanged, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new HooksChanged("codex", [".codex/config.toml was changed"]);
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "HooksChanged");
 * ```
 */
export class HooksChanged extends ProveviError {
  /**
   * @param program The backend (`codex`).
   * @param changes One line per file, as {@linkcode FileGuard.changed} gives them.
   */
  constructor(readonly program: string, readonly changes: readonly string[], options?: ErrorOptions) {
    super(
      `${program} changed the config that holds its hooks during the run (${changes.join("; ")}): ` +
        `its tool calls after the change may have skipped provr's hooks; run it again, with a task that ` +
        `leaves its config home alone`,
      options,
    );
    this.name = "HooksChanged";
  }
}
