/**
 * What a run is an instance of: experiments (written, read, validated and checked at their pin) and agent
 * classes with their versions. Imports `evidence/` and the catalog (provcat).
 * @module
 */
export * from "./experiment.ts";
export * from "./agent_class.ts";
