/**
 * The slow and greedy clients of the door attacks: each opens raw connections to a door and does what a
 * well-behaved client never does (a request line or headers a byte at a time, a body a byte at a time, a
 * connection kept and left silent, connections opened and left, an answer never read), and says how the door
 * ended it: the status it answered, or that it closed the connection, or that the client still held it when it
 * gave up (`held`).
 * @module
 */

/** How a slow client's connection ended. */
export interface Ending {
  /** The HTTP status answered (0 when none). */
  status: number;
  /** Whether the door closed the connection (or reset it) before the client gave up. */
  closed: boolean;
  /** Milliseconds from the first byte to the end. */
  ms: number;
}

const encoder = new TextEncoder();

/**
 * Sends `parts` one at a time, `gapMs` apart, and then nothing, reading all along, until the door answers and
 * closes, or `giveUpMs` pass.
 *
 * @param port The door's port.
 * @param options The parts, the gap, and when to give up.
 * @returns How it ended.
 */
export async function trickle(
  port: number,
  options: { parts: string[]; gapMs: number; giveUpMs: number; hostname?: string },
): Promise<Ending> {
  const conn = await Deno.connect({ hostname: options.hostname ?? "127.0.0.1", port });
  const started = Date.now();
  let text = "";
  let ended = false;
  const reading = (async () => {
    const buf = new Uint8Array(65536);
    try {
      while (true) {
        const n = await conn.read(buf);
        if (n === null) break;
        text += new TextDecoder().decode(buf.subarray(0, n));
      }
    } catch { /* reset by the door, or closed by the client when it gave up */ }
    ended = true;
  })();
  const giveUp = setTimeout(() => closeQuietly(conn), options.giveUpMs);
  try {
    for (const part of options.parts) {
      if (ended) break;
      try {
        await conn.write(encoder.encode(part));
      } catch {
        break;
      }
      await Promise.race([reading, new Promise((resolve) => setTimeout(resolve, options.gapMs))]);
    }
    await reading;
  } finally {
    clearTimeout(giveUp);
    closeQuietly(conn);
  }
  const ms = Date.now() - started;
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), closed: ms < options.giveUpMs, ms };
}

/**
 * Opens `count` connections and sends nothing on them; then one more sends a whole request. Says what that last
 * one got, and how many of the silent ones the door closed within `giveUpMs`.
 *
 * @param port The door's port.
 * @param options The count, the request of the last one, and when to give up.
 * @returns The last one's status (0: closed unanswered) and the silent ones closed.
 */
export async function crowd(
  port: number,
  options: { count: number; request: string; giveUpMs: number },
): Promise<{ status: number; closedSilent: number }> {
  const silent: Deno.Conn[] = [];
  try {
    for (let i = 0; i < options.count; i++) silent.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    const last = await trickle(port, { parts: [options.request], gapMs: 10, giveUpMs: options.giveUpMs });
    const closedSilent = await Promise.all(silent.map((c) => endsWithin(c, options.giveUpMs)));
    return { status: last.status, closedSilent: closedSilent.filter(Boolean).length };
  } finally {
    for (const c of silent) closeQuietly(c);
  }
}

/**
 * Sends a whole request whose answer is large and never reads a byte of it: says whether the door closed the
 * connection within `giveUpMs` (seen when the client finally reads: the end of the stream or a reset).
 *
 * @param port The door's port.
 * @param options The request, and when to give up.
 * @returns True when the door closed it.
 */
export async function neverReads(
  port: number,
  options: { request: string; giveUpMs: number },
): Promise<boolean> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(encoder.encode(options.request));
    await new Promise((resolve) => setTimeout(resolve, options.giveUpMs));
    // drain what the kernel holds: a closed connection ends, a held one stalls
    return await endsWithin(conn, 2000);
  } finally {
    closeQuietly(conn);
  }
}

async function endsWithin(conn: Deno.Conn, ms: number): Promise<boolean> {
  const buf = new Uint8Array(1 << 20);
  const deadline = Date.now() + ms;
  while (true) {
    const left = deadline - Date.now();
    if (left <= 0) return false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const n = await Promise.race([
      conn.read(buf).catch(() => null),
      new Promise<"late">((resolve) => timer = setTimeout(() => resolve("late"), left)),
    ]);
    clearTimeout(timer);
    if (n === "late") return false;
    if (n === null) return true;
  }
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* closed already */ }
}

/** A request's line, a character at a time. */
export function slowLine(path: string): string[] {
  return `POST ${path} HTTP/1.1`.split("");
}

/** A whole request line, then headers a character at a time, never ending. */
export function slowHeaders(path: string, port: number): string[] {
  return [
    `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n`,
    ..."x-padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".split(""),
  ];
}

/** A whole head that declares a small body (under any door's cap), then the body a byte at a time. */
export function slowBody(
  path: string,
  port: number,
  options: { headers?: Record<string, string>; method?: string } = {},
): string[] {
  const head = Object.entries({ host: `127.0.0.1:${port}`, "content-length": "4000", ...options.headers })
    .map(([k, v]) => `${k}: ${v}\r\n`).join("");
  return [`${options.method ?? "POST"} ${path} HTTP/1.1\r\n${head}\r\n`, ..."x".repeat(4000).split("")];
}

/** One whole GET, answered, then a kept-alive connection left silent. */
export function idleAfter(path: string, port: number, headers: Record<string, string> = {}): string[] {
  const head = Object.entries({ host: `127.0.0.1:${port}`, ...headers }).map(([k, v]) => `${k}: ${v}\r\n`)
    .join("");
  return [`GET ${path} HTTP/1.1\r\n${head}\r\n`];
}

/**
 * Over one HTTP/2 connection (cleartext, prior knowledge), a request whose small body comes a byte at a time
 * and, beside it, a quick whole request: says the status each got (0: none), or that the client gave up.
 *
 * @param port The door's port.
 * @param options The slow request's path and headers, the quick one's, the gap and when to give up.
 * @returns The statuses.
 */
export async function http2Beside(
  port: number,
  options: {
    slow: { path: string; headers: Record<string, string> };
    quick: { path: string; headers: Record<string, string> };
    gapMs: number;
    giveUpMs: number;
  },
): Promise<{ slow: number; quick: number }> {
  const { connect } = await import("node:http2");
  const client = connect(`http://127.0.0.1:${port}`);
  client.on("error", () => {});
  const statuses = { slow: 0, quick: 0 };
  const headers = (route: { path: string; headers: Record<string, string> }, length: number) => ({
    host: `127.0.0.1:${port}`,
    ...route.headers,
    ":method": "POST",
    ":path": route.path,
    "content-length": String(length),
  });
  const slow = client.request(headers(options.slow, 4000));
  const quick = client.request(headers(options.quick, 2));
  const ended = (stream: typeof slow, key: "slow" | "quick") =>
    new Promise<void>((resolve) => {
      stream.on("response", (h) => statuses[key] = Number(h[":status"]));
      stream.on("error", () => {});
      stream.on("close", resolve);
      stream.resume();
    });
  const both = Promise.all([ended(slow, "slow"), ended(quick, "quick")]);
  quick.end("{}");
  const timer = setInterval(() => {
    if (!slow.destroyed && !slow.writableEnded) slow.write("x");
  }, options.gapMs);
  const giveUp = setTimeout(() => client.destroy(), options.giveUpMs);
  try {
    await both;
  } finally {
    clearInterval(timer);
    clearTimeout(giveUp);
    client.destroy();
  }
  return statuses;
}

/**
 * Over `count` HTTP/2 connections (cleartext, prior knowledge, frames written by hand), a whole GET each from a
 * client that opens no window for any answer (`SETTINGS_INITIAL_WINDOW_SIZE` 0): the door can send the answer's
 * head but not a byte of its body, so the answer, streamed or not, waits on the client. Says how many the door
 * closed within `giveUpMs`.
 *
 * @param port The door's port.
 * @param options The GET's path and headers, how many connections, and when to give up.
 * @returns The connections the door closed.
 */
export async function zeroWindow(
  port: number,
  options: { path: string; headers: Record<string, string>; count: number; giveUpMs: number },
): Promise<number> {
  const fields: [string, string][] = [
    [":method", "GET"],
    [":scheme", "http"],
    [":path", options.path],
    [":authority", `127.0.0.1:${port}`],
    ...Object.entries(options.headers).map(([k, v]) => [k.toLowerCase(), v] as [string, string]),
  ];
  const block = fields.flatMap(([k, v]) => [0, ...hpackString(k), ...hpackString(v)]);
  const wire = new Uint8Array([
    ...encoder.encode("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
    ...h2Frame(4, 0, 0, [0, 4, 0, 0, 0, 0]), // SETTINGS: INITIAL_WINDOW_SIZE 0
    ...h2Frame(1, 0x5, 1, block), // HEADERS on stream 1: END_STREAM | END_HEADERS
  ]);
  const conns: Deno.Conn[] = [];
  try {
    for (let i = 0; i < options.count; i++) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      conns.push(conn);
      await conn.write(wire);
    }
    const closed = await Promise.all(conns.map((c) => endsWithin(c, options.giveUpMs)));
    return closed.filter(Boolean).length;
  } finally {
    for (const c of conns) closeQuietly(c);
  }
}

function h2Frame(type: number, flags: number, stream: number, payload: number[]): number[] {
  const n = payload.length;
  return [
    n >> 16,
    (n >> 8) & 255,
    n & 255,
    type,
    flags,
    stream >>> 24,
    (stream >> 16) & 255,
    (stream >> 8) & 255,
    stream & 255,
    ...payload,
  ];
}

/** An HPACK string literal, not Huffman-coded: its length (a 7-bit prefix integer), then its bytes. */
function hpackString(text: string): number[] {
  const bytes = [...encoder.encode(text)];
  let n = bytes.length;
  if (n < 127) return [n, ...bytes];
  const out = [127];
  n -= 127;
  while (n >= 128) {
    out.push((n & 127) | 128);
    n >>= 7;
  }
  return [...out, n, ...bytes];
}

/**
 * Over one HTTP/2 connection, `count` requests at once, each declaring a small body and sending none of it: says
 * the status each got (0: none before the client gave up).
 *
 * @param port The door's port.
 * @param options The requests' path and headers, how many, and when to give up.
 * @returns The statuses.
 */
export async function http2Many(
  port: number,
  options: { path: string; headers: Record<string, string>; count: number; giveUpMs: number },
): Promise<number[]> {
  const { connect } = await import("node:http2");
  const client = connect(`http://127.0.0.1:${port}`);
  client.on("error", () => {});
  const statuses = new Array<number>(options.count).fill(0);
  const ended = Array.from({ length: options.count }, (_, i) => {
    const stream = client.request({
      host: `127.0.0.1:${port}`,
      ...options.headers,
      ":method": "POST",
      ":path": options.path,
      "content-length": "1000",
    });
    return new Promise<void>((resolve) => {
      stream.on("response", (h) => statuses[i] = Number(h[":status"]));
      stream.on("error", () => {});
      stream.on("close", resolve);
      stream.resume();
    });
  });
  const giveUp = setTimeout(() => client.destroy(), options.giveUpMs);
  try {
    await Promise.all(ended);
  } finally {
    clearTimeout(giveUp);
    client.destroy();
  }
  return statuses;
}
