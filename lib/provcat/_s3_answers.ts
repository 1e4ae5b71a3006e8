/**
 * Every answer of an S3 server to the s3 store goes through one guard, before the SDK reads it: a time limit
 * between its bytes (a body that stalls is given up), and, for each answer the SDK reads whole (a list, a
 * bucket's versioning, an error), a cap ({@linkcode ANSWER_MAX_BYTES}). An object's body (`GetObject`) is read
 * by the store itself, capped as what it holds allows (`readStreamCapped`, `writeStreamCapped`).
 * @module
 */
import type { S3Client } from "@aws-sdk/client-s3";
import { Readable, Transform } from "node:stream";
import {
  ANSWER_MAX_BYTES,
  type CappedReadError,
  type CappedWhat,
  READ_MAX_BYTES,
  readStreamCapped,
  stalled,
  tooLarge,
  writeStreamCapped,
} from "./_capped_read.ts";

/** What the guard refuses in, for its one line. */
export interface AnswerLimits {
  /** `store "b": bucket "x"`, for the message. */
  where: string;
  /** The most milliseconds between two chunks of an answer. */
  stallMs: number;
}

/**
 * A body that fails past `max` bytes, or when no bytes came for `stallMs`; the source is destroyed either way.
 */
function guarded(body: Readable, max: number, stallMs: number, refusal: {
  tooLarge: () => CappedReadError;
  stalled: () => CappedReadError;
}): Readable {
  let size = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const out: Transform = new Transform({
    transform(chunk: Uint8Array, _encoding, done) {
      arm();
      size += chunk.byteLength;
      if (size > max) return done(refusal.tooLarge());
      done(null, chunk);
    },
    flush(done) {
      clearTimeout(timer);
      done();
    },
    destroy(error, done) {
      clearTimeout(timer);
      body.destroy();
      done(error);
    },
  });
  const arm = () => {
    clearTimeout(timer);
    if (Number.isFinite(stallMs)) timer = setTimeout(() => out.destroy(refusal.stalled()), stallMs);
  };
  arm();
  // an error nobody reads (an answer given up before it was read) must not end the process
  out.on("error", () => {});
  body.on("error", (error) => out.destroy(error));
  body.pipe(out);
  return out;
}

/**
 * Puts the guard on every answer the client gets: between the SDK's reading of the answer and the wire.
 *
 * @param client The store's client.
 * @param limits Where, for the message, and the time limit.
 */
export function guardAnswers(client: S3Client, limits: AnswerLimits): void {
  client.middlewareStack.addRelativeTo(
    // deno-lint-ignore no-explicit-any
    (next: any, context: any) => async (args: any) => {
      const out = await next(args);
      const response = out.response as { statusCode?: number; body?: unknown };
      if (!(response?.body instanceof Readable)) return out;
      // an object's body, which the store reads with a cap of its own; any other answer the SDK reads whole
      const object = context.commandName === "GetObjectCommand" && (response.statusCode ?? 500) < 300;
      const max = object ? Infinity : ANSWER_MAX_BYTES;
      const what = {
        what: `${limits.where}: the answer to ${String(context.commandName).replace(/Command$/, "")}`,
        why: "the most the catalog reads of such an answer",
        fix: "is the store's endpoint an S3 server?",
      };
      response.body = guarded(response.body, max, limits.stallMs, {
        tooLarge: () => tooLarge(what, max),
        stalled: () => stalled(what, limits.stallMs),
      });
      return out;
    },
    { relation: "after", toMiddleware: "deserializerMiddleware", name: "provcatGuardAnswers" },
  );
}

/**
 * The cap of an object's body: the size its commit records, or, for a version named alone, the length the
 * server declares; in memory, at most {@linkcode READ_MAX_BYTES}.
 *
 * @param what The object, for the message.
 * @param size Its size, or null when neither its commit nor the server gives one.
 * @param recorded Whether the size is its commit's.
 * @param inMemory Whether it is read into memory (not written to a file).
 * @returns What to read within, or null when there is no size.
 */
export function objectCap(
  what: string,
  size: number | null,
  recorded: boolean,
  inMemory: boolean,
): (CappedWhat & { max: number }) | null {
  if (size === null) return null;
  if (inMemory && size > READ_MAX_BYTES) {
    return {
      what,
      max: READ_MAX_BYTES,
      why: "the most the catalog reads into memory",
      fix: "snapshot or fetch it instead",
    };
  }
  return {
    what,
    max: size,
    why: recorded ? "the size its commit records" : "the length the server declared",
  };
}

/**
 * An object's body (a `GetObject` answer), read whole within `max` (refused at once when the server declares
 * more), or written to `dest` a chunk at a time.
 *
 * @param out The answer.
 * @param of What it is, for the message, and the cap.
 * @param stallMs The most milliseconds between two chunks.
 * @param dest The file to write it to, made new; without it, the bytes are returned.
 * @returns The bytes, or how many were written.
 */
export async function objectBody<T extends Uint8Array | number>(
  out: { Body?: { transformToWebStream(): ReadableStream<Uint8Array> } | Readable; ContentLength?: number },
  of: CappedWhat & { max: number },
  stallMs: number,
  dest?: string,
): Promise<T> {
  const stream = out.Body instanceof Readable ? webOf(out.Body) : out.Body!.transformToWebStream();
  const limits = { ...of, stallMs };
  if ((out.ContentLength ?? 0) > of.max) {
    await stream.cancel().catch(() => {});
    throw tooLarge(of, of.max);
  }
  return (dest === undefined
    ? await readStreamCapped(stream, limits)
    : await writeStreamCapped(stream, dest, limits)) as T;
}

/**
 * A node stream as a web stream, read a chunk at a time as the reader asks (`Readable.toWeb` enqueued a chunk
 * after a reader had cancelled it, a TypeError that ended the process); cancelled, the node stream is destroyed.
 */
function webOf(body: Readable): ReadableStream<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Uint8Array>;
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await chunks.next();
      if (cancelled) return;
      if (done) controller.close();
      else controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
    },
    cancel() {
      cancelled = true;
      body.destroy();
    },
  }, { highWaterMark: 0 });
}
