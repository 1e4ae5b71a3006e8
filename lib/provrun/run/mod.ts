/**
 * The parts of a run: the run file, the run context, the evidence recorder, the broker, the resolver, the
 * stager and the outputter, provrun's errors, and the interface of a part attached to a run's core (`RunPart`). Imports provevi and provcat only, no other folder of
 * provrun.
 * @module
 */
export * from "./errors.ts";
export * from "./run_file.ts";
export * from "./run_context.ts";
export * from "./recorder.ts";
export * from "./broker.ts";
export * from "./resolver.ts";
export * from "./stager.ts";
export * from "./outputter.ts";
export * from "./run_part.ts";
