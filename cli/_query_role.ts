/**
 * The first import of cli/provtrace.ts: a compiled provtrace started with {@linkcode QUERY_ROLE_ARG} is the
 * process that answers one query (`lib/provtrace/db/query_role.ts`), not the command. It answers and ends the
 * process here, before the modules after this one are evaluated, so the command's libraries never run in it.
 * @module
 */
import { QUERY_ROLE_ARG, serveQueryRole } from "../lib/provtrace/db/query_role.ts";

if (Deno.args[0] === QUERY_ROLE_ARG && Deno.args.length === 1) await serveQueryRole();
