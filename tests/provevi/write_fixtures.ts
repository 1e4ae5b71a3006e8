/**
 * Writes the fixtures of the evidence format: fixtures/runs/<sample run>, a tampered copy in
 * fixtures/runs-tampered/, and fixtures/evidence-vectors.json with the expected hashes. Run it with
 * `deno run --allow-read --allow-write --allow-env --allow-run=cp tests/provevi/write_fixtures.ts` after a format
 * change.
 * @module
 */
import { join } from "node:path";
import { attestRun } from "../../lib/provevi/evidence/attestation.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { FileRunRecord } from "../../lib/provevi/store/file_run_record.ts";
import { readSigningKey, readTrustedKey, writeKeyPair } from "../../lib/provevi/evidence/signing_key.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "./_sample_run.ts";
import { copyFolder } from "../_files.ts";
import { rechain } from "./_tamper.ts";
import { VECTORS } from "./_vectors.ts";

/** Writes the fixtures under `root` (the repository's fixtures/ folder by default). */
export async function writeFixtures(root: string): Promise<void> {
  const runs = join(root, "runs");
  // The store's log (runs/.log/, and the run's proof that it is in it) and the writer's lock are the store's, not
  // the fixture's: a log left from an earlier pass would hold the run already, and a second pass could not seal
  // it again. Check 10 (the log) has tests of its own.
  const notFixture = ["../.log", ".writer.lock", "log.tlog-proof"].map((p) => join(runs, SAMPLE_RUN_ID, p));
  for (const p of [join(runs, SAMPLE_RUN_ID), ...notFixture]) {
    await Deno.remove(p, { recursive: true }).catch(() => {});
  }
  const store = new FileStore({ runs });
  // The sample run keeps format 1 (each payload a file): runs of that format still verify. The vectors
  // packed-* hold it in format 2 (tests/provevi/_pack_vectors.ts).
  const manifest = await writeSampleRun(await store.openRun(SAMPLE_RUN_ID, { payloads: "files" }));
  await store.close();
  for (const p of notFixture) await Deno.remove(p, { recursive: true }).catch(() => {});
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
  const written = await writeVectors(root, folder);
  await Deno.writeTextFile(
    join(root, "evidence-vectors.json"),
    JSON.stringify({ ...vectors, vectors: written }, null, 2) + "\n",
  );
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

/**
 * Writes each tampered run of {@linkcode VECTORS} under `vectors/<name>/`, with the public key of the signed
 * ones in `keys/`, and gives their entries of `evidence-vectors.json`: the problems `verifyRun` reports.
 */
async function writeVectors(root: string, good: string) {
  await Deno.remove(join(root, "vectors"), { recursive: true }).catch(() => {});
  await Deno.remove(join(root, "keys"), { recursive: true }).catch(() => {});
  await Deno.mkdir(join(root, "keys"), { recursive: true });
  // A fresh key each time: the private key stays out of the repository, only the public key is a vector.
  const secret = await Deno.makeTempDir();
  const { keyid, publicPath } = await writeKeyPair(join(secret, "signing.key"));
  await Deno.copyFile(publicPath, join(root, "keys", "signing.key.pub"));
  // The same public key under a keyid that is not its ID: a --trust file a verifier must refuse.
  const wrong = { ...JSON.parse(await Deno.readTextFile(publicPath)), keyid: "0".repeat(64) };
  await Deno.writeTextFile(join(root, "keys", "wrong-keyid.key.pub"), JSON.stringify(wrong, null, 2) + "\n");
  const key = await readSigningKey(join(secret, "signing.key"));
  await Deno.remove(secret, { recursive: true });
  const trusted = await readTrustedKey(join(root, "keys", "signing.key.pub"));
  const out = [];
  for (const v of VECTORS) {
    const name = v.folderName ?? SAMPLE_RUN_ID;
    const folder = join(root, "vectors", v.name, name);
    await Deno.mkdir(join(root, "vectors", v.name), { recursive: true });
    await copyFolder(good, folder);
    if (v.before) await v.before(folder);
    if (v.signed) {
      await rechain(folder, (es) => {
        (es[0]!.data as Record<string, unknown>).signing_key = keyid;
        return es;
      });
      await attestRun(new FileRunRecord(SAMPLE_RUN_ID, folder), key);
    }
    await v.change(folder);
    const check = await verifyRun(new FileRunRecord(name, folder), v.trust ? { trust: [trusted] } : {});
    out.push({
      name: v.name,
      check: v.check,
      what: v.what,
      folder: `vectors/${v.name}/${name}`,
      trust: v.trust ? "keys/signing.key.pub" : null,
      ok: check.ok,
      codes: check.problems.map((p) => p.code),
      problems: check.problems.map((p) => ({
        code: p.code,
        file: p.file,
        line: p.line,
        seq: p.seq,
        text: p.message,
      })),
    });
  }
  return out;
}

if (import.meta.main) await writeFixtures(new URL("../../fixtures", import.meta.url).pathname);
