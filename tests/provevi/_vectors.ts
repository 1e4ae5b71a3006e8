/**
 * The tampered runs of the test vectors (fixtures/vectors/): one or more per check of docs/evidence-format.md,
 * each a copy of the fixture run with one change, re-chained and re-sealed where a forger would, so that the
 * only problem left is the one the vector names.
 * @module
 */
import { join } from "node:path";
import type { AssessmentLine } from "../../lib/provevi/evidence/assessments_file.ts";
import { appendAssessmentLine } from "../../lib/provevi/evidence/assessments_file.ts";
import { sha256Hex } from "../../lib/provevi/evidence/hash.ts";
import { manifestLastHash } from "../../lib/provevi/evidence/manifest.ts";
import { eventsPath, manifestPath, rechain } from "./_tamper.ts";
import { PACK_VECTORS } from "./_pack_vectors.ts";
import { SPEC_VECTORS } from "./_spec_vectors.ts";

type Ev = Record<string, unknown> & { data: Record<string, unknown> };

/** One vector: its name, the check that must find it, what it changes, and the change. */
export interface Vector {
  name: string;
  check: number;
  what: string;
  change: (folder: string) => Promise<void>;
  /** Verify it with the fixtures' public key trusted (`--trust fixtures/keys/signing.key.pub`). */
  trust?: boolean;
  /** The folder's name, when it is not the run's ID. */
  folderName?: string;
  /** Sign the run (with the fixtures' key) before the change. */
  signed?: boolean;
  /** A change made before the run is signed, which the signature covers. */
  before?: (folder: string) => Promise<void>;
}

const edit = (seq: number, change: (e: Ev) => void) => (f: string) =>
  rechain(f, (es) => {
    change(es[seq] as Ev);
    return es;
  });

const lines = async (f: string) => (await Deno.readTextFile(eventsPath(f))).trimEnd().split("\n");
const writeLines = (f: string, ls: string[]) => Deno.writeTextFile(eventsPath(f), ls.join("\n") + "\n");
const manifest = async (f: string, change: (m: Record<string, unknown>) => void) => {
  const m = JSON.parse(await Deno.readTextFile(manifestPath(f)));
  change(m);
  // Written in canonical form again (keys sorted, no spaces), so that only the change is a problem.
  const { default: canonicalize } = await import("canonicalize");
  await Deno.writeTextFile(manifestPath(f), canonicalize(m) + "\n");
};
const payloads = (f: string) => join(f, "evidence", "payloads");

/** Stores a payload in the run and lists it in the manifest (sorted, with its bytes counted); gives its SHA-256. */
async function addPayload(f: string, text: string): Promise<string> {
  const sha = sha256Hex(text);
  await Deno.writeTextFile(join(payloads(f), sha), text);
  const size = new TextEncoder().encode(text).length;
  await manifest(f, (m) => {
    const list = [...(m.payloads as { sha256: string; size: number }[]), { sha256: sha, size }];
    m.payloads = list.sort((a, b) => (a.sha256 < b.sha256 ? -1 : 1));
    m.payload_bytes = (m.payload_bytes as number) + size;
  });
  return sha;
}

/** Adds outputs to the run: each file in output/ and its output_artifact_created after the first one. */
async function addOutputs(f: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) await Deno.writeTextFile(join(f, "output", path), text);
  await rechain(f, (es) => {
    const made = Object.entries(files).map(([path, text]) => ({
      ...es[11]!,
      data: { path, sha256: sha256Hex(text), size: new TextEncoder().encode(text).length },
    }));
    return [...es.slice(0, 12), ...made, ...es.slice(12)];
  });
}

/** The assessments a vector of check 11 starts from: the run, its model call's event, and its model call's span. */
const JUDGED: Omit<AssessmentLine, "id" | "prev" | "run_id" | "created_at">[] = [
  { seq: null, span_id: null, name: "correct", value: true, rationale: "the numbers add up", source: "ada" },
  { seq: 8, span_id: null, name: "score", value: 0.75, rationale: null, source: "grader" },
  { seq: null, span_id: "0000000000000006", name: "fast", value: "yes", rationale: null, source: null },
];

/** Writes the run's assessments.jsonl as the file store does, chained from its manifest; gives its lines. */
async function assess(f: string, entries = JUDGED): Promise<string[]> {
  const lastHash = manifestLastHash(await Deno.readTextFile(manifestPath(f)))!;
  for (const [i, e] of entries.entries()) {
    await appendAssessmentLine(f, lastHash, {
      run_id: "run-20261129T120000Z-0badc0de",
      created_at: `2026-11-29T13:00:0${i}.000000Z`,
      ...e,
    });
  }
  return (await Deno.readTextFile(join(f, "assessments.jsonl"))).trimEnd().split("\n");
}
const writeAssessments = (f: string, ls: string[]) =>
  Deno.writeTextFile(join(f, "assessments.jsonl"), ls.join("\n") + "\n");

/** Rewrites the attestation's envelope (parsed), in RFC 8785 form unless `text` writes it otherwise. */
async function envelope(
  f: string,
  change: (e: { payload: string; payloadType: string; signatures: { keyid: string; sig: string }[] }) => void,
  text?: (e: unknown) => string,
): Promise<void> {
  const path = join(f, "evidence", "attestation.dsse.json");
  const e = JSON.parse(await Deno.readTextFile(path));
  change(e);
  const { default: canonicalize } = await import("canonicalize");
  await Deno.writeTextFile(path, text ? text(e) : canonicalize(e) + "\n");
}

/** Base64 re-written in the URL-safe alphabet, without padding (DSSE allows both alphabets). */
const urlSafe = (b64: string) => b64.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");

/** The vectors, in the order of the checks. */
export const VECTORS: Vector[] = [
  {
    name: "events-cut",
    check: 1,
    what: "events.jsonl cut in the middle of its last line",
    change: async (f) => {
      const text = await Deno.readTextFile(eventsPath(f));
      await Deno.writeTextFile(eventsPath(f), text.slice(0, text.length - 40));
    },
  },
  {
    name: "line-not-json",
    check: 2,
    what: "line 2 replaced by text that is not JSON",
    change: async (f) => {
      const ls = await lines(f);
      ls[1] = "{not json";
      await writeLines(f, ls);
    },
  },
  {
    name: "time-not-a-date",
    check: 2,
    what: "line 4's time is 30 February, re-chained",
    change: edit(3, (e) => e.time = "2026-02-30T12:00:00.000000Z"),
  },
  {
    name: "started-at-hour-25",
    check: 2,
    what: "line 9's started_at has hour 25, re-chained",
    change: edit(8, (e) => e.started_at = "2026-11-29T25:00:00.000000Z"),
  },
  {
    name: "lone-surrogate",
    check: 2,
    what: 'line 13 holds the escape "\\ud800", re-chained',
    change: (f) =>
      rechain(f, (es) => {
        (es[12] as Ev).data.status = "SURROGATE";
        return es;
      }, { patch: (line) => line.replace("SURROGATE", "\\ud800") }),
  },
  {
    name: "not-canonical",
    check: 2,
    what: "line 13 written with spaces after its colons, and the manifest sealed again over it",
    change: async (f) => {
      const ls = await lines(f);
      ls[12] = ls[12]!.replaceAll('":', '": ');
      await writeLines(f, ls);
      await manifest(f, (m) => m.last_hash = sha256Hex(ls[12]!));
    },
  },
  {
    name: "number-ecmascript-form",
    check: 2,
    what:
      "line 9 holds 1.5e-7 and 0.00001, each as ECMAScript writes it (an exponent below 1e-6 only), re-chained; it verifies",
    change: edit(8, (e) => Object.assign(e.data, { temperature: 1.5e-7, top_p: 0.00001 })),
  },
  {
    name: "number-past-double",
    check: 2,
    what:
      "line 9's output_tokens written as 9007199254740993, which no double holds (it reads as ...992), re-chained",
    change: (f) =>
      rechain(f, (es) => {
        (es[8] as Ev).data.output_tokens = 424242;
        return es;
      }, { patch: (line, i) => i === 8 ? line.replace("424242", "9007199254740993") : line }),
  },
  {
    name: "number-past-largest-double",
    check: 2,
    what:
      "line 9's output_tokens written as 1e400, which reads as infinity and has no RFC 8785 form, re-chained",
    change: (f) =>
      rechain(f, (es) => {
        (es[8] as Ev).data.output_tokens = 424242;
        return es;
      }, { patch: (line, i) => i === 8 ? line.replace("424242", "1e400") : line }),
  },
  {
    name: "number-nan",
    check: 2,
    what: "line 9's output_tokens written as NaN, which is not JSON, re-chained",
    change: (f) =>
      rechain(f, (es) => {
        (es[8] as Ev).data.output_tokens = 424242;
        return es;
      }, { patch: (line, i) => i === 8 ? line.replace("424242", "NaN") : line }),
  },
  {
    name: "unknown-type",
    check: 2,
    what: "line 8's type is prompt_whispered, re-chained",
    change: edit(7, (e) => e.type = "prompt_whispered"),
  },
  {
    name: "payload-key-not-a-hash",
    check: 2,
    what: "line 9's data.response_payload is 7, re-chained",
    change: edit(8, (e) => e.data.response_payload = 7),
  },
  {
    name: "changed-line",
    check: 3,
    what: "one token count changed on line 9 (the tampered copy in fixtures/runs-tampered/)",
    change: async (f) => {
      await Deno.writeTextFile(
        eventsPath(f),
        (await Deno.readTextFile(eventsPath(f))).replace('"output_tokens":9', '"output_tokens":7'),
      );
    },
  },
  {
    name: "removed-line",
    check: 3,
    what: "line 5 removed",
    change: async (f) => {
      const ls = await lines(f);
      ls.splice(4, 1);
      await writeLines(f, ls);
    },
  },
  {
    name: "event-after-end",
    check: 3,
    what: "a note added after run_completed, re-chained and re-sealed",
    change: (f) =>
      rechain(
        f,
        (es) => [...es, { ...es[7]!, type: "note_added", component: "agent", data: { text: "late" } }],
      ),
  },
  {
    name: "created-twice",
    check: 3,
    what: "a second run_created (another agent) after the first, re-chained and re-sealed",
    change: (f) =>
      rechain(
        f,
        (es) => [es[0]!, { ...es[0]!, data: { ...es[0]!.data as object, agent: "another" } }, ...es.slice(1)],
      ),
  },
  {
    name: "folder-not-run-id",
    check: 3,
    what: "the run folder renamed: its name is not the run_id of its events and manifest",
    folderName: "run-20261129T120000Z-0badf00d",
    change: () => Promise.resolve(),
  },
  {
    name: "manifest-last-hash",
    check: 4,
    what: "the manifest's last_hash changed",
    change: (f) => manifest(f, (m) => m.last_hash = "0".repeat(64)),
  },
  {
    name: "manifest-unsorted",
    check: 4,
    what: "the manifest's payloads in reverse order",
    change: (f) => manifest(f, (m) => (m.payloads as unknown[]).reverse()),
  },
  {
    name: "manifest-sealed-at",
    check: 4,
    what: "the manifest's sealed_at is 31 April",
    change: (f) => manifest(f, (m) => m.sealed_at = "2026-04-31T12:00:00.000000Z"),
  },
  {
    name: "payload-changed",
    check: 5,
    what: "the prompt's payload file rewritten",
    change: async (f) => {
      const name = JSON.parse((await lines(f))[7]!).payload;
      await Deno.writeTextFile(join(payloads(f), name), "another prompt");
    },
  },
  {
    name: "payload-extra",
    check: 5,
    what: "a payload file that the manifest does not list",
    change: (f) =>
      Deno.writeTextFile(
        join(payloads(f), sha256Hex("extra")),
        "extra",
      ),
  },
  {
    name: "output-changed",
    check: 6,
    what: "output/answer.txt rewritten",
    change: (f) => Deno.writeTextFile(join(f, "output", "answer.txt"), "Revenue fell.\n"),
  },
  {
    name: "output-extra",
    check: 6,
    what: "a file in output/ that no output_artifact_created records",
    change: (f) => Deno.writeTextFile(join(f, "output", "extra.txt"), "smuggled\n"),
  },
  {
    name: "input-ok-text",
    check: 7,
    what: 'input_verified with ok "false" (a text), re-chained',
    change: edit(10, (e) => e.data.ok = "false"),
  },
  {
    name: "input-changed-ok-true",
    check: 7,
    what: "input_verified with another end hash while ok is true, re-chained",
    change: edit(10, (e) => e.data.sha256 = "0".repeat(64)),
  },
  {
    name: "signed",
    check: 9,
    what: "the run signed with the fixtures' key; it verifies with that key trusted",
    signed: true,
    trust: true,
    change: () => Promise.resolve(),
  },
  {
    name: "signed-then-rechained",
    check: 9,
    what: "a signed run with a token count changed, re-chained and re-sealed; the attestation kept",
    signed: true,
    trust: true,
    change: edit(8, (e) => e.data.output_tokens = 7),
  },
  {
    name: "evidence-extra-file",
    check: 1,
    what: "a file evidence/notes.txt that the format does not name",
    change: (f) => Deno.writeTextFile(join(f, "evidence", "notes.txt"), "smuggled\n"),
  },
  {
    name: "time-backwards",
    check: 2,
    what: "line 6's time set to 2020, before the lines around it, re-chained: times are not compared",
    change: edit(5, (e) => e.time = "2020-01-01T00:00:00.000000Z"),
  },
  {
    name: "payload-folder",
    check: 5,
    what: "a folder in payloads/, named as a SHA-256, with a file in it",
    change: async (f) => {
      await Deno.mkdir(join(payloads(f), sha256Hex("folder")));
      await Deno.writeTextFile(join(payloads(f), sha256Hex("folder"), "inside"), "smuggled\n");
    },
  },
  {
    name: "output-recorded-twice",
    check: 6,
    what: "line 12's output_artifact_created written twice, re-chained",
    change: (f) => rechain(f, (es) => [...es.slice(0, 12), es[11]!, ...es.slice(12)]),
  },
  {
    name: "input-staged-twice",
    check: 7,
    what: "line 6's input_staged written twice, re-chained",
    change: (f) => rechain(f, (es) => [...es.slice(0, 6), es[5]!, ...es.slice(6)]),
  },
  {
    name: "bundle-flag-disagrees",
    check: 8,
    what:
      "run_created's payload is a run file with run.bundle: true while data.bundle is false, and no bundle.json",
    change: async (f) => {
      const sha = await addPayload(f, "run:\n  bundle: true\n");
      await rechain(f, (es) => {
        es[0]!.payload = sha;
        return es;
      });
    },
  },
  {
    name: "created-signing-key-not-a-key",
    check: 2,
    what:
      "run_created's data.signing_key is 42, not null or a key ID, re-chained: read as a string, no signature",
    change: edit(0, (e) => e.data.signing_key = 42),
  },
  {
    name: "sign-key-flag-disagrees",
    check: 9,
    what:
      "run_created's payload is a run file with run.sign_key while data.signing_key is null, and no attestation",
    change: async (f) => {
      const sha = await addPayload(f, "run:\n  sign_key: keys/signing.key\n");
      await rechain(f, (es) => {
        es[0]!.payload = sha;
        return es;
      });
    },
  },
  {
    name: "bundle-unpinned-no-catalog",
    check: 8,
    what: "bundle.json with pinned null, verified without a catalog to ask whether its store has commits",
    change: (f) =>
      Deno.writeTextFile(
        join(f, "bundle.json"),
        JSON.stringify({ uri: "run://acme/demo/dev/run-20261129T120000Z-0badc0de", pinned: null }) + "\n",
      ),
  },
  {
    name: "subjects-utf16-order",
    check: 9,
    what:
      "outputs named \uff61.txt and \ud83d\ude00.txt, signed: UTF-16 order puts the second first, code points the first",
    signed: true,
    trust: true,
    before: (f) => addOutputs(f, { "\uff61.txt": "halfwidth\n", "\u{1F600}.txt": "grin\n" }),
    change: () => Promise.resolve(),
  },
  {
    name: "attestation-base64url",
    check: 9,
    what: "the envelope's payload and signature in URL-safe base64 without padding; it verifies",
    signed: true,
    trust: true,
    change: (f) =>
      envelope(f, (e) => {
        e.payload = urlSafe(e.payload);
        for (const s of e.signatures) s.sig = urlSafe(s.sig);
      }),
  },
  {
    name: "attestation-keyid-empty",
    check: 9,
    what:
      "the signature's keyid emptied: it still verifies with the trusted key, but no signature names the recorded key",
    signed: true,
    trust: true,
    change: (f) => envelope(f, (e) => e.signatures[0]!.keyid = ""),
  },
  {
    name: "attestation-indented",
    check: 9,
    what: "the envelope written with indentation, its values unchanged",
    signed: true,
    trust: true,
    change: (f) => envelope(f, () => {}, (e) => JSON.stringify(e, null, 2) + "\n"),
  },
  {
    name: "attestation-payload-type",
    check: 9,
    what: "the envelope's payloadType changed to application/json",
    signed: true,
    change: (f) => envelope(f, (e) => e.payloadType = "application/json"),
  },
  {
    name: "assessments",
    check: 11,
    what: "three assessments (the run, event 8, span 0000000000000006) chained from the seal; it verifies",
    change: (f) => assess(f).then(() => {}),
  },
  {
    name: "assessments-changed",
    check: 11,
    what: "line 1's value changed from true to false, in RFC 8785 form: line 2's prev no longer chains",
    change: async (f) => {
      const ls = await assess(f);
      ls[0] = ls[0]!.replace('"value":true', '"value":false');
      await writeAssessments(f, ls);
    },
  },
  {
    name: "assessments-removed",
    check: 11,
    what: "line 1 of three removed: one gap in the ids and one broken chain, both at the new line 1",
    change: async (f) => writeAssessments(f, (await assess(f)).slice(1)),
  },
  {
    name: "assessments-other-run",
    check: 11,
    what: "the assessments of a run sealed with another last hash, their run_id made this run's",
    change: async (f) => {
      const ls = await assess(f);
      const other = JSON.parse(ls[0]!);
      other.prev = sha256Hex("another run's last line");
      const { default: canonicalize } = await import("canonicalize");
      ls[0] = canonicalize(other)!;
      await writeAssessments(f, ls.slice(0, 1));
    },
  },
  {
    name: "assessments-target",
    check: 11,
    what: "assessments of event 99 and of span ffffffffffffffff, which the run does not have",
    change: (f) =>
      assess(f, [
        { ...JUDGED[1]!, seq: 99 },
        { ...JUDGED[2]!, span_id: "ffffffffffffffff" },
      ]).then(() => {}),
  },
  {
    name: "assessments-not-canonical",
    check: 11,
    what:
      "line 1 written with a space after each colon, its values unchanged: one problem, its hash still chains",
    change: async (f) => {
      const ls = await assess(f, JUDGED.slice(0, 1));
      await writeAssessments(f, [JSON.stringify(JSON.parse(ls[0]!), null, 0).replaceAll('":', '": ')]);
    },
  },
  ...PACK_VECTORS,
  ...SPEC_VECTORS,
];
