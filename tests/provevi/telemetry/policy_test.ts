import { createHash } from "node:crypto";
import { deepEqual, equal, ok, rejects, throws } from "node:assert/strict";
import { ProveviError } from "../../../lib/provevi/evidence/errors.ts";
import { otlpTracesTarget } from "../../../lib/provevi/telemetry/otlp_target.ts";
import { TelemetryPolicyError } from "../../../lib/provevi/evidence/errors.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";

const FIXTURES = new URL("../../../fixtures/policies/", import.meta.url).pathname;

/** The problems of a policy given as an object, or [] when it loads. */
function problemsOf(data: unknown): string[] {
  try {
    TelemetryPolicy.fromDict(data);
    return [];
  } catch (error) {
    if (error instanceof TelemetryPolicyError) return error.problems.map((p) => p.message);
    throw error;
  }
}

/** A valid policy with one otlp destination, changed by `patch`. */
function base(patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    version: 1,
    libraries: { ai: { versions: ">=7.0.0 <7.1.0", telemetry: ["collector"] } },
    destinations: {
      collector: { kind: "otlp", receives: "usage", endpoint: "https://otel.example.com/v1/traces" },
    },
    hosts: ["otel.example.com"],
    ...patch,
  };
}

Deno.test("the seed's worked example matches three URLs against a policy with two destinations", () => {
  const policy = TelemetryPolicy.fromDict({
    version: 1,
    destinations: {
      collector: { kind: "otlp", receives: "usage", endpoint: "https://otel.example.com/v1/traces" },
      tracking: { kind: "mlflow", receives: "bodies", endpoint: "postgresql://db.example.com/mlflow" },
    },
    hosts: ["otel.example.com", "db.example.com"],
  });
  const target = otlpTracesTarget({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://OTEL.example.com:443/" })!;
  const lines = [
    `${target.protocol} ${target.url} -> ${policy.matchDestination("otlp", target.url)!.name}`,
    policy.matchDestination("mlflow", "postgresql+psycopg://u:pw@db.example.com:5432/mlflow")!.name,
    String(policy.matchDestination("otlp", "https://evil.example@otel.example.com/v1/traces")),
  ];
  deepEqual(lines, ["http/protobuf https://OTEL.example.com:443/v1/traces -> collector", "tracking", "null"]);
});

Deno.test("TelemetryPolicy.load() reads the sample policy in YAML and in JSON, with one digest", async () => {
  const yaml = await TelemetryPolicy.load(FIXTURES + "telemetry-policy.yaml");
  const json = await TelemetryPolicy.load(FIXTURES + "telemetry-policy.json");
  equal(yaml.digest(), json.digest());
  equal(yaml.digest().length, 64);
  deepEqual(yaml.hosts, ["api.anthropic.com", ".amazonaws.com", "logfire-us.pydantic.dev"]);
  deepEqual(yaml.library("ai"), { name: "ai", versions: ">=7.0.0 <7.1.0", telemetry: ["logfire"] });
  deepEqual(yaml.library("@ai-sdk/openai")?.telemetry, []);
  equal(yaml.destination("logfire")?.receives, "usage");
  equal(yaml.feeds("ai", "logfire"), true);
  equal(yaml.feeds("@ai-sdk/openai", "logfire"), false);
});

Deno.test("TelemetryPolicy.load() reports every problem in the file at once", async () => {
  try {
    await TelemetryPolicy.load(FIXTURES + "many-problems.yaml");
    ok(false, "loaded");
  } catch (e) {
    ok(e instanceof TelemetryPolicyError);
    ok(e instanceof ProveviError);
    // each problem with its code, and the file it was read from
    const want: [string, string][] = [
      ["policy.unknown_key", '"owner": unknown key'],
      ["policy.version", "version: 2 is not the integer 1"],
      ["policy.host", 'hosts[0]: ".com" is a domain with one label'],
      ["policy.level", 'destinations.logfire.receives: "everything" is not one of names, usage, bodies'],
      ["policy.endpoint", "destinations.logfire.endpoint:"],
      ["policy.kind", 'destinations.collector.kind: "zipkin"'],
      ["policy.endpoint_host", "destinations.tracking.endpoint: its host db.elsewhere.com is not in hosts"],
      ["policy.endpoint", "destinations.browser.endpoint: a live destination has no endpoint"],
      ["policy.unknown_key", 'libraries.ai: "extra" is an unknown key'],
      ["policy.versions", 'libraries.ai.versions: ">=7.0,<7.1" is not a semver range'],
      ["policy.feeds", 'libraries.ai.telemetry: "nowhere" is not a destination'],
      ["policy.versions", "libraries.litellm.versions: missing"],
      ["policy.shape", "libraries.litellm.telemetry: is not a list"],
    ];
    equal(e.problems.length, want.length, e.problems.map((p) => p.message).join("\n"));
    for (const [code, w] of want) {
      ok(e.problems.some((p) => p.code === code && p.message.startsWith(w)), `no ${code} starts with ${w}`);
    }
    ok(e.problems.every((p) => p.file === FIXTURES + "many-problems.yaml"));
    ok(e.message.startsWith(`the telemetry policy ${FIXTURES}many-problems.yaml has 13 problems: `));
    ok(!e.message.includes("\n"));
  }
});

Deno.test("TelemetryPolicy.load() refuses a key named twice in one mapping, in YAML and in JSON", async () => {
  for (const [file, key] of [["duplicate-key.yaml", "receives"], ["duplicate-key.json", "hosts"]]) {
    try {
      await TelemetryPolicy.load(FIXTURES + file);
      ok(false, `${file} loaded`);
    } catch (e) {
      ok(e instanceof TelemetryPolicyError);
      deepEqual(e.problems.length, 1);
      ok(e.problems[0]!.message.includes(`the key "${key}" is named twice`), e.problems[0]!.message);
      ok(/^line \d+: /.test(e.problems[0]!.message));
      equal(e.problems[0]!.code, "policy.duplicate_key");
    }
  }
});

Deno.test("TelemetryPolicy.load() refuses a version written 1.0, which is not the integer 1", async () => {
  try {
    await TelemetryPolicy.load(FIXTURES + "version-float.json");
    ok(false);
  } catch (e) {
    ok(e instanceof TelemetryPolicyError);
    deepEqual(e.problems.map((p) => [p.code, p.message]), [
      ["policy.version", "version: 1.0 is not the integer 1; write version: 1"],
    ]);
  }
  for (
    const text of ["version: 1.0\n", "version: 0x1\n", "version: 1e0\n", "version: +1\n", "version: 01\n"]
  ) {
    throws(() => TelemetryPolicy.parse(text), TelemetryPolicyError, text);
  }
  equal(TelemetryPolicy.parse("version: 1\n").digest(), TelemetryPolicy.denyAll().digest());
});

Deno.test("TelemetryPolicy.load() reports a file that is not YAML, and one that cannot be read", async () => {
  await rejects(
    TelemetryPolicy.load(FIXTURES + "not-yaml.yaml"),
    (e: unknown) => e instanceof TelemetryPolicyError && e.problems[0]!.message.startsWith("line "),
  );
  await rejects(
    TelemetryPolicy.load(FIXTURES + "no-such-file.yaml"),
    (e: unknown) =>
      e instanceof ProveviError && /cannot read the telemetry policy .*no-such-file\.yaml/.test(e.message),
  );
});

Deno.test("TelemetryPolicy.fromDict() refuses a version that is not the integer 1", () => {
  for (const version of [2, 0, "1", 1.5, true, null, [1]]) {
    ok(problemsOf(base({ version })).some((p) => p.startsWith("version:")), String(version));
  }
  const { version: _, ...noVersion } = base();
  deepEqual(problemsOf(noVersion), ["version: missing; write version: 1"]);
});

Deno.test("TelemetryPolicy.fromDict() refuses unknown keys at every level", () => {
  deepEqual(problemsOf(base({ extra: 1 })).length, 1);
  ok(problemsOf(base({ libraries: { ai: { versions: "7.0.0", tested: true } } }))[0]!.includes('"tested"'));
  ok(
    problemsOf(base({ destinations: { c: { kind: "live", receives: "names", password: "x" } } }))[0]!
      .includes(
        '"password"',
      ),
  );
});

Deno.test("TelemetryPolicy.fromDict() refuses a text where a list belongs", () => {
  ok(problemsOf(base({ hosts: "otel.example.com" })).some((p) => p.startsWith("hosts: is not a list")));
  ok(
    problemsOf(base({ libraries: { ai: { versions: "7.0.0", telemetry: "collector" } } })).some((p) =>
      p.includes("telemetry: is not a list")
    ),
  );
});

Deno.test("TelemetryPolicy.fromDict() checks kinds and levels", () => {
  for (const kind of ["logfire", "otlp", "mlflow"]) {
    deepEqual(
      problemsOf(
        base({
          destinations: { collector: { kind, receives: "names", endpoint: "https://otel.example.com" } },
        }),
      ),
      [],
    );
  }
  for (const receives of ["names", "usage", "bodies"]) {
    deepEqual(
      problemsOf(
        base({
          destinations: { collector: { kind: "otlp", receives, endpoint: "https://otel.example.com" } },
        }),
      ),
      [],
    );
  }
  equal(
    problemsOf(
      base({
        destinations: { c: { kind: "OTLP", receives: "names", endpoint: "https://otel.example.com" } },
      }),
    ).length,
    2,
  );
  ok(
    problemsOf(
      base({
        destinations: {
          collector: { kind: "otlp", receives: "Names", endpoint: "https://otel.example.com" },
        },
      }),
    )[0]!.includes("receives"),
  );
  ok(
    problemsOf(
      base({ destinations: { collector: { kind: "otlp", endpoint: "https://otel.example.com" } } }),
    )[0]!.includes("receives"),
  );
});

Deno.test("a logfire destination with no endpoint gets Logfire's own, and the digest holds it", () => {
  const spec = (endpoint?: string) => ({
    version: 1,
    libraries: {},
    destinations: { lf: { kind: "logfire", receives: "usage", ...(endpoint ? { endpoint } : {}) } },
    hosts: ["logfire-us.pydantic.dev", "logfire-eu.pydantic.dev"],
  });
  const implied = TelemetryPolicy.fromDict(spec());
  equal(implied.destination("lf")?.endpoint, "https://logfire-us.pydantic.dev");
  equal(implied.digest(), TelemetryPolicy.fromDict(spec("https://logfire-us.pydantic.dev")).digest());
  const eu = TelemetryPolicy.fromDict(spec("https://logfire-eu.pydantic.dev"));
  equal(eu.destination("lf")?.endpoint, "https://logfire-eu.pydantic.dev");
});

Deno.test("TelemetryPolicy.fromDict() checks endpoints by kind", () => {
  const dest = (d: Record<string, unknown>) =>
    problemsOf(base({ libraries: {}, destinations: { d }, hosts: ["db.example.com", "otel.example.com"] }));
  deepEqual(dest({ kind: "mlflow", receives: "usage" }), []); // the store's own file
  deepEqual(dest({ kind: "mlflow", receives: "usage", endpoint: "postgresql://db.example.com/mlflow" }), []);
  deepEqual(dest({ kind: "mlflow", receives: "usage", endpoint: "sqlite:////srv/mlflow.db" }), []);
  deepEqual(dest({ kind: "mlflow", receives: "usage", endpoint: "https://otel.example.com" }), []);
  deepEqual(dest({ kind: "live", receives: "names" }), []);
  ok(dest({ kind: "otlp", receives: "usage" })[0]!.includes("missing"));
  // a logfire destination with no endpoint is Logfire's own, whose host must be in hosts like any other
  ok(dest({ kind: "logfire", receives: "usage" })[0]!.includes("logfire-us.pydantic.dev is not in hosts"));
  ok(
    dest({ kind: "otlp", receives: "usage", endpoint: "postgresql://db.example.com/x" })[0]!.includes(
      "http or https",
    ),
  );
  ok(
    dest({ kind: "live", receives: "names", endpoint: "https://otel.example.com" })[0]!.includes(
      "no endpoint",
    ),
  );
  ok(dest({ kind: "otlp", receives: "names", endpoint: "ftp://otel.example.com" })[0]!.includes("scheme"));
  ok(dest({ kind: "otlp", receives: "names", endpoint: 42 })[0]!.includes("not a text"));
});

Deno.test("TelemetryPolicy.fromDict() refuses a user or a password in any endpoint", () => {
  const dest = (endpoint: string) =>
    problemsOf(
      base({
        libraries: {},
        destinations: { d: { kind: "mlflow", receives: "names", endpoint } },
        hosts: ["db.example.com"],
      }),
    );
  ok(dest("postgresql://u:pw@db.example.com/mlflow")[0]!.includes("no secrets"));
  ok(dest("postgresql://u@db.example.com/mlflow")[0]!.includes("no secrets"));
  ok(dest("https://u:pw@db.example.com/")[0]!.includes("user or a password"));
  ok(dest("https://evil.example@db.example.com/")[0]!.includes("user or a password"));
});

Deno.test("TelemetryPolicy problems name what is wrong without repeating a password or a query's value", () => {
  const error = (() => {
    try {
      TelemetryPolicy.parse(`version: 1
hosts: [db.example.com, "ada:hunter2@a.example.com", "b.example.com:hunter2"]
destinations:
  a: { kind: otlp, receives: names, endpoint: "https://ada:hunter2@db.example.com/" }
  b: { kind: mlflow, receives: names, endpoint: "postgresql://ada:hunter2@db.example.com/x" }
  c: { kind: mlflow, receives: names, endpoint: "postgresql://db.example.com/y?password=hunter2" }
  d: { kind: otlp, receives: names, endpoint: "https://db.example.com/?token=hunter2#hunter2" }
`);
    } catch (e) {
      return e as TelemetryPolicyError;
    }
    throw new Error("the policy was read");
  })();
  ok(error instanceof TelemetryPolicyError);
  ok(error.message.startsWith("the telemetry policy has 6 problems: "), error.message);
  equal(error.problems.length, 6, error.message);
  ok(!error.message.includes("hunter2"), error.message);
  ok(error.message.includes('"…@a.example.com" names a user'), error.message);
  ok(error.message.includes('"b.example.com:…" has a port or a password'), error.message);
  ok(error.message.includes('"https://…@db.example.com/" names a user'), error.message);
  ok(error.message.includes('setting "password"'), error.message);
});

Deno.test("TelemetryPolicy.fromDict() requires each endpoint's host in hosts", () => {
  ok(problemsOf(base({ hosts: [] }))[0]!.includes("otel.example.com is not in hosts"));
  deepEqual(problemsOf(base({ hosts: [".example.com"] })), []);
  ok(
    problemsOf(base({ hosts: [".otel.example.com"] }))[0]!.includes("not in hosts"),
    "a leading dot does not name the domain itself",
  );
  deepEqual(problemsOf(base({ hosts: ["OTEL.Example.com"] })), [], "hosts are lowercased");
});

Deno.test("TelemetryPolicy.fromDict() checks each hosts entry", () => {
  const hosts = (entry: unknown) => problemsOf({ version: 1, hosts: [entry] });
  for (const good of ["api.anthropic.com", ".amazonaws.com", "localhost", "127.0.0.1", "[::1]", "db_host"]) {
    deepEqual(hosts(good), [], good);
  }
  for (
    const bad of [
      ".com",
      ".",
      "",
      "*.example.com",
      "user@host.com",
      "u:p@host.com",
      "host.com:443",
      "https://host.com",
      "host.com/x",
      "host.com.",
      "faß.de",
      "0x7f.1",
      "127.1",
      ".0.0.1",
      "a..b",
      42,
      null,
    ]
  ) {
    equal(hosts(bad).length, 1, String(bad));
  }
  equal(problemsOf({ version: 1, hosts: ["a.com", "A.com"] }).length, 1, "named twice");
});

Deno.test("TelemetryPolicy.fromDict() refuses a second live viewer, a library feeding it, and unknown feeds", () => {
  const two = problemsOf({
    version: 1,
    destinations: { a: { kind: "live", receives: "names" }, b: { kind: "live", receives: "usage" } },
  });
  ok(two[0]!.includes("one live viewer at most"));
  const fed = problemsOf({
    version: 1,
    libraries: { ai: { versions: "7.0.0", telemetry: ["a"] } },
    destinations: { a: { kind: "live", receives: "names" } },
  });
  ok(fed[0]!.includes("no library feeds it"));
  ok(
    problemsOf(base({ libraries: { ai: { versions: "7.0.0", telemetry: ["collector", "collector"] } } }))[0]!
      .includes("twice"),
  );
});

Deno.test("TelemetryPolicy.fromDict() refuses two destinations that one URL would match", () => {
  const p = problemsOf(base({
    destinations: {
      a: { kind: "otlp", receives: "names", endpoint: "https://otel.example.com/v1/traces" },
      b: { kind: "otlp", receives: "bodies", endpoint: "https://OTEL.example.com:443/v1/traces/" },
    },
    libraries: {},
  }));
  ok(p[0]!.includes("same kind and endpoint"));
  ok(
    problemsOf({
      version: 1,
      destinations: { a: { kind: "mlflow", receives: "names" }, b: { kind: "mlflow", receives: "bodies" } },
    })[0]!.includes("same kind"),
  );
});

Deno.test("TelemetryPolicy.fromDict() checks npm package names and semver ranges", () => {
  deepEqual(problemsOf({ version: 1, libraries: { "@opentelemetry/api": { versions: "1.9.0" } } }), []);
  ok(
    problemsOf({ version: 1, libraries: { "Bad Name": { versions: "1.0.0" } } })[0]!.includes(
      "npm package name",
    ),
  );
  ok(
    problemsOf({ version: 1, libraries: { ai: { versions: "==1.83.0" } } })[0]!.includes(
      "not a semver range",
    ),
  );
  ok(problemsOf({ version: 1, libraries: { ai: { versions: "" } } })[0]!.includes("semver range"));
  ok(problemsOf({ version: 1, libraries: { ai: { versions: 7 } } })[0]!.includes("semver range"));
  ok(problemsOf({ version: 1, libraries: { ai: "7.0.0" } })[0]!.includes("not a mapping"));
});

Deno.test("TelemetryPolicy.fromDict() refuses what is not a mapping", () => {
  for (const data of [null, [], "version: 1", 1]) equal(problemsOf(data).length, 1);
  ok(problemsOf({ version: 1, destinations: [] })[0]!.startsWith("destinations:"));
  ok(problemsOf({ version: 1, libraries: [] })[0]!.startsWith("libraries:"));
});

Deno.test("TelemetryPolicy.denyAll() approves nothing", () => {
  const policy = TelemetryPolicy.denyAll();
  equal(policy.matchDestination("otlp", "https://otel.example.com/v1/traces"), null);
  equal(policy.matchDestination("mlflow", null), null);
  equal(policy.liveLevel(), null);
  equal(policy.feeds("ai", "collector"), false);
  equal(policy.approvesVersion("ai", "7.0.173"), false);
  deepEqual(policy.toJSON(), { version: 1, libraries: {}, destinations: {}, hosts: [] });
});

Deno.test("policy.matchDestination() matches only the destination's own kind and normal endpoint", async () => {
  const policy = await TelemetryPolicy.load(FIXTURES + "full.yaml");
  equal(policy.matchDestination("otlp", "https://otel.example.com/v1/traces")?.name, "collector");
  equal(policy.matchDestination("otlp", "HTTPS://OTEL.EXAMPLE.COM:443/v1/traces/")?.name, "collector");
  equal(policy.matchDestination("logfire", "https://otel.example.com/v1/traces"), null, "another kind");
  equal(
    policy.matchDestination("otlp", "http://otel.example.com/v1/traces"),
    null,
    "another scheme and port",
  );
  equal(policy.matchDestination("otlp", "https://otel.example.com:4318/v1/traces"), null, "another port");
  equal(policy.matchDestination("otlp", "https://otel.example.com/v1/traces?x=1"), null);
  equal(policy.matchDestination("otlp", "https://otel.example.com/v1/traces#x"), null);
  equal(policy.matchDestination("otlp", "https://otel.example.com./v1/traces"), null);
  equal(policy.matchDestination("otlp", "https://otel.example.com@evil.example/v1/traces"), null);
  equal(policy.matchDestination("otlp", "https://evil.example\\@otel.example.com/v1/traces"), null);
  equal(policy.matchDestination("otlp", "https://otel.example.com/v1/%74races"), null);
  equal(policy.matchDestination("otlp", "https://otel.example.com/v1/x/../traces"), null);
  equal(policy.matchDestination("otlp", "https://otel.example.com\t/v1/traces"), null);
  equal(policy.matchDestination("otlp", "https://otel\uff0eexample.com/v1/traces"), null);
  equal(policy.matchDestination("otlp", "https://otel.example.com:0443/v1/traces"), null);
  equal(policy.matchDestination("otlp", "https://otel.example.com:/v1/traces"), null);
  // sslmode counts; the other settings do not.
  equal(
    policy.matchDestination("mlflow", "postgresql+psycopg://u:pw@db.example.com/mlflow?sslmode=require")
      ?.name,
    "tracking",
  );
  equal(
    policy.matchDestination("mlflow", "postgresql://db.example.com/mlflow?application_name=x&sslmode=require")
      ?.name,
    "tracking",
  );
  equal(policy.matchDestination("mlflow", "postgresql://db.example.com/mlflow"), null, "no TLS asked");
  equal(policy.matchDestination("mlflow", "postgresql://db.example.com/mlflow?sslmode=disable"), null);
  equal(
    policy.matchDestination("mlflow", "postgresql://db.example.com/mlflow?sslmode=require&host=evil.example"),
    null,
  );
  equal(
    policy.matchDestination("mlflow", "postgresql://db.example.com,evil.example/mlflow?sslmode=require"),
    null,
  );
  // No URL: the store's own file.
  equal(policy.matchDestination("mlflow", null)?.name, "store");
  equal(policy.matchDestination("mlflow", undefined)?.name, "store");
  equal(policy.matchDestination("otlp", null), null);
  equal(policy.matchDestination("live", "https://otel.example.com/v1/traces"), null);
  throws(() => policy.matchDestination("zipkin" as "otlp", "https://otel.example.com"), TypeError);
});

Deno.test("policy.liveLevel() gives the live viewer's level, or null", async () => {
  equal((await TelemetryPolicy.load(FIXTURES + "live-viewer.yaml")).liveLevel(), "names");
  equal((await TelemetryPolicy.load(FIXTURES + "full.yaml")).liveLevel(), "bodies");
  equal((await TelemetryPolicy.load(FIXTURES + "telemetry-policy.yaml")).liveLevel(), null);
});

Deno.test("policy.digest() is the SHA-256 of the policy's canonical JSON, and changes with it", () => {
  const a = TelemetryPolicy.fromDict(base());
  const b = TelemetryPolicy.fromDict({ hosts: ["otel.example.com"], ...base() });
  equal(a.digest(), b.digest());
  const c = TelemetryPolicy.fromDict(
    base({
      destinations: {
        collector: { kind: "otlp", receives: "names", endpoint: "https://otel.example.com/v1/traces" },
      },
    }),
  );
  ok(a.digest() !== c.digest());
  const canonical = '{"destinations":{},"hosts":[],"libraries":{},"version":1}';
  equal(TelemetryPolicy.denyAll().digest(), createHash("sha256").update(canonical).digest("hex"));
});

Deno.test("policy.approvesVersion() and versionProblems() check an installed version against the range", () => {
  const policy = TelemetryPolicy.fromDict({
    version: 1,
    libraries: { ai: { versions: ">=7.0.0 <7.1.0" }, "@ai-sdk/openai": { versions: "4.0.118" } },
  });
  equal(policy.approvesVersion("ai", "7.0.173"), true);
  equal(policy.approvesVersion("ai", "7.1.0"), false);
  equal(
    policy.approvesVersion("ai", "7.0.0+patched"),
    false,
    "a local build needs its own name in the range",
  );
  equal(policy.approvesVersion("other", "1.0.0"), false);
  deepEqual(
    policy.versionProblems(new Map([["ai", "7.0.173"], ["@ai-sdk/openai", "4.0.118"], ["zod", "4.6.7"]])),
    [],
  );
  deepEqual(policy.versionProblems(new Map([["ai", "6.0.0"]]), { file: "p.yaml" }), [{
    code: "policy.version_unapproved",
    file: "p.yaml",
    line: null,
    seq: null,
    message: "ai 6.0.0 is installed, but the policy approves >=7.0.0 <7.1.0",
  }]);
});

Deno.test("TelemetryPolicy.fromEnvironment() reads --policy, else PROVRUN_TELEMETRY_POLICY, else approves nothing", async () => {
  const file = FIXTURES + "live-viewer.yaml";
  equal((await TelemetryPolicy.fromEnvironment({ file, environ: {} })).liveLevel(), "names");
  equal(
    (await TelemetryPolicy.fromEnvironment({ environ: { PROVRUN_TELEMETRY_POLICY: file } })).liveLevel(),
    "names",
  );
  equal(
    (await TelemetryPolicy.fromEnvironment({ environ: { PROVRUN_TELEMETRY_POLICY: "" } })).digest(),
    TelemetryPolicy.denyAll().digest(),
  );
  equal((await TelemetryPolicy.fromEnvironment({ environ: {} })).liveLevel(), null);
  await rejects(
    TelemetryPolicy.fromEnvironment({
      environ: { PROVRUN_TELEMETRY_POLICY: FIXTURES + "many-problems.yaml" },
    }),
    TelemetryPolicyError,
  );
});

Deno.test("policy.allowNet() gives the hosts for Deno's --allow-net, a domain as *.domain", async () => {
  const policy = await TelemetryPolicy.load(FIXTURES + "telemetry-policy.yaml");
  deepEqual(policy.allowNet({ extra: ["api.openai.com", "api.anthropic.com"] }), [
    "api.anthropic.com",
    "*.amazonaws.com",
    "logfire-us.pydantic.dev",
    "api.openai.com",
  ]);
  deepEqual(TelemetryPolicy.denyAll().allowNet(), []);
});

Deno.test("an IPv6 endpoint matches only when its bracketed address is in hosts", () => {
  const policy = TelemetryPolicy.fromDict({
    version: 1,
    destinations: { local: { kind: "otlp", receives: "names", endpoint: "http://[::1]:4318/v1/traces" } },
    hosts: ["[::1]"],
  });
  equal(policy.matchDestination("otlp", "http://[::1]:4318/v1/traces")?.name, "local");
  equal(policy.matchDestination("otlp", "http://[0:0:0:0:0:0:0:1]:4318/v1/traces"), null);
  equal(policy.matchDestination("otlp", "http://[::1%25lo]:4318/v1/traces"), null);
  ok(problemsOf({ ...policy.toJSON(), hosts: ["::1"] }).length > 0);
});

Deno.test("TelemetryPolicy refuses a destination named __proto__", () => {
  const p = TelemetryPolicy.parse.bind(TelemetryPolicy);
  throws(
    () => p("version: 1\ndestinations:\n  __proto__:\n    kind: live\n    receives: names\n"),
    (e: unknown) =>
      e instanceof TelemetryPolicyError && e.problems[0]!.message.includes("not starting with __"),
  );
  throws(() => p('{"version": 1, "__proto__": {"hosts": ["evil.example"]}}'), TelemetryPolicyError);
});

Deno.test("TelemetryPolicy.load() refuses a file too large to be a policy, in one line", async () => {
  const dir = await Deno.makeTempDir();
  const file = `${dir}/huge.yaml`;
  await Deno.writeTextFile(file, "version: 1\n" + "#".repeat(2 << 20) + "\n");
  await rejects(
    () => TelemetryPolicy.load(file),
    (e: Error) => e instanceof ProveviError && /is larger than \d+ bytes/.test(e.message),
  );
  await Deno.remove(dir, { recursive: true });
});
