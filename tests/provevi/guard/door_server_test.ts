import assert from "node:assert/strict";
import { readBytesCapped } from "../../../lib/provevi/guard/body_bytes.ts";
import { bodyReader, dropBody } from "../../../lib/provevi/guard/door_body.ts";
import { DOOR_LIMITS, doorLimits, type DoorRefusal } from "../../../lib/provevi/guard/door_limits.ts";
import { serveDoor } from "../../../lib/provevi/guard/door_server.ts";
import { shutdownWithin } from "../../../lib/provevi/guard/local_server.ts";
import { requestDoor } from "../../../lib/provevi/guard/door_server.ts";
import { neverReads, trickle } from "../../attacks/_slow_clients.ts";

const encoder = new TextEncoder();

/** Reads from a connection until `done` says the text is whole, or the connection ends. */
async function readUntil(conn: Deno.Conn, done: (text: string) => boolean): Promise<string> {
  let text = "";
  const buf = new Uint8Array(65536);
  while (!done(text)) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return text;
}

Deno.test("doorLimits() fills the defaults and refuses a limit that is not a whole number above zero", () => {
  assert.deepEqual(doorLimits(), DOOR_LIMITS);
  assert.equal(doorLimits({ maxConnections: 8 }).maxConnections, 8);
  assert.equal(doorLimits({ maxConnections: 8 }).headerMs, 10_000);
  assert.throws(() => doorLimits({ headerMs: 0 }), RangeError);
  assert.throws(() => doorLimits({ idleMs: 1.5 }), /idleMs is 1.5: give a whole number above zero/);
  assert.throws(() => doorLimits({ nope: 3 } as never), /a door has no limit "nope"/);
});

Deno.test("a door serves requests as Deno.serve does: method, headers and a binary body intact, two on one kept-alive connection", async () => {
  const seen: string[] = [];
  await using door = serveDoor({}, async (request) => {
    const body = new Uint8Array(await request.arrayBuffer());
    seen.push(
      `${request.method} ${new URL(request.url).pathname} ${request.headers.get("x-a")} ${body.length}`,
    );
    return new Response(await crypto.subtle.digest("SHA-256", body));
  });
  assert.equal(door.guarded, "connections");
  const body = Uint8Array.from({ length: 200_000 }, (_, i) => (i * 7919) & 255);
  const answer = await fetch(`http://127.0.0.1:${door.addr.port}/up`, {
    method: "PUT",
    headers: { "x-a": "b" },
    body,
  });
  assert.deepEqual(
    new Uint8Array(await answer.arrayBuffer()),
    new Uint8Array(await crypto.subtle.digest("SHA-256", body)),
  );
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: door.addr.port });
  try {
    const get = `GET /one HTTP/1.1\r\nhost: x\r\n\r\nGET /two HTTP/1.1\r\nhost: x\r\n\r\n`;
    await conn.write(encoder.encode(get));
    const text = await readUntil(conn, (t) => t.split("HTTP/1.1 200").length === 3);
    assert.equal(text.split("HTTP/1.1 200").length, 3, text);
  } finally {
    conn.close();
  }
  assert.deepEqual(seen, ["PUT /up b 200000", "GET /one null 0", "GET /two null 0"]);
});

Deno.test("a slow client within the limits is served: a body above the rate, a handler that works or waits to read past every limit, a stream read slowly", async () => {
  const limits = { headerMs: 400, idleMs: 400, bodyFloorMs: 400, bodyBytesPerSecond: 50, answerMs: 400 };
  const refusals: DoorRefusal[] = [];
  await using door = serveDoor({ limits, onRefusal: (r) => refusals.push(r) }, async (request) => {
    const path = new URL(request.url).pathname;
    // a handler that reads the body only after other work (a lock held): its client sent it whole, at once
    if (path === "/work" || path === "/later") await new Promise((r) => setTimeout(r, 1500));
    if (path === "/stream") {
      let n = 0;
      return new Response(
        new ReadableStream({
          async pull(c) {
            await new Promise((r) => setTimeout(r, 150));
            c.enqueue(encoder.encode("chunk\n"));
            if (++n === 10) c.close();
          },
        }),
      );
    }
    return new Response(`${(await request.text()).length}`);
  });
  const port = door.addr.port;
  // 600 bytes, 30 every 100 ms: 300 bytes/s, well above 50
  const parts = [`POST /body HTTP/1.1\r\nhost: x\r\ncontent-length: 600\r\nconnection: close\r\n\r\n`];
  for (let i = 0; i < 20; i++) parts.push("x".repeat(30));
  const body = await trickle(port, { parts, gapMs: 100, giveUpMs: 20_000 });
  assert.equal(body.status, 200);
  const work = await fetch(`http://127.0.0.1:${port}/work`);
  assert.equal(await work.text(), "0");
  const later = await fetch(`http://127.0.0.1:${port}/later`, { method: "POST", body: "x".repeat(100_000) });
  assert.equal(await later.text(), "100000");
  const stream = await fetch(`http://127.0.0.1:${port}/stream`);
  assert.equal((await stream.text()).split("\n").length, 11);
  assert.deepEqual(refusals.filter((r) => r.limit !== "idle"), []);
});

Deno.test("a streamed answer the client stops taking is cut, and the door is told", async () => {
  const refusals: DoorRefusal[] = [];
  await using door = serveDoor({ limits: { answerMs: 500 }, onRefusal: (r) => refusals.push(r) }, () => {
    const chunk = new Uint8Array(1 << 16);
    return new Response(new ReadableStream({ pull: (c) => c.enqueue(chunk) }));
  });
  const closed = await neverReads(door.addr.port, {
    request: "GET / HTTP/1.1\r\nhost: x\r\n\r\n",
    giveUpMs: 3000,
  });
  assert.ok(closed);
  assert.deepEqual(refusals.map((r) => r.limit), ["answer"]);
  assert.match(refusals[0]!.message, /took none of its answer for 500 ms/);
});

Deno.test("at the cap, a new connection closes the one that waited longest for a request; with none waiting it gets 503", async () => {
  const refusals: DoorRefusal[] = [];
  const release = Promise.withResolvers<void>();
  await using door = serveDoor(
    { limits: { maxConnections: 2 }, onRefusal: (r) => refusals.push(r) },
    async () => {
      await release.promise;
      return new Response("ok");
    },
  );
  const port = door.addr.port;
  const silent = await Deno.connect({ hostname: "127.0.0.1", port });
  const busy = fetch(`http://127.0.0.1:${port}/a`);
  // the silent one is closed to make room for the second request
  const second = fetch(`http://127.0.0.1:${port}/b`, {
    client: Deno.createHttpClient({ poolMaxIdlePerHost: 0 }),
  });
  assert.equal(await silent.read(new Uint8Array(16)).catch(() => null), null);
  silent.close();
  // both connections are in a request now: a third is refused
  const third = await trickle(port, {
    parts: ["GET /c HTTP/1.1\r\nhost: x\r\n\r\n"],
    gapMs: 10,
    giveUpMs: 10_000,
  });
  assert.equal(third.status, 503);
  release.resolve();
  assert.equal(await (await busy).text(), "ok");
  assert.equal(await (await second).text(), "ok");
  assert.deepEqual(refusals.map((r) => r.limit), ["header", "connections"]);
});

Deno.test("a handler's error is the onError answer; a TRACE with a body is still handed to the handler", async () => {
  await using door = serveDoor(
    { onError: () => new Response("sorry", { status: 500 }) },
    (request) => {
      if (request.method === "TRACE") return new Response("no trace", { status: 405 });
      throw new Error("boom");
    },
  );
  const port = door.addr.port;
  const boom = await fetch(`http://127.0.0.1:${port}/`);
  assert.equal(await boom.text(), "sorry");
  const trace = await trickle(port, {
    parts: ["TRACE / HTTP/1.1\r\nhost: x\r\ncontent-length: 5\r\nconnection: close\r\n\r\nhello"],
    gapMs: 10,
    giveUpMs: 10_000,
  });
  assert.equal(trace.status, 405);
});

Deno.test("a door shuts down at once with silent connections open, and takes no new one", async () => {
  const door = serveDoor({}, () => new Response("ok"));
  const port = door.addr.port;
  const silent = await Deno.connect({ hostname: "127.0.0.1", port });
  await (await fetch(`http://127.0.0.1:${port}/`)).text();
  assert.equal(await shutdownWithin(door, 5000), true);
  await assert.rejects(() => Deno.connect({ hostname: "127.0.0.1", port }));
  silent.close();
});

Deno.test("a door that watches no body (the gateway's lighter form) still cuts a slow head, and lets a slow body through", async () => {
  const refusals: DoorRefusal[] = [];
  const limits = { headerMs: 500, bodyFloorMs: 300, bodyBytesPerSecond: 1000 };
  await using door = serveDoor(
    { limits, watchBodies: false, onRefusal: (r) => refusals.push(r) },
    async (r) => {
      return new Response(`${(await r.arrayBuffer()).byteLength}`);
    },
  );
  const port = door.addr.port;
  const parts = [
    `POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 12\r\nconnection: close\r\n\r\n`,
    ..."abcdefghijkl",
  ];
  const body = await trickle(port, { parts, gapMs: 100, giveUpMs: 20_000 });
  assert.equal(body.status, 200);
  const head = await trickle(port, { parts: [..."POST / HTTP/1.1"], gapMs: 100, giveUpMs: 20_000 });
  assert.ok(head.closed && head.status === 0);
  assert.deepEqual(refusals.map((r) => r.limit), ["header"]);
});

Deno.test("a Deno without the per-connection server gets a door that still serves and still answers a slow body 408", async () => {
  const refusals: DoorRefusal[] = [];
  const limits = doorLimits({ bodyFloorMs: 300, bodyBytesPerSecond: 1000 });
  await using door = requestDoor({ onRefusal: (r) => refusals.push(r) }, limits, async (r) => {
    return new Response(`${(await r.arrayBuffer()).byteLength}`);
  });
  assert.equal(door.guarded, "requests");
  const answer = await fetch(`http://127.0.0.1:${door.addr.port}/`, { method: "POST", body: "abc" });
  assert.equal(await answer.text(), "3");
  const parts = [
    `POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 4000\r\nconnection: close\r\n\r\n`,
    ..."x".repeat(4000).split(""),
  ];
  const slow = await trickle(door.addr.port, { parts, gapMs: 50, giveUpMs: 60_000 });
  assert.ok(slow.closed, `the slow body was held ${slow.ms} ms`);
  assert.deepEqual(refusals.map((r) => [r.limit, r.status]), [["body", 408]]);
});

Deno.test("a door that watches no answer hands a streamed answer to the server as the handler made it", async () => {
  let made: ReadableStream<Uint8Array> | null = null;
  await using door = serveDoor({ watchAnswers: false }, () => {
    made = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode("one "));
        c.enqueue(new TextEncoder().encode("two"));
        c.close();
      },
    });
    return new Response(made);
  });
  const answer = await fetch(`http://127.0.0.1:${door.addr.port}/`);
  assert.equal(await answer.text(), "one two");
  assert.ok(made !== null);
});

Deno.test("a door whose owner's refusal callback throws keeps cutting and serving", async () => {
  let told = 0;
  const limits = { headerMs: 300 };
  await using door = serveDoor({
    limits,
    onRefusal: () => {
      told += 1;
      throw new Error("the owner's bug");
    },
  }, () => new Response("ok"));
  const port = door.addr.port;
  for (let i = 0; i < 2; i++) {
    const head = await trickle(port, { parts: [..."GET / HTTP/1.1"], gapMs: 100, giveUpMs: 20_000 });
    assert.ok(head.closed && head.status === 0);
  }
  assert.equal(told, 2);
  assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), "ok");
});

Deno.test("a door whose handler reads bodies itself (handlerReadsBodies) keeps the limits: a late reader is served, a slow body is refused 408 before its handler reads", async () => {
  const refusals: DoorRefusal[] = [];
  const limits = { bodyFloorMs: 300, bodyBytesPerSecond: 1000 };
  const read: string[] = [];
  await using door = serveDoor(
    { limits, handlerReadsBodies: true, onRefusal: (r) => refusals.push(r) },
    async (request) => {
      const path = new URL(request.url).pathname;
      if (path === "/drop") {
        await dropBody(request);
        return new Response("dropped");
      }
      // the handler reads only after other work (a run's lock held): the door reads ahead meanwhile
      await new Promise((r) => setTimeout(r, path === "/slow" ? 3000 : 1000));
      const reader = bodyReader(request);
      try {
        const bytes = await readBytesCapped(reader!, { max: 1 << 20, tooLarge: () => new Error("big") });
        read.push(`${path} ${bytes.length}`);
        return new Response(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
      } catch (error) {
        read.push(`${path} ${(error as Error).name}`);
        throw error;
      }
    },
  );
  const port = door.addr.port;
  const body = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7919) & 255);
  const late = await fetch(`http://127.0.0.1:${port}/late`, { method: "POST", body });
  assert.deepEqual(
    new Uint8Array(await late.arrayBuffer()),
    new Uint8Array(await crypto.subtle.digest("SHA-256", body)),
  );
  const dropped = await fetch(`http://127.0.0.1:${port}/drop`, { method: "POST", body });
  assert.equal(await dropped.text(), "dropped");
  const parts = [
    `POST /slow HTTP/1.1\r\nhost: x\r\ncontent-length: 4000\r\nconnection: close\r\n\r\n`,
    ..."x".repeat(4000).split(""),
  ];
  const slow = await trickle(port, { parts, gapMs: 50, giveUpMs: 60_000 });
  assert.equal(slow.status, 408);
  assert.deepEqual(refusals.filter((r) => r.limit !== "idle").map((r) => [r.limit, r.status]), [[
    "body",
    408,
  ]]);
  // the handler, once it reads, finds the body stopped
  while (read.length < 2) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(read, ["/late 300000", "/slow TimedOut"]);
});
