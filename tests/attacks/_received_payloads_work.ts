/**
 * The work of received_payloads_attacks_test.ts that is measured in a process of its own (`measuredInChild`):
 * `prove show` of a run folder whose events were changed after its seal to name payloads a reader of its spans
 * makes rows of.
 * @module
 */
import { prove } from "../../cli/prove.ts";
import { bufferIo } from "../../cli/_io.ts";
import { findRun } from "../../lib/provevi/runs/find_run.ts";
import { readEventsText } from "../../lib/provevi/evidence/read_events.ts";
import { receivedOf } from "../../lib/provevi/viewer/run_received.ts";

/** The bytes this process has read from files so far (`rchar` of /proc/self/io). */
async function bytesRead(): Promise<number> {
  const io = await Deno.readTextFile("/proc/self/io");
  return Number(/^rchar: (\d+)$/m.exec(io)![1]);
}

/**
 * `prove show <folder> --json`, measured: gives its exit code, how many spans it showed, and how many bytes it
 * read from files.
 */
export function showRun(folder: string) {
  return async () => {
    const io = bufferIo();
    const before = await bytesRead();
    const code = await prove(["show", folder, "--json"], io);
    const read = await bytesRead() - before;
    const shown = code === 0 ? JSON.parse(io.stdout.join("\n")) as { spans: unknown[] } : { spans: [] };
    return { code, read, spans: shown.spans.length, stderr: io.stderr.join("\n").slice(0, 300) };
  };
}

/**
 * The spans the viewer's trace reads of the run in `folder` (`receivedOf`, at `bodies`), measured: gives how
 * many, and how many bytes it read from files.
 */
export async function viewerReceived(folder: string) {
  const record = await findRun(folder);
  const events = readEventsText(await record.eventsText() ?? "").events;
  return async () => {
    const before = await bytesRead();
    const spans = await receivedOf(record, { events, level: "bodies" });
    return { spans: spans.length, read: await bytesRead() - before };
  };
}
