/**
 * provrun's errors. Each is a subclass of provevi's, so code that catches provevi's errors catches these.
 * @module
 */
import { ProveviError } from "../../provevi/evidence/errors.ts";

/** A run file that cannot be read, with every problem and where it is. */
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

/** A run that was stopped by a cancel, a signal or a limit. */
export class CancelledError extends ProveviError {
  /** @param message What stopped the run. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CancelledError";
  }
}

/** A grant the broker refused. */
export class AccessDenied extends ProveviError {
  /** @param uri The URI. @param reason Why. */
  constructor(readonly uri: string, readonly reason: string) {
    super(`access to ${uri} was denied: ${reason}`);
    this.name = "AccessDenied";
  }
}

/** A run that cannot start because the process lacks a permission it needs. */
export class PermissionMissing extends ProveviError {
  /** @param message The missing flag and the fix. */
  constructor(message: string) {
    super(message);
    this.name = "PermissionMissing";
  }
}

/** Inputs that changed during the run. */
export class InputChanged extends ProveviError {
  /** @param names The names of the inputs in `input/`. */
  constructor(readonly names: string[]) {
    super(`input ${names.join(", ")} changed during the run`);
    this.name = "InputChanged";
  }
}

/** A link (symbolic or hard) found in a run's `input/` or `output/` at the end of the run. */
export class LinkFound extends ProveviError {
  /** @param message The links, and why they are a problem. */
  constructor(message: string) {
    super(message);
    this.name = "LinkFound";
  }
}

/** A run's outputs past their size limits (`agent.limits.output_bytes`, `outputs_bytes`). */
export class OutputTooLarge extends ProveviError {
  /** @param message What is too large, and the key that sets the limit. */
  constructor(message: string) {
    super(message);
    this.name = "OutputTooLarge";
  }
}

/** A model's response past its size limit (`agent.limits.model_bytes`), cut while it arrived. */
export class PayloadTooLarge extends ProveviError {
  /** @param message How large, and the key that sets the limit. */
  constructor(message: string) {
    super(message);
    this.name = "PayloadTooLarge";
  }
}

/** A declared output (`outputs:` in the run file) that the run did not write: a failure in strict mode. */
export class OutputMissing extends ProveviError {
  /** @param message Which outputs are missing. */
  constructor(message: string) {
    super(message);
    this.name = "OutputMissing";
  }
}

/** A path a tool was given that is outside the agent's view (`/input/…`, `/output/…`), or escapes it. */
export class PathRefused extends ProveviError {
  /** @param path The path as the agent gave it. @param reason Why it is refused, and what to use. */
  constructor(readonly path: string, reason: string) {
    super(`path "${path}" is refused: ${reason}`);
    this.name = "PathRefused";
  }
}

/** A tool that ran past its time limit and was stopped. */
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
 */
export class ToolFailed extends ProveviError {
  /** @param tool The tool's name. @param name The original error's name. @param message Its message. */
  constructor(readonly tool: string, name: string, message: string) {
    super(`tool "${tool}" failed: ${name}: ${message}`);
    this.name = name;
  }
}

/** The agent's tools cannot be set up: an unknown tool, a bad tools module, an MCP server that is refused. */
export class ToolSetError extends ProveviError {
  /** @param message What is wrong, naming the tool, module or server and the fix. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ToolSetError";
  }
}

/** A run that needs a catalog (its inputs, its experiment, its bundle) and was given none. */
export class CatalogMissing extends ProveviError {
  /** @param message What needs the catalog, and how to give one. */
  constructor(message: string) {
    super(message);
    this.name = "CatalogMissing";
  }
}

/** An input that cannot be staged into `input/`: a name that is no file name, taken twice, or a copy that failed. */
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
 * import { ModelKeyMissing } from "./errors.ts";
 * const error = new ModelKeyMissing("the model route openai:gpt-4o needs the variable OPENAI_API_KEY; set it");
 * error.exitCode; // 1
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
