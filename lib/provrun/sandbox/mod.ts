/**
 * Where an agent's tools run under the run's grants: the sandbox processes, the check of a tools module's imports, the built-in filesystem tools, tools
 * folders, MCP servers, and the tools an agent is given. Imports `run/` only.
 * @module
 */
export * from "./fs_tools.ts";
export * from "./sandbox.ts";
export { sandboxDeno } from "./sandbox_deno.ts";
export { checkImportGraph, importProblem, PINNED_PACKAGES } from "./import_graph.ts";
export { type LoadedModule, loadTools } from "./sandbox_worker.ts";
export * from "./tools_folder.ts";
export * from "./mcp.ts";
export * from "./tools.ts";
