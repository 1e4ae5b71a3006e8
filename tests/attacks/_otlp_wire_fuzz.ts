/**
 * A differential fuzzer of the wire decoder (`otlp_wire.ts`) against protobufjs, the decoder it replaced: mutated
 * bodies, random protobuf trees of the schema's field numbers, and random OTLP requests written by protobufjs
 * (oneofs of two members, BOMs, int64 edges, odd keys). Not a test (it runs for minutes): run it by hand as
 * `deno run -A tests/attacks/_otlp_wire_fuzz.ts 500000 SEED`; it prints the count of each kind of outcome and
 * keeps the first body of each kind in a temporary directory. "differ" (both read it, differently) and a throw
 * that is not an `Error` are holes; the decoder refusing what protobufjs took (a known field of the wrong wire
 * type, a varint past 10 bytes) and reading invalid UTF-8 as U+FFFD (as the OTLP/JSON decoder does, where
 * protobufjs refuses it) are meant. Each body also goes through the span rows' one pass (`otlp_rows.ts`) beside
 * the general way: a "rows-…" kind (the pass took a body the general way refuses, or wrote other lines) is a hole.
 * @module
 */
import { decodeTraceWire as decodeTraceRequest } from "../../lib/provevi/receiver/otlp_wire.ts";
import { isDeepStrictEqual } from "node:util";
import { protobufjsSpans } from "../provevi/receiver/_otlp_reference.ts";
import { otlpBodies } from "./_otlp_bodies.ts";
import { rowsDiffer } from "../provevi/receiver/_rows_reference.ts";

const SEED = Number(Deno.args[1] ?? 1);
const bodies = otlpBodies(SEED);

const KEPT = Deno.makeTempDirSync({ prefix: "otlp_wire_fuzz_" });
const N = Number(Deno.args[0] ?? 1000);
const kinds: Record<string, number> = {};
let agree = 0, bothFail = 0;
for (let round = 0; round < N; round++) {
  const body = bodies.body(round);
  const rows = rowsDiffer(body);
  if (rows !== null) {
    kinds[rows] = (kinds[rows] ?? 0) + 1;
    if (kinds[rows] === 1) Deno.writeFileSync(`${KEPT}/${rows}.bin`, body);
  }
  let a: unknown, b: unknown, ea: unknown, eb: unknown;
  try {
    a = decodeTraceRequest(body);
  } catch (e) {
    ea = e;
  }
  try {
    b = protobufjsSpans(body);
  } catch (e) {
    eb = e;
  }
  let kind: string;
  if (ea !== undefined && !(ea instanceof Error && ea.constructor === Error)) {
    kind = "new-threw-" + (ea as Error)?.constructor?.name + ":" + String((ea as Error).message).slice(0, 40);
  } else if (ea && eb) {
    bothFail++;
    continue;
  } else if (ea) kind = "new-refuses";
  else if (eb) {
    kind = /encoded data is not valid/.test(String(eb))
      ? "utf8-new-replaces-ref-refuses"
      : "new-accepts-ref-refuses:" + String(eb).replace(/[0-9]+/g, "N").slice(0, 60);
  } else if (isDeepStrictEqual(a, b)) {
    agree++;
    continue;
  } else kind = "differ";
  if (kind === "new-refuses") {
    kind = "new-refuses:" +
      String((ea as Error).message).replace(/[0-9]+/g, "N").replace(/ at byte.*/, "").slice(0, 70);
  }
  if (!(kind in kinds)) {
    kinds[kind] = 0;
    Deno.writeFileSync(`${KEPT}/${kind.replace(/[^a-z0-9-]/gi, "_")}.bin`, body);
  }
  kinds[kind]!++;
}
console.log(JSON.stringify({ kept: KEPT, seed: SEED, N, agree, bothFail, kinds }));
