/**
 * Tokens and cost: the price table (shipped with the toolkit, or a run's own), one shape for every provider's
 * usage, the exact cost of a model call, and a run's cost recomputed from its evidence and compared with what
 * it recorded. Imports `evidence/`.
 *
 * @example
 * ```ts
 * import { callCost, formatCost, PriceTable, usageFrom } from "./mod.ts";
 * const price = PriceTable.builtin().priceOf({ provider: "openai", model: "gpt-4o" })!;
 * const usage = usageFrom("openai-chat", { prompt_tokens: 1000, completion_tokens: 100 });
 * formatCost(callCost(usage, price).total); // "0.0035"
 * ```
 * @module
 */
export { type ModelPrice, PRICE_KINDS, PriceTable } from "./price_table.ts";
export * from "./call_cost.ts";
export * from "./run_cost.ts";
