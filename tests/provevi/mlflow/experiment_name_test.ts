import assert from "node:assert/strict";
import { experimentName } from "../../../lib/provevi/mlflow/experiment_name.ts";

const RUN = { org: "acme", domain: "demo", env: "dev", agent: "revenue-question" };

Deno.test("experimentName() names a run with no experiment for its agent class, at every level", () => {
  for (const level of ["names", "usage", "bodies"] as const) {
    assert.equal(experimentName(RUN, level), "acme/demo/dev/revenue-question");
  }
});

Deno.test("experimentName() names a run for its experiment, without the scheme and the selector", () => {
  const data = { ...RUN, experiment: "experiment://acme/risk/dev/credit/q?at=commit:3f2a9c1" };
  assert.equal(experimentName(data, "names"), "acme/risk/dev/credit/q");
  assert.equal(experimentName(data, "bodies"), "acme/risk/dev/credit/q");
});

Deno.test("experimentName() shows a part that is not a name as its label below bodies", () => {
  const data = { ...RUN, agent: "answer the question about revenue" };
  assert.equal(experimentName(data, "names"), "acme/demo/dev/agent");
  assert.equal(experimentName(data, "usage"), "acme/demo/dev/agent");
  assert.equal(experimentName(data, "bodies"), "acme/demo/dev/answer the question about revenue");
});

Deno.test("experimentName() shows a name whose whole looks like a path as its labels and a short hash", () => {
  const one = experimentName({ ...RUN, experiment: "experiment://home/someone/.ssh/id_rsa" }, "names")!;
  const two = experimentName({ ...RUN, experiment: "experiment://home/other/.ssh/id_rsa" }, "names")!;
  assert.match(one, /^org\/domain\/env\/name-[0-9a-f]{8}$/);
  assert.notEqual(one, two);
  assert.equal(
    experimentName({ ...RUN, experiment: "experiment://home/someone/.ssh/id_rsa" }, "bodies"),
    "home/someone/.ssh/id_rsa",
  );
});

Deno.test("experimentName() gives null for a run that names no experiment and no whole agent class", () => {
  assert.equal(experimentName({ agent: "x" }, "names"), null);
});
