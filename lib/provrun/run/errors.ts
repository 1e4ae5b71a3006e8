/**
 * provrun's errors. Each is a subclass of provevi's, so code that catches provevi's errors catches these.
 * @module
 */
import { ProveviError } from "../../provevi/evidence/errors.ts";

/**
 * A run file that cannot be read, with every problem and where it is.
 *
 * @example
 * ```ts
 * import { ProveviError, RunFileError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new RunFileError("run.yaml", ['agent (line 3): lacks the key "backend"']);
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "RunFileError");
 * ```
 */
export class RunFileError extends ProveviError {
  /**
   * @param file The run file's path, or `<run file>`.
   * @param problems One text per problem, each naming the key's path and line.
   */
  constructor(readonly file: string, readonly problems: string[], options?: ErrorOptions) {
    super(
      problems.length === 1
        ? `${file}: ${problems[0]}`
        : `${file}: ${problems.length} problems: ${problems.join("; ")}`,
      options,
    );
    this.name = "RunFileError";
  }
}

/**
 * A run that was stopped by a cancel, a signal or a limit.
 *
 * @example
 * ```ts
 * import { CancelledError, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new CancelledError("the run was cancelled by SIGINT");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "CancelledError");
 * ```
 */
export class CancelledError extends ProveviError {
  /** @param message What stopped the run. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CancelledError";
  }
}

/**
 * A grant the broker refused.
 *
 * @example
 * ```ts
 * import { AccessDenied, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new AccessDenied("data://acme/demo/dev/x.csv", "the grant is for another env");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "AccessDenied");
 * assert.equal(error.uri, "data://acme/demo/dev/x.csv");
 * ```
 */
export class AccessDenied extends ProveviError {
  /** @param uri The URI. @param reason Why. */
  constructor(readonly uri: string, readonly reason: string) {
    super(`access to ${uri} was denied: ${reason}`);
    this.name = "AccessDenied";
  }
}

/**
 * A run that cannot start because the process lacks a permission it needs.
 *
 * @example
 * ```ts
 * import { PermissionMissing, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new PermissionMissing("the run needs --allow-write=/tmp/runs for the runs root");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "PermissionMissing");
 * ```
 */
export class PermissionMissing extends ProveviError {
  /** @param message The missing flag and the fix. */
  constructor(message: string) {
    super(message);
    this.name = "PermissionMissing";
  }
}

/**
 * Inputs that changed during the run.
 *
 * @example
 * ```ts
 * import { InputChanged, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new InputChanged(["revenue.csv"]);
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "InputChanged");
 * assert.equal(error.message, "input revenue.csv changed during the run");
 * ```
 */
export class InputChanged extends ProveviError {
  /** @param names The names of the inputs in `input/`. */
  constructor(readonly names: string[]) {
    super(`input ${names.join(", ")} changed during the run`);
    this.name = "InputChanged";
  }
}

/**
 * A link (symbolic or hard) found in a run's `input/` or `output/` at the end of the run.
 *
 * @example
 * ```ts
 * import { LinkFound, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new LinkFound("output/answer.txt is a link; write a file");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "LinkFound");
 * ```
 */
export class LinkFound extends ProveviError {
  /** @param message The links, and why they are a problem. */
  constructor(message: string) {
    super(message);
    this.name = "LinkFound";
  }
}

/**
 * A run's outputs past their size limits (`agent.limits.output_bytes`, `outputs_bytes`).
 *
 * @example
 * ```ts
 * import { OutputTooLarge, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new OutputTooLarge("output answer.txt is past agent.limits.output_bytes");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "OutputTooLarge");
 * ```
 */
export class OutputTooLarge extends ProveviError {
  /** @param message What is too large, and the key that sets the limit. */
  constructor(message: string) {
    super(message);
    this.name = "OutputTooLarge";
  }
}

/**
 * A model's response past its size limit (`agent.limits.model_bytes`), cut while it arrived.
 *
 * @example
 * ```ts
 * import { PayloadTooLarge, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new PayloadTooLarge("the reply is past agent.limits.model_bytes");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "PayloadTooLarge");
 * ```
 */
export class PayloadTooLarge extends ProveviError {
  /** @param message How large, and the key that sets the limit. */
  constructor(message: string) {
    super(message);
    this.name = "PayloadTooLarge";
  }
}

/**
 * A declared output (`outputs:` in the run file) that the run did not write: a failure in strict mode.
 *
 * @example
 * ```ts
 * import { OutputMissing, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new OutputMissing("output answer.txt was not written");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "OutputMissing");
 * ```
 */
export class OutputMissing extends ProveviError {
  /** @param message Which outputs are missing. */
  constructor(message: string) {
    super(message);
    this.name = "OutputMissing";
  }
}

/**
 * A path a tool was given that is outside the agent's view (`/input/…`, `/output/…`), or escapes it.
 *
 * @example
 * ```ts
 * import { PathRefused, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new PathRefused("/etc/passwd", "use a path under /input or /output");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "PathRefused");
 * assert.equal(error.path, "/etc/passwd");
 * ```
 */
export class PathRefused extends ProveviError {
  /** @param path The path as the agent gave it. @param reason Why it is refused, and what to use. */
  constructor(readonly path: string, reason: string) {
    super(`path "${path}" is refused: ${reason}`);
    this.name = "PathRefused";
  }
}

/**
 * A tool that ran past its time limit and was stopped.
 *
 * @example
 * ```ts
 * import { ProveviError, ToolTimeout } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new ToolTimeout("read_file", 30);
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "ToolTimeout");
 * assert.equal(error.seconds, 30);
 * ```
 */
export class ToolTimeout extends ProveviError {
  /** @param tool The tool's name. @param seconds The limit. */
  constructor(readonly tool: string, readonly seconds: number) {
    super(
      `tool "${tool}" ran past its limit of ${seconds} s and was stopped; raise agent.limits.tool_seconds ` +
        `in the run file, or make the tool faster`,
    );
    this.name = "ToolTimeout";
  }
}

/**
 * A tool's own error, carried out of the sandbox or an MCP server. Its `name` is the original error's name
 * (`NotCapable` when Deno's permissions stopped the tool), so the evidence names what happened.
 * @example
 * ```ts
 * import { ProveviError, ToolFailed } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new ToolFailed("read_file", "NotFound", "no such file");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "NotFound"); // the tool's own error
 * assert.equal(error.tool, "read_file");
 * ```
 */
export class ToolFailed extends ProveviError {
  /** @param tool The tool's name. @param name The original error's name. @param message Its message. */
  constructor(readonly tool: string, name: string, message: string) {
    super(`tool "${tool}" failed: ${name}: ${message}`);
    this.name = name;
  }
}

/**
 * The agent's tools cannot be set up: an unknown tool, a bad tools module, an MCP server that is refused.
 *
 * @example
 * ```ts
 * import { ProveviError, ToolSetError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new ToolSetError("unknown tool \"fly\"; use read_file, write_file or list_files");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "ToolSetError");
 * ```
 */
export class ToolSetError extends ProveviError {
  /** @param message What is wrong, naming the tool, module or server and the fix. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ToolSetError";
  }
}

/**
 * A run that needs a catalog (its inputs, its experiment, its bundle) and was given none.
 *
 * @example
 * ```ts
 * import { CatalogMissing, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new CatalogMissing("the run's inputs need a catalog; give --config or PROVCAT_CONFIG");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "CatalogMissing");
 * ```
 */
export class CatalogMissing extends ProveviError {
  /** @param message What needs the catalog, and how to give one. */
  constructor(message: string) {
    super(message);
    this.name = "CatalogMissing";
  }
}

/**
 * An input that cannot be staged into `input/`: a name that is no file name, taken twice, or a copy that failed.
 *
 * @example
 * ```ts
 * import { ProveviError, StagingError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new StagingError("input revenue.csv is taken twice; give one an as: name");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "StagingError");
 * ```
 */
export class StagingError extends ProveviError {
  /** @param message The input, and what is wrong. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StagingError";
  }
}

/**
 * A run whose model route needs an API key that is not set: refused before the run starts, with no run folder.
 *
 * @example
 * ```ts
 * import { ModelKeyMissing, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new ModelKeyMissing("the model route openai:gpt-4o needs the variable OPENAI_API_KEY; set it");
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "ModelKeyMissing");
 * assert.equal(error.exitCode, 1);
 * ```
 */
export class ModelKeyMissing extends ProveviError {
  /** @param message The route, the variable, and the fix. */
  constructor(message: string) {
    super(message);
    this.name = "ModelKeyMissing";
  }
}

/** A tool call that nothing may run: the run serves its tools from another run's evidence (a replay). */
export class ToolNotServed extends ProveviError {
  /** @param tool The tool's name. @param callId The call's ID. */
  constructor(readonly tool: string, readonly callId: string) {
    super(`the call ${callId} of ${tool} was not served from the evidence, and this run runs no tool`);
    this.name = "ToolNotServed";
  }
}
