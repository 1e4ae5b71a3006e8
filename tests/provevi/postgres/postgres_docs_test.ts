/**
 * docs/postgres.md's team example, run as written against the real server of `.ci/peers/postgres.sh`: the
 * blocks that the docs test skips for want of a server (those whose skip note names this file), with the
 * guide's `127.0.0.1:5432` and database `evidence` replaced by the test server's address and a database of
 * this test's own, by the rules of `docs_console_test.ts` (a scratch home, a scratch project folder linked to
 * this checkout, standard error merged). A line that only sets a variable is worked out once, as a shell
 * pasted into would, so `A=$(ls team/a-runs)` keeps its value after the folder is moved.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { consoleBlocks, matches } from "../../_console.ts";
import { onDatabase, PG_URL } from "./_pg.ts";
import { peerTest } from "../../_peers.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const LINKED = ["cli", "lib", "fixtures", "mod.ts", "deno.json", "deno.lock"];

peerTest("postgres", {
  name: "docs/postgres.md: the team example runs as written against a real server",
  fn: async () => {
    const server = new URL(PG_URL!);
    const database = `provevi_docs_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const local = (text: string) =>
      text.replaceAll("127.0.0.1:5432/evidence", `${server.hostname}:${server.port}/${database}`)
        .replaceAll("-p 5432 -U postgres evidence", `-p ${server.port} -U postgres ${database}`);
    const blocks = consoleBlocks(await Deno.readTextFile(join(ROOT, "docs", "postgres.md")))
      .filter((b) => b.skipped?.includes("postgres_docs_test.ts"));
    assert.equal(blocks.length, 2, "the guide's team blocks");
    const base = await Deno.makeTempDir({ prefix: "provevi-pg-docs-" });
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
    const variables: string[] = [];
    try {
      for (const block of blocks) {
        for (const step of block.steps) {
          const command = local(step.command);
          const variable = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(command);
          if (variable && !command.includes("\n")) {
            const [value] = await sh(`${variables.join("\n")}\nprintf '%s\\n' ${variable[2]}`);
            variables.push(`${variable[1]}='${value ?? ""}'`);
            continue;
          }
          const actual = await sh(`${variables.join("\n")}\n${command}`);
          const expected = step.expected.map(local);
          assert.ok(
            matches(actual, expected),
            `docs/postgres.md:${step.line}: $ ${command}\n--- the doc shows:\n${
              expected.join("\n")
            }\n--- the command printed:\n${actual.join("\n")}`,
          );
        }
      }
    } finally {
      await onDatabase(PG_URL!, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
      await Deno.remove(base, { recursive: true });
    }
  },
});
