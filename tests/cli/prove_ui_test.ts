import assert from "node:assert/strict";
import { bufferIo } from "../../cli/_io.ts";
import { prove } from "../../cli/prove.ts";

const RUNS = new URL("../../fixtures/runs", import.meta.url).pathname;

Deno.test("prove ui refuses a port that is not a port, with exit 2 and one line", async () => {
  const io = bufferIo();
  assert.equal(await prove(["--runs", RUNS, "ui", "--port", "http"], io), 2);
  assert.match(
    io.stderr.join("\n"),
    /^prove: --port http is not a port: give a whole number from 0 to 65535$/m,
  );
});

Deno.test("prove ui says so when its port is taken, with exit 1 and one line", async () => {
  const other = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const io = bufferIo();
    const port = (other.addr as Deno.NetAddr).port;
    assert.equal(await prove(["--runs", RUNS, "ui", "--port", String(port)], io), 1);
    assert.equal(
      io.stderr.join("\n"),
      `prove: port ${port} on 127.0.0.1 is taken: choose another with --port N`,
    );
  } finally {
    other.close();
  }
});

Deno.test("prove ui refuses a policy file that cannot be read, before it listens", async () => {
  const io = bufferIo();
  assert.equal(
    await prove(["--runs", RUNS, "ui", "--port", "0", "--policy", "/nonexistent/policy.yaml"], io),
    1,
  );
  assert.match(io.stderr.join("\n"), /^prove: .*\/nonexistent\/policy\.yaml/);
});
