/**
 * Attacks on the three copies of a folder another party can change (provcat's copy of a folder it pins,
 * `prove export`'s copy of a run's `output/`, a resume's copy of the cut run's `output/`) by what changes it
 * after the copy looked: a subfolder swapped for a link to a folder of the user's (`~/.ssh`), and, for provcat's,
 * a file swapped for a link or a FIFO. Each copy listed the folder, then opened `<folder>/<sub>/<file>` by its
 * path: the open's no-follow flag guards the path's last part only, so the link in the middle was followed and
 * the user's key copied; provcat's `Deno.copyFile` also followed a file's link and waited for ever on a FIFO.
 * The copies now walk through `open_tree.ts` (each folder reached checked to be the one listed, each file opened
 * by its name there and kept only when it is the inode listed): the copy is refused in one line, and nothing of
 * the user's is copied.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { copyTree } from "../../lib/provcat/_files.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { exportRun } from "../../lib/provevi/runs/export_run.ts";
import { resumeRun } from "../../lib/provrun/replay/resume_run.ts";
import { writeRun } from "../provevi/_run.ts";
import { recorded } from "../provrun/replay/_setup.ts";
import { cutRun } from "../provrun/replay/_runs.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("tree swap attacks");
const SECRET = "the user's key\n";

/** The user's folder, `secrets/` in `dir`, holding `id_rsa`, the name the planted folder also holds. */
async function secrets(dir: string): Promise<string> {
  await Deno.mkdir(join(dir, "secrets"));
  await Deno.writeTextFile(join(dir, "secrets", "id_rsa"), SECRET);
  return join(dir, "secrets");
}

/** Puts a subfolder `sub/` (holding `id_rsa`) in `folder`, for a swap to replace. */
async function subfolder(folder: string): Promise<void> {
  await Deno.mkdir(join(folder, "sub"), { recursive: true });
  await Deno.writeTextFile(join(folder, "sub", "id_rsa"), "the run's own file\n");
}

/** Swaps `folder/sub` for a link to the user's folder. */
async function swapSub(folder: string, secret: string): Promise<void> {
  await Deno.rename(join(folder, "sub"), join(folder, ".sub-moved"));
  await Deno.symlink(secret, join(folder, "sub"));
}

/**
 * Runs `copy` with `plant` done once, when the copy makes the `nth` folder that `when` names (after its look at
 * the source): Deno.mkdir is wrapped for the copy's time.
 */
async function withPlant<T>(
  when: (path: string) => boolean,
  plant: () => Promise<void>,
  copy: () => Promise<T>,
  nth = 1,
): Promise<T> {
  const mkdir = Deno.mkdir;
  let seen = 0;
  (Deno as { mkdir: typeof Deno.mkdir }).mkdir = async (path, options) => {
    if (when(String(path)) && ++seen === nth) await plant();
    return await mkdir(path, options);
  };
  try {
    return await copy();
  } finally {
    (Deno as { mkdir: typeof Deno.mkdir }).mkdir = mkdir;
  }
}

/** The texts of the files under `dir`. */
async function* texts(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) yield* texts(path);
    else if (e.isFile) yield await Deno.readTextFile(path).catch(() => "");
  }
}

async function leaked(dir: string): Promise<boolean> {
  return (await Array.fromAsync(texts(dir)).catch((): string[] => [])).includes(SECRET);
}

/** `copy` raced with a bound: "waited" when it waits (on a FIFO), then `release` lets it go. */
async function bounded(copy: Promise<string>, release: () => void): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<"waited">((resolve) => timer = setTimeout(() => resolve("waited"), 20_000));
  const result = await Promise.race([copy, waited]).finally(() => clearTimeout(timer));
  if (result === "waited") release();
  return result;
}

const outcome = (p: Promise<unknown>) => p.then(() => "copied", (e: Error) => `refused: ${e.message}`);

const CATALOG_PLANTS: Record<string, (src: string, secret: string) => Promise<void>> = {
  "a subfolder swapped for a link to the user's folder": swapSub,
  "a file swapped for a link to the user's file": async (src, secret) => {
    await Deno.remove(join(src, "sub", "id_rsa"));
    await Deno.symlink(join(secret, "id_rsa"), join(src, "sub", "id_rsa"));
  },
  "a file swapped for a FIFO": async (src) => {
    await Deno.remove(join(src, "sub", "id_rsa"));
    assert.ok((await new Deno.Command("mkfifo", { args: [join(src, "sub", "id_rsa")] }).output()).success);
  },
};

for (const [plant, make] of Object.entries(CATALOG_PLANTS)) {
  Deno.test(`provcat's copy of a folder with ${plant} after its look copies nothing of it and does not wait`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "attack-tree-swap-" });
    try {
      const secret = await secrets(dir);
      const src = join(dir, "data");
      await subfolder(src);
      const dest = join(dir, "pinned");
      const result = await bounded(
        withPlant(
          (p) => p === join(dest, "sub"),
          () => make(src, secret),
          () => outcome(copyTree(src, dest, "folder")),
        ),
        () => {
          try {
            Deno.openSync(join(src, "sub", "id_rsa"), { read: true, write: true }).close();
          } catch { /* not the FIFO */ }
        },
      );
      const gone = await leaked(dest);
      tally.add(`provcat: ${plant}`, {
        stopped: !gone && result !== "waited",
        recorded: result.startsWith("refused"),
      });
      assert.notEqual(result, "waited", "the copy waited on the FIFO");
      assert.ok(!gone, "the user's file was copied");
      assert.match(result, /^refused: .*(is a link|is a FIFO|not a plain file|changed while it was walked)/);
      assert.equal(result.split("\n").length, 1);
      assert.equal(await Deno.readTextFile(join(secret, "id_rsa")), SECRET);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("prove export of a run whose output/ subfolder is swapped for a link after the look copies nothing of the user's", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-tree-swap-" });
  try {
    const secret = await secrets(dir);
    const id = "run-20261202T000000Z-0000000f";
    const runs = join(dir, "runs");
    await writeRun(join(runs, id), id, {
      outputs: { "answer.txt": "42\n", "sub/id_rsa": "the run's own file\n" },
    });
    await using from = new FileStore({ runs });
    await using to = new FileStore({ runs: join(dir, "to") });
    const result = await withPlant(
      (p) => p.startsWith(join(dir, "to")) && p.endsWith("output"),
      () => swapSub(join(runs, id, "output"), secret),
      () => outcome(exportRun(id, { from, to }).then((c) => assert.ok(c.ok))),
    );
    const gone = await leaked(join(dir, "to"));
    tally.add("export: a subfolder of output/ swapped for a link", {
      stopped: !gone,
      recorded: result.startsWith("refused"),
    });
    assert.ok(!gone, "the user's file was copied into the target store");
    assert.match(result, /^refused: .*changed while it was walked/);
    assert.equal(result.split("\n").length, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a resume whose cut run's output/ subfolder is swapped for a link after the look copies nothing of the user's", async () => {
  await using r = await recorded();
  const dir = await Deno.makeTempDir({ prefix: "attack-tree-swap-" });
  try {
    const secret = await secrets(dir);
    const events = await r.events();
    const keep = events.findIndex((e) => e.type === "tool_called" && e.data.tool === "rate") + 1;
    const cut = await cutRun(r.runs, r.outcome.runId, keep);
    const output = join(r.runs, cut, "output");
    await subfolder(output);
    const result = await withPlant(
      (p) => p.startsWith(r.runs) && !p.startsWith(join(r.runs, cut)) && p.endsWith("output"),
      () => swapSub(output, secret),
      async () =>
        await resumeRun(await r.store.readRun(cut), { store: r.store, catalog: r.catalog }).then(
          (resumed) => ({
            folder: resumed.run.folder,
            line: `${resumed.run.status}: ${resumed.run.error?.message}`,
          }),
          (e: Error) => ({ folder: null, line: `refused: ${e.message}` }),
        ),
      2, // the run's start makes its output/ first, before the copy
    );
    const gone = result.folder !== null && await leaked(join(result.folder, "output"));
    tally.add("resume: a subfolder of output/ swapped for a link", {
      stopped: !gone,
      recorded: /changed while it was walked/.test(result.line),
    });
    assert.ok(!gone, "the user's file was copied into the resumed run");
    assert.match(result.line, /changed while it was walked/);
    assert.equal(result.line.split("\n").length, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("tree swap attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
