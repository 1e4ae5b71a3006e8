import assert from "node:assert/strict";
import { join } from "node:path";
import { missingPeers, PEERS, skippedLine, skipWithout } from "./_peers.ts";

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
