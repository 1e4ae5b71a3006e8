/**
 * The access broker's stub: it grants a URI only if the run's allow list holds it, only when the URI's
 * environment is the run's, and only in the mode `mounted_snapshot`; and it grants `pinned_read` for the run's
 * experiment alone, which provrun reads itself to pin it, under the same rule of environments. A physical URI
 * (`file://`) has no environment, so it is granted only in `dev`.
 * @module
 */

/** How a run reads a URI: its inputs as snapshots mounted in the run folder, its experiment by a pinned read. */
export type AccessMode = "mounted_snapshot" | "pinned_read";

/** The broker's answer to one request for one URI. */
export interface Grant {
  uri: string;
  mode: AccessMode;
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
  readonly #experiment: string | null;

  /**
   * @param allow The URIs the run may read as snapshots (without a selector).
   * @param options `env`: the run's environment; `experiment`: the run's experiment, the one URI granted
   *   `pinned_read`; `ttlSeconds`: how long a grant lasts (an hour).
   */
  constructor(allow: Iterable<string>, options: { env: string; experiment?: string; ttlSeconds?: number }) {
    this.#allow = new Set([...allow].map(withoutSelector));
    this.#env = options.env;
    this.#experiment = options.experiment === undefined ? null : withoutSelector(options.experiment);
    this.#ttlSeconds = options.ttlSeconds ?? 3600;
  }

  /** Decides one request for one URI. */
  request(uri: string, mode: string = "mounted_snapshot"): Grant {
    const asked: AccessMode = mode === "pinned_read" ? "pinned_read" : "mounted_snapshot";
    const deny = (reason: string): Grant => ({ uri, mode: asked, granted: false, reason });
    if (mode === "pinned_read") {
      if (withoutSelector(uri) !== this.#experiment) {
        return deny("the stub broker grants pinned_read only for the run's experiment");
      }
    } else if (mode !== "mounted_snapshot") {
      return deny(`the stub broker grants only mounted_snapshot and pinned_read, not ${mode}`);
    } else if (!this.#allow.has(withoutSelector(uri))) return deny("the URI is not in the run's allow list");
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
    return { uri, mode: asked, granted: true, expires_at: expires };
  }
}

function withoutSelector(uri: string): string {
  const i = uri.indexOf("?");
  return i < 0 ? uri : uri.slice(0, i);
}
