/**
 * `prove assess`: a judgement on an experiment, a run, an event or a span, written to the store.
 * @module
 */
import type { AssessTarget } from "../../lib/provevi/mod.ts";
import { questionsOf } from "../../lib/provevi/store/mod.ts";
import { parseAssessmentValue } from "../../lib/provevi/store/mod.ts";
import { resolveRunRef } from "../../lib/provevi/runs/mod.ts";
import { printAssessments } from "../_listing.ts";
import { UsageError } from "../_main.ts";
import type { ProveContext } from "./_context.ts";
import { jsonText } from "../_json.ts";

interface AssessFlags {
  rationale?: string;
  source?: string;
  event?: string;
  span?: string;
  experiment?: boolean;
  json?: boolean;
}

/** Adds the command to `prove`. */
export function addAssess({ program, io, withStore }: ProveContext): void {
  program.command("assess")
    .description(
      "Record a judgement on a run, one of its events or spans, or an experiment (writes the store: the file " +
        "store keeps a run's in its folder, hash-chained from its seal).",
    )
    .argument("<target>", "a run ID in the store, or an experiment's URI (experiment://…)")
    .argument("<name>", "the assessment's name, such as correct or score")
    .argument("<value>", "true, false, a number, or a text")
    .option("--rationale <text>", "why")
    .option("--source <who>", "who or what judged, such as an email address or an evaluator's name")
    .option("--event <seq>", "judge the event with this seq")
    .option("--span <id>", "judge the span with this ID (16 hex digits)")
    .option(
      "--experiment",
      "the target is an experiment, by its URI or its name (q3, credit/q3); ?at=commit:… judges one version",
    )
    .option("--json", "print JSON")
    .action((targetText: string, name: string, value: string, opts: AssessFlags) =>
      withStore(async (store) => {
        const experiment = opts.experiment || targetText.startsWith("experiment://");
        if (opts.event !== undefined && opts.span !== undefined) {
          throw new UsageError("give --event or --span, not both");
        }
        if (experiment && (opts.event !== undefined || opts.span !== undefined)) {
          throw new UsageError("--event and --span judge a part of a run, not of an experiment");
        }
        if (opts.event !== undefined && !/^\d+$/.test(opts.event)) {
          throw new UsageError("--event takes a seq, a whole number");
        }
        const target: AssessTarget = experiment ? { experiment: targetText } : {
          run: await resolveRunRef(store, targetText),
          ...(opts.event !== undefined ? { seq: Number(opts.event) } : {}),
          ...(opts.span !== undefined ? { span: opts.span } : {}),
        };
        const a = await questionsOf(store, "prove assess").assess(target, name, parseAssessmentValue(value), {
          ...(opts.rationale !== undefined ? { rationale: opts.rationale } : {}),
          ...(opts.source !== undefined ? { source: opts.source } : {}),
        });
        if (opts.json) io.out(jsonText(a));
        else printAssessments([a], io);
      }, { write: true })
    );
}
