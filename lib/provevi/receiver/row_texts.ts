/**
 * The texts of span rows as the rows' pass (`otlp_rows.ts`) writes them: each as the bytes of its JSON, made
 * once and kept from body to body by a run's writer (`received_rows.ts`: names, scopes, statuses and kept values
 * repeat from span to span), up to a bound. Nothing else keeps them: they go with the writer.
 * @module
 */
import { attributeLevel } from "../telemetry/attributes.ts";
import { plainName, plainSpanName } from "../telemetry/plain_name.ts";

const utf8 = new TextEncoder();
const bytes = (text: string) => utf8.encode(text);

/**
 * The most bytes, about, that the texts kept take: a text that would take them past it empties them first, in
 * the middle of a body too (a body is read whole before a receiver counts its spans, and its texts are kept
 * after it).
 */
const TEXTS_MAX_BYTES = 4 * 1024 * 1024;
/** The longest text kept, with its JSON: a longer one is made again when it comes again. */
const TEXT_MAX_BYTES = 64 * 1024;
/**
 * What a text kept takes besides its characters and its JSON's bytes: the array of bytes and its buffer, a map's
 * entry (measured with `Deno.memoryUsage` after a collection: 190 to 330 bytes; a map of its own about 200).
 */
const ENTRY_BYTES = 256;
/**
 * How many parts of one name (under kinds and scopes) or one message (under codes) are kept: the first ones,
 * and the last made in the last place (a name is a client's and a server's span, a message is an error's too).
 */
const VARIANTS = 4;

/** A name's part under a kind and a scope. */
interface Lead {
  kind: number;
  scope: Uint8Array;
  bytes: Uint8Array;
}
/** A message's part under a code. */
interface Status {
  code: number;
  bytes: Uint8Array;
}

/**
 * The texts of the requests read, each as the bytes of its JSON (names repeat from span to span, and from a
 * request to the next), emptied when they would take more than {@linkcode TEXTS_MAX_BYTES}.
 */
export class Texts {
  /** About the bytes the texts kept take, their JSON and their entries. */
  #bytes = 0;
  readonly #scopes = new Map<string, Map<string, Uint8Array>>();
  readonly #names = new Map<string, Uint8Array>();
  readonly #leads = new Map<string, Lead[]>();
  readonly #messages = new Map<string, Status[]>();
  readonly #keys = new Map<string, Uint8Array>();
  readonly #kept = new Map<string, Map<string, Uint8Array | null>>();

  /**
   * Whether to keep a text of `chars` characters and the `json` bytes of its JSON: when so, they are counted,
   * after the texts are emptied if they would pass their bound. A map got before may then be one no longer kept.
   */
  #keep(chars: number, json: number): boolean {
    const size = chars * 2 + json + ENTRY_BYTES;
    if (size > TEXT_MAX_BYTES) return false;
    if (this.#bytes + size > TEXTS_MAX_BYTES) {
      for (const map of [this.#scopes, this.#names, this.#leads, this.#messages, this.#keys, this.#kept]) {
        map.clear();
      }
      this.#bytes = 0;
    }
    this.#bytes += size;
    return true;
  }

  /** The part of a row from its scope to its start time, the same for every span of a `ScopeSpans`. */
  scope(name: string, version: string): Uint8Array {
    let of = this.#scopes.get(name);
    let out = of?.get(version);
    if (out === undefined) {
      const v = version ? JSON.stringify(version) : "null";
      out = bytes(`,"scope":{"name":${JSON.stringify(name)},"version":${v}},"start_time":"`);
      if (of === undefined && this.#keep(name.length, 0)) this.#scopes.set(name, of = new Map());
      if (of !== undefined && this.#keep(name.length + version.length, out.length)) of.set(version, out);
    }
    return out;
  }

  /**
   * A span's name, when it is a plain span name, else `"span"`, its kind and its scope's part (a row's bytes
   * from its name to its start time): up to {@linkcode VARIANTS} of each name are kept.
   */
  lead(text: string, kind: number, scope: Uint8Array): Uint8Array {
    const leads = this.#leads.get(text);
    if (leads !== undefined) {
      for (let i = 0; i < leads.length; i++) {
        const lead = leads[i]!;
        if (lead.kind === kind && lead.scope === scope) return lead.bytes;
      }
    }
    let name = this.#names.get(text);
    if (name === undefined) {
      name = bytes(`${JSON.stringify(plainSpanName(text) ? text : "span")},"kind":`);
      if (this.#keep(text.length, name.length)) this.#names.set(text, name);
    }
    const k = bytes(String(kind));
    const out = new Uint8Array(name.length + k.length + scope.length);
    out.set(name);
    out.set(k, name.length);
    out.set(scope, name.length + k.length);
    if (this.#keep(text.length, out.length)) keepPart(this.#leads, text, leads, { kind, scope, bytes: out });
    return out;
  }

  /** A kept key as JSON, and its colon. */
  key(key: string): Uint8Array {
    let out = this.#keys.get(key);
    if (out === undefined) {
      out = bytes(`${JSON.stringify(key)}:`);
      if (this.#keep(key.length, out.length)) this.#keys.set(key, out);
    }
    return out;
  }

  /** A kept key and its text value as JSON (`"key":"value"`), or null when it is a body (its level is `bodies`). */
  kept(key: string, value: string): Uint8Array | null {
    let of = this.#kept.get(key);
    let out = of?.get(value);
    if (out === undefined) {
      const body = attributeLevel(key, value) === "bodies";
      out = body ? null : bytes(`${JSON.stringify(key)}:${JSON.stringify(value)}`);
      if (of === undefined && this.#keep(key.length, 0)) this.#kept.set(key, of = new Map());
      if (of !== undefined && this.#keep(value.length, out?.length ?? 0)) of.set(value, out);
    }
    return out;
  }

  /**
   * A status: the bytes from the end of its span's end time to the attributes' opening brace, with its code and
   * its message (when it is a plain name, else null): up to {@linkcode VARIANTS} of each message are kept.
   */
  status(code: number, text: string): Uint8Array {
    const statuses = this.#messages.get(text);
    if (statuses !== undefined) {
      for (let i = 0; i < statuses.length; i++) if (statuses[i]!.code === code) return statuses[i]!.bytes;
    }
    const json = plainName(text) ? JSON.stringify(text) : "null";
    const out = bytes(`","status":{"code":${code},"message":${json}},"attributes":{`);
    if (this.#keep(text.length, out.length)) keepPart(this.#messages, text, statuses, { code, bytes: out });
    return out;
  }
}

/**
 * Keeps a part of a text with those `had` of it (got before it was made: when the texts were emptied since, they
 * are no longer kept, and the part starts the text's list again), up to {@linkcode VARIANTS}.
 */
function keepPart<T>(map: Map<string, T[]>, text: string, had: T[] | undefined, part: T): void {
  if (had === undefined || map.get(text) !== had) map.set(text, [part]);
  else if (had.length < VARIANTS) had.push(part);
  else had[VARIANTS - 1] = part;
}
