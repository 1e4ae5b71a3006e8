/**
 * Writes the fixtures of the evidence format: fixtures/runs/<sample run>, a tampered copy in
 * fixtures/runs-tampered/, and fixtures/evidence-vectors.json with the expected hashes. Run it with
 * `deno run --allow-read --allow-write --allow-env tests/provevi/write_fixtures.ts` after a format change.
 * @module
 */
import { join } from "node:path";
import { FileStore, sha256Hex } from "../../lib/provevi/mod.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "./_sample_run.ts";
import { copyFolder } from "../_files.ts";

/** Writes the fixtures under `root` (the repository's fixtures/ folder by default). */
export async function writeFixtures(root: string): Promise<void> {
  const runs = join(root, "runs");
  await Deno.remove(join(runs, SAMPLE_RUN_ID), { recursive: true }).catch(() => {});
  const store = new FileStore({ runs });
  const manifest = await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
  const folder = join(runs, SAMPLE_RUN_ID);
  const lines = (await Deno.readTextFile(join(folder, "evidence", "events.jsonl"))).trimEnd().split("\n");
  const vectors = {
    run_id: SAMPLE_RUN_ID,
    line_sha256: lines.map((l) => sha256Hex(l)),
    last_hash: manifest.last_hash,
    manifest_sha256: sha256Hex(await Deno.readTextFile(join(folder, "evidence", "manifest.json"))),
    payloads: manifest.payloads,
    outputs: { "answer.txt": sha256Hex(await Deno.readFile(join(folder, "output", "answer.txt"))) },
  };
  await Deno.writeTextFile(join(root, "evidence-vectors.json"), JSON.stringify(vectors, null, 2) + "\n");
  // The tampered copy: one token count of the model call changed, nothing else.
  const tampered = join(root, "runs-tampered", SAMPLE_RUN_ID);
  await Deno.remove(tampered, { recursive: true }).catch(() => {});
  await Deno.mkdir(join(root, "runs-tampered"), { recursive: true });
  await copyFolder(folder, tampered);
  const events = join(tampered, "evidence", "events.jsonl");
  await Deno.writeTextFile(
    events,
    (await Deno.readTextFile(events)).replace('"output_tokens":9', '"output_tokens":7'),
  );
}

if (import.meta.main) await writeFixtures(new URL("../../fixtures", import.meta.url).pathname);
