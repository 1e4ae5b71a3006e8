/**
 * The cost of a run as a part: the run's price table (the one shipped with the toolkit, or `run.price_table`, a
 * catalog URI, pinned) kept as a payload in its canonical JSON, so that its name is the table's SHA-256, which
 * `run_created` records (`price_table_payload`, with `price_table_source`); each model call's cost from its
 * recorded usage (`price`, which the capture and the model gateway write as the call's `cost`); and the run's
 * total in its last event (`cost`), added up as `prove cost` recomputes it.
 * @module
 */
import canonicalize from "canonicalize";
import type { EvidenceEvent, Json } from "../../provevi/mod.ts";
import { PriceTable } from "../../provevi/cost/mod.ts";
import { ProveviError } from "../../provevi/evidence/mod.ts";
import { costTotal, dataCost, priceCalls } from "../../provevi/cost/mod.ts";
import type { Catalog } from "../../provcat/mod.ts";
import { errorMessage } from "../run/recorder.ts";
import type { RunFile } from "../run/run_file.ts";
import type { PartRun, RunPart } from "../run/run_part.ts";

/** What the shipped table is called in `price_table_source`. */
export const SHIPPED_PRICE_TABLE = "shipped";

/** The cost of one run. */
export class CostPart implements RunPart {
  readonly name = "cost";
  /** The run's price table. */
  readonly table: PriceTable;
  /** Where it comes from: `shipped`, or the pinned catalog URI. */
  readonly source: string;
  readonly #calls: EvidenceEvent[] = [];
  #pinned = false;

  private constructor(table: PriceTable, source: string) {
    this.table = table;
    this.source = source;
  }

  /**
   * The part of a run file: its `run.price_table`, read through the catalog, or the shipped table.
   *
   * @param file The run file.
   * @param catalog The run's catalog.
   * @returns The part.
   * @throws ProveviError when the run names a table that cannot be read or is not a price table.
   */
  static async open(file: RunFile, catalog?: Catalog): Promise<CostPart> {
    const uri = file.data.run.price_table;
    if (uri === undefined) return new CostPart(PriceTable.builtin(), SHIPPED_PRICE_TABLE);
    if (!catalog) {
      throw new ProveviError(
        `run.price_table ${uri} needs a catalog to read it: give provr one (provcat.yaml)`,
      );
    }
    let pinned: string;
    let bytes: Uint8Array;
    try {
      pinned = (await catalog.pin(uri)).pinned ?? uri;
      bytes = await catalog.read(pinned);
    } catch (error) {
      throw new ProveviError(`run.price_table ${uri} cannot be read: ${errorMessage(error)}`, {
        cause: error,
      });
    }
    return new CostPart(PriceTable.parse(new TextDecoder().decode(bytes), `run.price_table ${uri}`), pinned);
  }

  /** The cost of a model call's data, or null when the table does not list its model. */
  readonly price = (data: { [key: string]: Json }): string | null =>
    this.#pinned ? dataCost(data, this.table) : null;

  async beforeStart(run: PartRun): Promise<void> {
    // The canonical JSON, so that the payload's name is the table's SHA-256.
    const sha = await run.ctx.recorder.payload(canonicalize(this.table.json)!);
    this.#pinned = sha === this.table.sha256;
  }

  facts(): { [key: string]: Json } {
    if (!this.#pinned) return {};
    return { price_table_payload: this.table.sha256, price_table_source: this.source };
  }

  onEvent(event: EvidenceEvent): void {
    if (
      event.type === "model_called" || (event.type === "step_failed" && event.data.step === "model_called")
    ) {
      this.#calls.push(event);
    }
  }

  endFacts(): { [key: string]: Json } {
    const table = this.#pinned ? this.table : null;
    const priced = priceCalls(this.#calls, table);
    return {
      cost: costTotal({
        ...priced,
        table: table ? { sha256: table.sha256, source: this.source, currency: table.currency } : null,
      }),
    };
  }
}
