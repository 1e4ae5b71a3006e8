/**
 * A trace's spans as Arize Phoenix shows them, read through Phoenix's own client (the CI peer,
 * .ci/peers/phoenix.sh): for the tests that send a run's spans to it over OTLP/HTTP and OTLP/gRPC.
 * @module
 */

const PHOENIX_URL = Deno.env.get("PROVRUN_TEST_PHOENIX_URL");
const PHOENIX_PYTHON = Deno.env.get("PROVRUN_TEST_PHOENIX_PYTHON");

/** One span as a backend shows it: its name, its type, and its attributes. */
export interface Shown {
  name: string;
  type: string | null;
  attributes: Record<string, unknown>;
}

/** The spans of one trace in Phoenix's default project, as its client gives them. */
export async function phoenixSpans(traceId: string): Promise<Shown[]> {
  const program = `
import json, sys
from phoenix.client import Client
df = Client(base_url=sys.argv[1]).spans.get_spans_dataframe(project_identifier="default", limit=100000)
df = df[df["context.trace_id"] == sys.argv[2]]
out = []
for _, r in df.iterrows():
    attributes = {k[len("attributes."):]: v for k, v in r.items() if k.startswith("attributes.")}
    out.append({"name": r["name"], "type": r["span_kind"], "attributes": attributes})
print(json.dumps(out, default=str))
`;
  const out = await new Deno.Command(PHOENIX_PYTHON!, {
    args: ["-c", program, PHOENIX_URL!, traceId],
    env: { NO_PROXY: "*", PHOENIX_TELEMETRY_ENABLED: "false" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`python failed: ${new TextDecoder().decode(out.stderr).slice(-2000)}`);
  const text = new TextDecoder().decode(out.stdout).trim().split("\n").pop()!;
  // pandas gives NaN for an attribute a span lacks; as JSON text it is a value to drop
  return (JSON.parse(text.replaceAll("NaN", "null")) as Shown[]).map((s) => ({
    ...s,
    attributes: Object.fromEntries(Object.entries(s.attributes).filter(([, v]) => v !== null && v !== "nan")),
  }));
}
