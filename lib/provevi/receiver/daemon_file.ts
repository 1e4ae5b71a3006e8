/**
 * The daemon's connection file: where `prove serve` listens and its secret, in a file only its user can read
 * (mode 0600, in a folder of mode 0700), as Jupyter keeps a server's token. A run's writer (provr, with
 * `PROVE_SERVE` naming the file) reads it to open its run; another local user cannot, and a web page cannot read
 * files at all. By default it is `$XDG_DATA_HOME/prove/serve-<port>.json` (else under `~/.local/share`).
 * @module
 */
import { join } from "node:path";
import { ProveviError } from "../evidence/errors.ts";
import { readBoundedText } from "../evidence/read_text.ts";

/** The most a connection file holds: an address and a secret; a FIFO or a bigger file is refused. */
const DAEMON_FILE_MAX_BYTES = 64 * 1024;
import { writePrivateFile } from "../guard/local_secret.ts";

/** What a writer needs to reach the daemon. */
export interface DaemonConnection {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** The daemon's secret: `Authorization: Bearer <secret>` opens runs and lists them. */
  secret: string;
  /** The daemon's process ID, so that a person can find it. */
  pid: number;
}

/**
 * The default path of the connection file of a daemon on a port.
 *
 * @param port The daemon's port.
 * @param env The variables `XDG_DATA_HOME` and `HOME`.
 * @returns The path.
 * @throws ProveviError when neither variable is set.
 * @example
 * ```ts
 * import { defaultDaemonFile } from "./daemon_file.ts";
 * defaultDaemonFile(4318, { HOME: "/home/ada" }); // "/home/ada/.local/share/prove/serve-4318.json"
 * ```
 */
export function defaultDaemonFile(
  port: number,
  env: { XDG_DATA_HOME?: string | undefined; HOME?: string | undefined },
): string {
  const data = env.XDG_DATA_HOME || (env.HOME ? join(env.HOME, ".local", "share") : null);
  if (data === null) {
    throw new ProveviError(
      "no place for prove serve's secret: pass --secret-file FILE, or set XDG_DATA_HOME or HOME",
    );
  }
  return join(data, "prove", `serve-${port}.json`);
}

/**
 * Writes the connection file, readable by its user only.
 *
 * @param path The file.
 * @param connection The daemon's address, secret and process ID.
 * @throws ProveviError when the file cannot be written.
 */
export async function writeDaemonFile(path: string, connection: DaemonConnection): Promise<void> {
  try {
    await writePrivateFile(path, JSON.stringify(connection, null, 2) + "\n");
  } catch (error) {
    throw new ProveviError(
      `cannot write prove serve's secret to ${path}: ${(error as Error).message}; give another --secret-file`,
      { cause: error },
    );
  }
}

/**
 * Removes the connection file, if it still holds this daemon's secret (another daemon may have taken the path).
 *
 * @param path The file.
 * @param secret This daemon's secret.
 */
export async function removeDaemonFile(path: string, secret: string): Promise<void> {
  try {
    const text = await readBoundedText(path, { limit: DAEMON_FILE_MAX_BYTES, what: "the connection file" });
    if ((JSON.parse(text) as Partial<DaemonConnection>).secret === secret) await Deno.remove(path);
  } catch { /* gone already, or another daemon's */ }
}

/**
 * Reads a connection file.
 *
 * @param path The file (`PROVE_SERVE`).
 * @returns The daemon's address and secret.
 * @throws ProveviError naming the file when it is missing, unreadable, or not a connection file.
 */
export async function readDaemonFile(path: string): Promise<DaemonConnection> {
  let value: Partial<DaemonConnection>;
  try {
    value = JSON.parse(
      await readBoundedText(path, { limit: DAEMON_FILE_MAX_BYTES, what: "the connection file" }),
    );
  } catch (error) {
    throw new ProveviError(
      `cannot read prove serve's connection file ${path}: ${(error as Error).message.split("\n")[0]}; ` +
        `start prove serve, and set PROVE_SERVE to the file it printed`,
      { cause: error },
    );
  }
  const url = typeof value?.url === "string" ? URL.parse(value.url) : null;
  if (
    url === null || url.protocol !== "http:" || typeof value.secret !== "string" ||
    !/^[0-9a-f]{64}$/.test(value.secret)
  ) {
    throw new ProveviError(
      `${path} is not a prove serve connection file (it needs "url" and "secret"); set PROVE_SERVE to the file ` +
        `prove serve printed`,
    );
  }
  return { url: url.origin, secret: value.secret, pid: typeof value.pid === "number" ? value.pid : 0 };
}
