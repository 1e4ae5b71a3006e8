import assert from "node:assert/strict";
import { join } from "node:path";
import { peerTest } from "../_peers.ts";

// `deno compile` downloads its base binary (denort) from Deno's servers, which these machines cannot reach; it
// uses a local one when DENORT_BIN names it. Without one, this test is skipped, and says why in its name.
const denort = Deno.env.get("DENORT_BIN");

peerTest("compile", {
  name: `deno compile builds prove as a single binary that verifies the fixture run${
    denort ? "" : " (skipped: no DENORT_BIN base binary on this machine)"
  }`,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    const out = join(dir, "prove");
    const root = new URL("../../", import.meta.url).pathname;
    const built = await new Deno.Command(Deno.execPath(), {
      args: [
        "compile",
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "-o",
        out,
        join(root, "cli/prove.ts"),
      ],
      stderr: "piped",
    }).output();
    assert.ok(built.success, new TextDecoder().decode(built.stderr));
    const ran = await new Deno.Command(out, {
      args: ["verify", join(root, "fixtures/runs/run-20261129T120000Z-0badc0de")],
      stdout: "piped",
    }).output();
    assert.equal(ran.code, 0);
    await Deno.remove(dir, { recursive: true });
  },
});
