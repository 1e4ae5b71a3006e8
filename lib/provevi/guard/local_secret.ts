/**
 * A local service's secret: 32 random bytes as hex, compared in constant time, and kept in a file that only the
 * user can read (mode 0600, in a folder of mode 0700), as Jupyter keeps its server's token. Another local user
 * can reach 127.0.0.1 but cannot read the file; a web page can reach it but cannot read anything.
 * @module
 */
import { hash, timingSafeEqual } from "node:crypto";
import { dirname } from "node:path";

/**
 * A new random secret: 32 bytes, as 64 lowercase hex digits.
 *
 * @returns The secret.
 * @example
 * ```ts
 * import { newSecret } from "./local_secret.ts";
 * newSecret().length; // 64
 * ```
 */
export function newSecret(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join(
    "",
  );
}

/**
 * The SHA-256 of a secret, the form a service keeps to compare with ({@linkcode sameSecret}).
 *
 * @param secret The secret.
 * @returns Its 32-byte digest.
 */
export function secretDigest(secret: string): Uint8Array {
  return hash("sha256", secret, "buffer"); // one call, without createHash's stream object
}

/**
 * Whether a credential a request gave is the secret, in a time that tells nothing of either: both are hashed
 * first, so neither their lengths nor their first differing byte show in the time taken.
 *
 * @param given What the request gave, or null.
 * @param expected The secret, or its {@linkcode secretDigest}.
 * @returns True when they are the same.
 * @example
 * ```ts
 * import { sameSecret } from "./local_secret.ts";
 * sameSecret("a", "a"); // true
 * sameSecret("a", "b"); // false
 * ```
 */
export function sameSecret(given: string | null, expected: string | Uint8Array): boolean {
  if (given === null) return false;
  const want = typeof expected === "string" ? secretDigest(expected) : expected;
  return timingSafeEqual(secretDigest(given), want);
}

/**
 * The bearer credential of a request (`Authorization: Bearer <credential>`), or null.
 *
 * @param request The request.
 * @returns The credential.
 * @example
 * ```ts
 * import { bearerOf } from "./local_secret.ts";
 * bearerOf(new Request("http://127.0.0.1/", { headers: { authorization: "Bearer k" } })); // "k"
 * ```
 */
export function bearerOf(request: Request): string | null {
  const header = request.headers.get("authorization");
  if (header === null) return null;
  const match = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match ? match[1]! : null;
}

/**
 * Writes a file that only the user may read: its folder is made with mode 0700 when missing, and the file is
 * written under a temporary name with mode 0600 and renamed into place, so that no reader ever sees it with
 * wider modes or half written.
 *
 * @param path The file.
 * @param text Its content.
 * @throws Deno.errors.PermissionDenied and the like when the folder cannot be written.
 * @example
 * ```ts
 * import { writePrivateFile } from "./local_secret.ts";
 * await writePrivateFile("/tmp/prove-example/serve-4318.json", "{}");
 * ```
 */
export async function writePrivateFile(path: string, text: string): Promise<void> {
  const folder = dirname(path);
  await Deno.mkdir(folder, { recursive: true, mode: 0o700 });
  const temporary = `${path}.${newSecret().slice(0, 12)}.tmp`;
  try {
    await Deno.writeTextFile(temporary, text, { mode: 0o600, createNew: true });
    if (Deno.build.os !== "windows") await Deno.chmod(temporary, 0o600); // the umask may have dropped bits only
    await Deno.rename(temporary, path);
  } catch (error) {
    await Deno.remove(temporary).catch(() => {});
    throw error;
  }
}
