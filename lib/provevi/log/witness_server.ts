/**
 * A witness over HTTP (C2SP tlog-witness): `POST /add-checkpoint` and `GET /<origin hash>/checkpoint`, on
 * 127.0.0.1 unless told otherwise. A body over 64 KiB is refused before it is read whole, and the door's limits
 * (`serveDoor`) cut a client that sends slowly, idles or crowds it.
 * @module
 */
import { type DoorLimits, type DoorRefusal, readBytesCapped, serveDoor } from "../guard/mod.ts";
import type { Witness } from "./witness.ts";

/** The largest request body a witness reads. */
export const MAX_WITNESS_BODY = 64 * 1024;

/** A running witness server. */
export interface WitnessServer extends AsyncDisposable {
  /** Its URL, `http://host:port`. */
  url: string;
  /** Stops it. */
  close(): Promise<void>;
}

/**
 * Serves a witness.
 *
 * @param witness The witness.
 * @param options `port` (0: a free one), `hostname` (127.0.0.1), the door's `limits` and who hears of its
 *   refusals.
 * @returns The server.
 * @example
 * ```ts ignore
 * import { serveWitness } from "./witness_server.ts";
 * await using server = serveWitness(witness, { port: 0 });
 * ```
 */
export function serveWitness(
  witness: Witness,
  options: { port?: number; hostname?: string; limits?: DoorLimits; onRefusal?: (r: DoorRefusal) => void } =
    {},
): WitnessServer {
  const hostname = options.hostname ?? "127.0.0.1";
  const server = serveDoor(
    {
      port: options.port ?? 0,
      hostname,
      ...(options.limits ? { limits: options.limits } : {}),
      ...(options.onRefusal ? { onRefusal: options.onRefusal } : {}),
    },
    (request) => handle(witness, request),
  );
  const addr = server.addr as Deno.NetAddr;
  return {
    url: `http://${addr.hostname}:${addr.port}`,
    close: async () => {
      await server.shutdown();
    },
    [Symbol.asyncDispose]: async () => await server.shutdown(),
  };
}

async function handle(witness: Witness, request: Request): Promise<Response> {
  const url = new URL(request.url);
  const text = (status: number, body: string, type = "text/plain; charset=utf-8") =>
    new Response(body, { status, headers: { "content-type": type } });
  if (url.pathname === "/add-checkpoint") {
    if (request.method !== "POST") return text(405, "add-checkpoint takes POST\n");
    const body = await readBody(request);
    if (body === null) return text(413, `the body is over ${MAX_WITNESS_BODY} bytes\n`);
    let decoded: string;
    try {
      decoded = new TextDecoder("utf-8", { fatal: true }).decode(body);
    } catch {
      return text(400, "the body is not UTF-8\n");
    }
    const answer = await witness.addCheckpoint(decoded);
    return text(answer.status, answer.body, answer.contentType);
  }
  const m = /^\/([0-9a-f]{64})\/checkpoint$/.exec(url.pathname);
  if (m && request.method === "GET") {
    const note = await witness.latest(m[1]!);
    return note === null ? text(404, "no checkpoint of that log\n") : text(200, note);
  }
  return text(404, "not found\n");
}

/** The body of a request, or null when it declares or holds more than {@linkcode MAX_WITNESS_BODY} bytes. */
async function readBody(request: Request): Promise<Uint8Array | null> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > MAX_WITNESS_BODY) return null;
  if (request.body === null) return new Uint8Array();
  const over = new Error("over the witness's body limit");
  try {
    return await readBytesCapped(request.body, { max: MAX_WITNESS_BODY, tooLarge: () => over });
  } catch (error) {
    if (error === over) return null;
    throw error;
  }
}
