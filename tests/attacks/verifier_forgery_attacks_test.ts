/**
 * Forgeries of a run that the writer of its folder can make without a key: each rewrites one of two places of
 * the record that say the same thing, re-chains and re-seals, or claims what only the catalog can bear out.
 * `verifyRun` must not pass any of them (issue #23): the two places must agree, and `pinned: null` is asked of
 * the catalog.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Catalog } from "../../lib/provcat/mod.ts";
import { commitBundle, verifyRun } from "../../lib/provevi/mod.ts";
import { FileRunRecord } from "../../lib/provevi/store/mod.ts";
import { sha256Hex } from "../../lib/provevi/evidence/mod.ts";
import { makeRepo } from "../provcat/_helpers.ts";
import { fixtureCopy, manifestPath, rechain } from "../provevi/_tamper.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { removeWritable } from "../_files.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("verifier forgeries");

/** Stores a run file as run_created's payload, listed in the manifest, and sets data.bundle; re-chains. */
async function forgeBundleFlags(folder: string, flags: { data: boolean; file: boolean }): Promise<void> {
  const text = `run:\n  bundle: ${flags.file}\n`;
  const sha = sha256Hex(text);
  await Deno.writeTextFile(join(folder, "evidence", "payloads", sha), text);
  const m = JSON.parse(await Deno.readTextFile(manifestPath(folder)));
  m.payloads = [...m.payloads, { sha256: sha, size: text.length }].sort((
    a,
    b,
  ) => (a.sha256 < b.sha256 ? -1 : 1));
  m.payload_bytes += text.length;
  await Deno.writeTextFile(manifestPath(folder), JSON.stringify(m));
  await rechain(folder, (es) => {
    es[0]!.payload = sha;
    (es[0]!.data as Record<string, unknown>).bundle = flags.data;
    return es;
  });
}

Deno.test("a run whose run_created and run file disagree about the bundle does not verify, whichever says true", async () => {
  for (const flags of [{ data: false, file: true }, { data: true, file: false }]) {
    const { dir, folder } = await fixtureCopy();
    try {
      await forgeBundleFlags(folder, flags);
      const check = await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, folder));
      const codes = check.problems.map((p) => p.code);
      const stopped = !check.ok && codes.includes("bundle.flag_disagrees");
      tally.add(`bundle flags data ${flags.data}, file ${flags.file}`, {
        stopped,
        recorded: codes.includes("bundle.missing"),
      });
      assert.deepEqual(codes, ["bundle.flag_disagrees", "bundle.missing"], JSON.stringify(flags));
    } finally {
      await removeWritable(dir);
    }
  }
});

Deno.test("bundle.json with pinned null for a bundle committed to a git store does not verify, even when the run was forged after the commit", async () => {
  const { dir, folder } = await fixtureCopy();
  const uri = `run://acme/demo/dev/${SAMPLE_RUN_ID}`;
  const catalog = await Catalog.open({
    config: {
      cache: join(dir, "cache"),
      stores: {
        bundles: { type: "git", path: await makeRepo(join(dir, "bundles"), { "README.md": "b\n" }) },
      },
      routes: [{ prefix: "run://acme/demo/dev", store: "bundles", path: "runs" }],
    },
  });
  try {
    await commitBundle(catalog, folder, uri);
    // The forger changes the run, re-chains it, and hides the bundle from the comparison.
    await rechain(folder, (es) => {
      (es[8]!.data as Record<string, unknown>).output_tokens = 7;
      return es;
    });
    await Deno.writeTextFile(join(folder, "bundle.json"), JSON.stringify({ uri, pinned: null }) + "\n");
    const check = await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, folder), { catalog });
    const codes = check.problems.map((p) => p.code);
    tally.add("pinned null in a git store", {
      stopped: !check.ok,
      recorded: codes.includes("bundle.unpinned_versioned"),
    });
    assert.deepEqual(codes, ["bundle.unpinned_versioned"]);
    // Another run's URI under pinned null is refused too.
    await Deno.writeTextFile(
      join(folder, "bundle.json"),
      JSON.stringify({ uri: "run://acme/demo/dev/run-other", pinned: null }) + "\n",
    );
    const other = await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, folder), { catalog });
    tally.add("pinned null naming another run", {
      stopped: !other.ok,
      recorded: other.problems.some((p) => p.code === "bundle.other_run"),
    });
    assert.deepEqual(other.problems.map((p) => p.code), ["bundle.other_run"]);
  } finally {
    await catalog.close();
    await removeWritable(dir);
  }
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
