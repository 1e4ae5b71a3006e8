import { join } from "node:path";
import { assert, assertEquals } from "../../provcat/_assert.ts";
import { makeRepo } from "../../provcat/_helpers.ts";
import { makeBucket, s3Config } from "../../provcat/_s3.ts";
import { Catalog } from "../../../lib/provcat/catalog.ts";
import type { StoreConfig } from "../../../lib/provcat/config.ts";
import { commitBundle } from "../../../lib/provevi/runs/bundle.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";
import { verifyBundle } from "../../../lib/provevi/runs/bundle.ts";
import { FileLog } from "../../../lib/provevi/log/file_log.ts";
import { logVerifier } from "../../../lib/provevi/log/trust_policy.ts";
import { writeRun } from "../_run.ts";
import { removeWritable } from "../../_files.ts";
import { peerTest } from "../../_peers.ts";

const RUN = "run-20261129T120000Z-0badc0de";
const URI = `run://acme/demo/dev/${RUN}`;

async function withBundleStore(
  makeStore: (dir: string) => Promise<StoreConfig>,
  fn: (catalog: Catalog, folder: string, dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "provevi-bundle-" });
  const catalog = await Catalog.open({
    config: {
      cache: join(dir, "cache"),
      stores: { bundles: await makeStore(dir) },
      routes: [{ prefix: "run://acme/demo/dev", store: "bundles", path: "runs" }],
    },
  });
  try {
    await fn(catalog, await writeRun(join(dir, "runs", RUN), RUN), dir);
  } finally {
    await catalog.close();
    await removeWritable(dir);
  }
}

const git = async (dir: string): Promise<StoreConfig> => ({
  type: "git",
  path: await makeRepo(join(dir, "bundles"), { "README.md": "bundles\n" }),
});
const s3 = async (): Promise<StoreConfig> => s3Config(await makeBucket());

/** Rewrites the run's events and manifest together, as a second valid run with a changed note. */
async function rewrite(folder: string, dir: string): Promise<void> {
  const other = await writeRun(join(dir, "other", RUN), RUN, { note: "rewritten" });
  for (const name of ["events.jsonl", "manifest.json"]) {
    await Deno.copyFile(join(other, "evidence", name), join(folder, "evidence", name));
  }
}

for (const [name, make] of [["git", git], ["s3", s3]] as const) {
  peerTest(name === "s3" ? "s3" : null, {
    name: `commitBundle() to the ${name} store pins the bundle, and it reads back at its pinned version`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: () =>
      withBundleStore(make, async (catalog, folder) => {
        const bundle = await commitBundle(catalog, folder, URI);
        assert(bundle.pinned?.startsWith(`${URI}?at=commit:`), bundle.pinned ?? "null");
        assertEquals(JSON.parse(await Deno.readTextFile(join(folder, "bundle.json"))), bundle);
        const record = new FileRunRecord(RUN, folder);
        assertEquals(
          (await verifyBundle(catalog, record, bundle.pinned!)).problems.map((p) => p.message),
          [],
        );
        const check = await verifyRun(record, { catalog });
        assertEquals([check.ok, check.bundle, check.problems.map((p) => p.message)], [
          true,
          bundle.pinned,
          [],
        ]);
        const answer = await catalog.read(bundle.pinned!.replace("?at=", "/output/answer.txt?at="));
        assertEquals(new TextDecoder().decode(answer), "42\n");
      }),
  });

  peerTest(name === "s3" ? "s3" : null, {
    name:
      `verifyRun() fails a run rewritten after its commit to the ${name} store, though its chain is valid`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: () =>
      withBundleStore(make, async (catalog, folder, dir) => {
        await commitBundle(catalog, folder, URI);
        await rewrite(folder, dir);
        const check = await verifyRun(new FileRunRecord(RUN, folder), { catalog });
        assertEquals(check.ok, false);
        // The bundle's log.tlog-proof is of the run as committed: it no longer proves the rewritten run.
        assertEquals(check.problems.length, 3, check.problems.map((p) => p.message).join("\n"));
        assert(
          check.problems.map((p) => p.message)[0]!.startsWith(
            "evidence/events.jsonl differs from the committed bundle",
          ),
        );
        assert(
          check.problems.map((p) => p.message)[1]!.startsWith(
            "evidence/manifest.json differs from the committed bundle",
          ),
        );
        assert(check.problems.map((p) => p.message)[2]!.startsWith("log.tlog-proof in the committed bundle"));
      }),
  });
}

Deno.test("a bundle in a folder store stays unpinned, and the verdict says so", async () => {
  await withBundleStore(
    (dir) => Promise.resolve({ type: "folder" as const, path: join(dir, "plain") }),
    async (catalog, folder) => {
      const bundle = await commitBundle(catalog, folder, URI);
      assertEquals(bundle, { uri: URI, pinned: null });
      const record = new FileRunRecord(RUN, folder);
      const check = await verifyRun(record, { catalog });
      assertEquals([check.ok, check.bundle, check.unpinnedBundle], [true, null, URI]);
      const required = await verifyRun(record, { catalog, requireBundle: true });
      assertEquals(required.problems.map((p) => p.message), [
        `the bundle ${URI} is unpinned (its store has no commits), and a pinned bundle is required`,
      ]);
    },
  );
});

Deno.test("verifyRun() trusts --bundle over bundle.json, and refuses a bundle pinned to a branch", async () => {
  await withBundleStore(git, async (catalog, folder, dir) => {
    const bundle = await commitBundle(catalog, folder, URI);
    await rewrite(folder, dir);
    await Deno.writeTextFile(join(folder, "bundle.json"), JSON.stringify({ uri: URI, pinned: null }));
    const record = new FileRunRecord(RUN, folder);
    const check = await verifyRun(record, { catalog, bundle: bundle.pinned! });
    assertEquals(check.ok, false);
    const branch = await verifyRun(record, { catalog, bundle: `${URI}?at=branch:main` });
    assert(
      branch.problems.map((p) => p.message).some((p) => p.includes("names no commit")),
      branch.problems.map((p) => p.message).join("\n"),
    );
  });
});

Deno.test("verifyRun() with a catalog function opens no catalog when the run has no bundle", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const folder = await writeRun(join(dir, RUN), RUN);
    let opened = 0;
    const check = await verifyRun(new FileRunRecord(RUN, folder), {
      catalog: () => {
        opened += 1;
        throw new Error("must not open");
      },
    });
    assertEquals([check.ok, opened], [true, 0]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("verifyRun() without a catalog does not pass a run with a pinned bundle", async () => {
  await withBundleStore(git, async (catalog, folder) => {
    await commitBundle(catalog, folder, URI);
    const check = await verifyRun(new FileRunRecord(RUN, folder));
    assertEquals(check.ok, false);
    assert(
      check.problems.map((p) => p.message)[0]!.includes("no catalog was given"),
      check.problems.map((p) => p.message)[0],
    );
    const broken = await verifyRun(new FileRunRecord(RUN, folder), {
      catalog: () => Catalog.open({ configPath: "/nonexistent/provcat.yaml" }),
    });
    assert(
      broken.problems.map((p) => p.message)[0]!.includes("the catalog cannot be opened"),
      broken.problems.map((p) => p.message)[0],
    );
  });
});

Deno.test({
  name: "verifyBundle() fails a bundle whose committed output is not the output the run recorded",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withBundleStore(git, async (catalog, folder) => {
      await commitBundle(catalog, folder, URI);
      // Someone commits a changed answer into the bundle, and names that commit as the bundle.
      await catalog.put(`${URI}/output/answer.txt`, new TextEncoder().encode("43\n"));
      const { pinned } = await catalog.commit(URI, "a changed answer");
      const check = await verifyBundle(catalog, new FileRunRecord(RUN, folder), pinned!);
      assertEquals(check.problems.map((p) => p.message), [
        `output/answer.txt in the committed bundle ${pinned} is not the output the run recorded`,
      ]);
    }),
});

Deno.test({
  name: "verifyBundle() fails a bundle with an output no event records, or a changed payload",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withBundleStore(git, async (catalog, folder) => {
      await commitBundle(catalog, folder, URI);
      const record = new FileRunRecord(RUN, folder);
      await catalog.put(`${URI}/output/extra.txt`, new TextEncoder().encode("smuggled\n"));
      const extra = (await catalog.commit(URI, "an extra output")).pinned!;
      assertEquals((await verifyBundle(catalog, record, extra)).problems.map((p) => p.message), [
        `output/extra.txt in the committed bundle ${extra} is not a recorded output`,
      ]);
      // The run is of format 2: its small payloads are records of payloads.pack, compared byte for byte.
      const pack = await Deno.readFile(join(folder, "evidence", "payloads.pack"));
      pack[pack.length - 2] = pack[pack.length - 2]! ^ 0x01;
      await catalog.put(`${URI}/evidence/payloads.pack`, pack);
      const changed = (await catalog.commit(URI, "a changed payload")).pinned!;
      const problems = (await verifyBundle(catalog, record, changed)).problems.map((p) => p.message);
      assert(
        problems.some((p) =>
          p.startsWith(`evidence/payloads.pack differs from the committed bundle ${changed}`)
        ),
        problems.join("\n"),
      );
    }),
});

Deno.test({
  name: "verifyRun() requires bundle.json when the recorded run file asked for a bundle",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withBundleStore(git, async (catalog, folder, dir) => {
      // A run whose run_created records that its run file asked for a bundle, committed, then forged and
      // without its bundle.json.
      const asked = await writeRun(join(dir, "asked", RUN), RUN, { created: { bundle: true } });
      await commitBundle(catalog, asked, URI);
      assertEquals(
        (await verifyRun(new FileRunRecord(RUN, asked), { catalog })).problems.map((p) => p.message),
        [],
      );
      await Deno.remove(join(asked, "bundle.json"));
      const check = await verifyRun(new FileRunRecord(RUN, asked), { catalog });
      assertEquals(check.problems.map((p) => p.message), [
        "bundle.json is missing, but the run file recorded in run_created asked for a bundle (run.bundle: true); restore it, or pass --bundle URI",
      ]);
      // A run that did not ask still verifies without one.
      assertEquals(
        (await verifyRun(new FileRunRecord(RUN, folder), { catalog })).problems.map((p) => p.message),
        [],
      );
    }),
});

Deno.test({
  name:
    "a committed bundle carries the run's log.tlog-proof, and a copy of the bundle alone is checked in the log",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withBundleStore(git, async (catalog, folder, dir) => {
      const bundle = await commitBundle(catalog, folder, URI);
      const proof = await catalog.read(`${URI}/log.tlog-proof?at=${bundle.pinned!.split("?at=")[1]}`);
      assertEquals(new TextDecoder().decode(proof), await Deno.readTextFile(join(folder, "log.tlog-proof")));
      assertEquals(
        (await verifyBundle(catalog, new FileRunRecord(RUN, folder), bundle.pinned!)).problems,
        [],
      );
      // On another machine: the bundle's snapshot, the log's verifier key, nothing else.
      const snapshot = await catalog.snapshot(bundle.pinned!);
      const key = (await new FileLog(join(dir, "runs")).key())!;
      const check = await verifyRun(new FileRunRecord(RUN, snapshot.path), {
        log: { logs: [logVerifier(key.verifier.vkey)], witnesses: [], quorum: 0 },
      });
      assertEquals(check.problems.map((p) => p.message), []);
      assertEquals(check.inLog?.index, 0);
    }),
});

Deno.test({
  name: "verifyBundle() fails a bundle whose log.tlog-proof proves another run",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withBundleStore(git, async (catalog, folder, dir) => {
      const other = await writeRun(join(dir, "runs", `${RUN}-2`), `${RUN}-2`);
      await commitBundle(catalog, folder, URI);
      await catalog.put(`${URI}/log.tlog-proof`, await Deno.readFile(join(other, "log.tlog-proof")));
      const { pinned } = await catalog.commit(URI, "another run's proof");
      const check = await verifyBundle(catalog, new FileRunRecord(RUN, folder), pinned!);
      assertEquals(check.problems.map((p) => [p.code, p.message]), [[
        "bundle.file_differs",
        `log.tlog-proof in the committed bundle ${pinned} does not prove that this run, as its evidence is, is in the log`,
      ]]);
    }),
});
