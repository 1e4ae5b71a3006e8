import { deepEqual, throws } from "node:assert/strict";
import { EventChain } from "../../../lib/provevi/evidence/chain.ts";
import type { Json } from "../../../lib/provevi/evidence/event.ts";
import { blockedData, problemData, telemetryItems } from "../../../lib/provevi/telemetry/telemetry_events.ts";

Deno.test("blockedData() gives the data of telemetry_blocked", () => {
  deepEqual(blockedData("ai.experimental_telemetry", { library: "ai", detail: "isEnabled: true" }), {
    path: "ai.experimental_telemetry",
    library: "ai",
    detail: "isEnabled: true",
  });
  deepEqual(blockedData("network"), { path: "network", library: null, detail: null });
  throws(() => blockedData(""), TypeError);
  throws(() => blockedData("x", { library: 3 as unknown as string }), TypeError);
});

Deno.test("problemData() gives the data of telemetry_problem", () => {
  deepEqual(problemData("OTEL_DENO is set"), { problem: "OTEL_DENO is set", library: null });
  throws(() => problemData(""), TypeError);
});

Deno.test("telemetryItems() keeps the blocked attempts and the problems of a run, in order", () => {
  const chain = new EventChain("run-20261129T120000Z-0badc0de");
  const make = (type: string, data: { [key: string]: Json }) => {
    const c = chain.next({
      type,
      component: "Telemetry",
      actor: "me",
      data,
      time: "2026-11-29T12:00:00.000000Z",
    });
    chain.accept(c);
    return c.event;
  };
  const events = [
    make("run_created", {}),
    make(
      "telemetry_blocked",
      blockedData("destination", { detail: "OTEL_EXPORTER_OTLP_ENDPOINT https://evil.example:443" }),
    ),
    make("telemetry_problem", problemData("OTEL_DENO is set", { library: "deno" })),
  ];
  deepEqual(telemetryItems(events), [
    {
      seq: 1,
      time: "2026-11-29T12:00:00.000000Z",
      kind: "blocked",
      path: "destination",
      library: null,
      detail: "OTEL_EXPORTER_OTLP_ENDPOINT https://evil.example:443",
      problem: null,
    },
    {
      seq: 2,
      time: "2026-11-29T12:00:00.000000Z",
      kind: "problem",
      path: null,
      library: "deno",
      detail: null,
      problem: "OTEL_DENO is set",
    },
  ]);
});
