/**
 * A side effect a test can count: a server on 127.0.0.1 that counts each call it is told of, by a token and the
 * call's ID, and a tools folder whose `count` tool (not declared idempotent) tells it, and whose `stamp` tool
 * (declared idempotent) does too. A run that repeats a call shows as a count of 2.
 * @module
 */
import { join } from "node:path";

/** The counting server. */
export interface Counter extends AsyncDisposable {
  /** The host and port, for `agent.net`. */
  readonly host: string;
  /** How many times each call was told, by `token/callId`. */
  readonly calls: Map<string, number>;
  /** The counts of one token's calls, by call ID. */
  of(token: string): Record<string, number>;
}

/** Starts the counting server. */
export function startCounter(): Counter {
  const calls = new Map<string, number>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const key = new URL(request.url).pathname.slice(1);
    const n = (calls.get(key) ?? 0) + 1;
    calls.set(key, n);
    return Response.json({ told: n });
  });
  return {
    host: `127.0.0.1:${server.addr.port}`,
    calls,
    of(token: string) {
      const out: Record<string, number> = {};
      for (const [key, n] of calls) if (key.startsWith(`${token}/`)) out[key.slice(token.length + 1)] = n;
      return out;
    },
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}

/**
 * Writes a tools folder whose tools tell the counter: `count` (a side effect that must not be repeated) and
 * `stamp` (declared idempotent).
 *
 * @returns The folder.
 */
export async function countingTools(dir: string, options: { host: string; token: string }): Promise<string> {
  const folder = join(dir, "tools");
  await Deno.mkdir(folder, { recursive: true });
  const tell = (name: string) =>
    `async ({ n }, ctx) => { const r = await fetch("http://${options.host}/${options.token}/${name}-" + ctx.callId); ` +
    `return { n, told: (await r.json()).told }; }`;
  await Deno.writeTextFile(
    join(folder, "count.ts"),
    `export const TOOLS = [
  {
    name: "count",
    description: "Count one, outside the run (a side effect).",
    schema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    execute: ${tell("count")},
  },
  {
    name: "stamp",
    description: "Stamp one, outside the run; doing it twice is doing it once.",
    idempotent: true,
    schema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    execute: ${tell("stamp")},
  },
];
`,
  );
  return folder;
}
