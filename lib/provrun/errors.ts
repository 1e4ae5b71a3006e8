/**
 * provrun's errors. Each is a subclass of provevi's, so code that catches provevi's errors catches these.
 * @module
 */
import { ProveviError } from "../provevi/errors.ts";

/** A run file that cannot be read, with every problem and where it is. */
export class RunFileError extends ProveviError {
  /**
   * @param file The run file's path, or `<run file>`.
   * @param problems One text per problem, each naming the key's path and line.
   */
  constructor(readonly file: string, readonly problems: string[]) {
    super(
      problems.length === 1
        ? `${file}: ${problems[0]}`
        : `${file}: ${problems.length} problems: ${problems.join("; ")}`,
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
