/**
 * TLS to a real PostgreSQL server that takes TLS only (`.ci/peers/postgres.sh`'s third cluster): each
 * `sslmode` as libpq means it, the root CA from the URI, `PGSSLROOTCERT` or `~/.postgresql/root.crt`, and a
 * one-line error for each way it cannot connect.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ProveviError } from "../../../lib/provevi/evidence/errors.ts";
import { PostgresStore } from "../../../lib/provevi/postgres/postgres_store.ts";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { postgresTarget } from "../../../lib/provevi/postgres/postgres_uri.ts";
import type { PostgresStoreOptions } from "../../../lib/provevi/postgres/postgres_store.ts";
import { SAMPLE_RUN_ID, writeSampleRun } from "../_sample_run.ts";
import { freshDatabase, PG_TLS, PG_URL } from "./_pg.ts";
import { peerTest } from "../../_peers.ts";

const tlsTest = (name: string, fn: () => Promise<void>) => peerTest("postgres-tls", { name, fn });

/** A fresh database on the TLS server, its URI with the query taken off, and a runs root. */
async function tlsDatabase() {
  const db = await freshDatabase(PG_TLS!.url);
  const url = new URL(db.uri);
  url.search = "";
  const runs = await Deno.makeTempDir({ prefix: "provevi-pg-tls-" });
  return {
    /** The URI with this query, such as `sslmode=require`. */
    uri: (query = "", host = "127.0.0.1") => {
      const u = new URL(url.href);
      u.hostname = host;
      return `${u.href}${query ? `?${query}` : ""}`;
    },
    runs,
    [Symbol.asyncDispose]: async () => {
      await db.drop();
      await Deno.remove(runs, { recursive: true }).catch(() => {});
    },
  };
}

/** Whether the store's own connections to the server are encrypted, from `pg_stat_ssl`. */
async function overTls(store: PostgresStore): Promise<boolean> {
  const [row] = await store.sql.unsafe("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()");
  return row!.ssl === true;
}

/** The error of opening the store, which must be a ProveviError of one line. */
async function refusal(uri: string, options: PostgresStoreOptions = {}): Promise<string> {
  const error = await PostgresStore.open(uri, options).then(
    async (s) => {
      await s.close();
      return null;
    },
    (e: Error) => e,
  );
  assert.ok(error instanceof ProveviError, `${uri} opened`);
  assert.equal(error.message.split("\n").length, 1, error.message);
  return error.message;
}

const none = () => undefined;

tlsTest("sslmode=require and the default (prefer) write over TLS; the run verifies", async () => {
  await using db = await tlsDatabase();
  for (const query of ["sslmode=require", ""]) {
    await using store = await PostgresStore.open(db.uri(query), { runs: db.runs, env: none });
    assert.equal(await overTls(store), true, query);
    assert.equal(store.uri, db.uri(query));
  }
  await using store = await PostgresStore.open(db.uri("sslmode=require"), { runs: db.runs, env: none });
  await writeSampleRun(await store.openRun(SAMPLE_RUN_ID));
  assert.deepEqual((await verifyRun(await store.readRun(SAMPLE_RUN_ID), { store })).problems, []);
});

tlsTest(
  "sslmode=disable against a server that takes TLS only fails with one line that says to use TLS",
  async () => {
    await using db = await tlsDatabase();
    const message = await refusal(db.uri("sslmode=disable"), { env: none });
    assert.match(message, /takes only TLS connections from user "postgres"/);
    assert.match(message, /use \?sslmode=prefer, require or verify-full/);
    // PGSSLMODE says the same when the URI says nothing.
    assert.match(
      await refusal(db.uri(), { env: (n: string) => (n === "PGSSLMODE" ? "disable" : undefined) }),
      /only TLS/,
    );
  },
);

tlsTest("sslmode=require against a server without TLS fails with one line", async () => {
  const url = new URL(PG_URL!);
  url.search = "?sslmode=require";
  const message = await refusal(url.href, { env: none });
  assert.match(message, /does not offer TLS, and sslmode is require/);
});

tlsTest(
  "verify-full with the CA that signed the certificate passes: from the URI, PGSSLROOTCERT or ~/.postgresql/root.crt",
  async () => {
    await using db = await tlsDatabase();
    const ca = PG_TLS!.ca;
    // The certificate is for "localhost": hostaddr connects to 127.0.0.1 without looking the name up.
    const fromUri = db.uri(`sslmode=verify-full&sslrootcert=${ca}&hostaddr=127.0.0.1`, "localhost");
    {
      await using store = await PostgresStore.open(fromUri, { runs: db.runs, env: none });
      assert.equal(await overTls(store), true);
      assert.equal(store.uri, fromUri);
    }
    {
      const env = (n: string) =>
        ({ PGSSLROOTCERT: ca, PGHOSTADDR: "127.0.0.1" } as Record<string, string>)[n];
      await using store = await PostgresStore.open(db.uri("sslmode=verify-full", "localhost"), {
        runs: db.runs,
        env,
      });
      assert.equal(await overTls(store), true);
    }
    const home = await Deno.makeTempDir();
    try {
      await Deno.mkdir(join(home, ".postgresql"));
      await Deno.copyFile(ca, join(home, ".postgresql", "root.crt"));
      await using store = await PostgresStore.open(
        db.uri("sslmode=verify-full&hostaddr=127.0.0.1", "localhost"),
        {
          runs: db.runs,
          env: none,
          home,
        },
      );
      assert.equal(await overTls(store), true);
      // verify-ca checks the signature only: the address, which the certificate does not name, passes.
      await using byAddress = await PostgresStore.open(db.uri("sslmode=verify-ca"), {
        runs: db.runs,
        env: none,
        home,
      });
      assert.equal(await overTls(byAddress), true);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
);

tlsTest("verify-full with another CA, another host name or no CA file fails with one line", async () => {
  await using db = await tlsDatabase();
  const other = await refusal(
    db.uri(`sslmode=verify-full&sslrootcert=${PG_TLS!.otherCa}&hostaddr=127.0.0.1`, "localhost"),
    { env: none },
  );
  assert.match(
    other,
    /the server's certificate at localhost:\d+ does not verify with the root CA ".*other-ca\.crt"/,
  );
  const host = await refusal(db.uri(`sslmode=verify-full&sslrootcert=${PG_TLS!.ca}`), { env: none });
  assert.match(host, /the server's certificate is not for host "127\.0\.0\.1"/);
  const home = await Deno.makeTempDir();
  try {
    const missing = await refusal(db.uri("sslmode=verify-full"), { env: none, home });
    assert.match(
      missing,
      /needs the root CA file ".*root\.crt", and it cannot be read \(there is no such file\)/,
    );
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test("postgresTarget() reads sslmode, sslrootcert and hostaddr as libpq does, and refuses what it cannot use", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  const t = postgresTarget("postgresql://ada@db.internal/e", { env: env({}), home: "/home/ada" });
  assert.equal(t.sslmode, "prefer");
  assert.equal(t.sslrootcert, null);
  const v = postgresTarget("postgresql://ada@db.internal/e?sslmode=verify-full", {
    env: env({}),
    home: "/home/ada",
  });
  assert.equal(v.sslrootcert, "/home/ada/.postgresql/root.crt");
  assert.equal(v.uri, "postgresql://ada@db.internal:5432/e?sslmode=verify-full");
  const e = postgresTarget("postgresql://ada@db.internal/e", {
    env: env({ PGSSLMODE: "verify-ca", PGSSLROOTCERT: "/etc/ca.pem", PGHOSTADDR: "10.0.0.7" }),
  });
  assert.deepEqual([e.sslmode, e.sslrootcert, e.hostaddr], ["verify-ca", "/etc/ca.pem", "10.0.0.7"]);
  const refused = (uri: string, pattern: RegExp) =>
    assert.throws(
      () => postgresTarget(uri, { env: env({}) }),
      (x: Error) => x instanceof ProveviError && pattern.test(x.message),
    );
  refused("postgresql://ada@h/e?sslmode=verify", /sslmode "verify" is not one of/);
  refused("postgresql://ada@h/e?hostaddr=db.internal", /hostaddr "db.internal" is not an IP address/);
  refused("postgresql://ada@h/e?sslmode=require&sslmode=disable", /"sslmode" is given twice/);
  assert.throws(
    () => postgresTarget("postgresql://ada@h/e?sslmode=verify-full", { env: env({}) }),
    /needs a root CA/,
  );
});
