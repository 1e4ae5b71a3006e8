import assert from "node:assert/strict";
import { ProveviError } from "../../../lib/provevi/evidence/errors.ts";
import { redirectingVariables, refuseRedirects } from "../../../lib/provevi/mlflow/refuse_redirects.ts";

Deno.test("refuseRedirects() refuses each proxy variable, in either case, for a tracking server", () => {
  for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"]) {
    assert.throws(
      () => refuseRedirects("https://mlflow.example.com", { [name]: "http://proxy.example:3128" }),
      (e: unknown) => e instanceof ProveviError && e.message.includes(name) && e.message.includes("unset it"),
    );
  }
});

Deno.test("refuseRedirects() refuses the variables that change whom the copy trusts, for every place", () => {
  for (
    const name of [
      "MLFLOW_TRACKING_INSECURE_TLS",
      "REQUESTS_CA_BUNDLE",
      "CURL_CA_BUNDLE",
      "MLFLOW_TRACKING_SERVER_CERT_PATH",
      "MLFLOW_TRACKING_AUTH",
    ]
  ) {
    for (const url of ["https://mlflow.example.com", "postgresql://db.example.com/mlflow", null]) {
      assert.deepEqual(redirectingVariables(url, { [name]: "x" }), [name]);
    }
  }
});

Deno.test("refuseRedirects() refuses the Postgres variables for a Postgres URL, and the MySQL ones for MySQL", () => {
  const pg = ["PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGSERVICE", "PGSERVICEFILE", "PGSYSCONFDIR"];
  for (const name of [...pg, "PGSSLMODE", "PGREQUIRESSL"]) {
    assert.deepEqual(redirectingVariables("postgresql+psycopg://db.example.com/mlflow", { [name]: "x" }), [
      name,
    ]);
    assert.deepEqual(redirectingVariables("https://mlflow.example.com", { [name]: "x" }), []);
  }
  for (const name of ["MYSQL_HOST", "MYSQL_TCP_PORT", "MYSQL_UNIX_PORT", "MYSQL_PWD"]) {
    assert.deepEqual(redirectingVariables("mysql://db.example.com/mlflow", { [name]: "x" }), [name]);
  }
});

Deno.test("refuseRedirects() names every set variable at once, and lets a copy with none of them go", () => {
  assert.throws(
    () => refuseRedirects(null, { HTTPS_PROXY: "http://p:1", REQUESTS_CA_BUNDLE: "/x.pem", PATH: "/bin" }),
    /HTTPS_PROXY, REQUESTS_CA_BUNDLE are set/,
  );
  refuseRedirects("https://mlflow.example.com", { PATH: "/bin", HTTPS_PROXY: "" });
});
