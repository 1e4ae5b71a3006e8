import assert from "node:assert/strict";
import { envOf, StubBroker } from "../../../lib/provrun/run/broker.ts";

const URI = "data+table://acme/demo/dev/evals/revenue";

Deno.test("StubBroker grants a URI on the allow list, in the run's environment, as mounted_snapshot", () => {
  const grant = new StubBroker([URI], { env: "dev" }).request(`${URI}?at=branch:main`);
  assert.equal(grant.granted, true);
  assert.equal(grant.mode, "mounted_snapshot");
  assert.match(grant.expires_at!, /^\d{4}-\d\d-\d\dT/);
});

Deno.test("StubBroker denies a URI that is not in the allow list", () => {
  const grant = new StubBroker([URI], { env: "dev" }).request("data+table://acme/demo/dev/evals/other");
  assert.deepEqual([grant.granted, grant.reason], [false, "the URI is not in the run's allow list"]);
});

Deno.test("StubBroker denies a URI from another environment", () => {
  const prod = URI.replace("/dev/", "/prod/");
  const grant = new StubBroker([prod], { env: "dev" }).request(prod);
  assert.deepEqual([grant.granted, grant.reason], [
    false,
    "the URI is in environment prod, and the run is in dev",
  ]);
});

Deno.test("StubBroker grants a physical URI only in dev", () => {
  assert.equal(
    new StubBroker(["file:///data/x.csv"], { env: "dev" }).request("file:///data/x.csv").granted,
    true,
  );
  const grant = new StubBroker(["file:///data/x.csv"], { env: "prod" }).request("file:///data/x.csv");
  assert.deepEqual([grant.granted, grant.reason], [
    false,
    "a physical URI is granted only in dev, and the run is in prod",
  ]);
});

Deno.test("StubBroker grants only mounted_snapshot and pinned_read", () => {
  const grant = new StubBroker([URI], { env: "dev" }).request(URI, "read_write");
  assert.deepEqual([grant.granted, grant.reason], [
    false,
    "the stub broker grants only mounted_snapshot and pinned_read, not read_write",
  ]);
});

const EXPERIMENT = "experiment://acme/demo/dev/experiments/q";

Deno.test("StubBroker grants pinned_read for the run's experiment, at any version of it", () => {
  const broker = new StubBroker([], { env: "dev", experiment: `${EXPERIMENT}?at=branch:main` });
  const grant = broker.request(`${EXPERIMENT}?at=branch:main`, "pinned_read");
  assert.deepEqual([grant.granted, grant.mode], [true, "pinned_read"]);
  assert.match(grant.expires_at!, /^\d{4}-\d\d-\d\dT/);
});

Deno.test("StubBroker refuses pinned_read for any URI but the run's experiment, even one on the allow list", () => {
  const broker = new StubBroker([URI], { env: "dev", experiment: EXPERIMENT });
  for (const uri of [URI, `${EXPERIMENT}-other`, "experiment://acme/demo/dev/experiments/q/../r"]) {
    const grant = broker.request(uri, "pinned_read");
    assert.deepEqual([grant.granted, grant.mode, grant.reason], [
      false,
      "pinned_read",
      "the stub broker grants pinned_read only for the run's experiment",
    ]);
  }
  assert.equal(new StubBroker([URI], { env: "dev" }).request(EXPERIMENT, "pinned_read").granted, false);
});

Deno.test("StubBroker refuses pinned_read for an experiment in another environment", () => {
  const prod = EXPERIMENT.replace("/dev/", "/prod/");
  const grant = new StubBroker([], { env: "dev", experiment: prod }).request(prod, "pinned_read");
  assert.deepEqual([grant.granted, grant.reason], [
    false,
    "the URI is in environment prod, and the run is in dev",
  ]);
});

Deno.test("envOf() reads the environment segment of a logical URI", () => {
  assert.equal(envOf(URI), "dev");
  assert.equal(envOf("file:///a/b/c/d"), null);
  assert.equal(envOf("data://acme/demo"), null);
});
