/**
 * The first import of cli/provr.ts: a compiled provr started with {@linkcode SANDBOX_ROLE_ARG} is a sandbox
 * process (`lib/provrun/sandbox/sandbox_role.ts`), not the command. It serves and ends the process here, before
 * the modules after this one are evaluated, so the command's libraries never run in a sandbox process.
 * @module
 */
import { SANDBOX_ROLE_ARG, serveSandboxRole } from "../lib/provrun/sandbox/sandbox_role.ts";

if (Deno.args[0] === SANDBOX_ROLE_ARG && Deno.args.length === 1) await serveSandboxRole();
