import { equal } from "node:assert/strict";
import { rangeProblem, versionApproved } from "../../../lib/provevi/telemetry/library_version.ts";

Deno.test("versionApproved() checks a version against a semver range", () => {
  equal(versionApproved("2.64.0", ">=2.64 <2.65"), true);
  equal(versionApproved("2.64.9", ">=2.64 <2.65"), true);
  equal(versionApproved("2.65.0", ">=2.64 <2.65"), false);
  equal(versionApproved("2.64.0", ">=2.65"), false);
  equal(versionApproved("1.83.0", "1.83.0"), true);
  equal(versionApproved("1.83.0", "=1.83.0"), true);
  equal(versionApproved("1.83.1", "1.83.0"), false);
  equal(versionApproved("7.0.173", "^7.0.0 || ^8.0.0"), true);
});

Deno.test("versionApproved() passes a local build only when the range names it", () => {
  equal(versionApproved("2.64.0+patched", ">=2.64 <2.65"), false);
  equal(versionApproved("2.64.0+patched", "2.64.0"), false);
  equal(versionApproved("2.64.0+patched", "2.64.0+patched"), true);
  equal(versionApproved("2.64.0+patched", "=2.64.0+patched"), true);
  equal(versionApproved("2.64.0+patched", "2.64.0+other"), false);
  equal(versionApproved("2.64.0+patched", "1.0.0 || 2.64.0+patched"), true);
  equal(versionApproved("2.64.0", "2.64.0+patched"), false, "a range that names a build approves only it");
});

Deno.test("versionApproved() refuses a version or a range it cannot read", () => {
  equal(versionApproved("latest", "*"), false);
  equal(versionApproved("^7.0.0", "^7.0.0"), false);
  equal(versionApproved("2.64.0", ">=2.64,<2.65"), false);
  equal(
    versionApproved("2.65.0-rc.1", ">=2.64"),
    false,
    "a prerelease is not in a range that does not name it",
  );
});

Deno.test("rangeProblem() refuses a Python specifier with the npm spelling", () => {
  equal(rangeProblem(">=2.64 <2.65"), null);
  equal(rangeProblem("*"), null);
  equal(rangeProblem(">=2.64,<2.65")?.includes('">=2.64 <2.65"'), true);
  equal(rangeProblem("==1.83.0")?.includes('"1.83.0"'), true);
  equal(rangeProblem("~=1.83")?.includes("not a semver range"), true);
  equal(rangeProblem("") !== null, true);
  equal(rangeProblem(7) !== null, true);
  equal(rangeProblem("latest") !== null, true);
});
