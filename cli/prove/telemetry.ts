/**
 * `prove telemetry`: the attempts a run's telemetry policy blocked, and its telemetry problems.
 * @module
 */
import { findRun } from "../../lib/provevi/runs/mod.ts";
import { telemetryItems } from "../../lib/provevi/telemetry/mod.ts";
import { readRunEvents, telemetryLine } from "../_commands.ts";
import type { ProveContext } from "./_context.ts";
import { jsonText } from "../_json.ts";

/** Adds the command to `prove`. */
export function addTelemetry({ program, io, withStore }: ProveContext): void {
  program.command("telemetry")
    .description("Print the attempts that the telemetry policy blocked in a run, and its telemetry problems.")
    .argument("<run>", "a run ID under the runs root, or a run folder's path")
    .option("--json", "print JSON")
    .action((run: string, opts: { json?: boolean }) =>
      withStore(async (store) => {
        const record = await findRun(run, { store });
        const items = telemetryItems(await readRunEvents(record));
        if (opts.json) io.out(jsonText({ run_id: record.runId, items }));
        else if (items.length === 0) io.out(`${record.runId}: no blocked attempts and no problems`);
        else for (const item of items) io.out(telemetryLine(item));
      })
    );
}
