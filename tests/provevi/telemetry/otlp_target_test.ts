import { deepEqual, equal, throws } from "node:assert/strict";
import { ProveviError } from "../../../lib/provevi/evidence/errors.ts";
import { otlpTracesTarget } from "../../../lib/provevi/telemetry/otlp_target.ts";

Deno.test("otlpTracesTarget() takes the traces endpoint as it is", () => {
  deepEqual(
    otlpTracesTarget({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://a.example.com/custom",
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://b.example.com",
    }),
    { protocol: "http/protobuf", url: "https://a.example.com/custom" },
  );
});

Deno.test("otlpTracesTarget() adds /v1/traces to the general endpoint over HTTP", () => {
  deepEqual(otlpTracesTarget({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://OTEL.example.com:443/" }), {
    protocol: "http/protobuf",
    url: "https://OTEL.example.com:443/v1/traces",
  });
  deepEqual(otlpTracesTarget({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example.com" }), {
    protocol: "http/protobuf",
    url: "https://otel.example.com/v1/traces",
  });
  deepEqual(
    otlpTracesTarget({
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://otel.example.com:4317",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    }),
    { protocol: "grpc", url: "https://otel.example.com:4317" },
  );
});

Deno.test("otlpTracesTarget() reads the protocol from the traces protocol, the protocol, then the exporter", () => {
  const e = { OTEL_EXPORTER_OTLP_ENDPOINT: "https://o.example.com" };
  equal(
    otlpTracesTarget({
      ...e,
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    })?.protocol,
    "http/json",
  );
  equal(
    otlpTracesTarget({
      ...e,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_TRACES_EXPORTER: "otlp_proto_grpc",
    })?.protocol,
    "http/json",
  );
  equal(otlpTracesTarget({ ...e, OTEL_TRACES_EXPORTER: "otlp_proto_grpc" })?.protocol, "grpc");
  equal(otlpTracesTarget({ ...e, OTEL_TRACES_EXPORTER: "otlp" })?.protocol, "http/protobuf");
  equal(otlpTracesTarget(e)?.protocol, "http/protobuf");
});

Deno.test("otlpTracesTarget() counts a variable that is set but empty as not set", () => {
  deepEqual(
    otlpTracesTarget({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "",
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://o.example.com",
      OTEL_EXPORTER_OTLP_PROTOCOL: "",
    }),
    { protocol: "http/protobuf", url: "https://o.example.com/v1/traces" },
  );
  equal(otlpTracesTarget({ OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "" }), null);
});

Deno.test("otlpTracesTarget() gives null when neither endpoint variable is set", () => {
  equal(otlpTracesTarget({}), null);
  equal(otlpTracesTarget({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }), null);
});

Deno.test("otlpTracesTarget() gives null when the exporter variable names no OTLP exporter", () => {
  equal(
    otlpTracesTarget({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://o.example.com", OTEL_TRACES_EXPORTER: "none" }),
    null,
  );
  equal(
    otlpTracesTarget({
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://o.example.com",
      OTEL_TRACES_EXPORTER: "console",
    }),
    null,
  );
});

Deno.test("otlpTracesTarget() gives null for an exporter list with no OTLP exporter even when a protocol is set", () => {
  for (const protocol of ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"]) {
    for (const exporter of ["none", "console", "zipkin"]) {
      equal(
        otlpTracesTarget({
          OTEL_EXPORTER_OTLP_ENDPOINT: "https://o.example.com",
          OTEL_TRACES_EXPORTER: exporter,
          [protocol]: "http/protobuf",
        }),
        null,
        `${exporter} with ${protocol}`,
      );
    }
  }
  deepEqual(
    otlpTracesTarget({
      OTEL_EXPORTER_OTLP_ENDPOINT: "https://o.example.com",
      OTEL_TRACES_EXPORTER: "console,otlp",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    }),
    { protocol: "http/json", url: "https://o.example.com/v1/traces" },
  );
});

Deno.test("otlpTracesTarget() gives null when OTEL_SDK_DISABLED is true", () => {
  for (const value of ["true", "TRUE", " true "]) {
    equal(
      otlpTracesTarget({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://o.example.com/v1/traces",
        OTEL_SDK_DISABLED: value,
      }),
      null,
    );
  }
  deepEqual(
    otlpTracesTarget({ OTEL_EXPORTER_OTLP_ENDPOINT: "https://o.example.com", OTEL_SDK_DISABLED: "false" }),
    { protocol: "http/protobuf", url: "https://o.example.com/v1/traces" },
  );
});

Deno.test("otlpTracesTarget() refuses a protocol it does not know", () => {
  throws(
    () =>
      otlpTracesTarget({
        OTEL_EXPORTER_OTLP_ENDPOINT: "https://o.example.com",
        OTEL_EXPORTER_OTLP_PROTOCOL: "thrift",
      }),
    (e: unknown) => e instanceof ProveviError && e.message.includes("OTEL_EXPORTER_OTLP_PROTOCOL"),
  );
  throws(() => otlpTracesTarget(null as unknown as Record<string, string>), TypeError);
});
