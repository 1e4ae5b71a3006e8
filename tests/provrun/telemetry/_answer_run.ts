/**
 * The run of the telemetry tests: one scripted model turn that answers {@linkcode ANSWER}, with a `telemetry`
 * block when a test gives one.
 * @module
 */
import { RunFile } from "../../../lib/provrun/run/run_file.ts";

/** The model's one answer: content that must not leave below `bodies`. */
export const ANSWER = "Revenue grew 12% in Q3.";

/** The run file, with `telemetry` (YAML, at the top level) appended. */
export function answerRun(telemetry = ""): RunFile {
  return RunFile.parse(`
run: { org: acme, domain: demo, env: dev, actor: ada, mode: strict }
agent:
  name: q
  backend: call
  model: "test:"
  script:
    model: answer-1
    turns:
      - text: "${ANSWER}"
        usage: { input: 14, output: 9 }
prompt: What was the revenue growth?
${telemetry}
`);
}
