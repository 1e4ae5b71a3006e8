/**
 * The proof that no code reads a problem's message to decide anything: with the test switch on, every message is
 * a placeholder, and what decides behaviour (exit codes, `prove verify --json`'s codes and places, `prove show`'s
 * warning and its exit code on a line that is not an event, `--require-bundle`'s error, the viewer's verdict) is
 * the same as the test vectors say.
 * @module
 */
import assert from "node:assert/strict";
import { basename, join } from "node:path";
import { placeholder } from "../../../lib/provevi/evidence/_placeholder.ts";
import { FileRunRecord } from "../../../lib/provevi/store/file_run_record.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { TelemetryPolicy } from "../../../lib/provevi/telemetry/policy.ts";
import { runView } from "../../../lib/provevi/viewer/run_view.ts";
import { bufferIo } from "../../../cli/_io.ts";
import { prove } from "../../../cli/prove.ts";

placeholder.on = true;

const FIXTURES = new URL("../../../fixtures/", import.meta.url).pathname;
const GOOD = join(FIXTURES, "runs", "run-20261129T120000Z-0badc0de");

interface Vector {
  name: string;
  folder: string;
  trust: string | null;
  ok: boolean;
  problems: { code: string; file: string | null; line: number | null; seq: number | null }[];
}

const { vectors } = JSON.parse(await Deno.readTextFile(join(FIXTURES, "evidence-vectors.json"))) as {
  vectors: Vector[];
};

async function run(args: string[]) {
  const io = bufferIo();
  const code = await prove(args, io);
  return { code, out: io.stdout.join("\n"), err: io.stderr };
}

Deno.test("with every message a placeholder, prove verify gives each vector's exit code, and --json its codes and places", async () => {
  for (const v of vectors) {
    const args = [
      "verify",
      join(FIXTURES, v.folder),
      ...(v.trust ? ["--trust", join(FIXTURES, v.trust)] : []),
    ];
    const plain = await run(args);
    assert.equal(plain.code, v.ok ? 0 : 1, v.name);
    const json = await run([...args, "--json"]);
    assert.equal(json.code, v.ok ? 0 : 1, v.name);
    const verdict = JSON.parse(json.out) as {
      problems: (Vector["problems"][number] & { message: string })[];
    };
    // The vectors are verified without a catalog; the command tries to open one (no provcat.yaml here).
    const want = (code: string) => v.name === "bundle-unpinned-no-catalog" ? "catalog.unopenable" : code;
    assert.deepEqual(
      verdict.problems.map(({ code, file, line, seq }) => ({ code, file, line, seq })),
      v.problems.map(({ code, file, line, seq }) => ({ code: want(code), file, line, seq })),
      v.name,
    );
    assert.ok(verdict.problems.every((p) => p.message === `(${p.code})`), v.name);
  }
});

Deno.test("with every message a placeholder, prove show warns of a run that does not verify, notes a bundle it cannot read, and refuses a line that is not an event", async () => {
  const folder = (name: string) => join(FIXTURES, vectors.find((v) => v.name === name)!.folder);
  const good = await run(["show", GOOD]);
  assert.deepEqual([good.code, good.err], [0, []]);
  const changed = await run(["show", folder("changed-line")]);
  assert.equal(changed.code, 0);
  assert.equal(changed.err.length, 1);
  assert.match(changed.err[0]!, /does not verify \(\(chain\.broken\)\)/);
  // Only a catalog to read the bundle is missing: a note of the verdict, not a warning.
  const noted = await run(["show", folder("bundle-unpinned-no-catalog"), "--json"]);
  const verdict = JSON.parse(noted.out).verdict;
  assert.deepEqual([noted.code, noted.err, verdict.ok, verdict.notes.at(-1)], [
    0,
    [],
    true,
    "(catalog.missing)",
  ]);
  const broken = await run(["show", folder("line-not-json")]);
  assert.equal(broken.code, 2);
});

Deno.test("with every message a placeholder, --require-bundle alone is an error, and the viewer's verdict reads codes", async () => {
  const required = await run(["verify", GOOD, "--require-bundle"]);
  assert.deepEqual([required.code, required.out, required.err], [1, "", ["prove: (bundle.required)"]]);
  const folder = join(FIXTURES, vectors.find((v) => v.name === "changed-line")!.folder);
  const store = new FileStore({ runs: join(folder, "..") });
  const view = await runView(store, new FileRunRecord(basename(folder), folder), {
    policy: TelemetryPolicy.denyAll(),
  });
  assert.deepEqual([view.verdict.ok, view.verdict.problems.map((p) => p.code)], [false, ["chain.broken"]]);
});
