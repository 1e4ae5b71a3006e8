import assert from "node:assert/strict";
import { join } from "node:path";
import { bufferIo } from "../../cli/_io.ts";
import { tour } from "../../cli/tour.ts";
import { removeWritable } from "../_files.ts";

Deno.test("the tour makes a real run through a git catalog, commits its bundle, verifies and shows it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "tour-" });
  const io = bufferIo();
  const code = await tour(io, { runs: join(dir, "runs") });
  const out = io.stdout.join("\n");
  assert.equal(code, 0, out + io.stderr.join("\n"));
  assert.match(out, /tour: the answer: Revenue grew 12% in Q3/);
  assert.match(
    out,
    /the evidence, the outputs and the committed bundle run:\/\/acme\/demo\/dev\/run-\S+\?at=commit:[0-9a-f]{40} verify/,
  );
  assert.match(out, / run_completed /);
  // The commands it prints are ones a user can paste: deno task prove, not a bare prove (Perl's test runner).
  assert.match(out, /as you can type it: deno task prove verify run-\S+ --config \S+provcat\.yaml/);
  assert.doesNotMatch(out, /^\$ prove /m);
  // A second tour reuses the repository and the snapshot.
  assert.equal(await tour(bufferIo(), { runs: join(dir, "runs") }), 0);
  await removeWritable(dir);
});
