import { equal } from "node:assert/strict";
import { hostCovered, hostEntryProblem } from "../../../lib/provevi/telemetry/policy_hosts.ts";

Deno.test("hostCovered() names a domain's hosts with a leading dot, but not the domain", () => {
  equal(hostCovered("s3.amazonaws.com", [".amazonaws.com"]), true);
  equal(hostCovered("a.b.amazonaws.com", [".amazonaws.com"]), true);
  equal(hostCovered("amazonaws.com", [".amazonaws.com"]), false);
  equal(hostCovered("evilamazonaws.com", [".amazonaws.com"]), false);
  equal(hostCovered("api.anthropic.com", ["api.anthropic.com"]), true);
  equal(hostCovered("x.api.anthropic.com", ["api.anthropic.com"]), false);
});

Deno.test("hostEntryProblem() takes a domain with a leading dot and refuses a wildcard", () => {
  equal(hostEntryProblem(".amazonaws.com"), null);
  equal(hostEntryProblem("*.example.com"), "has a *; write a leading dot instead, such as .example.com");
});
