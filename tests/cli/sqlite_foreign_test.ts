import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";
import { provr } from "../../cli/provr.ts";
import { openStore } from "../../lib/provevi/runs/open_store.ts";

const RUN_FILE = `run: { org: acme, domain: demo, env: dev }
agent: { name: q, backend: call, model: "test:", script: { turns: [{ text: "forty-two" }] } }
prompt: What is six times seven?
outputs: [answer.txt]
`;

Deno.test("a SQLite file of something else is refused with one line when opened to write, and left as it was", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const app = join(dir, "app.db");
    const db = new DatabaseSync(app);
    db.exec(
      "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ada')",
    );
    db.exec("CREATE INDEX users_name ON users (name)");
    db.close();
    const before = await Deno.readFile(app);
    await Deno.writeTextFile(join(dir, "run.yaml"), RUN_FILE);
    const uri = `sqlite:///${app}`;
    const io = bufferIo();
    const code = await provr(["--store", uri, "--runs", join(dir, "runs"), "run", join(dir, "run.yaml")], io);
    assert.equal(code, 1);
    assert.equal(io.stderr.length, 1, io.stderr.join("\n"));
    assert.match(
      io.stderr[0]!,
      /^provr: cannot open store "sqlite:\/\/\/.*app\.db": .*app\.db is a SQLite database of something else \(users, users_name\), not a provevi store; give the path of a new or empty file$/,
    );
    const assess = bufferIo();
    assert.equal(await prove(["--store", uri, "assess", "run-x", "q", "1"], assess), 1);
    assert.match(assess.stderr.join("\n"), /a SQLite database of something else/);
    await assert.rejects(openStore(uri), /something else/);
    // Nothing changed: the same bytes, no WAL file, the journal mode and the tables as they were.
    assert.deepEqual(await Deno.readFile(app), before);
    await assert.rejects(Deno.stat(`${app}-wal`), Deno.errors.NotFound);
    const after = new DatabaseSync(app, { readOnly: true });
    assert.equal(
      (after.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode,
      "delete",
    );
    assert.deepEqual(
      (after.prepare("SELECT name FROM sqlite_master ORDER BY name").all() as { name: string }[]).map((r) =>
        r.name
      ),
      ["users", "users_name"],
    );
    after.close();
    assert.equal((await Array.fromAsync(Deno.readDir(dir))).some((e) => e.name === "runs"), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an empty (0-byte) file and a new path become sqlite stores", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "run.yaml"), RUN_FILE);
    const empty = join(dir, "empty.db");
    await Deno.writeFile(empty, new Uint8Array());
    for (const file of [empty, join(dir, "new.db")]) {
      const io = bufferIo();
      const code = await provr(
        ["--store", `sqlite:///${file}`, "--runs", join(dir, "runs"), "run", join(dir, "run.yaml")],
        io,
      );
      assert.equal(code, 0, io.stderr.join("\n"));
      const list = bufferIo();
      assert.equal(await prove(["--store", `sqlite:///${file}`, "runs", "--json"], list), 0);
      assert.equal(JSON.parse(list.text()).length, 1);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
