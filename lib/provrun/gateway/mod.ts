/**
 * The recording model gateway: provr serves the provider API an agent speaks (Anthropic Messages; OpenAI Chat
 * Completions and Responses, streamed or not) on 127.0.0.1 for a run, takes only the run's token, forwards each
 * call to the run's provider with the real key, and records it as `model_called` with both bodies (and the raw
 * stream) as payloads; the program's session file is cross-checked against it. Imports `run/` and `backends/`.
 *
 * @example
 * ```ts ignore
 * import { ModelGateway } from "./mod.ts";
 * await using gateway = ModelGateway.start({ provider: "openai", upstream: "https://api.openai.com/v1",
 *   key: Deno.env.get("OPENAI_API_KEY")!, recorder, component: "ModelGateway", responseBytes: 32 << 20 });
 * ```
 * @module
 */
export { DEFAULT_REQUEST_BYTES, type GatewayCounts, type GatewayOptions, ModelGateway } from "./gateway.ts";
export { GATEWAY_TOKEN_VARIABLE, GatewayPart, type GatewayPartOptions, usesGateway } from "./gateway_part.ts";
export { type RecordedCall } from "./gateway_call.ts";
export { type ApiName, type ResponseSummary } from "./provider_api.ts";
export { type GatewayEntry, type MatchRow, type SessionEntry } from "./session_match.ts";
export { matchProblem, matchSession, sessionEntries } from "./session_match.ts";
