/**
 * Hostile or broken redaction hooks (`RunOptions.redact`): each tries to get past the hook's rules (add a key,
 * send an object, mutate what it is shown, hide behind a proxy or a promise, smuggle content into the problem
 * through its error). Stopped: the span it handled is not sent, no content of the run leaves, the run completes
 * and verifies, and the store keeps the span as it was. Recorded: the run holds a `telemetry_problem` that names
 * the cause and quotes nothing of the hook's.
 */
import assert from "node:assert/strict";
import { verifyRun } from "../../lib/provevi/runs/verify_run.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../lib/provevi/telemetry/policy.ts";
import { OtlpReceiver } from "../../lib/provevi/receiver/otlp_receiver.ts";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import { readSpansFile } from "../../lib/provevi/evidence/spans_file.ts";
import type { SpanRedactor } from "../../lib/provrun/telemetry/senders.ts";
import { runFile } from "../../lib/provrun/runner/run.ts";
import { Tally } from "./_tally.ts";
import { ANSWER, answerRun } from "../provrun/telemetry/_answer_run.ts";

const SECRET = "the-prompt-text-sk-0123456789";

class Named extends Error {
  override name = SECRET;
}

/** Each hook acts on the chat span only, so the run's other spans show that the rest still leaves. */
const HOOKS: [string, (span: Parameters<SpanRedactor>[0]) => unknown][] = [
  ["adds a key holding content", (s) => ({ ...s.attributes, "x.leak": ANSWER })],
  [
    "gives a nested object as a value",
    (s) => ({ ...s.attributes, "gen_ai.operation.name": { text: ANSWER } }),
  ],
  ["returns an array", () => [ANSWER]],
  ["returns a promise", async (s) => await Promise.resolve(s.attributes)],
  ["mutates the attributes it is shown", (s) => {
    (s.attributes as Record<string, unknown>)["gen_ai.operation.name"] = ANSWER;
    return undefined;
  }],
  ["returns a proxy whose keys throw", () =>
    new Proxy({}, {
      ownKeys: () => {
        throw new Error(SECRET);
      },
    })],
  ["returns an object whose getter throws", (s) => ({
    ...s.attributes,
    get "gen_ai.operation.name"() {
      throw new Error(SECRET);
    },
  })],
  ["throws an error named with content", () => {
    throw new Named(SECRET);
  }],
  ["throws a proxy whose prototype trap throws", () => {
    throw new Proxy({}, {
      getPrototypeOf: () => {
        throw new Error(SECRET);
      },
    });
  }],
  ["adds a __proto__ key", () => JSON.parse(`{"__proto__": "${SECRET}", "gen_ai.operation.name": "chat"}`)],
  ["returns a value of another type", (s) => ({ ...s.attributes, "gen_ai.operation.name": 10n })],
];

Deno.test("a hostile redaction hook never sends what it handled, never changes the evidence, and is recorded", async () => {
  const tally = new Tally("redaction hook");
  for (const [name, hostile] of HOOKS) {
    await using receiver = await OtlpReceiver.start();
    const runs = await Deno.makeTempDir();
    const store = new FileStore({ runs });
    const redact = ((s) => s.name.startsWith("chat") ? hostile(s) : undefined) as SpanRedactor;
    const outcome = await runFile(answerRun(), {
      store,
      policy: TelemetryPolicy.fromDict({
        version: 1,
        libraries: {},
        destinations: { dest: { kind: "otlp", receives: "names", endpoint: receiver.tracesUrl } },
        hosts: ["127.0.0.1"],
      }),
      environ: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiver.tracesUrl },
      redact,
    });
    const events = readEventsText((await (await store.readRun(outcome.runId)).eventsText())!).events;
    const verified = (await verifyRun(await store.readRun(outcome.runId))).ok;
    const spans = await readSpansFile(outcome.folder);
    const chat = spans.find((s) => s.name.startsWith("chat"));
    const sent = JSON.stringify(receiver.spans);
    const stopped = outcome.status === "completed" && verified &&
      chat?.attributes["gen_ai.operation.name"] === "chat" &&
      !receiver.spans.some((s) => s.name.startsWith("chat")) &&
      receiver.spans.length === spans.length - 1 && !sent.includes(ANSWER) && !sent.includes(SECRET);
    const problems = events.filter((e) => e.type === "telemetry_problem").map((e) => String(e.data.problem));
    const recorded = problems.length === 1 && problems[0]!.includes("redaction hook") &&
      !problems[0]!.includes(SECRET) && !problems[0]!.includes(ANSWER);
    tally.add(name, { stopped, recorded });
    await Deno.remove(runs, { recursive: true });
  }
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
