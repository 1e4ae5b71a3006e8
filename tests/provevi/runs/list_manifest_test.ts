/**
 * The runs list tells a sealed run by its manifest being there: it read the manifest whole for that, and since it
 * read it with the line bound of events.jsonl (16 MiB a line), a sealed run whose manifest is one line past it (a
 * run of some 200,000 payloads, each listed in it) was listed as not sealed, cut. It looks at the file, as a plain
 * file, without reading it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { listRuns } from "../../../lib/provevi/runs/list_runs.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { WRITER_LOCK } from "../../../lib/provevi/evidence/writer_process.ts";
import { sampleRun } from "../../attacks/_setup.ts";

Deno.test("a sealed run whose manifest is past 16 MiB is listed with the status its events end with", async () => {
  const run = await sampleRun("list-manifest-");
  try {
    const runs = join(run.dir, "runs");
    // the writer's lock left behind, free: its writer is gone, as after any run of provr
    await Deno.writeTextFile(join(run.folder, WRITER_LOCK), "");
    const before = (await listRuns(new FileStore({ runs }))).runs.map((r) => r.status);
    const path = join(run.folder, "evidence", "manifest.json");
    const manifest = JSON.parse(await Deno.readTextFile(path));
    const entry = (i: number) => ({ sha256: i.toString(16).padStart(64, "0"), size: 1 });
    manifest.payloads = Array.from({ length: 200_000 }, (_, i) => entry(i));
    await Deno.writeTextFile(path, JSON.stringify(manifest) + "\n");
    assert.ok((await Deno.stat(path)).size > 16 * 1024 * 1024);
    const after = (await listRuns(new FileStore({ runs }))).runs.map((r) => r.status);
    assert.deepEqual(after, before);
    // a manifest that is not a plain file is no seal
    await Deno.remove(path);
    await Deno.symlink(join(run.dir, "elsewhere.json"), path);
    assert.notDeepEqual((await listRuns(new FileStore({ runs }))).runs.map((r) => r.status), before);
  } finally {
    await Deno.remove(run.dir, { recursive: true });
  }
});
