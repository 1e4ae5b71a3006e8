/**
 * The variables that the libraries under `prove` and `provr` read as they load (the AWS SDK, the AI SDK's
 * providers, yaml, Node's `os`), checked before they load. This module is the first import of each command:
 * a process whose `--allow-env` leaves one out would otherwise end in an uncaught `NotCapable` stack trace at
 * import; here it ends in one line that names the flag.
 * @module
 */

/** The variables read at import, each by the library that reads it. */
export const IMPORT_ENV: readonly string[] = [
  "AWS_LAMBDA_NODEJS_NO_GLOBAL_AWSLAMBDA", // @aws-sdk/client-s3
  "AWS_LAMBDA_BENCHMARK_MODE", // @aws-sdk/client-s3
  "ANTHROPIC_BASE_URL", // @ai-sdk/anthropic's default provider
  "OPENAI_BASE_URL", // @ai-sdk/openai's default provider
  "OSTYPE", // node:os, for the MCP SDK
  "LOG_TOKENS", // yaml
  "LOG_STREAM", // yaml
];

/** The libraries that load under each program: prove loads no AI SDK and no MCP SDK. */
const PROGRAMS: Record<string, readonly string[]> = {
  prove: IMPORT_ENV.filter((v) => v.startsWith("AWS_") || v.startsWith("LOG_")),
  provr: IMPORT_ENV,
  tour: IMPORT_ENV,
};

/**
 * The variables that a program's libraries read as they load and that this process may not read.
 *
 * @param program `prove`, `provr` or `tour`; any other name checks nothing.
 * @returns Their names, in order; empty when all may be read.
 */
export function missingImportEnv(program: string): string[] {
  return (PROGRAMS[program] ?? []).filter((variable) =>
    Deno.permissions.querySync({ name: "env", variable }).state !== "granted"
  );
}

const program = Deno.mainModule.replace(/^.*\//, "").replace(/\.[jt]s$/, "");
const missing = missingImportEnv(program);
if (missing.length) {
  console.error(
    `${program}: this process lacks --allow-env=${missing.join(",")}, which the libraries it loads read as ` +
      `they load (AWS_*: the AWS SDK; *_BASE_URL: the AI SDK; LOG_*: yaml; OSTYPE: node:os); add that flag`,
  );
  Deno.exit(1); // before the libraries load: the one place a command ends the process itself
}
