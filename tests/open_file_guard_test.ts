/**
 * Keeps the FIFO/link class of hole closed: a reader that opens a path with a plain open (Deno's `open`,
 * `readFile`, `readTextFile`, `copyFile`, node's `openSync`, `readFileSync`, `createReadStream`…), or looks at it first and
 * opens it after, waits for ever on a FIFO put there, follows a link put there, or reads a device or a sparse
 * file whole. Every file of `lib/` and `cli/` that another party can write (run folders, stores, logs, catalogs,
 * an agent program's files) is opened through `lib/provevi/evidence/open_file.ts`. This test fails when a file
 * gains a plain open: move it to `open_file.ts`, or, for a file the toolkit itself owns and writes, add it below
 * with why.
 * @module
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;

/** A plain open of a path, in code (comments are left out first). */
const PLAIN_OPEN =
  /\bDeno\.(open|openSync|readFile|readFileSync|readTextFile|readTextFileSync|copyFile|copyFileSync)\(|\b(?:fs\.)?(openSync|readFileSync|createReadStream)\(|\b(?:fs\.promises|fsp?)\.(open|readFile)\(/g;

/** The one module, whose opens are the checked ones. */
const THE_MODULE = "lib/provevi/evidence/open_file.ts";
/** Its parts: a checked descriptor's reads as a `Deno.FsFile`'s, a folder walked by checked folders (their opens are checked too). */
const ITS_PARTS = new Set(["lib/provevi/evidence/fd_file.ts", "lib/provevi/evidence/open_tree.ts"]);

/**
 * The plain opens kept, by file, with how many and why: files the toolkit itself makes and owns (its locks, its
 * log's state, its caches, a file created new, which follows no link), files the user names on the command line
 * or in a config (a FIFO there is the user's own doing).
 */
const ALLOWED: Record<string, [number, string]> = {
  "lib/provtrace/export/export_file.ts": [1, "the export file the user names, written"],
  "lib/provevi/log/sync_paths.ts": [
    2,
    "fsyncs a file or folder the toolkit has just written (to read and write, which waits for no FIFO; read-only only after a look)",
  ],
  "lib/provevi/log/witness.ts": [1, "the witness's own lock in its state folder"],
  "lib/provevi/mlflow/copy_lock.ts": [1, "the toolkit's own copy lock"],
  "lib/provevi/mlflow/mlflow_server.ts": [1, "the server's log file the user names, appended"],
  "lib/provevi/telemetry/span_libraries.ts": [
    2,
    "the config the user names; the toolkit's own package cache",
  ],
  "lib/provevi/postgres/postgres_connection.ts": [1, "the CA file the user names (sslrootcert)"],
  "lib/provevi/postgres/postgres_uri.ts": [1, "the passfile the user names"],
  "lib/provevi/store/file_run_writer.ts": [1, "createNew: the writer's new events.jsonl, no link followed"],
  "lib/provevi/store/pack_file.ts": [1, "createNew: the writer's new pack, no link followed"],
  "lib/provrun/sandbox/tools_folder.ts": [1, "the tools folder the user names"],
  "lib/provrun/sandbox/_package_types_build.ts": [2, "a build script over the toolkit's own lock file"],
  "lib/provcat/_capped_read.ts": [1, "createNew: an object of a store written new, no link followed"],
  "lib/provcat/_files.ts": [1, "the cache's own lock file"],
  "lib/provcat/_git.ts": [1, "createNew: a blob written new, no link followed"],
  "cli/tour.ts": [1, "the toolkit's own fixture, copied into the tour's new folder"],
};

/** The code of a TypeScript text without its comments (a rough cut: `//` to the line's end, `/* … *\/`). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
}

async function* tsFiles(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) yield* tsFiles(path);
    else if (entry.isFile && path.endsWith(".ts")) yield path;
  }
}

Deno.test("lib/ and cli/ open a path another party can write only through open_file.ts", async () => {
  const found: Record<string, number> = {};
  for (const top of ["lib", "cli"]) {
    for await (const path of tsFiles(join(ROOT, top))) {
      const rel = relative(ROOT, path);
      if (rel === THE_MODULE || ITS_PARTS.has(rel)) continue;
      const n = code(await Deno.readTextFile(path)).match(PLAIN_OPEN)?.length ?? 0;
      if (n > 0) found[rel] = n;
    }
  }
  const over = Object.entries(found)
    .filter(([rel, n]) => n > (ALLOWED[rel]?.[0] ?? 0))
    .map(([rel, n]) => `${rel}: ${n} plain open(s), ${ALLOWED[rel]?.[0] ?? 0} allowed`);
  assert.deepEqual(over, [], `open these through ${THE_MODULE}, or list them with why:\n${over.join("\n")}`);
  // an allowance no longer used is taken off, so that the list says only what is true
  const stale = Object.entries(ALLOWED)
    .filter(([rel, [n]]) => (found[rel] ?? 0) < n)
    .map(([rel, [n]]) => `${rel}: ${found[rel] ?? 0} plain open(s), ${n} allowed`);
  assert.deepEqual(stale, [], `lower these allowances:\n${stale.join("\n")}`);
});

Deno.test("the guard sees each kind of plain open", () => {
  const kinds = [
    "Deno.open(p)",
    "Deno.openSync(p)",
    "Deno.readFile(p)",
    "Deno.readTextFileSync(p)",
    "Deno.copyFile(p, q)",
    "fs.openSync(p, 0)",
    "readFileSync(p)",
    "fs.promises.open(p)",
    "createReadStream(p)",
  ];
  for (const k of kinds) assert.equal(code(k).match(PLAIN_OPEN)?.length, 1, k);
  assert.equal(code("// Deno.open(p)\n/* Deno.readFile(p) */").match(PLAIN_OPEN), null);
});
