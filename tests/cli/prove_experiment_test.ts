import assert from "node:assert/strict";
import { join } from "node:path";
import { stringify } from "yaml";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { Catalog } from "../../lib/provcat/catalog.ts";
import type { Experiment } from "../../lib/provevi/experiments/experiment.ts";
import { writeExperiment } from "../../lib/provevi/experiments/experiment.ts";
import { SqliteStore } from "../../lib/provevi/sqlite/sqlite_store.ts";
import { writeRichRun } from "../provevi/_rich_run.ts";
import { makeRepo } from "../provcat/_helpers.ts";
import { removeWritable } from "../_files.ts";

const EXP = "experiment://acme/risk/dev/credit/q";
const EXPERIMENT: Experiment = {
  kind: "agent-eval",
  description: "Does a retrieval step raise accuracy on the revenue questions?",
  inputs: ["data+table://acme/risk/dev/evals/revenue"],
  metrics: ["accuracy"],
};

async function run(args: string[]) {
  const io = bufferIo();
  const code = await prove(args, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr.join("\n") };
}

interface Setup {
  store: string;
  config: string;
  /** The experiment's versions in the catalog, oldest first; the store's run used the first. */
  pins: string[];
  dir: string;
}

/**
 * A git catalog with two versions of the experiment (a tenant `beta` routes it to a second repository, with one
 * version), and a sqlite store with one run of the first version.
 */
async function withSetup(fn: (s: Setup) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "prove-experiment-" });
  try {
    await makeRepo(join(dir, "lake"), { "README.md": "lake\n" });
    await makeRepo(join(dir, "beta-lake"), { "README.md": "beta\n" });
    const config = join(dir, "provcat.yaml");
    await Deno.writeTextFile(
      config,
      stringify({
        cache: "cache",
        stores: { lake: { type: "git", path: "lake" } },
        routes: [{ prefix: "experiment://acme/risk/dev", store: "lake", path: "experiments" }],
        tenants: {
          beta: {
            stores: { "beta-lake": { type: "git", path: "beta-lake" } },
            routes: [{ prefix: "experiment://acme/risk/dev", store: "beta-lake" }],
          },
        },
      }),
    );
    const pins: string[] = [];
    {
      await using catalog = await Catalog.open({ configPath: config });
      pins.push((await writeExperiment(catalog, EXP, EXPERIMENT, "v1")).pin);
      pins.push(
        (await writeExperiment(catalog, EXP, { ...EXPERIMENT, metrics: ["accuracy", "f1"] }, "v2")).pin,
      );
    }
    {
      await using catalog = await Catalog.open({ configPath: config, tenant: "beta" });
      pins.push((await writeExperiment(catalog, EXP, { ...EXPERIMENT, kind: "ml" }, "beta v1")).pin);
    }
    const db = join(dir, "evidence.db");
    {
      await using store = new SqliteStore(db, { runs: join(dir, "runs") });
      await writeRichRun(await store.openRun("run-1"), { experiment: EXP, experimentPin: pins[0]! });
    }
    await fn({ store: `sqlite:///${db}`, config, pins, dir });
  } finally {
    await removeWritable(dir);
  }
}

Deno.test("prove experiment show --config also prints the newest version in the catalog, and says no run used it", () =>
  withSetup(async ({ store, config, pins }) => {
    const r = await run(["--store", store, "experiment", "show", "credit/q", "--config", config]);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.split("\n");
    assert.equal(lines[0], `${EXP} (first run run-1)`);
    assert.match(lines[1]!, new RegExp(`^  ${pins[0]!.replace("?", "\\?")}  -  run-1$`));
    assert.match(
      lines[2]!,
      new RegExp(
        `^newest in the catalog: ${
          pins[1]!.replace("?", "\\?")
        } \\(sha256 [0-9a-f]{12}, no run of the store used it\\)$`,
      ),
    );
    assert.equal(lines[3], `  agent-eval: ${EXPERIMENT.description}`);
    const json = JSON.parse(
      (await run(["--store", store, "experiment", "show", EXP, "--config", config, "--json"])).out,
    );
    assert.equal(json.newest.pin, pins[1]);
    assert.match(json.newest.sha256, /^[0-9a-f]{64}$/);
    assert.deepEqual(json.newest.experiment.metrics, ["accuracy", "f1"]);
    assert.deepEqual(json.versions.map((v: { pin: string }) => v.pin), [pins[0]]);
    // Without --config, the store's versions alone, as before.
    const plain = JSON.parse((await run(["--store", store, "experiment", "show", EXP, "--json"])).out);
    assert.equal("newest" in plain, false);
  }));

Deno.test("prove experiment show --config --tenant reads the tenant's part of the catalog", () =>
  withSetup(async ({ store, config, pins }) => {
    const r = await run([
      "--store",
      store,
      "experiment",
      "show",
      EXP,
      "--config",
      config,
      "--tenant",
      "beta",
      "--json",
    ]);
    assert.equal(r.code, 0, r.err);
    const json = JSON.parse(r.out);
    assert.equal(json.newest.pin, pins[2]);
    assert.equal(json.newest.experiment.kind, "ml");
  }));

Deno.test("prove experiment show --config shows an experiment that no run named yet, by its whole URI", () =>
  withSetup(async ({ store, config, pins }) => {
    const other = "experiment://acme/risk/dev/credit/other";
    {
      await using catalog = await Catalog.open({ configPath: config });
      await writeExperiment(catalog, other, EXPERIMENT, "other");
    }
    const r = await run(["--store", store, "experiment", "show", other, "--config", config]);
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out.split("\n")[0], `${other} (no run in the store named it)`);
    assert.match(
      r.out,
      /\nnewest in the catalog: experiment:\/\/acme\/risk\/dev\/credit\/other\?at=commit:[0-9a-f]{40} /,
    );
    assert.ok(!r.out.includes(pins[0]!));
    // A name cannot be looked up in a catalog, and one that no run named is an error, as without --config.
    const named = await run(["--store", store, "experiment", "show", "other", "--config", config]);
    assert.equal(named.code, 1);
    assert.match(named.err, /^prove: no run in store .* named the experiment other$/);
  }));

Deno.test("prove experiment show refuses --tenant without --config, and a catalog without the experiment, in one line", () =>
  withSetup(async ({ store, dir }) => {
    const tenant = await run(["--store", store, "experiment", "show", EXP, "--tenant", "beta"]);
    assert.equal(tenant.code, 2);
    assert.equal(tenant.err, "prove: --tenant needs --config, the catalog config it is a part of");
    const empty = join(dir, "empty.yaml");
    await Deno.writeTextFile(
      empty,
      stringify({
        cache: "cache",
        stores: { lake: { type: "git", path: "beta-lake" } },
        routes: [{ prefix: "experiment://acme/risk/dev", store: "lake", path: "nothing/here" }],
      }),
    );
    const missing = await run(["--store", store, "experiment", "show", EXP, "--config", empty]);
    assert.equal(missing.code, 1);
    assert.equal(missing.out, "");
    assert.equal(missing.err.split("\n").length, 1);
    assert.match(missing.err, /^prove: .*experiment/);
    const bad = await run(["--store", store, "experiment", "show", EXP, "--config", join(dir, "none.yaml")]);
    assert.equal(bad.code, 1);
    assert.match(bad.err, /none\.yaml/);
  }));

Deno.test("prove assess judges an experiment or one version of it, and prove experiment show lists the judgements", () =>
  withSetup(async ({ store, pins }) => {
    const whole = await run([
      "--store",
      store,
      "assess",
      EXP,
      "approved",
      "true",
      "--source",
      "ada",
      "--json",
    ]);
    assert.equal(whole.code, 0, whole.err);
    assert.deepEqual(
      [JSON.parse(whole.out).experiment, JSON.parse(whole.out).run_id],
      [EXP, null],
    );
    const version = await run([
      "--store",
      store,
      "assess",
      "--experiment",
      `credit/q?at=${pins[0]!.split("?at=")[1]}`,
      "score",
      "0.7",
    ]);
    assert.equal(version.code, 0, version.err);
    assert.equal(version.out, `experiment ${pins[0]}  score  0.7  -`);
    const show = await run(["--store", store, "experiment", "show", "q"]);
    assert.equal(show.code, 0, show.err);
    assert.ok(
      show.out.endsWith(
        [
          "assessments:",
          `experiment ${EXP}${" ".repeat(pins[0]!.length - EXP.length)}  approved  true  ada`,
          `experiment ${pins[0]}  score     0.7   -`,
        ].join("\n"),
      ),
      show.out,
    );
    const json = JSON.parse((await run(["--store", store, "experiment", "show", EXP, "--json"])).out);
    assert.deepEqual(json.assessments.map((a: { name: string }) => a.name), ["approved", "score"]);
    // A version no run used, and a run's flags, are refused.
    const unused = await run(["--store", store, "assess", pins[1]!, "score", "1"]);
    assert.equal(unused.code, 1);
    assert.match(unused.err, /^prove: no run in store .* used the version /);
  }));
