/**
 * `prove cost` and the totals of `prove show` read the price table a run pinned (a payload of the run, so the
 * run's to write): a hostile table's numbers (past what a number writes without an exponent, the smallest
 * number, a price too big to be exact) must each be refused with a message that says which price and why,
 * never an engine's error.
 * @module
 */
import assert from "node:assert/strict";
import { ProveviError } from "../../lib/provevi/evidence/errors.ts";
import { PriceTable } from "../../lib/provevi/cost/price_table.ts";
import { Tally } from "./_tally.ts";

const tally = new Tally("cost attacks");

const table = (price: string) =>
  `{"version":1,"currency":"USD","unit":"per million tokens","source":"s","date":"d","models":[` +
  `{"provider":"test","model":"m","source":"s","date":"d","input":${price},"output":1,"cache_read":1,` +
  `"cache_write":1,"reasoning":1}]}`;

Deno.test("a pinned price table's hostile prices are refused, each saying which price and why", () => {
  for (const price of ["1e21", "1e300", "123456789012345678901234567890", "5e-324", "1.0000001"]) {
    let said = "";
    try {
      PriceTable.parse(table(price), "the price table");
    } catch (error) {
      said = error instanceof ProveviError
        ? error.message
        : `${(error as Error).name}: ${(error as Error).message}`;
    }
    const ok = /^the price table: models\[0\]: input .* (decimals|too large)/.test(said);
    tally.add(price, { stopped: said !== "", recorded: ok });
    assert.ok(ok, `${price}: ${said}`);
  }
  console.log(tally.line());
});
