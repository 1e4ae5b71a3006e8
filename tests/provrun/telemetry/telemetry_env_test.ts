import assert from "node:assert/strict";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import {
  denoExportsTelemetry,
  guardNet,
  namedDestinations,
  recordableUrl,
} from "../../../lib/provrun/telemetry/telemetry_env.ts";
import { TelemetryRefused } from "../../../lib/provrun/telemetry/telemetry_env.ts";

const POLICY = TelemetryPolicy.fromDict({
  version: 1,
  destinations: {
    collector: { kind: "otlp", receives: "usage", endpoint: "https://otel.example.com/v1/traces" },
    tracking: { kind: "mlflow", receives: "names", endpoint: "https://mlflow.example.com" },
  },
  hosts: ["otel.example.com", "mlflow.example.com"],
});

Deno.test("namedDestinations() matches the OTLP traces target and MLFLOW_TRACKING_URI against the policy", () => {
  const named = namedDestinations({
    OTEL_EXPORTER_OTLP_ENDPOINT: "https://OTEL.example.com:443/",
    MLFLOW_TRACKING_URI: "https://mlflow.example.com",
  }, POLICY);
  assert.deepEqual(named.map((d) => [d.variable, d.url, d.destination?.name ?? null]), [
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "https://OTEL.example.com:443/v1/traces", "collector"],
    ["MLFLOW_TRACKING_URI", "https://mlflow.example.com", "tracking"],
  ]);
  const traces = namedDestinations({
    OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example.com",
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://evil.example@otel.example.com/v1/traces",
  }, POLICY);
  // The traces variable wins for traces; the general one is matched too, to be recorded and guarded.
  assert.deepEqual(traces.map((d) => [d.variable, d.destination?.name ?? null]), [
    ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", null],
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "collector"],
  ]);
  assert.deepEqual(namedDestinations({}, POLICY), []);
});

Deno.test("recordableUrl() leaves out the user, the password, the query and the fragment", () => {
  assert.equal(
    recordableUrl("https://u:pw@otel.example.com/v1/traces?key=x#y"),
    "https://otel.example.com/v1/traces",
  );
  assert.equal(recordableUrl("not a url"), "(not a URL)");
});

Deno.test("denoExportsTelemetry() reads OTEL_DENO as Deno does: true or 1", () => {
  assert.equal(denoExportsTelemetry({ OTEL_DENO: "true" }), true);
  assert.equal(denoExportsTelemetry({ OTEL_DENO: "1" }), true);
  assert.equal(denoExportsTelemetry({ OTEL_DENO: "false" }), false);
  assert.equal(denoExportsTelemetry({}), false);
});

Deno.test("guardNet() refuses an unlisted host this process may reach, and passes a listed one", async () => {
  const listed = namedDestinations({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example.com:4318" }, POLICY);
  await guardNet(listed, POLICY);
  const unlisted = namedDestinations({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.evil.example" }, POLICY);
  // the test task runs with an open --allow-net; tests/cli/provr_telemetry_test.ts covers a narrow one
  assert.equal(
    (await Deno.permissions.query({ name: "net", host: "otel.evil.example:443" })).state,
    "granted",
  );
  await assert.rejects(guardNet(unlisted, POLICY), (e: unknown) => {
    assert.ok(e instanceof TelemetryRefused);
    assert.equal(e.host, "otel.evil.example:443");
    return true;
  });
});

Deno.test("namedDestinations() also matches the general OTLP endpoint when the traces endpoint overrides it", () => {
  const policy = TelemetryPolicy.fromDict({
    version: 1,
    destinations: {
      collector: { kind: "otlp", receives: "names", endpoint: "https://otel.example.com/v1/traces" },
    },
    hosts: ["otel.example.com"],
  });
  const named = namedDestinations({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://otel.example.com/v1/traces",
    OTEL_EXPORTER_OTLP_ENDPOINT: "https://evil.example",
  }, policy);
  assert.deepEqual(named.map((d) => [d.variable, d.url, d.destination?.name ?? null]), [
    ["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://otel.example.com/v1/traces", "collector"],
    ["OTEL_EXPORTER_OTLP_ENDPOINT", "https://evil.example/v1/traces", null],
  ]);
});

Deno.test("namedDestinations() guards the general OTLP endpoint even when traces are off, and never as the traces target", () => {
  for (const off of [{ OTEL_TRACES_EXPORTER: "none" }, { OTEL_SDK_DISABLED: "true" }]) {
    const named = namedDestinations({ ...off, OTEL_EXPORTER_OTLP_ENDPOINT: "https://evil.example" }, POLICY);
    assert.deepEqual(named.map((d) => [d.variable, d.url, d.traces, d.destination]), [
      ["OTEL_EXPORTER_OTLP_ENDPOINT", "https://evil.example/v1/traces", false, null],
    ]);
  }
});
