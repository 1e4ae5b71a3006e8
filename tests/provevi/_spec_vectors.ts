/**
 * The test vectors of the cases an outsider's verifier, written from docs/evidence-format.md alone, is likely to
 * get wrong: numbers that are doubles (`1.0` is the integer 1), JSON types that a language mixes up (`true` is
 * not the number 1), and a byte-order mark, which is not JSON in any file of the evidence.
 * @module
 */
import { join } from "node:path";
import canonicalize from "canonicalize";
import { appendAssessmentLine, manifestLastHash, sha256Hex } from "../../lib/provevi/evidence/mod.ts";
import { eventsPath, manifestPath, rechain } from "./_tamper.ts";
import type { Vector } from "./_vectors.ts";

const BOM = new Uint8Array([0xef, 0xbb, 0xbf]);
const utf8 = new TextEncoder();

/** The file with a byte-order mark put before its first byte. */
async function withBom(path: string): Promise<void> {
  const bytes = await Deno.readFile(path);
  const out = new Uint8Array(BOM.length + bytes.length);
  out.set(BOM);
  out.set(bytes, BOM.length);
  await Deno.writeFile(path, out);
}

/** Rewrites the manifest through `change` (parsed), in RFC 8785 form, then through `patch` as text. */
async function manifest(
  f: string,
  change: (m: Record<string, unknown>) => void,
  patch = (text: string) => text,
): Promise<void> {
  const m = JSON.parse(await Deno.readTextFile(manifestPath(f)));
  change(m);
  await Deno.writeTextFile(manifestPath(f), patch(canonicalize(m) + "\n"));
}

/** Lines that chain as written: each line's prev is set to the SHA-256 of the bytes of the line before it. */
function chained(lines: Uint8Array[]): Uint8Array[] {
  const out = [lines[0]!];
  for (const line of lines.slice(1)) {
    const e = JSON.parse(new TextDecoder().decode(line));
    e.prev = sha256Hex(out[out.length - 1]!);
    out.push(utf8.encode(canonicalize(e)));
  }
  return out;
}

function joinLines(lines: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(lines.reduce((n, l) => n + l.length + 1, 0));
  let at = 0;
  for (const l of lines) {
    out.set(l, at);
    out[at + l.length] = 0x0a;
    at += l.length + 1;
  }
  return out;
}

const ATTESTATION = (f: string) => join(f, "evidence", "attestation.dsse.json");
const ASSESSMENTS = (f: string) => join(f, "assessments.jsonl");

export const SPEC_VECTORS: Vector[] = [
  {
    name: "number-integer-as-1.0",
    check: 2,
    what:
      "line 2's seq written as 1.0, re-chained: a JSON number is a double, so it is the integer 1 and the seq is right, but the line is not canonical",
    change: (f) =>
      rechain(f, (es) => es, { patch: (line, i) => i === 1 ? line.replace('"seq":1,', '"seq":1.0,') : line }),
  },
  {
    name: "time-non-ascii-digit",
    check: 2,
    what:
      "line 3's time with the last digit of its seconds written as ARABIC-INDIC DIGIT ONE (U+0661), re-chained: the digits of a time are ASCII",
    change: (f) =>
      rechain(f, (es) => es, {
        patch: (line, i) =>
          i === 2 ? line.replace(/("time":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d)\d/, "$1\u0661") : line,
      }),
  },
  {
    name: "output-size-past-safe",
    check: 2,
    what:
      "line 12's data.size written as 1152921504606847000 (2^60 in RFC 8785 form), re-chained: a whole number is at most 2^53 - 1, past which two integers read as one double",
    change: (f) =>
      rechain(f, (es) => es, {
        patch: (line, i) => i === 11 ? line.replace(/"size":\d+/, '"size":1152921504606847000') : line,
      }),
  },
  {
    name: "events-bom",
    check: 2,
    what:
      "a byte-order mark before line 1, and line 2 re-chained to the bytes of line 1 with it: a BOM is not JSON",
    change: async (f) => {
      const text = await Deno.readFile(eventsPath(f));
      const lines: Uint8Array[] = [];
      let start = 0;
      for (let i = 0; i < text.length; i++) {
        if (text[i] === 0x0a) (lines.push(text.subarray(start, i)), start = i + 1);
      }
      lines[0] = new Uint8Array([...BOM, ...lines[0]!]);
      const out = chained(lines);
      await Deno.writeFile(eventsPath(f), joinLines(out));
      await manifest(f, (m) => m.last_hash = sha256Hex(out[out.length - 1]!));
    },
  },
  {
    name: "manifest-bom",
    check: 4,
    what: "manifest.json with a byte-order mark before its first byte: a BOM is not JSON",
    change: (f) => withBom(manifestPath(f)),
  },
  {
    name: "manifest-size-as-1.0",
    check: 4,
    what:
      "the first payload's size written as 36.0: the whole number 36 (a JSON number is a double), so only the form is wrong",
    change: (f) => manifest(f, () => {}, (text) => text.replace('"size":36}', '"size":36.0}')),
  },
  {
    name: "manifest-size-true",
    check: 4,
    what: "the first payload's size written as true, which is not a number (nor 1)",
    change: (f) => manifest(f, (m) => ((m.payloads as Record<string, unknown>[])[0]!.size = true)),
  },
  {
    name: "manifest-events-true",
    check: 4,
    what:
      "a run cut to its first line (no output), sealed as incomplete with events written as true, which is not the number 1",
    change: async (f) => {
      await rechain(f, (es) => es.slice(0, 1));
      await Deno.remove(join(f, "output", "answer.txt"));
      await manifest(f, (m) => (m.events = true, m.status = "incomplete"));
    },
  },
  {
    name: "attestation-bom",
    check: 9,
    what: "the attestation of a signed run with a byte-order mark before its first byte: a BOM is not JSON",
    signed: true,
    change: (f) => withBom(ATTESTATION(f)),
  },
  {
    name: "attestation-not-utf8",
    check: 9,
    what: "the attestation of a signed run with a byte that is not UTF-8 (0xff) in place of its first byte",
    signed: true,
    change: async (f) => {
      const bytes = await Deno.readFile(ATTESTATION(f));
      bytes[0] = 0xff;
      await Deno.writeFile(ATTESTATION(f), bytes);
    },
  },
  {
    name: "assessments-bom",
    check: 11,
    what:
      "an assessment with a byte-order mark before line 1 of assessments.jsonl, chained as written: a BOM is not JSON",
    change: async (f) => {
      const lastHash = manifestLastHash(await Deno.readTextFile(manifestPath(f)))!;
      for (const [i, name] of ["correct", "fast"].entries()) {
        await appendAssessmentLine(f, lastHash, {
          run_id: "run-20261129T120000Z-0badc0de",
          created_at: `2026-11-29T13:00:0${i}.000000Z`,
          seq: null,
          span_id: null,
          name,
          value: true,
          rationale: null,
          source: null,
        });
      }
      const text = await Deno.readFile(ASSESSMENTS(f));
      const cut = text.indexOf(0x0a);
      const first = new Uint8Array([...BOM, ...text.subarray(0, cut)]);
      const second = JSON.parse(new TextDecoder().decode(text.subarray(cut + 1, text.length - 1)));
      second.prev = sha256Hex(first);
      await Deno.writeFile(ASSESSMENTS(f), joinLines([first, utf8.encode(canonicalize(second))]));
    },
  },
];
