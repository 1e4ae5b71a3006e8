/**
 * `deno task tour`: writes a run into the default store, verifies it and shows it, offline.
 * @module
 */
import { EventChain, FileStore, sha256Hex, utf8 } from "../lib/provevi/mod.ts";
import { processIo } from "./_io.ts";
import { prove } from "./prove.ts";

const store = new FileStore();
const stamp = new Date().toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
const runId = `run-${stamp}-${crypto.randomUUID().slice(0, 8)}`;
const writer = await store.openRun(runId);
const chain = new EventChain(runId);
const add = async (
  type: string,
  component: string,
  data: Record<string, string | number>,
  payload?: string,
) => {
  const next = chain.next({
    type,
    component,
    actor: Deno.env.get("USER") ?? "tour",
    data,
    payload: payload ?? null,
  });
  await writer.append(next.line, next.event);
  chain.accept(next);
};
await add("run_created", "RunContext", { org: "acme", domain: "demo", env: "dev" });
const text = "The tour's first evidence.";
await add("note_added", "agent", { chars: text.length }, await writer.putPayload(utf8(text)));
await add("run_completed", "RunContext", { status: "completed", note_sha256: sha256Hex(text) });
await writer.seal();
const io = processIo();
io.out(`tour: wrote ${runId} under ${store.runsRoot}`);
Deno.exitCode = await prove(["verify", runId], io) || await prove(["show", runId], io);
