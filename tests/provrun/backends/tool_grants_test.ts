import assert from "node:assert/strict";
import { decideToolCall, runGrants } from "../../../lib/provrun/backends/tool_grants.ts";

const grants = runGrants("/runs/run-x", { hosts: ["example.com:443"], unsandboxed: ["Bash"] });

Deno.test("decideToolCall() lets file tools read input/, output/, scratch/ and write output/, scratch/ only", () => {
  const yes = (tool: string, input: Record<string, unknown>) =>
    assert.ok(decideToolCall(tool, input, grants).allow);
  const no = (tool: string, input: Record<string, unknown>) =>
    assert.ok(!decideToolCall(tool, input, grants).allow);
  yes("Read", { file_path: "/runs/run-x/input/revenue.csv" });
  yes("Read", { file_path: "input/revenue.csv" });
  yes("Write", { file_path: "/runs/run-x/output/answer.md" });
  yes("Grep", { path: "scratch" });
  no("Read", { file_path: "/etc/passwd" });
  no("Read", { file_path: "/runs/run-x/evidence/events.jsonl" });
  no("Read", { file_path: "input/../evidence/events.jsonl" });
  no("Read", { file_path: "/runs/run-x/input-other/a" });
  no("Write", { file_path: "/runs/run-x/input/revenue.csv" });
  no("Edit", { file_path: "/runs/run-x/agent/settings.json" });
  no("Write", {});
  no("Glob", { pattern: "**" }); // no path: the run folder itself, which holds the evidence
});

Deno.test("decideToolCall() checks hosts, shells, patches, MCP tools and unknown tools", () => {
  assert.ok(decideToolCall("WebFetch", { url: "https://example.com/a" }, grants).allow);
  assert.ok(!decideToolCall("WebFetch", { url: "https://evil.example/a" }, grants).allow);
  assert.ok(!decideToolCall("WebSearch", { query: "q" }, grants).allow);
  assert.ok(decideToolCall("Bash", { command: "wc -l input/revenue.csv" }, grants).allow);
  assert.ok(!decideToolCall("Bash", { command: "cat /etc/hostname" }, grants).allow);
  assert.ok(!decideToolCall("Bash", { command: "cat ../../etc/hostname" }, grants).allow);
  const closed = runGrants("/runs/run-x");
  assert.match(
    decideToolCall("Bash", { command: "ls" }, closed).reason,
    /agent\.allow_unsandboxed: \[Bash\]/,
  );
  const patch = "*** Begin Patch\n*** Add File: output/a.md\n+hi\n*** End Patch";
  assert.ok(decideToolCall("apply_patch", { command: patch }, grants).allow);
  assert.ok(!decideToolCall("apply_patch", { command: patch.replace("output/", "input/") }, grants).allow);
  assert.ok(!decideToolCall("mcp__fs__read", {}, grants).allow);
  assert.ok(decideToolCall("TodoWrite", { todos: [] }, grants).allow);
  assert.match(decideToolCall("Teleport", {}, grants).reason, /does not know/);
});
