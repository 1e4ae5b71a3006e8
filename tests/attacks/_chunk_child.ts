/**
 * The byte-at-a-time cases of chunk_attacks_test.ts, run in a process of their own with V8's `gc()` exposed, so
 * that what a case holds is measured after a collection (a read's 64 KiB buffer that is already garbage is not
 * counted; one that a kept chunk still holds is). Each sender declares twice the bytes it sends, sends half a
 * byte at a time, and waits: the reader is then mid-body, holding what it kept. Prints one JSON line:
 * `{ case: bytes held }`.
 * @module
 */
import { readBytesCapped } from "../../lib/provevi/guard/body_bytes.ts";
import { bodyReader } from "../../lib/provevi/guard/door_body.ts";
import { serveDoor } from "../../lib/provevi/guard/door_server.ts";
import { readReply } from "../../lib/provevi/mlflow/mlflow_reply.ts";
import { limitedFetch } from "../../lib/provrun/backends/model_limit.ts";

const BYTES = 3000;
const encoder = new TextEncoder();
const gc = (globalThis as unknown as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");

function held(before: number): number {
  gc!();
  const m = Deno.memoryUsage();
  return m.heapUsed + m.external - before;
}

function baseline(): number {
  gc!();
  const m = Deno.memoryUsage();
  return m.heapUsed + m.external;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes `head`, then BYTES single bytes, each its own segment and its own read. */
async function trickle(conn: Deno.TcpConn, head: string): Promise<void> {
  conn.setNoDelay(true);
  await conn.write(encoder.encode(head));
  for (let i = 0; i < BYTES; i++) {
    await conn.write(encoder.encode("x"));
    await pause(1);
  }
  await pause(300); // the last bytes read by the other side
}

/** A server whose answer declares 2 × BYTES, sends BYTES a byte at a time, then waits for `rest`. */
function tricklingServer(rest: Promise<void>): { port: number; sent: Promise<void>; close: () => void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let sent!: () => void;
  const sentOnce = new Promise<void>((resolve) => sent = resolve);
  (async () => {
    const conn = await listener.accept();
    await trickle(conn, `HTTP/1.1 200 OK\r\ncontent-length: ${2 * BYTES}\r\n\r\n`);
    sent();
    await rest;
    await conn.write(encoder.encode("x".repeat(BYTES))).catch(() => 0);
    conn.close();
  })().catch(() => {});
  return { port: (listener.addr as Deno.NetAddr).port, sent: sentOnce, close: () => listener.close() };
}

/** A client that sends a request whose body it declares as 2 × BYTES, BYTES a byte at a time, then waits. */
async function tricklingClient(port: number, rest: Promise<void>): Promise<void> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await trickle(
    conn,
    `POST / HTTP/1.1\r\nhost: x\r\ncontent-length: ${2 * BYTES}\r\nconnection: close\r\n\r\n`,
  );
  (async () => {
    await rest;
    await conn.write(encoder.encode("x".repeat(BYTES)));
    await new Response(conn.readable).arrayBuffer();
  })().catch(() => {});
}

/** The door's read-ahead: through its stream, or (`handed`) for a handler that reads with `bodyReader`. */
async function doorReadAhead(handed: boolean): Promise<number> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  // The trickle's 3,000 bytes take seconds on an idle machine and can pass the door's 30 s body floor on a
  // loaded one, where the door rightly cuts the slow body (door_attacks_test holds that): this case measures what
  // the read-ahead holds, so its floor is out of the way (#25: no test depends on an idle machine).
  const door = serveDoor(
    { limits: { bodyFloorMs: 600_000 }, handlerReadsBodies: handed },
    async (request) => {
      await released; // the handler waits (a run's lock held) while the door reads ahead
      const bytes = handed
        ? await readBytesCapped(bodyReader(request)!, {
          max: 1 << 20,
          tooLarge: () => new Error("too large"),
        })
        : new Uint8Array(await request.arrayBuffer());
      return new Response(`${bytes.byteLength}`);
    },
  );
  const before = baseline();
  await tricklingClient(door.addr.port, released);
  const n = held(before);
  release();
  await door.shutdown();
  return n;
}

async function collectedBody(): Promise<number> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const bytes = await readBytesCapped(request.body!, {
      max: 1 << 20,
      tooLarge: () => new Error("too large"),
    });
    return new Response(`${bytes.length}`);
  });
  const before = baseline();
  await tricklingClient(server.addr.port, released);
  const n = held(before);
  release();
  await server.shutdown();
  return n;
}

async function mlflowReply(): Promise<number> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const server = tricklingServer(released);
  const before = baseline();
  const reading = fetch(`http://127.0.0.1:${server.port}/`).then((r) => readReply(r));
  await server.sent;
  const n = held(before);
  release();
  await reading;
  server.close();
  return n;
}

async function modelAnswer(): Promise<number> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => release = resolve);
  const server = tricklingServer(released);
  const before = baseline();
  // collected as the SDK collects a whole answer: what it keeps is what the wrapped stream gave
  const reading = limitedFetch(1 << 20)(`http://127.0.0.1:${server.port}/`).then((r) =>
    new Response(r.body).text()
  );
  await server.sent;
  const n = held(before);
  release();
  await reading;
  server.close();
  return n;
}

console.log(JSON.stringify({
  "door read-ahead": await doorReadAhead(false),
  "door read-ahead, read by its handler (prove serve, a run's receiver)": await doorReadAhead(true),
  "collected body (receiver, witness, viewer)": await collectedBody(),
  "MLflow reply": await mlflowReply(),
  "model answer through limitedFetch": await modelAnswer(),
}));
