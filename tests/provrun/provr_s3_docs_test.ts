/**
 * docs/provr.md's S3 example, run as written against the S3 server of `.ci/peers/s3.sh`: the block that the
 * docs test skips for want of a server (its skip note names this file), with the guide's endpoint and bucket
 * replaced by the test server's and a bucket of this test's own, by the rules of `docs_console_test.ts` (a
 * scratch home, a scratch project folder linked to this checkout, standard error merged).
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { consoleBlocks, matches } from "../_console.ts";
import { makeBucket, S3_ENDPOINT } from "../provcat/_s3.ts";
import { peerTest } from "../_peers.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const LINKED = ["cli", "lib", "fixtures", "mod.ts", "deno.json", "deno.lock"];

peerTest("s3", {
  name: "docs/provr.md: the S3 example runs as written against a real S3 server",
  fn: async () => {
    const bucket = await makeBucket();
    const local = (text: string) =>
      text.replaceAll("http://127.0.0.1:5055", S3_ENDPOINT!).replaceAll(
        "bucket: evidence",
        `bucket: ${bucket}`,
      );
    const blocks = consoleBlocks(await Deno.readTextFile(join(ROOT, "docs", "provr.md")))
      .filter((b) => b.skipped?.includes("provr_s3_docs_test.ts"));
    assert.equal(blocks.length, 1, "the guide's S3 block");
    const base = await Deno.makeTempDir({ prefix: "provr-s3-docs-" });
    const home = join(base, "home");
    const project = join(base, "project");
    await Deno.mkdir(home);
    await Deno.mkdir(project);
    for (const name of LINKED) await Deno.symlink(join(ROOT, name), join(project, name));
    const sh = async (script: string) => {
      const out = await new Deno.Command("sh", {
        args: ["-c", `exec 2>&1\n${script}`],
        cwd: project,
        clearEnv: true,
        env: {
          HOME: home,
          PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
          DENO_DIR: Deno.env.get("DENO_DIR") ?? join(Deno.env.get("HOME") ?? "/root", ".cache", "deno"),
          USER: "ada",
          TERM: "dumb",
          NO_COLOR: "1",
          // The guide's reader has them in the usual variables; makeBucket set the test server's.
          AWS_ACCESS_KEY_ID: Deno.env.get("AWS_ACCESS_KEY_ID")!,
          AWS_SECRET_ACCESS_KEY: Deno.env.get("AWS_SECRET_ACCESS_KEY")!,
        },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(180_000),
      }).output();
      const lines = new TextDecoder().decode(out.stdout).replaceAll(home, "~").replaceAll(project, ".")
        .split("\n").filter((l, i) => !(i === 0 && /^Task \S+ /.test(l)));
      if (lines.at(-1) === "") lines.pop();
      return lines;
    };
    try {
      for (const step of blocks[0]!.steps) {
        const command = local(step.command);
        const actual = await sh(command);
        assert.ok(
          matches(actual, step.expected),
          `docs/provr.md:${step.line}: $ ${command}\n--- the doc shows:\n${
            step.expected.join("\n")
          }\n--- the command printed:\n${actual.join("\n")}`,
        );
      }
    } finally {
      await Deno.remove(base, { recursive: true });
    }
  },
});
