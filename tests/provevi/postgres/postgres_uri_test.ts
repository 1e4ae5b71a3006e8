import assert from "node:assert/strict";
import { openStore } from "../../../lib/provevi/runs/open_store.ts";

Deno.test("no error names a password, however the URI is malformed: a / in it, no //, or one in the query", async () => {
  for (
    const uri of [
      "postgresql://u:secret@127.0.0.1:1/db?password=secret2",
      "postgresql://u:secret@127.0.0.1:1/db?sslpassword=secret2",
      "postgresql://u:p/secret@127.0.0.1:1/db",
      "postgresql://u:p?se#cret@127.0.0.1:1/db",
      "postgresql:u:secret@127.0.0.1:1/db",
      "postgres://u:secret@@127.0.0.1:1/db",
    ]
  ) {
    const error = await openStore(uri).then(() => null, (e: Error) => e);
    assert.ok(error, uri);
    assert.doesNotMatch(error.message, /secret/, `${uri}: ${error.message}`);
    assert.equal(error.message.split("\n").length, 1);
  }
});
