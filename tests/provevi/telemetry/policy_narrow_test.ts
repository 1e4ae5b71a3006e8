import { deepEqual, equal, ok, throws } from "node:assert/strict";
import { TelemetryPolicyError } from "../../../lib/provevi/evidence/errors.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";

const FIXTURES = new URL("../../../fixtures/policies/", import.meta.url).pathname;
const full = await TelemetryPolicy.load(FIXTURES + "full.yaml");

function narrowProblems(section: unknown): string[] {
  try {
    full.narrow(section);
    return [];
  } catch (error) {
    if (error instanceof TelemetryPolicyError) return error.problems.map((p) => p.message);
    throw error;
  }
}

Deno.test("policy.narrow() with no section gives the policy", () => {
  equal(full.narrow(undefined), full);
  equal(full.narrow(null), full);
  equal(full.narrow({}).digest(), full.digest());
});

Deno.test("policy.narrow() replaces each list with a smaller one", () => {
  const narrowed = full.narrow({
    libraries: { ai: { telemetry: ["collector"] } },
    destinations: { collector: { receives: "names" }, browser: { receives: "usage" } },
    hosts: ["otel.example.com"],
  });
  deepEqual(narrowed.libraries.map((l) => l.name), ["ai"]);
  deepEqual(narrowed.library("ai")?.telemetry, ["collector"]);
  deepEqual(narrowed.destinations.map((d) => [d.name, d.receives]), [["collector", "names"], [
    "browser",
    "usage",
  ]]);
  deepEqual(narrowed.hosts, ["otel.example.com"]);
  equal(narrowed.liveLevel(), "usage");
  equal(narrowed.matchDestination("mlflow", null), null, "a destination the section leaves out is dropped");
  ok(narrowed.digest() !== full.digest());
});

Deno.test("policy.narrow() keeps what a named library or destination does not change", () => {
  const narrowed = full.narrow({ libraries: { ai: {} }, destinations: { collector: null, tracking: {} } });
  deepEqual(narrowed.library("ai")?.telemetry, ["collector", "tracking"]);
  equal(narrowed.destination("collector")?.receives, "usage");
  equal(narrowed.library("ai")?.versions, ">=7.0.0 <8.0.0");
});

Deno.test("policy.narrow() lowers the live viewer's level", async () => {
  const live = await TelemetryPolicy.load(FIXTURES + "live-viewer.yaml");
  throws(() => live.narrow({ destinations: { browser: { receives: "bodies" } } }), TelemetryPolicyError);
  equal(full.narrow({ destinations: { browser: { receives: "names" } } }).liveLevel(), "names");
});

Deno.test("policy.narrow() drops a destination on a host that the section cuts, and no library feeds it", () => {
  const narrowed = full.narrow({ hosts: ["db.example.com"] });
  equal(narrowed.destination("collector"), null);
  equal(narrowed.destination("logfire"), null);
  equal(narrowed.destination("tracking")?.name, "tracking");
  equal(narrowed.destination("store")?.name, "store", "no endpoint, no host to cut");
  equal(narrowed.destination("browser")?.name, "browser");
  deepEqual(narrowed.library("ai")?.telemetry, ["tracking"]);
  deepEqual(narrowed.library("@opentelemetry/sdk-trace-base")?.telemetry, []);
});

Deno.test("policy.narrow() refuses a section that names a destination whose host it cuts", () => {
  ok(
    narrowProblems({ hosts: ["db.example.com"], destinations: { collector: {} } })[0]!.includes(
      "cuts its host",
    ),
  );
  ok(
    narrowProblems({ hosts: ["db.example.com"], libraries: { ai: { telemetry: ["collector"] } } }).some((p) =>
      p.includes("collector")
    ),
  );
});

Deno.test("policy.narrow() refuses a library's telemetry naming a destination the section drops", () => {
  const p = narrowProblems({
    destinations: { tracking: {} },
    libraries: { ai: { telemetry: ["collector"] } },
  });
  ok(p.some((x) => x.includes("names collector, which the section drops")), p.join("\n"));
});

Deno.test("policy.narrow() refuses a section that would widen the policy in any way", () => {
  const cases: [unknown, string][] = [
    [{ libraries: { zod: {} } }, "cannot add a library"],
    [{ libraries: { "@opentelemetry/sdk-trace-base": { telemetry: ["tracking"] } } }, "does not let it feed"],
    [{ libraries: { ai: { versions: ">=7" } } }, "cannot change the versions"],
    [{ destinations: { other: { receives: "names" } } }, "cannot add one"],
    [{ destinations: { collector: { receives: "bodies" } } }, "above the policy's usage"],
    [{ destinations: { collector: { kind: "logfire" } } }, "cannot change the kind"],
    [
      { destinations: { collector: { endpoint: "https://evil.example/v1/traces" } } },
      "cannot change the endpoint",
    ],
    [{ destinations: { collector: { receives: "all" } } }, "not a level"],
    [{ hosts: ["evil.example"] }, "cannot add one"],
    [{ hosts: [".example.com"] }, "cannot add one"],
    [{ hosts: [".com"] }, "not a host entry"],
    [{ hosts: "otel.example.com" }, "not a list"],
    [{ versions: 2 }, "unknown key"],
    [{ destinations: { collector: { colour: "red" } } }, "unknown key"],
  ];
  for (const [section, why] of cases) {
    const p = narrowProblems(section);
    ok(p.some((x) => x.includes(why)), `${JSON.stringify(section)}: ${p.join("; ")}`);
  }
  throws(() => full.narrow("libraries: []"), TelemetryPolicyError);
});

Deno.test("policy.narrow() takes a narrower host under a policy's domain", () => {
  const policy = TelemetryPolicy.fromDict({ version: 1, hosts: [".amazonaws.com", "api.openai.com"] });
  deepEqual(policy.narrow({ hosts: ["s3.amazonaws.com", ".s3.amazonaws.com"] }).hosts, [
    "s3.amazonaws.com",
    ".s3.amazonaws.com",
  ]);
  throws(() => policy.narrow({ hosts: ["amazonaws.com"] }), TelemetryPolicyError);
});

Deno.test("policy.narrow() reports every problem at once", () => {
  equal(narrowProblems({ libraries: { zod: {} }, hosts: ["evil.example"], extra: 1 }).length, 3);
});
