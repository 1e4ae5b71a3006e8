/**
 * The texts of span rows as the rows' pass (`otlp_rows.ts`) writes them: each as the bytes of its JSON, made
 * once and kept from request to request (names, scopes, statuses and kept values repeat from span to span), up
 * to a bound.
 * @module
 */
import { attributeLevel } from "../telemetry/attributes.ts";
import { plainName, plainSpanName } from "../telemetry/plain_name.ts";

const utf8 = new TextEncoder();
const bytes = (text: string) => utf8.encode(text);

/** The most bytes of texts (and of their JSON) kept from request to request: past it, new {@linkcode Texts}. */
const TEXTS_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The texts of the requests read, each as the bytes of its JSON (names repeat from span to span, and from a
 * request to the next), kept until they hold {@linkcode TEXTS_MAX_BYTES}.
 */
export class Texts {
  static #shared = new Texts();
  /** About the bytes the texts kept take, and their JSON. */
  #bytes = 0;
  readonly #scopes = new Map<string, Map<string, Uint8Array>>();
  readonly #names = new Map<string, Uint8Array>();
  readonly #leads = new Map<string, { kind: number; scope: Uint8Array; bytes: Uint8Array }>();
  readonly #messages = new Map<string, { code: number; bytes: Uint8Array }>();
  readonly #keys = new Map<string, Uint8Array>();
  readonly #kept = new Map<string, Map<string, Uint8Array | null>>();

  /** The texts kept, or new ones when they hold too much. */
  static shared(): Texts {
    if (Texts.#shared.#bytes > TEXTS_MAX_BYTES) Texts.#shared = new Texts();
    return Texts.#shared;
  }

  /** Counts a text kept and its bytes. */
  #count<T extends Uint8Array | null>(text: string, out: T): T {
    this.#bytes += text.length * 2 + (out?.length ?? 0) + 64;
    return out;
  }

  /** The part of a row from its scope to its start time, the same for every span of a `ScopeSpans`. */
  scope(name: string, version: string): Uint8Array {
    let of = this.#scopes.get(name);
    if (of === undefined) this.#scopes.set(name, of = new Map());
    let out = of.get(version);
    if (out === undefined) {
      const v = version ? JSON.stringify(version) : "null";
      out = bytes(`,"scope":{"name":${JSON.stringify(name)},"version":${v}},"start_time":"`);
      of.set(version, this.#count(name + version, out));
    }
    return out;
  }

  /**
   * A span's name, when it is a plain span name, else `"span"`, its kind and its scope's part (a row's bytes
   * from its name to its start time): the last of each name is kept.
   */
  lead(text: string, kind: number, scope: Uint8Array): Uint8Array {
    const last = this.#leads.get(text);
    if (last !== undefined && last.kind === kind && last.scope === scope) return last.bytes;
    let name = this.#names.get(text);
    if (name === undefined) {
      name = bytes(`${JSON.stringify(plainSpanName(text) ? text : "span")},"kind":`);
      this.#names.set(text, this.#count(text, name));
    }
    const k = bytes(String(kind));
    const out = new Uint8Array(name.length + k.length + scope.length);
    out.set(name);
    out.set(k, name.length);
    out.set(scope, name.length + k.length);
    this.#leads.set(text, { kind, scope, bytes: this.#count(text, out) });
    return out;
  }

  /** A kept key as JSON, and its colon. */
  key(key: string): Uint8Array {
    let out = this.#keys.get(key);
    if (out === undefined) this.#keys.set(key, out = this.#count(key, bytes(`${JSON.stringify(key)}:`)));
    return out;
  }

  /** A kept key and its text value as JSON (`"key":"value"`), or null when it is a body (its level is `bodies`). */
  kept(key: string, value: string): Uint8Array | null {
    let of = this.#kept.get(key);
    if (of === undefined) this.#kept.set(key, of = new Map());
    let out = of.get(value);
    if (out === undefined) {
      const body = attributeLevel(key, value) === "bodies";
      out = body ? null : bytes(`${JSON.stringify(key)}:${JSON.stringify(value)}`);
      of.set(value, this.#count(value, out));
    }
    return out;
  }

  /**
   * A status: the bytes from the end of its span's end time to the attributes' opening brace, with its code and
   * its message (when it is a plain name, else null).
   */
  status(code: number, text: string): Uint8Array {
    let out = this.#messages.get(text);
    if (out === undefined || out.code !== code) {
      const json = plainName(text) ? JSON.stringify(text) : "null";
      const status = bytes(`","status":{"code":${code},"message":${json}},"attributes":{`);
      this.#messages.set(text, out = { code, bytes: this.#count(text, status) });
    }
    return out.bytes;
  }
}
