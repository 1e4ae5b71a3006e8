/**
 * The reference of the ingest benchmark: a bare `Deno.serve` on 127.0.0.1 that reads each body, decodes it with
 * the receiver's own protobuf decoder and discards it, in a process of its own as `prove serve` is. Prints its
 * port, then serves until killed.
 * @module
 */
import { decodeTraceRequest } from "../../lib/provevi/receiver/otlp_receiver.ts";

const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
  decodeTraceRequest(new Uint8Array(await request.arrayBuffer()));
  return new Response(new Uint8Array(), { headers: { "content-type": "application/x-protobuf" } });
});
console.log(server.addr.port);
