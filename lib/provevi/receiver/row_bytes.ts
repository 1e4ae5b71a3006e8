/**
 * The bytes of a request's span rows as the rows' pass (`otlp_rows.ts`) writes them: one buffer that grows,
 * bounded by a multiple of the body they are made of.
 * @module
 */

const utf8 = new TextEncoder();
const HEX = utf8.encode("0123456789abcdef");
/**
 * The most bytes of lines one body may make, a byte of it, over {@linkcode LINES_FLOOR}: past it the body goes
 * the general way. A row is about twice its span's bytes on the wire, and the smallest span a row is made of
 * (two IDs) about 11 times; a row repeats its scope's name, which a body may make long, in each span.
 */
const LINES_RATIO = 16;
const LINES_FLOOR = 1024 * 1024;

/**
 * Buffers of lines let go of ({@linkcode Lines.release}), for the next bodies' lines: a new buffer of twice a
 * body's size for every request cost its allocation, its zeroing and the collections it brought on. At most
 * {@linkcode SPARE_COUNT}, none over {@linkcode SPARE_MAX_BYTES}.
 */
const spare: Uint8Array[] = [];
const SPARE_COUNT = 2;
const SPARE_MAX_BYTES = 8 * 1024 * 1024;
const NONE = new Uint8Array();
/** The longest part {@linkcode Lines.put} copies byte by byte. */
const SHORT = 16;

/** The lines being written, in one buffer that grows. */
export class Lines {
  buf: Uint8Array;
  n = 0;
  readonly #most: number;

  /** @param body The bytes on the wire: a row takes about twice its span's. */
  constructor(body: number) {
    const want = body * 2 + 4096;
    const at = spare.findIndex((b) => b.length >= want);
    this.buf = at >= 0 ? spare.splice(at, 1)[0]! : new Uint8Array(want);
    this.#most = body * LINES_RATIO + LINES_FLOOR;
  }

  /** Lets go of the buffer once its lines are written, for the next body's: nothing of them may be read after. */
  release(): void {
    if (this.buf !== NONE && spare.length < SPARE_COUNT && this.buf.length <= SPARE_MAX_BYTES) {
      spare.push(this.buf);
    }
    this.buf = NONE;
    this.n = 0;
  }

  /** Makes room for `k` more bytes; past the bound, a RangeError (the body goes the general way). */
  room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    if (this.n + k > this.#most) throw new RangeError("the lines are too long");
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.n + k));
    next.set(this.buf.subarray(0, this.n));
    this.buf = next;
  }

  /** Bytes as they are. */
  put(part: Uint8Array): void {
    const k = part.length;
    this.room(k);
    if (k > SHORT) this.buf.set(part, this.n);
    else {
      // a short part byte by byte: quicker than a call of set, which most parts of a row are
      const buf = this.buf;
      const n = this.n;
      for (let i = 0; i < k; i++) buf[n + i] = part[i]!;
    }
    this.n += k;
  }

  /** One byte. */
  byte(b: number): void {
    this.room(1);
    this.buf[this.n++] = b;
  }

  /** Bytes of the body as lowercase hex, over what is written already at `at`. */
  hexAt(
    from: Uint8Array,
    { from: [start, stop], at }: { from: readonly [number, number]; at: number },
  ): void {
    const buf = this.buf;
    for (let i = start; i < stop; i++, at += 2) {
      const b = from[i]!;
      buf[at] = HEX[b >>> 4]!;
      buf[at + 1] = HEX[b & 15]!;
    }
  }

  /** Any text, as UTF-8. */
  text(text: string): void {
    this.room(text.length * 3);
    this.n += utf8.encodeInto(text, this.buf.subarray(this.n)).written;
  }

  /** A text without quotes or escapes (digits, a time): one byte a character. */
  ascii(text: string): void {
    this.room(text.length);
    for (let i = 0; i < text.length; i++) this.buf[this.n++] = text.charCodeAt(i);
  }

  /** A number as JSON writes it (a finite one: `json` made the others texts); a whole one without a text. */
  number(value: number): void {
    if (Number.isSafeInteger(value)) this.int(value);
    else this.ascii(String(value));
  }

  /** A whole number of at most 2^53, digit by digit. */
  int(value: number): void {
    if (value < 0) (this.byte(0x2d), value = -value);
    if (value < 2147483648) return this.int32(value);
    let digits = 1;
    for (let v = value; v >= 10; v = Math.floor(v / 10)) digits++;
    this.room(digits);
    for (let i = digits - 1; i >= 0; i--, value = Math.floor(value / 10)) {
      this.buf[this.n + i] = 0x30 + value % 10;
    }
    this.n += digits;
  }

  /** A whole number of 0 to 2^31 - 1, digit by digit, in 32-bit steps. */
  int32(value: number): void {
    let digits = 1;
    for (let v = value; v >= 10; v = (v / 10) | 0) digits++;
    this.room(digits);
    const buf = this.buf;
    const n = this.n;
    for (let i = digits - 1; i >= 0; i--) {
      const next = (value / 10) | 0;
      buf[n + i] = 0x30 + value - next * 10;
      value = next;
    }
    this.n = n + digits;
  }

  /** Bytes of the body as lowercase hex. */
  hex(from: Uint8Array, [start, stop]: readonly [number, number]): void {
    this.room(2 * (stop - start));
    const buf = this.buf;
    let n = this.n;
    for (let i = start; i < stop; i++) {
      const b = from[i]!;
      buf[n++] = HEX[b >>> 4]!;
      buf[n++] = HEX[b & 15]!;
    }
    this.n = n;
  }
}
