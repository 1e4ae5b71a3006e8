/**
 * Passwords against a real server that asks for them (the TLS cluster of `.ci/peers/postgres.sh`, where
 * every user but postgres gives a password by scram-sha-256), end to end through `deno task provr` and
 * `deno task prove` (and `deno task provtrace`) as a user types them: the password from the URI, `PGPASSWORD` and `~/.pgpass` connect;
 * a `~/.pgpass` that others can read is ignored; a wrong password fails with one line naming the host and
 * the database; and the password is nowhere: not in what the commands print, the run's files or the rows.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { freshDatabase, onDatabase, PG_TLS, task, type TaskResult } from "./_pg.ts";
import { peerTest } from "../../_peers.ts";

const RUN_FILE = `run: { org: acme, domain: demo, env: dev, actor: ada }
agent:
  name: q
  backend: call
  model: "test:"
  script: { turns: [{ text: "forty-two" }] }
prompt: What is the answer?
`;

/** Every file under a folder, as text. */
async function allText(dir: string): Promise<string> {
  let text = "";
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) text += await allText(path);
    else if (entry.isFile) text += `${path}\n${await Deno.readTextFile(path)}\n`;
  }
  return text;
}

peerTest("postgres-tls", {
  name:
    "a server that asks for a password: from the URI, PGPASSWORD or ~/.pgpass (0600 only) provr and prove connect; a wrong one fails with one line, and the password is nowhere",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "provevi-pg-pw-" });
    const db = await freshDatabase(PG_TLS!.url);
    const role = `provevi_ada_${crypto.randomUUID().slice(0, 8)}`;
    // A password with the characters that a URI and ~/.pgpass escape.
    const password = `Pw:${crypto.randomUUID().slice(0, 12)}@/x`;
    const admin = new URL(db.uri);
    const database = admin.pathname.slice(1);
    await onDatabase(db.uri, async (sql) => {
      await sql.unsafe(`CREATE ROLE ${role} LOGIN PASSWORD '${password.replaceAll("'", "''")}'`);
      await sql.unsafe(`ALTER DATABASE ${database} OWNER TO ${role}`);
    });
    try {
      const home = join(dir, "home");
      await Deno.mkdir(home);
      await Deno.writeTextFile(join(dir, "run.yaml"), RUN_FILE);
      const runs = join(dir, "runs");
      const port = admin.port;
      const plain = `postgresql://${role}@127.0.0.1:${port}/${database}`;
      const withPassword = `postgresql://${role}:${
        encodeURIComponent(password)
      }@127.0.0.1:${port}/${database}`;
      // The children's home is a folder of the test's own, so that ~/.pgpass is the one written here.
      const base = { HOME: home, DENO_DIR: await denoDir(), PGPASSWORD: "", PGPASSFILE: "" };
      const env = (extra: Record<string, string>) => {
        const e: Record<string, string> = { ...base, ...extra };
        return e;
      };
      const printed: TaskResult[] = [];
      const ok = async (name: string, args: string[], extra: Record<string, string>) => {
        const r = await task(name, args, env(extra));
        printed.push(r);
        assert.equal(r.code, 0, `${name} ${args.join(" ")}: ${r.out}\n${r.err}`);
        return r;
      };
      const provrRun = (store: string, extra: Record<string, string>) =>
        ok("provr", ["--store", store, "--runs", runs, "run", join(dir, "run.yaml")], extra);

      // From the URI.
      const a = (await provrRun(withPassword, { PGPASSFILE: join(dir, "none") })).out;
      await ok("prove", ["--store", withPassword, "--runs", runs, "verify", a], {
        PGPASSFILE: join(dir, "none"),
      });
      // From PGPASSWORD.
      const b = (await provrRun(plain, { PGPASSWORD: password, PGPASSFILE: join(dir, "none") })).out;
      const listed = await ok("prove", ["--store", plain, "--runs", runs, "runs", "--json"], {
        PGPASSWORD: password,
        PGPASSFILE: join(dir, "none"),
      });
      assert.deepEqual(JSON.parse(listed.out).map((r: { run_id: string }) => r.run_id).sort(), [a, b].sort());
      // From ~/.pgpass, mode 0600, with the password's ':' escaped as libpq reads it.
      const pgpass = join(home, ".pgpass");
      await Deno.writeTextFile(
        pgpass,
        `127.0.0.1:${port}:${database}:${role}:${password.replaceAll("\\", "\\\\").replaceAll(":", "\\:")}\n`,
      );
      await Deno.chmod(pgpass, 0o600);
      const noPgpassVars = { PGPASSWORD: "", PGPASSFILE: "" };
      const c = (await provrRun(plain, noPgpassVars)).out;
      await ok("prove", ["--store", plain, "--runs", runs, "verify", c], noPgpassVars);

      // provtrace under its task's flags: the whole server from PG variables (a URI of the database only);
      // check opens the store URI that the build recorded, which holds no password, with PGPASSWORD.
      const pgVars = {
        PGHOST: "127.0.0.1",
        PGPORT: port,
        PGUSER: role,
        PGPASSWORD: password,
        PGPASSFILE: "",
      };
      const trace = join(dir, "trace.db");
      const built = await ok("provtrace", [
        "build",
        "--store",
        `postgresql:///${database}`,
        "--runs",
        runs,
        "--db",
        trace,
      ], pgVars);
      assert.match(built.out, /: 3 added, 0 already there, 0 not sealed, 0 refused$/);
      await ok(
        "provtrace",
        ["check", "--db", trace, "--store", `postgresql:///${database}`, "--runs", runs],
        pgVars,
      );

      const refused = async (name: string, args: string[], extra: Record<string, string>) => {
        const r = await task(name, args, env(extra));
        printed.push(r);
        assert.equal(r.code, 1, `${name} ${args.join(" ")}: ${r.out}\n${r.err}`);
        assert.equal(r.err.split("\n").length, 1, r.err);
        assert.match(r.err, new RegExp(`"postgresql://${role}@127\\.0\\.0\\.1:${port}/${database}"`));
        assert.match(r.err, new RegExp(`the server refused user "${role}"`));
        return r;
      };
      // A ~/.pgpass that others can read is ignored, as libpq ignores it: no password, refused.
      await Deno.chmod(pgpass, 0o644);
      await refused("prove", ["--store", plain, "--runs", runs, "runs"], noPgpassVars);
      await Deno.remove(pgpass);
      // A wrong password, from each place.
      const wrong = `${password}-wrong`;
      const wrongUri = `postgresql://${role}:${encodeURIComponent(wrong)}@127.0.0.1:${port}/${database}`;
      await refused(
        "provr",
        ["--store", wrongUri, "--runs", runs, "run", join(dir, "run.yaml")],
        noPgpassVars,
      );
      await refused("prove", ["--store", plain, "--runs", runs, "runs"], { PGPASSWORD: wrong });
      await refused("prove", ["--store", plain, "--runs", runs, "verify", a], { PGPASSWORD: wrong });

      // The password, the wrong one, and their URI forms are nowhere.
      const secrets = [password, wrong, encodeURIComponent(password), encodeURIComponent(wrong)];
      const files = await allText(runs);
      assert.match(files, /manifest\.json/);
      const rows = await onDatabase(db.uri, async (sql) => {
        const tables = await sql.unsafe(
          `SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'provevi%' AND table_schema = 'public'`,
        );
        let text = "";
        for (const t of tables) {
          for (const row of await sql.unsafe(`SELECT t::text AS r FROM "${t.table_name}" t`)) {
            text += `${row.r}\n`;
          }
        }
        return text;
      });
      assert.match(rows, new RegExp(a));
      let traceBytes = "";
      for (const f of [trace, `${trace}-wal`]) {
        traceBytes += new TextDecoder("latin1").decode(await Deno.readFile(f).catch(() => new Uint8Array()));
      }
      assert.match(traceBytes, new RegExp(`postgresql://${role}@127\\.0\\.0\\.1:${port}/${database}`));
      const everything = [files, rows, traceBytes, ...printed.map((r) => `${r.out}\n${r.err}`)].join("\n");
      for (const secret of secrets) {
        assert.ok(!everything.includes(secret), "the password was written somewhere");
      }
    } finally {
      await db.drop();
      await onDatabase(PG_TLS!.url, (sql) => sql.unsafe(`DROP ROLE IF EXISTS ${role}`));
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** This Deno's cache folder, so that a child with another HOME finds the modules it has. */
async function denoDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" }).output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
}
