/**
 * The body of a span request, read with a cap: at most `max` bytes as sent, and at most `max` bytes once gzip
 * is undone, counted as they come. A gzip body is undone as a stream, fed to the decompressor in small pieces:
 * a piece of deflate data unpacks to at most about 1,032 times its size, and `DecompressionStream` answers each
 * piece it is given with one chunk of all it unpacks to, so a whole 1 MB body of a 1 GiB gzip bomb would come
 * back as one 1 GiB chunk. Small pieces keep each chunk to a fraction of the cap, and the read stops (and
 * cancels the rest) as soon as the count passes the cap: the answer comes at once, holding no more than the cap
 * and one piece's worth.
 * @module
 */
import { joinChunks, ownChunk, readBytesCapped } from "../guard/body_bytes.ts";
import { type BodyReader, bodyReader, dropBody, handedBody } from "../guard/door_body.ts";
import { OtlpBodyError } from "./otlp_json.ts";

/** The body is over its limit: the receiver answers 413. */
export class BodyTooLarge extends Error {
  /**
   * @param limit The limit passed, in bytes.
   * @param what What passed it: the body as sent, or once unpacked.
   */
  constructor(readonly limit: number, readonly what: "sent" | "unpacked") {
    super(`the body ${what === "sent" ? "is" : "unpacks to"} over the receiver's limit of ${limit} bytes`);
    this.name = "BodyTooLarge";
  }
}

/** The largest piece of compressed input given to the decompressor at once. */
const MAX_PIECE = 64 * 1024;
/** The smallest piece: below it the calls cost more than the bytes. */
const MIN_PIECE = 512;

/** The piece size for a cap: one piece unpacks to at most a quarter of the cap (deflate's ratio is ~1,032). */
function pieceSize(max: number): number {
  return Math.max(MIN_PIECE, Math.min(MAX_PIECE, Math.floor(max / 4096)));
}

function readCapped(reader: BodyReader | null, max: number, declared = NaN): Promise<Uint8Array> {
  if (reader === null) return Promise.resolve(new Uint8Array());
  return readBytesCapped(reader, { max, tooLarge: () => new BodyTooLarge(max, "sent"), declared });
}

/** Feeds a body into the decompressor in pieces, counting what is sent; stops when told or at an error. */
async function feed(
  source: BodyReader,
  writer: WritableStreamDefaultWriter<BufferSource>,
  { max, stop }: { max: number; stop: { now: boolean } },
): Promise<void> {
  const piece = pieceSize(max);
  let sent = 0;
  for (;;) {
    const { done, value } = await source.read();
    if (stop.now) return;
    if (done) break;
    sent += value.byteLength;
    if (sent > max) throw new BodyTooLarge(max, "sent");
    for (let at = 0; at < value.byteLength; at += piece) {
      if (stop.now) return;
      await writer.write(value.subarray(at, at + piece) as Uint8Array<ArrayBuffer>);
    }
  }
  await writer.close();
}

/** Undoes a gzip body as it comes, at most `max` bytes either way. */
async function gunzipCapped(source: BodyReader | null, max: number): Promise<Uint8Array> {
  if (source === null) throw new OtlpBodyError("the gzip body is empty");
  const gunzip = new DecompressionStream("gzip");
  const writer = gunzip.writable.getWriter();
  const reader = gunzip.readable.getReader();
  const stop = { now: false };
  const feeding = feed(source, writer, { max, stop }).catch(async (error) => {
    stop.now = true;
    await writer.abort(error).catch(() => {});
    throw error;
  });
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > max) throw new BodyTooLarge(max, "unpacked");
      chunks.push(ownChunk(value));
    }
  } catch (error) {
    // Stop at once, whatever the sender does next: a sender that stalls after its bomb holds nothing here.
    stop.now = true;
    await Promise.all([reader.cancel().catch(() => {}), source.cancel().catch(() => {})]);
    // the feeder's own error (the body as sent over the cap) says more than the aborted stream's
    const fed = await feeding.then(() => null, (e) => e);
    throw error instanceof BodyTooLarge ? error : fed instanceof BodyTooLarge ? fed : error;
  }
  await feeding;
  return joinChunks(chunks, size);
}

/**
 * The body of a request, gzip undone, at most `max` bytes as sent and as unpacked.
 *
 * @param request The request.
 * @param max The cap in bytes.
 * @returns The bytes.
 * @throws BodyTooLarge when the body passes the cap either way (413).
 * @throws OtlpBodyError when the encoding is not gzip or none, or the gzip data is broken (400).
 * @example
 * ```ts
 * import { readSpanBody } from "./span_body.ts";
 * const body = new Blob(["{}"]).stream().pipeThrough(new CompressionStream("gzip"));
 * const request = new Request("http://127.0.0.1/", { method: "POST", body, headers: { "content-encoding": "gzip" } });
 * await readSpanBody(request, 1024); // the bytes of "{}"
 * ```
 */
export async function readSpanBody(request: Request, max: number): Promise<Uint8Array> {
  const length = request.headers.get("content-length");
  const declared = length === null ? NaN : Number(length);
  if (declared > max) {
    await dropBody(request);
    throw new BodyTooLarge(max, "sent");
  }
  const encoding = (request.headers.get("content-encoding") ?? "identity").toLowerCase().trim();
  if (encoding === "identity" || encoding === "") {
    // A declared length within the cap bounds the body (the server reads no more than it declares): read it in
    // one go, unless a door counts it as it is read. A body sent in chunks is counted as it comes.
    if (Number.isSafeInteger(declared) && !handedBody(request)) {
      return new Uint8Array(await request.arrayBuffer());
    }
    return await readCapped(bodyReader(request), max, declared);
  }
  if (encoding !== "gzip") {
    await dropBody(request);
    throw new OtlpBodyError(`the content encoding ${encoding.slice(0, 40)} is not gzip or none`);
  }
  try {
    return await gunzipCapped(bodyReader(request), max);
  } catch (error) {
    if (error instanceof BodyTooLarge || error instanceof OtlpBodyError) throw error;
    throw new OtlpBodyError(`the gzip body cannot be read: ${(error as Error).message}`, { cause: error });
  }
}
