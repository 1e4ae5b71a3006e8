/**
 * The tags by which provevi knows its copies in MLflow: the run a copy is of, and the mark of a copy not yet
 * whole. The copy's content, its writer and its lock all read them here.
 * @module
 */

/** The tag that names the provrun run a copy is of; provevi finds a copy by it. */
export const RUN_ID_TAG = "provrun.run_id";
/** The tag a copy's run has from the moment it is made until it is whole. */
export const UNFINISHED_TAG = "provevi.copy.unfinished";
