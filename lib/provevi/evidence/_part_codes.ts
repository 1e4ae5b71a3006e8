/**
 * The problem codes of the checks that other parts of provevi make, and that `verify` does not number: a run's
 * experiment and its pin, a replay, an indexed store's rows against the run's files, the recorded cost against
 * the pinned price table, the telemetry policy, and a resumed run against the run it was cut from. One part of
 * `PROBLEM_CODES` (problem_codes.ts), in the order of docs/evidence-format.md.
 * @module
 */

/** The codes of the checks outside the run folder's numbered ones, by family, in the docs' order. */
export const PART_CODES = {
  "experiment.no_pin": {
    family: "experiment",
    check: null,
    meaning: "run_created names an experiment, but no experiment_pin",
  },
  "experiment.bad_pin": {
    family: "experiment",
    check: null,
    meaning: "the experiment or its pin is not a URI, selects no commit, or is of another experiment",
  },
  "experiment.unreadable": {
    family: "experiment",
    check: null,
    meaning: "experiment.yaml cannot be read at the pin",
  },
  "experiment.hash_mismatch": {
    family: "experiment",
    check: null,
    meaning: "experiment.yaml at the pin does not hash to run_created's experiment_sha256",
  },
  "replay.not_ended": {
    family: "live",
    check: null,
    meaning: "a replay was asked of a run whose last event is not run_completed or run_failed",
  },
  "rows.schema": {
    family: "rows",
    check: null,
    meaning: "an indexed store's schema is not provevi's own",
  },
  "rows.run_missing": {
    family: "rows",
    check: null,
    meaning: "the indexed store holds no row of the run",
  },
  "rows.unreadable": {
    family: "rows",
    check: null,
    meaning: "a file of the run that the row check compares with cannot be read",
  },
  "rows.event_differs": {
    family: "rows",
    check: null,
    meaning:
      "an event row's line or columns differ from its line of events.jsonl, or its chain does not cover it",
  },
  "rows.refs_differ": {
    family: "rows",
    check: null,
    meaning: "an event's URI rows differ from the URIs its line names",
  },
  "rows.events_missing": {
    family: "rows",
    check: null,
    meaning: "lines of events.jsonl have no event row",
  },
  "rows.run_differs": {
    family: "rows",
    check: null,
    meaning: "the run's row differs from its events, manifest or last line",
  },
  "rows.unsealed": {
    family: "rows",
    check: null,
    meaning: "the run whose rows are checked has no manifest",
  },
  "rows.settings_differ": {
    family: "rows",
    check: null,
    meaning: "the rows of the run's settings, agent or experiment differ from its run_created",
  },
  "rows.assessment_differs": {
    family: "rows",
    check: null,
    meaning: "an assessment row judges an event or span the run lacks, or its value is not JSON",
  },
  "rows.payload_differs": {
    family: "rows",
    check: null,
    meaning: "a payload row differs from its file or pack record, or a stored payload has no row",
  },
  "rows.bundle_differs": {
    family: "rows",
    check: null,
    meaning: "the bundle the run's row records differs from bundle.json",
  },
  "cost.table_unreadable": {
    family: "cost",
    check: null,
    meaning: "the price table that run_created pins cannot be read as a price table",
  },
  "cost.no_table": {
    family: "cost",
    check: null,
    meaning: "an event records a cost, but run_created pins no price table",
  },
  "cost.call_differs": {
    family: "cost",
    check: null,
    meaning: "a model call's recorded cost is not its usage priced by the pinned table",
  },
  "cost.total_differs": {
    family: "cost",
    check: null,
    meaning: "the run's recorded cost total is not the sum of its model calls, recomputed",
  },
  "policy.syntax": {
    family: "policy",
    check: null,
    meaning: "the policy file is not YAML or JSON, or its aliases expand too far",
  },
  "policy.duplicate_key": { family: "policy", check: null, meaning: "a key is named twice in one mapping" },
  "policy.shape": {
    family: "policy",
    check: null,
    meaning:
      "a part is not of its type: the policy, destinations or libraries not a mapping, a list not a list",
  },
  "policy.unknown_key": {
    family: "policy",
    check: null,
    meaning: "a key that the policy's format, or a run file's telemetry section, does not name",
  },
  "policy.version": { family: "policy", check: null, meaning: "version is missing, or is not the integer 1" },
  "policy.host": {
    family: "policy",
    check: null,
    meaning: "a hosts entry is not a text, not a host, too wide, or named twice",
  },
  "policy.destination": {
    family: "policy",
    check: null,
    meaning: "a destination's name is not plain, or two destinations have one kind and endpoint",
  },
  "policy.kind": {
    family: "policy",
    check: null,
    meaning: "a destination's kind is not logfire, otlp, mlflow or live",
  },
  "policy.level": { family: "policy", check: null, meaning: "a receives is not names, usage or bodies" },
  "policy.endpoint": {
    family: "policy",
    check: null,
    meaning:
      "an endpoint is missing, not a URL its kind takes, names a user or password, or reads as two places",
  },
  "policy.endpoint_host": { family: "policy", check: null, meaning: "an endpoint's host is not in hosts" },
  "policy.live_twice": {
    family: "policy",
    check: null,
    meaning: "the policy names more than one live viewer",
  },
  "policy.library": { family: "policy", check: null, meaning: "a library's name is not an npm package name" },
  "policy.versions": {
    family: "policy",
    check: null,
    meaning: "a library's versions is missing or is not a version range",
  },
  "policy.feeds": {
    family: "policy",
    check: null,
    meaning: "a library's telemetry names no destination of the policy, a live viewer, or one twice",
  },
  "policy.version_unapproved": {
    family: "policy",
    check: null,
    meaning: "an approved library is installed at a version that its versions do not hold",
  },
  "policy.section_widens": {
    family: "policy",
    check: null,
    meaning:
      "a run file's telemetry section adds a host, destination or library, raises a level, or changes a kind, endpoint or versions",
  },
  "policy.section_contradicts": {
    family: "policy",
    check: null,
    meaning: "a run file's telemetry section names a destination that it drops, or whose host it cuts",
  },
  "resume.source_missing": {
    family: "resume",
    check: null,
    meaning: "the cut run that run_created's resumed_from names is not in the store",
  },
  "resume.source_sealed": {
    family: "resume",
    check: null,
    meaning: "the run resumed as cut has a manifest: it was sealed",
  },
  "resume.source_broken": {
    family: "resume",
    check: null,
    meaning: "the cut run's events, to its last whole line, do not hold (a chain, a line)",
  },
  "resume.setup_differs": {
    family: "resume",
    check: null,
    meaning: "the run file, the staged inputs or the rendered prompt differ from the cut run's",
  },
  "resume.step_missing": {
    family: "resume",
    check: null,
    meaning: "a model call or a tool call of the cut run is not served in its place in the resumed run",
  },
  "resume.served_unknown": {
    family: "resume",
    check: null,
    meaning: "an event's served_from names an event of the cut run that does not record it so",
  },
};
