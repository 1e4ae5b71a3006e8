/**
 * The in-process stager: copies each snapshot into the run's `input/` folder (a copy-on-write clone where the
 * disk has one), makes the copy read-only, and at the end hashes each input again.
 * @module
 */
import { join } from "node:path";
import { folderHashOf, hashPath, walkFiles } from "../../provcat/_files.ts";
import { hashRegularFile } from "../../provevi/evidence/hash.ts";
import { StagingError } from "./errors.ts";

/** One staged input. */
export interface StagedInput {
  /** The name in `input/`. */
  name: string;
  /** The pinned URI. */
  pinned: string;
  /** `file` or `folder`. */
  kind: "file" | "folder";
  /** The content hash, as the snapshot gave it (a folder's is of its list of files and their hashes). */
  sha256: string;
  /** The staged path. */
  path: string;
}

/** The result of hashing a staged input again. */
export interface InputCheck {
  name: string;
  pinned: string;
  expected: string;
  sha256: string;
  ok: boolean;
}

/**
 * The stager of a run folder.
 *
 * @example
 * ```ts
 * import { InProcessStager } from "./stager.ts";
 * const stager = new InProcessStager("/tmp/runs/run-x");
 * ```
 */
export class InProcessStager {
  readonly #input: string;
  readonly staged: StagedInput[] = [];
  /** The bytes each staged input held, by its path: no more is read of it when it is hashed again. */
  readonly #sizes = new Map<string, number>();

  /** @param folder The run folder. */
  constructor(folder: string) {
    this.#input = join(folder, "input");
  }

  /**
   * Copies a snapshot into `input/<name>` and makes it read-only.
   * @throws StagingError when the name is no file name or is taken, the copy fails, or the copy's hash is not the
   *   snapshot's.
   */
  async stage(
    snapshot: { path: string; pinned: string; sha256: string; kind: "file" | "folder" },
    name: string,
  ): Promise<StagedInput> {
    // The name may come from a URI's last segment: `input/..` would be the run folder itself.
    if (name === "." || name === ".." || /[/\\\0]/.test(name) || name === "") {
      throw new StagingError(
        `an input cannot be staged as "${name}": a staged name is a file name; set inputs[].as`,
      );
    }
    if (this.staged.some((s) => s.name === name)) {
      throw new StagingError(`two inputs are staged as "${name}"; set inputs[].as`);
    }
    await Deno.mkdir(this.#input, { recursive: true });
    const dest = join(this.#input, name);
    const copy = await new Deno.Command("cp", {
      args: ["-R", "--reflink=auto", "--no-preserve=mode,ownership", snapshot.path, dest],
      stderr: "piped",
    }).output();
    if (!copy.success) {
      throw new StagingError(
        `cannot stage ${snapshot.pinned}: ${new TextDecoder().decode(copy.stderr).trim()}`,
      );
    }
    await readOnly(dest);
    const staged = {
      name,
      pinned: snapshot.pinned,
      kind: snapshot.kind,
      sha256: snapshot.sha256,
      path: dest,
    };
    const actual = await contentHash(dest, snapshot.kind);
    if (actual !== snapshot.sha256) {
      throw new StagingError(`the snapshot of ${snapshot.pinned} does not match its hash`);
    }
    this.#sizes.set(dest, await sizeOf(dest, snapshot.kind));
    this.staged.push(staged);
    return staged;
  }

  /** Hashes each staged input again and compares it with the hash it was staged with. */
  async verify(): Promise<InputCheck[]> {
    const checks: InputCheck[] = [];
    for (const s of this.staged) {
      let sha256: string;
      try {
        sha256 = await hashAgain(s.path, s.kind, this.#sizes.get(s.path) ?? Infinity);
      } catch {
        sha256 = "missing";
      }
      checks.push({ name: s.name, pinned: s.pinned, expected: s.sha256, sha256, ok: sha256 === s.sha256 });
    }
    return checks;
  }
}

/**
 * The content hash of a file (its SHA-256) or of a folder, in the form provcat's snapshots use, so that a
 * staged input compares with its snapshot.
 */
export const contentHash: (path: string, kind: "file" | "folder") => Promise<string> = hashPath;

/** The bytes a staged input holds: a file's, or the sum of a folder's files'. */
async function sizeOf(path: string, kind: "file" | "folder"): Promise<number> {
  if (kind === "file") return (await Deno.lstat(path)).size;
  let size = 0;
  for (const f of await walkFiles(path)) size += (await Deno.lstat(f.abs)).size;
  return size;
}

/**
 * A staged input's content hash at the end of the run, as {@linkcode contentHash} gives it, read as what the run's
 * program may have put in its place: no link followed, no FIFO waited on (one held the run's end for ever), and
 * no more bytes read than it was staged with (a sparse file of 64 GiB in its place was hashed whole, with
 * synchronous reads that held provr's every timer).
 * @throws for anything else there: the input is then not the one staged.
 */
async function hashAgain(path: string, kind: "file" | "folder", size: number): Promise<string> {
  if (kind === "file") return (await hashRegularFile(path, size)).sha256;
  const sums = new Map<string, string>();
  let left = size;
  for (const f of await walkFiles(path)) {
    const hashed = await hashRegularFile(f.abs, left);
    sums.set(f.rel, hashed.sha256);
    left -= hashed.size;
  }
  return folderHashOf(sums);
}

async function readOnly(path: string): Promise<void> {
  const info = await Deno.lstat(path);
  if (info.isDirectory) {
    for await (const e of Deno.readDir(path)) await readOnly(join(path, e.name));
    await Deno.chmod(path, 0o555);
  } else if (info.isFile) await Deno.chmod(path, 0o444);
}
