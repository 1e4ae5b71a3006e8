import assert from "node:assert/strict";
import { shutdownWithin } from "../../../lib/provevi/guard/local_server.ts";

Deno.test("shutdownWithin() stops a server whose stranger never finishes a request, at its deadline", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    request.body?.cancel().catch(() => {});
    return new Response("no", { status: 401 });
  });
  // headers, one chunk of a body, and never the rest
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
  await conn.write(
    new TextEncoder().encode(
      "POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n",
    ),
  );
  await conn.read(new Uint8Array(1024));
  assert.equal(await shutdownWithin(server, 300), false);
  // no new connection is taken
  await assert.rejects(() => Deno.connect({ hostname: "127.0.0.1", port: server.addr.port }));
  conn.close();
  const idle = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => new Response());
  assert.equal(await shutdownWithin(idle, 300), true);
});
