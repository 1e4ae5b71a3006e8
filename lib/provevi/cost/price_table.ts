/**
 * The price table: per provider and model, the price of a million input, output, cache-read, cache-write and
 * reasoning tokens, with where each price comes from and its date. The toolkit ships one (`prices.json`); a run
 * may name another by a catalog URI. A run pins the table it priced with by the SHA-256 of its canonical JSON
 * (RFC 8785) and keeps the table itself as a payload, so that its costs can be recomputed from the evidence.
 * @module
 */
import canonicalize from "canonicalize";
import { ProveviError } from "../evidence/errors.ts";
import { sha256Hex } from "../evidence/hash.ts";
import type { Json } from "../evidence/event.ts";
import shipped from "./prices.json" with { type: "json" };

/** The five prices of a model, in the table's currency per million tokens. */
export interface ModelPrice {
  /** The provider, such as `anthropic`, `openai`, `google`. */
  readonly provider: string;
  /**
   * The model, as requests name it (a dated name such as `claude-sonnet-4-5-20250929` matches it too); `*` is
   * every model of the provider.
   */
  readonly model: string;
  /** Input tokens that were neither read from nor written to a cache. */
  readonly input: number;
  /** Output tokens that are not reasoning. */
  readonly output: number;
  /** Input tokens read from the provider's prompt cache. */
  readonly cache_read: number;
  /** Input tokens written to the provider's prompt cache. */
  readonly cache_write: number;
  /** Output tokens spent on reasoning (thinking). */
  readonly reasoning: number;
  /** Where the prices come from (a URL). */
  readonly source: string;
  /** The date the prices hold from. */
  readonly date: string;
}

/** The kinds of tokens priced, in the order the docs name them. */
export const PRICE_KINDS = ["input", "output", "cache_read", "cache_write", "reasoning"] as const;

/** The largest number of decimals a price may have: a price is a whole number of micro-units per million. */
const DECIMALS = 6;

/**
 * A checked price table.
 *
 * @example
 * ```ts
 * import { PriceTable } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const table = PriceTable.builtin();
 * const price = table.priceOf({ provider: "anthropic", model: "claude-sonnet-4-5-20250929" });
 * assert.equal(price?.input, 3); // USD per million input tokens
 * assert.equal(table.currency, "USD");
 * ```
 */
export class PriceTable {
  /** The table as JSON, as it was read. */
  readonly json: { [key: string]: Json };
  /** The SHA-256 of the table's RFC 8785 canonical JSON: what a run pins. */
  readonly sha256: string;
  /** The table's currency, such as `USD`. */
  readonly currency: string;
  /** The models, in the table's order. */
  readonly models: readonly ModelPrice[];

  private constructor(json: { [key: string]: Json }, models: ModelPrice[]) {
    this.json = json;
    this.sha256 = sha256Hex(canonicalize(json)!);
    this.currency = json.currency as string;
    this.models = models;
  }

  /** The table shipped with the toolkit. */
  static builtin(): PriceTable {
    return PriceTable.parse(JSON.stringify(shipped), "the shipped price table");
  }

  /**
   * Reads and checks a table.
   *
   * @param text The table's JSON text.
   * @param where What the table is, for the error (a URI, a file).
   * @returns The table.
   * @throws ProveviError naming the first thing wrong, and how to fix it.
   */
  static parse(text: string, where: string): PriceTable {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (error) {
      throw new ProveviError(
        `${where} is not JSON: ${(error as Error).message}; write it as prices.json is written`,
        {
          cause: error,
        },
      );
    }
    const problem = tableProblem(json);
    if (problem) throw new ProveviError(`${where}: ${problem}`);
    const table = json as { [key: string]: Json } & { models: ModelPrice[] };
    return new PriceTable(table, table.models);
  }

  /**
   * The prices of a model call: the entry of its provider and model (or the provider's `*`), or of its model alone when only one
   * provider lists it (an `openai-compatible` route serving a listed model); a dated name such as
   * `claude-sonnet-4-5-20250929` or `gpt-4o-2024-08-06` matches its undated entry. The requested model is tried
   * first, then the model that answered.
   *
   * @param call The provider and the model requested, and the model that answered when it differs.
   * @returns The prices, or null when the table does not list the model.
   */
  priceOf(
    call: { provider: string | null; model: string | null; answeredBy?: string | null },
  ): ModelPrice | null {
    const provider = (call.provider ?? "").split(".")[0]!;
    for (const name of [call.model, call.answeredBy]) {
      if (!name) continue;
      for (const candidate of [name, undated(name)]) {
        const found = this.#find(provider, candidate);
        if (found) return found;
      }
    }
    return null;
  }

  #find(provider: string, model: string): ModelPrice | null {
    const own = this.models.find((m) => m.provider === provider && (m.model === model || m.model === "*"));
    if (own) return own;
    const any = this.models.filter((m) => m.model === model);
    return any.length === 1 ? any[0]! : null;
  }
}

/** A model's name without a date at its end (`-20250929`, `-2024-08-06`, `@20250929`). */
function undated(model: string): string {
  return model.replace(/[-@](\d{8}|\d{4}-\d{2}-\d{2})$/, "");
}

/** The first thing wrong with a table, or null. */
function tableProblem(json: unknown): string | null {
  if (!isObject(json)) return "is not a JSON object with version, currency, unit, source, date and models";
  if (json.version !== 1) return `version is ${JSON.stringify(json.version)}; this toolkit reads version 1`;
  for (const key of ["currency", "unit", "source", "date"]) {
    if (typeof json[key] !== "string" || json[key] === "") return `${key} is not a text`;
  }
  if (json.unit !== "per million tokens") return `unit is "${json.unit}"; prices are per million tokens`;
  if (!Array.isArray(json.models)) return "models is not a list";
  const seen = new Set<string>();
  for (const [i, m] of json.models.entries()) {
    const problem = modelProblem(m);
    if (problem) return `models[${i}]: ${problem}`;
    const key = `${m.provider}:${m.model}`;
    if (seen.has(key)) return `models[${i}]: ${key} is listed twice`;
    seen.add(key);
  }
  return null;
}

function modelProblem(m: unknown): string | null {
  if (!isObject(m)) return "is not an object";
  for (const key of ["provider", "model", "source", "date"]) {
    if (typeof m[key] !== "string" || m[key] === "") return `${key} is not a text`;
  }
  for (const kind of PRICE_KINDS) {
    const price = m[kind];
    if (typeof price !== "number" || !Number.isFinite(price) || price < 0) {
      return `${kind} is not a price (a number, 0 or more); every model names all five prices`;
    }
    // a number from 1e21 up is written with an exponent, which microUnits cannot read as a whole number
    if (price >= 1e21) return `${kind} ${price} is too large a price (under 1e21 a million tokens)`;
    if (microUnits(price) === null) return `${kind} ${price} has more than ${DECIMALS} decimals`;
  }
  const known = new Set(["provider", "model", "source", "date", ...PRICE_KINDS]);
  const extra = Object.keys(m).find((k) => !known.has(k));
  return extra === undefined ? null : `${extra} is not a key of a model's prices`;
}

/**
 * A price as a whole number of millionths of the currency (per million tokens), exactly as the table writes
 * it, or null when it has more than six decimals.
 *
 * @param price A price of the table.
 * @returns The price in millionths, as a bigint.
 */
export function microUnits(price: number): bigint | null {
  const text = price.toString();
  if (/e/i.test(text)) {
    const fixed = price.toFixed(DECIMALS);
    return Number(fixed) === price ? BigInt(fixed.replace(".", "")) : null;
  }
  const [whole, fraction = ""] = text.split(".");
  if (fraction.length > DECIMALS) return null;
  return BigInt(whole! + fraction.padEnd(DECIMALS, "0"));
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
