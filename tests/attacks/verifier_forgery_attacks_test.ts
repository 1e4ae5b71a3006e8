/**
 * Forgeries of a run that the writer of its folder can make without a key: each rewrites one of two places of
 * the record that say the same thing, re-chains and re-seals, or claims what only the catalog can bear out.
 * `verifyRun` must not pass any of them (issue #23): the two places must agree, and `pinned: null` is asked of
 * the catalog.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Catalog } from "../../lib/provcat/catalog.ts";
import { commitBundle } from "../../lib/provevi/runs/bundle.ts";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { FileRunRecord } from "../../lib/provevi/store/file_run_record.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { makeRepo } from "../provcat/_helpers.ts";
import { fixtureCopy, manifestPath, rechain } from "../provevi/_tamper.ts";
import { SAMPLE_RUN_ID } from "../provevi/_sample_run.ts";
import { copyFolder, removeWritable } from "../_files.ts";
import { peerTest } from "../_peers.ts";
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

/** The signed vector: a run whose run_created records the fixtures' key, with its attestation. */
const SIGNED = new URL(`../../fixtures/vectors/signed/${SAMPLE_RUN_ID}`, import.meta.url).pathname;

Deno.test("a signed run whose signing key is rewritten to a value of another type and whose attestation is removed does not verify", async () => {
  // Each reads as "no key recorded" to a check that takes only a string, so the missing signature went unseen.
  const values: unknown[] = [42, true, ["d09de65c"], { keyid: "d09de65c" }, "", "D09DE65C".repeat(8)];
  for (const value of values) {
    const dir = await Deno.makeTempDir({ prefix: "provevi-forge-" });
    const folder = join(dir, SAMPLE_RUN_ID);
    try {
      await copyFolder(SIGNED, folder);
      await Deno.remove(join(folder, "evidence", "attestation.dsse.json"));
      await rechain(folder, (es) => {
        (es[0]!.data as Record<string, unknown>).signing_key = value;
        return es;
      });
      const check = await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, folder));
      const codes = check.problems.map((p) => p.code);
      tally.add(`signing_key ${JSON.stringify(value)}`, {
        stopped: !check.ok,
        recorded: codes.includes("line.created_data") || codes.includes("attestation.missing"),
      });
      assert.equal(check.ok, false, JSON.stringify(value));
    } finally {
      await removeWritable(dir);
    }
  }
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

Deno.test("a run whose bundle flag is rewritten to a value of another type does not verify", async () => {
  for (const value of ["true", 1, null, { asked: true }]) {
    const { dir, folder } = await fixtureCopy();
    try {
      await rechain(folder, (es) => {
        (es[0]!.data as Record<string, unknown>).bundle = value;
        return es;
      });
      const check = await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, folder));
      const codes = check.problems.map((p) => p.code);
      tally.add(`bundle ${JSON.stringify(value)}`, {
        stopped: !check.ok,
        recorded: codes.includes("line.created_data"),
      });
      assert.deepEqual(codes, ["line.created_data"], JSON.stringify(value));
    } finally {
      await removeWritable(dir);
    }
  }
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});

/** The numbers a line may be written with that two readers could take for two values, or that no double holds. */
const NUMBERS: { name: string; written: string; codes: string[] }[] = [
  {
    name: "an integer past 2^53 (two readers, two values)",
    written: "9007199254740993",
    codes: ["line.not_canonical"],
  },
  {
    name: "an integer past 1e21 written in full",
    written: "1000000000000000000000",
    codes: ["line.not_canonical"],
  },
  { name: "a number past the largest double", written: "1e400", codes: ["line.not_canonical"] },
  { name: "NaN", written: "NaN", codes: ["line.not_json"] },
  { name: "a small number with its exponent", written: "1.5e-7", codes: [] },
];

peerTest("intoto", {
  name:
    "a line whose number two readers could read as two values is not canonical, to prove and to the verifier written from the doc alike",
  fn: async () => {
    const python = Deno.env.get("PROVEVI_TEST_INTOTO_PYTHON");
    if (!python) throw new Error("PROVEVI_TEST_INTOTO_PYTHON is unset: .ci/peers/intoto.sh did not run");
    const script = new URL("../provevi/evidence/independent_verify.py", import.meta.url).pathname;
    for (const n of NUMBERS) {
      const { dir, folder } = await fixtureCopy();
      try {
        await rechain(folder, (es) => {
          (es[8]!.data as Record<string, unknown>).output_tokens = 424242;
          return es;
        }, { patch: (line, i) => i === 8 ? line.replace("424242", n.written) : line });
        const codes = (await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, folder))).problems.map((p) => p.code);
        const out: Deno.CommandOutput = await new Deno.Command(python, {
          args: [script, folder],
          stdout: "piped",
        })
          .output();
        const other: string[] = out.success
          ? (JSON.parse(new TextDecoder().decode(out.stdout)) as { code: string }[]).map((p) => p.code)
          : ["(the verifier crashed)"];
        tally.add(`a line holding ${n.name}`, {
          stopped: JSON.stringify(codes) === JSON.stringify(n.codes),
          recorded: JSON.stringify(other) === JSON.stringify(codes),
        });
        assert.deepEqual(codes, n.codes, n.name);
        assert.deepEqual(other, codes, `${n.name}: the verifier written from the doc disagrees`);
      } finally {
        await removeWritable(dir);
      }
    }
  },
});

Deno.test("a signed run whose signing key is rewritten to null and whose attestation is removed does not verify while its run file names a key", async () => {
  const dir = await Deno.makeTempDir({ prefix: "provevi-forge-" });
  const folder = join(dir, SAMPLE_RUN_ID);
  try {
    await copyFolder(SIGNED, folder);
    const text = "run:\n  org: acme\n  sign_key: keys/signing.key\n";
    const sha = sha256Hex(text);
    await Deno.writeTextFile(join(folder, "evidence", "payloads", sha), text);
    const m = JSON.parse(await Deno.readTextFile(manifestPath(folder)));
    m.payloads = [...m.payloads, { sha256: sha, size: text.length }].sort((
      a,
      b,
    ) => (a.sha256 < b.sha256 ? -1 : 1));
    m.payload_bytes += text.length;
    await Deno.writeTextFile(manifestPath(folder), JSON.stringify(m));
    await Deno.remove(join(folder, "evidence", "attestation.dsse.json"));
    await rechain(folder, (es) => {
      es[0]!.payload = sha;
      (es[0]!.data as Record<string, unknown>).signing_key = null;
      return es;
    });
    const check = await verifyRun(new FileRunRecord(SAMPLE_RUN_ID, folder));
    const codes = check.problems.map((p) => p.code);
    tally.add("signing_key null, run file names a key", {
      stopped: !check.ok,
      recorded: codes.includes("attestation.flag_disagrees"),
    });
    assert.deepEqual(codes, ["attestation.flag_disagrees"]);
  } finally {
    await removeWritable(dir);
  }
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
