/**
 * The cost of a door's guard (`serveDoor`: connections taken by the door and handed to Deno's server one by
 * one, a body watched as it arrives, a clock that checks the limits) against a bare `Deno.serve` with the same
 * handler, in the same run: the CPU time of the whole process (client and server) per request, rounds of each
 * taken in turn, medians. Three kinds of request: a POST of 1 KiB read whole and answered over a kept-alive
 * connection (an exporter's batch, an SDK's model call), a GET answered with a stream of 16 chunks (a streamed
 * model answer), and a GET on a new connection each time (a client without keep-alive). Target: at most 0.25 ms
 * of CPU added to a request, a quarter of the 1 ms the gateway's time to first token may grow by in all.
 * @module
 */
import { cpuUsage } from "node:process";
import { serveDoor } from "../../lib/provevi/guard/door_server.ts";
import { median, report } from "./_report.ts";

const ROUNDS = 7;
const PER_ROUND = 300;
const BODY = new Uint8Array(1024).fill(120);
const CHUNK = new Uint8Array(256).fill(97);

const handler = async (request: Request): Promise<Response> => {
  if (request.body !== null) await request.arrayBuffer();
  if (new URL(request.url).pathname !== "/stream") return new Response("ok");
  let n = 0;
  return new Response(
    new ReadableStream<Uint8Array>({
      pull(c) {
        c.enqueue(CHUNK);
        if (++n === 16) c.close();
      },
    }),
  );
};

type Kind = "post" | "stream" | "fresh";

/** CPU microseconds per request of one round. */
async function round(url: string, kind: Kind, client: Deno.HttpClient): Promise<number> {
  const start = cpuUsage();
  for (let i = 0; i < PER_ROUND; i++) {
    const response = kind === "post"
      ? await fetch(`${url}/post`, { method: "POST", body: BODY })
      : await fetch(`${url}/${kind === "stream" ? "stream" : "get"}`, kind === "fresh" ? { client } : {});
    await response.arrayBuffer();
  }
  const used = cpuUsage(start);
  return (used.user + used.system) / PER_ROUND;
}

/** Prints the figures. */
export async function main(): Promise<void> {
  const bare = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  const door = serveDoor({ hostname: "127.0.0.1", port: 0 }, handler);
  const fresh = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  try {
    const urls = { bare: `http://127.0.0.1:${bare.addr.port}`, door: `http://127.0.0.1:${door.addr.port}` };
    const names: Record<Kind, string> = {
      post: "door, a POST of 1 KiB read and answered, kept alive",
      stream: "door, a GET answered with a stream of 16 chunks, kept alive",
      fresh: "door, a GET on a new connection each",
    };
    for (const kind of ["post", "stream", "fresh"] as Kind[]) {
      await round(urls.bare, kind, fresh);
      await round(urls.door, kind, fresh);
      const figures: number[] = [];
      const references: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        references.push(await round(urls.bare, kind, fresh));
        figures.push(await round(urls.door, kind, fresh));
      }
      const figure = median(figures);
      const reference = median(references);
      report(
        `${names[kind]} (added ${((figure - reference) / 1000).toFixed(3)} ms CPU)`,
        figure,
        reference,
        "µs CPU per request",
        "at most 0.25 ms added",
      );
    }
  } finally {
    fresh.close();
    await bare.shutdown();
    await door.shutdown();
  }
}

if (import.meta.main) await main();
