import assert from "node:assert/strict";
import { z } from "zod";
import {
  parseReply,
  readReply,
  refusalOf,
  ReplyTooLarge,
  withoutCredentials,
} from "../../../lib/provevi/mlflow/mlflow_reply.ts";

Deno.test("refusalOf() keeps what MLflow itself says: its code, and a message with run IDs, names and API paths", () => {
  const id = "0123456789abcdef0123456789abcdef";
  assert.deepEqual(
    refusalOf(
      JSON.stringify({
        error_code: "RESOURCE_DOES_NOT_EXIST",
        message: `Run with id=${id} not found (trace tr-${id}, experiment 'acme/demo/dev/revenue_question')`,
      }),
      ["s3cret-token"],
    ),
    {
      code: "RESOURCE_DOES_NOT_EXIST",
      message: `Run with id=${id} not found (trace tr-${id}, experiment 'acme/demo/dev/revenue_question')`,
    },
  );
  assert.deepEqual(refusalOf('{"detail":"Not Found: /api/2.0/mlflow/runs/create"}', []), {
    code: null,
    message: "Not Found: /api/2.0/mlflow/runs/create",
  });
});

Deno.test("refusalOf() gives the first line that holds something, cut to 200 characters, and null for nothing", () => {
  assert.equal(refusalOf("\n\n  first line\nsecond", []).message, "first line");
  assert.equal(refusalOf("x".repeat(500), []).message, `${"x".repeat(200)}…`);
  assert.deepEqual(refusalOf("{}", []), { code: null, message: null });
  assert.equal(refusalOf('{"error_code":"not a code!","message":"m"}', []).code, null);
});

Deno.test("withoutCredentials() takes out a secret, a header's value, what follows Basic or Bearer, and a URL's user", () => {
  assert.equal(
    withoutCredentials("Authorization: Basic YWRhOmh1bnRlcjI= and the rest", []),
    "Authorization: …",
  );
  assert.equal(withoutCredentials("retry https://ada:pw@h.example/x", []), "retry https://…@h.example/x");
  assert.equal(withoutCredentials("token=abc123xyz and Bearer q.w.e", []), "token=… and Bearer …");
  assert.equal(
    withoutCredentials("key HUNTER2 in a\u001b[31m red\u0007 text", ["hunter2"]),
    "key … in a[31m red text",
  );
});

Deno.test("readReply() reads a reply up to its bound, and keeps the start of an error past its bound", async () => {
  assert.equal(await readReply(new Response("{}")), "{}");
  await assert.rejects(readReply(new Response("x".repeat(100)), 10), ReplyTooLarge);
  assert.equal(await readReply(new Response("y".repeat(100), { status: 500 }), 10), "y".repeat(10));
});

Deno.test("parseReply() names where a reply is not of its shape, and takes an empty reply as {}", () => {
  const shape = z.object({ run: z.object({ info: z.object({ run_id: z.string() }) }) });
  assert.deepEqual(parseReply("{}", shape), {
    ok: false,
    why: "run is not what MLflow's API gives (invalid_type)",
  });
  assert.deepEqual(parseReply("nope", shape), { ok: false, why: "it is not JSON" });
  assert.deepEqual(parseReply("", z.object({})), { ok: true, value: {} });
});
