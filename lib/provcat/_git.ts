/**
 * Runs the `git` program (`--allow-run=git`) and reads blobs in bulk with `git cat-file --batch`.
 * @module
 */
import { dirname } from "node:path";
import { CatalogError } from "./errors.ts";
import { COMMIT_MAX_BYTES, readStreamCapped } from "./_capped_read.ts";

/** What one run of git gave. */
export interface GitResult {
  code: number;
  stdout: Uint8Array;
  stderr: string;
}

const decoder = new TextDecoder();

/** The most of git's output a run of it gives (a tree listed, a list of IDs): as a commit's map of keys. */
export const GIT_OUTPUT_MAX_BYTES = COMMIT_MAX_BYTES;

/** The most of git's standard error kept: its first lines are all a message shows. */
const GIT_ERRORS_MAX_BYTES = 64 * 1024;

/**
 * Runs git with arguments, optional standard input and extra variables. Its output is read within `max` (git
 * is killed past it): a repository that another party writes decides how much git says.
 * @throws CatalogError when git cannot be started; CappedReadError past `max`.
 */
export async function runGit(
  args: string[],
  options: {
    stdin?: Uint8Array | string;
    env?: Record<string, string>;
    cwd?: string;
    /** The most of its standard output taken; {@linkcode GIT_OUTPUT_MAX_BYTES} by default. */
    max?: number;
  } = {},
): Promise<GitResult> {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command("git", {
      args,
      stdin: options.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
      ...(options.env ? { env: options.env } : {}),
      ...(options.cwd ? { cwd: options.cwd } : {}),
    }).spawn();
  } catch (error) {
    throw new CatalogError(
      `cannot start git for a git store: ${
        (error as Error).message
      }; install git and allow it (--allow-run=git)`,
      { cause: error },
    );
  }
  // written while the output is read: git that answers as it reads (hash-object) would fill its pipe and wait
  const feeding = options.stdin === undefined ? Promise.resolve() : (async () => {
    const writer = child.stdin.getWriter();
    const bytes = typeof options.stdin === "string"
      ? new TextEncoder().encode(options.stdin)
      : options.stdin!;
    await writer.write(bytes);
    await writer.close();
  })().catch(() => {}); // git that ended early (refused) closes its input; its status says why
  const errors = headOf(child.stderr, GIT_ERRORS_MAX_BYTES);
  const max = options.max ?? GIT_OUTPUT_MAX_BYTES;
  const command = args.find((a, i) => !a.startsWith("-") && args[i - 1] !== "-C" && args[i - 1] !== "-c") ??
    "";
  let stdout: Uint8Array;
  try {
    stdout = await readStreamCapped(child.stdout, {
      max,
      stallMs: Infinity,
      what: `the output of git ${command}`,
      why: "the most the catalog takes of it",
    });
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch { /* ended already */ }
    await Promise.all([feeding, errors, child.status]);
    throw error;
  }
  await feeding;
  const status = await child.status;
  return { code: status.code, stdout, stderr: decoder.decode(await errors).trim() };
}

/** The first `max` bytes of a stream, the rest read and dropped (so that the writer never waits on it). */
async function headOf(stream: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array> {
  const kept: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of stream) {
    if (size < max) kept.push(chunk.slice(0, max - size));
    size += chunk.byteLength;
  }
  return concatAll(kept);
}

function concatAll(chunks: Uint8Array[]): Uint8Array {
  return chunks.reduce((a, b) => concat(a, b), new Uint8Array(0));
}

/** The text of git's standard output, without its last newline. */
export function text(result: GitResult): string {
  return decoder.decode(result.stdout).replace(/\n$/, "");
}

/**
 * Writes blobs to files, all through one `git cat-file --batch`, streaming each blob to its file.
 *
 * @param gitArgs The arguments that choose the repository (`--git-dir=…`).
 * @param blobs Each blob's object ID and the file to write.
 */
export async function writeBlobs(
  gitArgs: string[],
  blobs: { oid: string; path: string }[],
): Promise<void> {
  if (blobs.length === 0) return;
  const child = new Deno.Command("git", {
    args: [...gitArgs, "cat-file", "--batch"],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const feeding = (async () => {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(blobs.map((b) => b.oid).join("\n") + "\n"));
    await writer.close();
  })();
  const stderr = headOf(child.stderr, GIT_ERRORS_MAX_BYTES).then((bytes) => decoder.decode(bytes));
  let index = 0;
  let pending: Uint8Array = new Uint8Array(0);
  let remaining = -1; // bytes of the current blob still to write; -1 while reading a header
  let file: Deno.FsFile | null = null;
  const made = new Set<string>();
  try {
    for await (const chunk of child.stdout) {
      pending = pending.length ? concat(pending, chunk) : chunk;
      for (;;) {
        if (remaining < 0) {
          const nl = pending.indexOf(10);
          if (nl < 0 && pending.length > 1024) {
            throw new CatalogError(
              `git cat-file gave a header of more than 1 KiB for blob ${blobs[index]?.oid}`,
            );
          }
          if (nl < 0) break;
          const header = decoder.decode(pending.subarray(0, nl));
          pending = pending.subarray(nl + 1);
          const blob = blobs[index];
          const match = /^([0-9a-f]+) blob (\d+)$/.exec(header);
          if (!blob || !match) throw new CatalogError(`git cat-file gave "${header}" for blob ${blob?.oid}`);
          const parent = dirname(blob.path);
          if (!made.has(parent)) {
            await Deno.mkdir(parent, { recursive: true });
            made.add(parent);
          }
          file = await Deno.open(blob.path, { write: true, createNew: true });
          remaining = Number(match[2]);
        }
        if (remaining >= 0) {
          const take = Math.min(remaining, pending.length);
          if (take > 0) {
            await writeAll(file!, pending.subarray(0, take));
            pending = pending.subarray(take);
            remaining -= take;
          }
          if (remaining > 0 || pending.length === 0) break;
          pending = pending.subarray(1); // the newline after each blob
          file!.close();
          file = null;
          remaining = -1;
          index += 1;
        }
      }
    }
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch { /* ended already */ }
    await Promise.allSettled([feeding, stderr, child.status]);
    throw error;
  } finally {
    file?.close();
  }
  await feeding;
  const status = await child.status;
  if (!status.success || index !== blobs.length) {
    throw new CatalogError(
      `git cat-file --batch failed after ${index} of ${blobs.length} blobs: ${await stderr}`,
    );
  }
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let done = 0;
  while (done < bytes.length) done += await file.write(bytes.subarray(done));
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
