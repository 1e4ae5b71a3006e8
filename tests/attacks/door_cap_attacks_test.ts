/**
 * Attacks on a door's caps that no single connection passes: many connections, each with a request whose body
 * never comes (the door held 128 connections × 8 HTTP/2 requests, 1,024 handlers each with a body read ahead,
 * with no cap over them all), a LAN client that opens more connections than its address may hold (untested
 * before: the tests ran on 127.0.0.1, which has no cap; here the client comes from the machine's own LAN
 * address, which is not loopback), and the fallback door of a Deno without the per-connection server
 * (`requestDoor`), which capped nothing but a body's rate: its requests under way over the door and per
 * address, and an answer the client never reads. Each must be stopped (503, or the connection closed) and told
 * to the door's `onRefusal`.
 * @module
 */
import assert from "node:assert/strict";
import { doorLimits, type DoorRefusal } from "../../lib/provevi/guard/door_limits.ts";
import { serveDoor } from "../../lib/provevi/guard/door_server.ts";
import { requestDoor } from "../../lib/provevi/guard/door_server.ts";
import { neverReads, trickle } from "./_slow_clients.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("door cap attacks");

/** A head that declares a body the client never sends: a request under way for as long as the body's floor. */
const STALLED = "POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 1000\r\n\r\n";
const LIMITS = { maxRequests: 4, maxPerAddress: 4, bodyFloorMs: 60_000, answerMs: 1000 };

/** The machine's own address on a network (not loopback): a client from it is a LAN client to the door. */
function lanAddress(): string {
  const found = Deno.networkInterfaces().find((i) => i.family === "IPv4" && !i.address.startsWith("127."));
  if (found === undefined) throw new Error("these attacks need an IPv4 address besides loopback");
  return found.address;
}

type Start = (
  options: { hostname: string; onRefusal: (r: DoorRefusal) => void },
  handler: Deno.ServeHandler<Deno.NetAddr>,
) => AsyncDisposable & { addr: Deno.NetAddr };

const DOORS: [string, Start][] = [
  ["the door", (options, handler) => serveDoor({ ...options, limits: LIMITS }, handler)],
  ["the fallback door", (options, handler) => requestDoor(options, doorLimits(LIMITS), handler)],
];

/** Sends `count` stalled requests at once from `hostname`; the status each got (0: held until given up). */
async function stalled(port: number, options: { hostname: string; count: number }): Promise<number[]> {
  const clients = Array.from(
    { length: options.count },
    () => trickle(port, { parts: [STALLED], gapMs: 10, giveUpMs: 6000, hostname: options.hostname }),
  );
  return (await Promise.all(clients)).map((e) => e.status);
}

const readsBody = async (request: Request) => new Response(`${(await request.arrayBuffer()).byteLength}`);

for (const [doorName, start] of DOORS) {
  Deno.test(`${doorName}: requests under way over many connections past the door's cap are answered 503`, async () => {
    const refusals: DoorRefusal[] = [];
    await using door = start({ hostname: "127.0.0.1", onRefusal: (r) => refusals.push(r) }, readsBody);
    const statuses = await stalled(door.addr.port, { hostname: "127.0.0.1", count: 10 });
    const refused = refusals.filter((r) => r.limit === "requests" && r.status === 503).length;
    const outcome = { stopped: statuses.filter((s) => s === 503).length === 6, recorded: refused === 6 };
    tally.add(`10 stalled requests on 10 connections at ${doorName} (cap 4)`, outcome);
    assert.ok(outcome.stopped && outcome.recorded, JSON.stringify({ statuses, refusals }));
    // the cap counts requests under way, not requests ever: once they end, the door serves again
    const answer = await fetch(`http://127.0.0.1:${door.addr.port}/`, { method: "POST", body: "abc" });
    assert.equal(await answer.text(), "3");
  });

  Deno.test(`${doorName}: a LAN address that holds more than its cap is answered 503`, async () => {
    const hostname = lanAddress();
    const refusals: DoorRefusal[] = [];
    await using door = start({ hostname, onRefusal: (r) => refusals.push(r) }, readsBody);
    const statuses = await stalled(door.addr.port, { hostname, count: 6 });
    const refused = refusals.filter((r) => r.limit === "address" && r.remote === hostname).length;
    const outcome = { stopped: statuses.filter((s) => s === 503).length === 2, recorded: refused === 2 };
    tally.add(`6 connections from one LAN address at ${doorName} (cap 4)`, outcome);
    assert.ok(outcome.stopped && outcome.recorded, JSON.stringify({ statuses, refusals }));
  });
}

Deno.test("the fallback door: a client that never reads a streamed answer is cut", async () => {
  const refusals: DoorRefusal[] = [];
  const chunk = new Uint8Array(64 * 1024);
  let sent = 0;
  await using door = requestDoor(
    { onRefusal: (r) => refusals.push(r) },
    doorLimits(LIMITS),
    () =>
      new Response(
        new ReadableStream<Uint8Array>({
          pull(c) {
            sent += chunk.length;
            if (sent > 256 * 1024 * 1024) c.close();
            else c.enqueue(chunk.slice());
          },
        }),
      ),
  );
  const closed = await neverReads(door.addr.port, {
    request: "GET / HTTP/1.1\r\nhost: x\r\n\r\n",
    giveUpMs: 5000,
  });
  const outcome = { stopped: closed, recorded: refusals.some((r) => r.limit === "answer") };
  tally.add("an answer never read at the fallback door", outcome);
  assert.ok(outcome.stopped && outcome.recorded, JSON.stringify({ closed, refusals, sent }));
});

Deno.test("door cap attacks: the tally", () => {
  console.log(tally.line());
  assert.deepEqual(tally.missed, []);
});
