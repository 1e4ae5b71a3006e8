import { createHash } from "node:crypto";
import { join } from "node:path";
import { assert, assertEquals, assertRejects, assertThrows } from "../../provcat/_assert.ts";
import { commitFiles, makeRepo } from "../../provcat/_helpers.ts";
import { makeBucket, s3Config } from "../../provcat/_s3.ts";
import { Catalog } from "../../../lib/provcat/catalog.ts";
import type { StoreConfig } from "../../../lib/provcat/config.ts";
import type { Experiment } from "../../../lib/provevi/experiments/experiment.ts";
import {
  ExperimentError,
  readExperiment,
  writeExperiment,
} from "../../../lib/provevi/experiments/experiment.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { experimentProblems, parseExperiment } from "../../../lib/provevi/experiments/experiment.ts";
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";
import { writeRun } from "../_run.ts";
import { removeWritable } from "../../_files.ts";
import { peerTest } from "../../_peers.ts";

const URI = "experiment://acme/risk/dev/credit/q";
const EXPERIMENT: Experiment = {
  kind: "agent-eval",
  description: "Does a retrieval step raise accuracy on the revenue questions?",
  inputs: ["data+table://acme/risk/dev/evals/revenue"],
  metrics: ["accuracy"],
};

async function withCatalog(
  store: (dir: string) => Promise<StoreConfig>,
  fn: (catalog: Catalog, dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "provevi-exp-" });
  const catalog = await Catalog.open({
    config: {
      cache: join(dir, "cache"),
      stores: { s: await store(dir) },
      routes: [{ prefix: "experiment://acme/risk/dev", store: "s", path: "experiments" }],
    },
  });
  try {
    await fn(catalog, dir);
  } finally {
    await catalog.close();
    await removeWritable(dir);
  }
}
const git = async (dir: string): Promise<StoreConfig> => ({
  type: "git",
  path: await makeRepo(join(dir, "lake"), { "README.md": "x" }),
});

Deno.test("parseExperiment() reads the seed's example", () => {
  const text = `kind: agent-eval
description: Does a retrieval step raise accuracy on the revenue questions?
inputs:
  - data+table://acme/risk/dev/evals/revenue
metrics: [accuracy]
`;
  assertEquals(parseExperiment(text), EXPERIMENT);
});

Deno.test("experimentProblems() reports every problem at once", () => {
  assertEquals(
    experimentProblems({
      kind: "eval",
      description: " ",
      inputs: "data://a/b/c/x",
      metrics: ["ok", 3],
      owner: "me",
    }),
    [
      '"owner" is not a key of an experiment (kind, description, inputs, metrics)',
      'kind is "eval", not agent-eval or ml',
      "description is empty",
      "inputs is a text, not a list of URIs; write it as a list",
      "metrics[1] is not a text",
    ],
  );
  assertEquals(experimentProblems({ kind: "ml", description: "x", inputs: ["nope"], metrics: "auc" }), [
    'inputs[0] is not a URI: "nope" is not a catalog URI: it has no scheme://; write scheme://org/domain/env/path or file:///abs/path',
    "metrics is a text, not a list of names; write it as a list",
  ]);
  assertEquals(experimentProblems({ kind: "ml" }).length, 3);
  const error = assertThrows(() => parseExperiment("kind: ml\nkind: ml\n"), ExperimentError, "is not YAML");
  assert(error.message.includes("experiment.yaml"));
});

Deno.test("writeExperiment() commits the file and readExperiment() reads it at its pin", async () => {
  await withCatalog(git, async (catalog, dir) => {
    const pinned = await writeExperiment(catalog, URI, EXPERIMENT, "first version");
    assert(pinned.pin.startsWith(`${URI}?at=commit:`));
    const read = await readExperiment(catalog, URI);
    assertEquals(read, { ...pinned, experiment: EXPERIMENT });
    await commitFiles(join(dir, "lake"), {
      "experiments/credit/q/experiment.yaml": "kind: ml\ndescription: v2\ninputs: []\nmetrics: []\n",
    }, "v2");
    assertEquals((await readExperiment(catalog, URI)).experiment.description, "v2");
    assertEquals((await readExperiment(catalog, pinned.pin)).experiment, EXPERIMENT);
  });
});

peerTest("s3", {
  name: "writeExperiment() to a versioned bucket pins to a commit",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withCatalog(async () => s3Config(await makeBucket()), async (catalog) => {
      const pinned = await writeExperiment(catalog, URI, EXPERIMENT, "first");
      assertEquals((await readExperiment(catalog, pinned.pin)).sha256, pinned.sha256);
    }),
});

Deno.test("an experiment in a store whose pin names no commit is refused", async () => {
  await withCatalog(
    (dir) => Promise.resolve({ type: "folder" as const, path: join(dir, "plain") }),
    async (catalog) => {
      await assertRejects(
        () => writeExperiment(catalog, URI, EXPERIMENT, "x"),
        ExperimentError,
        "has no commits",
      );
      await assertRejects(() => readExperiment(catalog, URI), ExperimentError, "has no commits");
    },
  );
});

Deno.test("writeExperiment() refuses an invalid experiment before writing", async () => {
  await withCatalog(git, async (catalog) => {
    await assertRejects(
      () => writeExperiment(catalog, URI, { ...EXPERIMENT, description: "" }, "x"),
      ExperimentError,
      "description is empty",
    );
  });
});

Deno.test("verifyRun() checks the run's experiment at its pin", async () => {
  await withCatalog(git, async (catalog, dir) => {
    const pinned = await writeExperiment(catalog, URI, EXPERIMENT, "first");
    const run = async (name: string, created: Record<string, string>) =>
      new FileRunRecord(name, await writeRun(join(dir, "runs", name), name, { created }));
    const good = await run("run-good", {
      experiment: URI,
      experiment_pin: pinned.pin,
      experiment_sha256: pinned.sha256,
    });
    assertEquals((await verifyRun(good, { catalog })).problems.map((p) => p.message), []);
    const noCatalog = await verifyRun(good);
    assert(
      noCatalog.problems.map((p) => p.message)[0]!.includes("no catalog was given"),
      noCatalog.problems.map((p) => p.message)[0],
    );
    const wrongHash = await run("run-hash", {
      experiment: URI,
      experiment_pin: pinned.pin,
      experiment_sha256: createHash("sha256").update("other").digest("hex"),
    });
    assert(
      (await verifyRun(wrongHash, { catalog })).problems.map((p) => p.message)[0]!.includes("hashes to"),
    );
    const branch = await run("run-branch", {
      experiment: URI,
      experiment_pin: `${URI}?at=branch:main`,
      experiment_sha256: pinned.sha256,
    });
    assert(
      (await verifyRun(branch, { catalog })).problems.map((p) => p.message)[0]!.includes("names no commit"),
    );
  });
});

Deno.test("verifyRun() refuses an experiment pin of another experiment than the run names", async () => {
  await withCatalog(git, async (catalog, dir) => {
    const pinned = await writeExperiment(catalog, URI, EXPERIMENT, "first");
    const other = await writeExperiment(
      catalog,
      `${URI}-other`,
      { ...EXPERIMENT, description: "Other" },
      "x",
    );
    const run = async (name: string, created: Record<string, string>) =>
      new FileRunRecord(name, await writeRun(join(dir, "runs", name), name, { created }));
    const swapped = await run("run-swapped", {
      experiment: URI,
      experiment_pin: other.pin,
      experiment_sha256: other.sha256,
    });
    const problems = (await verifyRun(swapped, { catalog })).problems.map((p) => p.message);
    assert(problems[0]?.includes("is not of the experiment"), String(problems[0]));
    const onBranch = await run("run-on-branch", {
      experiment: `${URI}?at=branch:main`,
      experiment_pin: pinned.pin,
      experiment_sha256: pinned.sha256,
    });
    assertEquals((await verifyRun(onBranch, { catalog })).problems.map((p) => p.message), []);
  });
});
