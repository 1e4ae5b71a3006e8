import assert from "node:assert/strict";
import { runsRoot } from "../../../lib/provevi/evidence/runs_root.ts";

Deno.test("runsRoot() prefers --runs, then PROVRUN_RUNS, then XDG_DATA_HOME, then HOME", () => {
  const env = { PROVRUN_RUNS: "/a", XDG_DATA_HOME: "/b", HOME: "/c" };
  assert.equal(runsRoot("/x", env), "/x");
  assert.equal(runsRoot(undefined, env), "/a");
  assert.equal(runsRoot(undefined, { XDG_DATA_HOME: "/b", HOME: "/c" }), "/b/provrun/runs");
  assert.equal(runsRoot(undefined, { HOME: "/c" }), "/c/.local/share/provrun/runs");
  assert.throws(() => runsRoot(undefined, {}), /no runs root/);
});
