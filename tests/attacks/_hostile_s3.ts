/**
 * A hostile S3 server for the attacks on the s3 store: the real S3 test server (moto, `PROVCAT_TEST_S3_ENDPOINT`)
 * behind a proxy that answers some requests with a body of its own: one that never ends (here, 256 MiB, far past
 * every cap, with no length declared) or one that stalls after the headers. Everything else is the real server's.
 * @module
 */

/**
 * A body the proxy sends in place of the server's: `endless` (no length), `stall` (headers, then nothing), or
 * `truncated`: the server's list of versions, said to go on at the same marker for ever; or `silent`: no answer
 * at all, not even headers (until the client gives up).
 */
export type Twist = "endless" | "stall" | "truncated" | "silent";

/** Which requests get which body: a test of the request's method, path and query. */
export interface TwistRule {
  match: (method: string, url: URL) => boolean;
  body: Twist;
}

/** How much an `endless` body sends before it ends, so that a reader without a cap ends too (in a test). */
const ENDLESS_BYTES = 256 * 1024 * 1024;

/** How long a `stall` body waits before it ends, so that a reader without a time limit ends too (in a test). */
const STALL_MS = 30_000;

function bodyOf(twist: Twist): ReadableStream<Uint8Array> {
  if (twist === "stall") {
    let timer: ReturnType<typeof setTimeout> | undefined;
    return new ReadableStream({
      start(controller) {
        timer = setTimeout(() => controller.close(), STALL_MS);
      },
      cancel() {
        clearTimeout(timer);
      },
    });
  }
  const chunk = new Uint8Array(64 * 1024).fill(0x61);
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= ENDLESS_BYTES) return controller.close();
      controller.enqueue(chunk);
      sent += chunk.length;
    },
  });
}

/**
 * Starts the proxy in front of the S3 test server.
 *
 * @param target The real server's endpoint.
 * @param rules Which requests get a body of the proxy's.
 * @returns The proxy's endpoint, and how to stop it.
 */
export function hostileS3(target: string, rules: TwistRule[]): { url: string } & AsyncDisposable {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
    const url = new URL(request.url);
    if (rules.some((r) => r.body === "silent" && r.match(request.method, url))) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, STALL_MS);
        request.signal.addEventListener("abort", () => (clearTimeout(timer), resolve()));
      });
      return new Response(null, { status: 503 });
    }
    const headers = new Headers(request.headers);
    headers.delete("host");
    headers.delete("content-length");
    const body = request.body ? new Uint8Array(await request.arrayBuffer()) : undefined;
    const answer = await fetch(`${target}${url.pathname}${url.search}`, {
      method: request.method,
      headers,
      ...(body ? { body } : {}),
    });
    const rule = rules.find((r) => r.match(request.method, url));
    if (!rule || !answer.ok || request.method === "HEAD") return answer;
    const listed = rule.body === "truncated" ? await answer.text() : null;
    await answer.body?.cancel().catch(() => {});
    const out = new Headers(answer.headers);
    // its own body: the server's length and checksums are not sent with it (a hostile server sends none)
    for (const h of [...out.keys()]) {
      if (/^(content-length|content-encoding|transfer-encoding|x-amz-checksum-.*)$/.test(h)) out.delete(h);
    }
    const more = "<IsTruncated>true</IsTruncated><NextKeyMarker>cat/x.txt</NextKeyMarker>" +
      "<NextVersionIdMarker>same</NextVersionIdMarker>";
    const given = listed !== null
      ? listed.replace(/<IsTruncated>false<\/IsTruncated>/, more)
      : bodyOf(rule.body);
    return new Response(given, { status: answer.status, headers: out });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
}
