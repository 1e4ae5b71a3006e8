import assert from "node:assert/strict";
import { join } from "node:path";
import { missingPeers, NO_PEERS_VARIABLE, PEERS, peerVariables, skippedLine, skipWithout } from "./_peers.ts";
import {
  checkedFiles,
  exportedFiles,
  localClosure,
  peerFreeEnv,
  peerTestFiles,
  testFiles,
} from "./_test_task.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const env = (vars: Record<string, string>) => ({ get: (name: string) => vars[name] });

Deno.test("every peer's variables are exported by the .ci/peers script it names", async () => {
  for (const [name, peer] of Object.entries(PEERS)) {
    if (!peer.source.startsWith(".ci/peers/")) continue;
    const script = await Deno.readTextFile(join(ROOT, peer.source));
    for (const variable of peer.variables) {
      assert.match(
        script,
        new RegExp(`^export ${variable}=`, "m"),
        `${name}: ${peer.source} exports ${variable}`,
      );
    }
  }
});

Deno.test("the test task's last line names every skipped group and the scripts that would enable them", () => {
  const all = Object.fromEntries(Object.values(PEERS).flatMap((p) => p.variables.map((v) => [v, "x"])));
  assert.deepEqual(missingPeers(env(all)), []);
  assert.equal(skippedLine(env(all)), undefined);
  const { PROVEVI_TEST_PG_URL: _, PROVE_TEST_CHROMIUM: __, ...some } = all;
  assert.deepEqual(missingPeers(env(some)), ["postgres", "chromium"]);
  assert.equal(
    skippedLine(env(some)),
    "skipped test groups, their peers missing: postgres, chromium; to run them: source .ci/peers/postgres.sh " +
      ".ci/peers/chromium.sh (as .ci/run does)",
  );
  assert.equal(skippedLine(env({}))!.split("\n").length, 1);
});

Deno.test("in CI a missing peer fails its tests instead of skipping them, except a group no machine here can run", () => {
  assert.equal(skipWithout("s3", env({})), true);
  assert.equal(skipWithout("s3", env({ PROVCAT_TEST_S3_ENDPOINT: "http://127.0.0.1:1" })), false);
  assert.throws(
    () => skipWithout("s3", env({ CI: "true" })),
    /PROVCAT_TEST_S3_ENDPOINT unset: CI must start the s3 peer \(\.ci\/peers\/s3\.sh\)/,
  );
  assert.equal(skipWithout("compile", env({ CI: "true" })), true);
});

Deno.test("the peer-free run's environment holds no peer's variable, and turns peer tests off", () => {
  const env = peerFreeEnv({
    HOME: "/home/ada",
    PROVEVI_TEST_PG_URL: "postgres://x",
    PROVE_TEST_CHROMIUM: "/c",
  });
  assert.deepEqual(env, { HOME: "/home/ada", [NO_PEERS_VARIABLE]: "1" });
  for (const variable of peerVariables()) assert.ok(/^[A-Z][A-Z0-9_]*$/.test(variable), variable);
});

Deno.test("deno task test's last line names every peer group and the command that runs them, and the scripts missing", () => {
  const all = Object.fromEntries(peerVariables().map((v) => [v, "x"]));
  const groups = Object.keys(PEERS).join(", ");
  assert.equal(
    skippedLine(env(all), { peerFree: true }),
    `skipped test groups, which need a peer: ${groups}; to run them: deno task test:peers (their peers are all set here)`,
  );
  const { PROVCAT_TEST_S3_ENDPOINT: _, ...some } = all;
  assert.equal(
    skippedLine(env(some), { peerFree: true }),
    `skipped test groups, which need a peer: ${groups}; to run them: deno task test:peers, after source ` +
      ".ci/peers/s3.sh (as .ci/run does)",
  );
});

Deno.test("every test that reaches a peer is a peerTest: no test file reads a peer's variable without declaring one", async () => {
  const variables = peerVariables();
  const undeclared: string[] = [];
  for (const file of await testFiles()) {
    const closure = await localClosure(file);
    if (closure.includes("tests/_peers.ts")) continue;
    for (const module of closure) {
      const text = await Deno.readTextFile(join(ROOT, module));
      const read = variables.find((v) => text.includes(v));
      if (read) undeclared.push(`${file} reads ${read} (in ${module}) but declares no peerTest`);
    }
  }
  assert.deepEqual(undeclared, []);
  const peerFiles = await peerTestFiles();
  for (
    const expected of ["tests/provevi/postgres/postgres_store_test.ts", "tests/provcat/s3_store_test.ts"]
  ) {
    assert.ok(peerFiles.includes(expected), expected);
  }
});

Deno.test("only tests/_peers.ts decides a peer test's skip: no test file calls skipWithout or sets its own", async () => {
  const own: string[] = [];
  for (const file of await testFiles()) {
    if (file === "tests/peers_test.ts") continue;
    for (const module of await localClosure(file)) {
      if (module === "tests/_peers.ts") continue;
      if (/\bskipWithout\(/.test(await Deno.readTextFile(join(ROOT, module)))) own.push(module);
    }
  }
  assert.deepEqual([...new Set(own)], []);
});

Deno.test("the test task type-checks the files deno test runs: every test file under a folder given, and each file given", async () => {
  assert.deepEqual(await checkedFiles(["tests/"]), await testFiles());
  const cli = await checkedFiles(["./tests/cli/", "tests/peers_test.ts"]);
  assert.ok(
    cli.length > 1 && cli.every((f) => f.startsWith("tests/cli/") || f === "tests/peers_test.ts"),
    String(cli),
  );
  assert.equal(cli.at(-1), "tests/peers_test.ts");
});

Deno.test("the whole test run type-checks what deno publish would: every module deno.json exports", async () => {
  const exported = await exportedFiles();
  assert.ok(exported.includes("mod.ts") && exported.includes("cli/provr.ts"), String(exported));
  for (const path of exported) assert.ok((await Deno.stat(join(ROOT, path))).isFile, path);
});
