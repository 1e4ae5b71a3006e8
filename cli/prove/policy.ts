/**
 * `prove policy`: a telemetry policy file checked, with the installed version of each library it approves.
 * @module
 */
import { ProveviError, TelemetryPolicyError } from "../../lib/provevi/evidence/mod.ts";
import { TelemetryPolicy } from "../../lib/provevi/telemetry/mod.ts";
import { readInstalledPackages } from "../../lib/provevi/telemetry/mod.ts";
import { policyLines } from "../_commands.ts";
import type { ProveContext } from "./_context.ts";
import { jsonText } from "../_json.ts";

/** Adds the command to `prove`. */
export function addPolicy({ program, io, result }: ProveContext): void {
  program.command("policy")
    .description("Check a telemetry policy file, and the installed version of each library it approves.")
    .argument("<file>", "the policy, a YAML or JSON file")
    .option(
      "--config <file>",
      "another deno.json whose imports pin the installed packages (default: this toolkit's)",
    )
    .option("--json", "print JSON")
    .action(async (file: string, opts: { config?: string; json?: boolean }) => {
      let policy: TelemetryPolicy;
      try {
        policy = await TelemetryPolicy.load(file);
      } catch (error) {
        // --json gives a refused policy's problems with their codes too; the error line says the same
        if (!(opts.json && error instanceof TelemetryPolicyError)) throw error;
        io.out(jsonText({ file, sha256: null, policy: null, problems: error.problems }));
        io.err(`prove: ${error.message}`);
        result.code = 1;
        return;
      }
      const installed = await readInstalledPackages({
        ...(opts.config ? { config: opts.config } : {}),
        npmCache: null,
      });
      if (installed === null) {
        throw new ProveviError(
          `cannot read ${opts.config} as a deno.json; give the path of one, or leave --config out`,
        );
      }
      const versions = new Map([...(installed ?? new Map()).values()].map((p) => [p.name, p.version]));
      const problems = policy.versionProblems(versions, { file });
      if (opts.json) {
        io.out(jsonText({ file, sha256: policy.digest(), policy: policy.toJSON(), problems }));
      } else for (const line of policyLines(file, policy)) io.out(line);
      for (const problem of problems) io.err(`prove: ${problem.message}`);
      if (problems.length) result.code = 1;
    });
}
