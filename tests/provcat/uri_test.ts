import { assertEquals, assertThrows } from "./_assert.ts";
import { childUri, formatUri, isFixed, parseUri, withSelector } from "../../lib/provcat/uri.ts";
import { UriError } from "./_deps.ts";

const GOOD = [
  "data+table://acme/risk/dev/evals/revenue",
  "experiment://acme/risk/dev/credit/q",
  "run://acme/demo/dev/run-20261031T182026Z-f9c3b25f",
  "run://acme/demo/dev",
  "data://acme/risk/dev/evals/revenue?at=commit:0123abcdef0123abcdef0123abcdef0123abcd",
  "data://acme/risk/dev/evals/revenue?at=branch:feature/x-1",
  "data://acme/risk/dev/evals/revenue.csv?at=version:3HL4kqtJlcpXroDTDmJ.rmSpXd3dIbrHY",
  "file:///abs/path/to/data.csv",
  "file:///",
];

Deno.test("parseUri() and formatUri() round-trip every URI that parses", () => {
  for (const text of GOOD) assertEquals(formatUri(parseUri(text)), text);
});

Deno.test("parseUri() splits a logical URI into its parts and selector", () => {
  assertEquals(parseUri("data+table://acme/risk/dev/evals/revenue?at=branch:main"), {
    type: "logical",
    scheme: "data+table",
    org: "acme",
    domain: "risk",
    env: "dev",
    path: ["evals", "revenue"],
    at: { kind: "branch", id: "main" },
  });
  assertEquals(parseUri("file:///tmp/x"), { type: "physical", scheme: "file", path: "/tmp/x" });
});

const BAD: [string, string][] = [
  ["acme/risk/dev/x", "has no scheme://"],
  ["Run://acme/risk/dev/x", 'the scheme "Run"'],
  ["run://acme", "has no domain"],
  ["run://acme/risk", "has no env"],
  ["run://acme//dev/x", "empty segment"],
  ["run://acme/risk/dev/x/", "empty segment"],
  ["run://acme/risk/dev/../x", 'the path segment ".." is . or ..'],
  ["run://ac me/risk/dev/x", 'the org "ac me"'],
  ["run://acme/risk/dev/x?at=tag:v1", 'the selector "tag:v1"'],
  ["run://acme/risk/dev/x?at=commit:", "has no ID"],
  ["run://acme/risk/dev/x?at=branch:", "has no name"],
  ["run://acme/risk/dev/x?at=commit:XYZ", 'the commit "XYZ"'],
  ["run://acme/risk/dev/x?at=branch:a..b", 'the branch "a..b"'],
  ["run://acme/risk/dev/x?at=version:a b", 'the version "a b"'],
  ["run://acme/risk/dev/x?ref=main", "is not ?at="],
  ["run://acme/risk/dev/x?at=branch:main&x=1", "more than one key"],
  ["run://acme/risk/dev/x#frag", "fragment"],
  ["file://host/x", "has a host"],
  ["file:///x?at=commit:0123abc", "takes no ?at="],
  ["file:///a//b", "empty segment"],
  ["file:///a/../b", ". or .."],
];

Deno.test("parseUri() refuses what is not a URI and says which part is wrong", () => {
  for (const [text, part] of BAD) {
    const error = assertThrows(() => parseUri(text), UriError, part);
    assertEquals(error.message.startsWith(`"${text}" is not a catalog URI: `), true, error.message);
  }
});

Deno.test("withSelector() and childUri() keep the URI's other parts", () => {
  const pinned = withSelector("run://a/b/c/r", { kind: "commit", id: "0123abc" });
  assertEquals(pinned, "run://a/b/c/r?at=commit:0123abc");
  assertEquals(
    childUri(pinned, "evidence", "events.jsonl"),
    "run://a/b/c/r/evidence/events.jsonl?at=commit:0123abc",
  );
  assertEquals(withSelector(pinned, null), "run://a/b/c/r");
  assertEquals(childUri("file:///tmp", "x"), "file:///tmp/x");
  assertThrows(() => withSelector("file:///x", { kind: "branch", id: "main" }), UriError, "physical");
  assertEquals(isFixed({ kind: "branch", id: "main" }), false);
  assertEquals(isFixed({ kind: "commit", id: "0123abc" }), true);
});
