/**
 * Attacks on the log's side of witnessing (`prove log cosign`, `prove log wait`): a witness the log asks is another
 * party, and what it answered went, unread but for a leading `— `, into the note that every verifier of the log
 * reads, where one signature that fails for a trusted key refuses the whole note (C2SP signed-note). So one
 * hostile witness among honest ones could answer a line in the log's own name (every run's proof then failed as
 * `log.untrusted`), a forged or replayed cosignature in an honest witness's name (that witness no longer counted,
 * and the quorum failed), or 150 lines (the note past 100 signatures could not be read at all); and, answering
 * without end or not at all, hold the command for ever; and, refusing, print terminal escapes and lines of its
 * own. Each must leave the witnessed checkpoint readable and trusted with the honest witness's cosignature, end
 * within the time limit, and report the hostile witness in one printable line.
 * @module
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { parseCheckpoint } from "../../lib/provevi/log/checkpoint.ts";
import type { FileLog } from "../../lib/provevi/log/file_log.ts";
import { parseNote, signatureLine } from "../../lib/provevi/log/note.ts";
import { checkCheckpoint, witnessVerifier } from "../../lib/provevi/log/trust_policy.ts";
import { cosignLatest } from "../../lib/provevi/log/witness_client.ts";
import { serveWitness } from "../../lib/provevi/log/witness_server.ts";
import { fakeLeaf, tempLog, witnessOf } from "../provevi/log/_log_fixtures.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("witness answer attacks");

/** What the hostile witness answers, given the log, its checkpoint and the honest witness's line of an older one. */
type Answer = (
  ctx: {
    log: FileLog;
    origin: string;
    logKeyId: number;
    honest: { name: string; keyId: number; old: string };
  },
) => Response | Promise<Response>;

const random72 = () => new Uint8Array(randomBytes(72));
const line = (name: string, keyId: number) => signatureLine(name, keyId, random72());
const endless = () =>
  new ReadableStream<Uint8Array>({
    pull: (c) => c.enqueue(new TextEncoder().encode(`${"\u2014 a/b AAAA\n".repeat(1024)}`)),
  });
let hold: (() => void)[] = [];

const ATTACKS: Record<string, { answer: Answer; keys: boolean }> = {
  "a line in the log's own name and key ID": {
    answer: ({ origin, logKeyId }) => new Response(`${line(origin, logKeyId)}\n`),
    keys: false,
  },
  "a forged cosignature in the honest witness's name (its key given)": {
    answer: ({ honest }) => new Response(`${line(honest.name, honest.keyId)}\n`),
    keys: true,
  },
  "a forged cosignature in the honest witness's name (no key given)": {
    answer: ({ honest }) => new Response(`${line(honest.name, honest.keyId)}\n`),
    keys: false,
  },
  "the honest witness's cosignature of an older checkpoint, replayed (its key given)": {
    answer: ({ honest }) => new Response(`${honest.old}\n`),
    keys: true,
  },
  "150 cosignature lines of unknown keys": {
    answer: () =>
      new Response(Array.from({ length: 150 }, (_, i) => `${line(`w${i}.example/x`, 1000 + i)}\n`).join("")),
    keys: false,
  },
  "an answer that never ends": { answer: () => new Response(endless()), keys: false },
  "no answer at all": {
    answer: () => new Promise<Response>((resolve) => hold.push(() => resolve(new Response("late")))),
    keys: false,
  },
  "a refusal with terminal escapes and lines of its own": {
    answer: () =>
      new Response("\x1b]0;pwned\x07\x1b[2J\nhttp://127.0.0.1:1: 200 cosigned\r\n\u202eevil", {
        status: 400,
      }),
    keys: false,
  },
};

for (const [name, { answer, keys }] of Object.entries(ATTACKS)) {
  Deno.test({
    name: `a witness that answers ${name} spoils no checkpoint and holds no one`,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const { log } = await tempLog();
      const witness = await witnessOf(log);
      await using server = serveWitness(witness, { port: 0 });
      await log.append([fakeLeaf(0)]);
      const first = await cosignLatest(log, [server.url]);
      const hv = witnessVerifier(witness.verifier.vkey);
      const old = first.replies[0]!.text;
      await log.append([fakeLeaf(1)]);
      const key = (await log.key())!;
      const origin = parseCheckpoint(parseNote((await log.checkpoint())!).text).origin;
      const ctx = {
        log,
        origin,
        logKeyId: key.verifier.keyId,
        honest: { name: hv.name, keyId: hv.keyId, old },
      };
      const ac = new AbortController();
      const hostile = Deno.serve(
        { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen() {} },
        () => answer(ctx),
      );
      const evil = `http://127.0.0.1:${hostile.addr.port}`;
      try {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const started = Date.now();
        const result = await Promise.race([
          cosignLatest(log, [evil, server.url], { timeoutMs: 3000, ...(keys ? { witnesses: [hv] } : {}) }),
          new Promise<"hung">((resolve) => timer = setTimeout(() => resolve("hung"), 30_000)),
        ]).finally(() => clearTimeout(timer));
        assert.notEqual(result, "hung", "the hostile witness held cosignLatest");
        if (result === "hung") return;
        const witnessed = (await log.witnessed())!;
        const trusted = checkCheckpoint(witnessed, {
          logs: [key.verifier],
          witnesses: [hv],
          quorum: keys ? 1 : 0,
        });
        const honestKept = result.replies[1]!.status === 200;
        const reply = result.replies[0]!;
        // without the honest witness's key, a line in its name from another witness cancels its own: no quorum
        // is claimed then, but the log's own trust holds
        const stopped = trusted.ok && (keys ? honestKept : true) && Date.now() - started < 20_000 &&
          parseNote(witnessed).signatures.length <= 100;
        // the hostile witness is named in one printable line, or (150 lines) no more is kept of it than a witness
        // has keys
        // deno-lint-ignore no-control-regex -- the control characters are what it must not print
        const printable = /^[^\x00-\x1f\x7f-\x9f\u202e]*$/;
        const recorded = name.startsWith("150")
          ? reply.status === 200 && reply.text.split("\n").length <= 4
          : reply.status !== 200 && printable.test(reply.text) &&
            reply.text.length <= 301;
        tally.add(name, { stopped, recorded });
        assert.ok(stopped, JSON.stringify({ trusted, replies: result.replies }));
        assert.ok(recorded, JSON.stringify(reply));
      } finally {
        for (const h of hold) h();
        hold = [];
        ac.abort();
        await hostile.finished.catch(() => {});
      }
    },
  });
}

Deno.test({
  name: "witness answer attacks: the tally",
  fn: () => {
    console.log(tally.line());
    assert.equal(tally.missed.length, 0, tally.line());
  },
});
