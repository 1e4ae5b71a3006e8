/**
 * The access broker's stub: it grants a URI only if the run's allow list holds it, only when the URI's
 * environment is the run's, and only in the mode `mounted_snapshot`. A physical URI (`file://`) has no
 * environment, so it is granted only in `dev`.
 * @module
 */

/** The broker's answer to one request for one URI. */
export interface Grant {
  uri: string;
  mode: "mounted_snapshot";
  granted: boolean;
  /** Why the broker refused, when it did. */
  reason?: string;
  /** When the grant ends. */
  expires_at?: string;
}

/** The environment segment of a logical URI `scheme://org/domain/env/…`, or null for a physical URI. */
export function envOf(uri: string): string | null {
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]+)\/([^/?#]+)\/([^/?#]+)(?:[/?#]|$)/i.exec(uri);
  if (!m || uri.toLowerCase().startsWith("file:")) return null;
  return m[3]!;
}

/**
 * The stub broker.
 *
 * @example
 * ```ts
 * import { StubBroker } from "./broker.ts";
 * const broker = new StubBroker(["data+table://acme/demo/dev/evals/revenue"], { env: "dev" });
 * broker.request("data+table://acme/demo/prod/evals/revenue").granted; // false: another environment
 * ```
 */
export class StubBroker {
  readonly #allow: Set<string>;
  readonly #env: string;
  readonly #ttlSeconds: number;

  /**
   * @param allow The URIs the run may read (without a selector).
   * @param options `env`: the run's environment; `ttlSeconds`: how long a grant lasts (an hour).
   */
  constructor(allow: Iterable<string>, options: { env: string; ttlSeconds?: number }) {
    this.#allow = new Set([...allow].map(withoutSelector));
    this.#env = options.env;
    this.#ttlSeconds = options.ttlSeconds ?? 3600;
  }

  /** Decides one request for one URI. */
  request(uri: string, mode: string = "mounted_snapshot"): Grant {
    const deny = (reason: string): Grant => ({ uri, mode: "mounted_snapshot", granted: false, reason });
    if (mode !== "mounted_snapshot") return deny(`the stub broker grants only mounted_snapshot, not ${mode}`);
    if (!this.#allow.has(withoutSelector(uri))) return deny("the URI is not in the run's allow list");
    const env = envOf(uri);
    if (uri.toLowerCase().startsWith("file:")) {
      if (this.#env !== "dev") {
        return deny(`a physical URI is granted only in dev, and the run is in ${this.#env}`);
      }
    } else if (env === null) {
      return deny("the URI is neither scheme://org/domain/env/… nor file:///…");
    } else if (env !== this.#env) {
      return deny(`the URI is in environment ${env}, and the run is in ${this.#env}`);
    }
    const expires = new Date(Date.now() + this.#ttlSeconds * 1000).toISOString().replace("Z", "000Z");
    return { uri, mode: "mounted_snapshot", granted: true, expires_at: expires };
  }
}

function withoutSelector(uri: string): string {
  const i = uri.indexOf("?");
  return i < 0 ? uri : uri.slice(0, i);
}
