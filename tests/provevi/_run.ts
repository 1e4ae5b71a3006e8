/** Writes real sealed runs through the file store, for the tests of bundles and experiments. */
import { join } from "node:path";
import { EventChain } from "../../lib/provevi/evidence/chain.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import type { Json } from "../../lib/provevi/evidence/event.ts";
import { FileStore } from "../../lib/provevi/store/file_store.ts";

/**
 * Writes a sealed run in `folder`: run_created (with `created`), a note, its outputs (`answer.txt` unless given), run_completed; through
 * `store`, or a file store of the folder's parent.
 */
export async function writeRun(
  folder: string,
  runId: string,
  options: {
    note?: string;
    created?: Record<string, Json>;
    store?: FileStore;
    outputs?: Record<string, string>;
  } = {},
): Promise<string> {
  const store = options.store ?? new FileStore({ runs: join(folder, "..") });
  const writer = await store.openRun(runId, { folder });
  const chain = new EventChain(runId);
  const add = async (type: string, data: Record<string, Json> = {}, payload: string | null = null) => {
    const next = chain.next({ type, component: "RunContext", actor: "tester", data, payload });
    await writer.append(next.line, next.event);
    chain.accept(next);
  };
  await add("run_created", { agent: "q", ...options.created });
  const payload = await writer.putPayload(new TextEncoder().encode("the prompt"));
  await add("prompt_rendered", {}, payload);
  await add("note_added", { text: options.note ?? "hello" });
  for (const [path, text] of Object.entries(options.outputs ?? { "answer.txt": "42\n" })) {
    await Deno.mkdir(join(folder, "output", path, ".."), { recursive: true });
    await Deno.writeTextFile(join(folder, "output", path), text);
    await add("output_artifact_created", {
      path,
      sha256: sha256Hex(text),
      size: new TextEncoder().encode(text).length,
    });
  }
  await add("run_completed");
  await writer.seal();
  return folder;
}
