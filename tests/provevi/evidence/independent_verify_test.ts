import assert from "node:assert/strict";
import { join } from "node:path";
import { peerTest } from "../../_peers.ts";

const FIXTURES = new URL("../../../fixtures/", import.meta.url).pathname;
const PYTHON = Deno.env.get("PROVEVI_TEST_INTOTO_PYTHON");
const SCRIPT = new URL("./independent_verify.py", import.meta.url).pathname;

interface Where {
  code: string;
  file: string | null;
  line: number | null;
  seq: number | null;
}

const key = (w: Where) => `${w.code} ${w.file} line ${w.line} seq ${w.seq}`;

peerTest("intoto", {
  name:
    "a verifier written from docs/evidence-format.md alone, in Python, agrees with prove verify on every test vector, problem by problem: code, file, line and seq",
  fn: async () => {
    if (!PYTHON) throw new Error("PROVEVI_TEST_INTOTO_PYTHON is unset: .ci/peers/intoto.sh did not run");
    const { vectors } = JSON.parse(await Deno.readTextFile(join(FIXTURES, "evidence-vectors.json"))) as {
      vectors: { name: string; folder: string; trust: string | null; problems: Where[] }[];
    };
    const good = { name: "good", folder: "runs/run-20261129T120000Z-0badc0de", trust: null, problems: [] };
    for (const v of [good, ...vectors]) {
      const args = [SCRIPT, join(FIXTURES, v.folder), ...(v.trust ? [join(FIXTURES, v.trust)] : [])];
      const out = await new Deno.Command(PYTHON, { args, stdout: "piped", stderr: "piped" }).output();
      assert.ok(out.success, `${v.name}: ${new TextDecoder().decode(out.stderr)}`);
      const found = (JSON.parse(new TextDecoder().decode(out.stdout)) as Where[]).map(key).sort();
      assert.deepEqual(found, v.problems.map(key).sort(), v.name);
    }
  },
});
