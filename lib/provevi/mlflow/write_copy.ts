/**
 * Writes a copy's content into an MLflow tracking server: deletes earlier copies of the run (and a killed
 * copy's leftovers), makes the run tagged `provevi.copy.unfinished`, logs its settings, metrics and inputs,
 * starts the trace with provrun's trace ID and sends its spans to the OTLP endpoint, adds the assessments,
 * marks the run FINISHED or FAILED and removes the tag. A copy that fails part way deletes its run and trace.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import type { CopyContent } from "./copy_content.ts";
import { RUN_ID_TAG, UNFINISHED_TAG } from "./copy_tags.ts";
import { z } from "zod";
import { ANY_REPLY, type MlflowClient, MlflowError } from "./mlflow_client.ts";
import { mlflowId } from "./mlflow_reply.ts";
import { encodeTraceRequest } from "./otlp_encode.ts";

/** What {@linkcode writeCopy} wrote. */
export interface WrittenCopy {
  experimentId: string;
  mlflowRunId: string;
  /** `tr-<provrun's trace ID>`. */
  traceId: string;
  /** The MLflow runs of earlier copies that were deleted. */
  deleted: string[];
}

/** MLflow takes at most this many spans in one request comfortably; bigger traces go in batches. */
const SPANS_PER_REQUEST = 2000;

/**
 * Writes a copy into a tracking server.
 *
 * @param client The server's client.
 * @param content What the copy holds.
 * @param options `onProgress`: told of each stage.
 * @returns The experiment, run and trace written, and the earlier copies deleted.
 * @throws MlflowError when the server refuses; ProveviError when MLflow holds a trace of that ID that is not a
 *   copy of the run.
 * @example
 * ```ts
 * import { MlflowClient } from "./mlflow_client.ts";
 * import { writeCopy } from "./write_copy.ts";
 * // await writeCopy(new MlflowClient("http://127.0.0.1:5000"), content);
 * ```
 */
export async function writeCopy(
  client: MlflowClient,
  content: CopyContent,
  options: { onProgress?: (stage: string) => void } = {},
): Promise<WrittenCopy> {
  const progress = options.onProgress ?? (() => {});
  const traceId = `tr-${content.traceId}`;
  progress("finding the experiment");
  const experimentId = (await client.experimentId(content.experiment, { create: true }))!;
  await tagExperiment(client, experimentId, content.experimentTags);

  // The earlier copies: every run of the experiment tagged with the run's ID (a killed copy's run keeps the
  // unfinished tag, and is one of them), and the trace of the run's trace ID wherever it is.
  progress("deleting earlier copies");
  const earlier = await client.searchRuns(experimentId, `tags."${RUN_ID_TAG}" = '${content.runId}'`);
  const earlierIds = earlier.map((r) => r.info.run_id);
  await deleteTrace(client, traceId, content.runId);
  for (const id of earlierIds) {
    await client.call(
      "POST",
      "/api/2.0/mlflow/runs/delete",
      { run_id: id },
      `delete the earlier copy ${id}`,
      ANY_REPLY,
    );
  }

  progress("creating the run");
  const created = await client.call(
    "POST",
    "/api/2.0/mlflow/runs/create",
    {
      experiment_id: experimentId,
      run_name: content.runId,
      start_time: content.startMillis,
      tags: pairs({ ...content.tags, [UNFINISHED_TAG]: "true" }),
    },
    "create the run",
    z.object({ run: z.object({ info: z.object({ run_id: mlflowId }) }) }),
  );
  const runId = created.run.info.run_id;
  try {
    await logRun(client, runId, content);
    progress("writing the trace");
    await writeTrace(client, experimentId, runId, traceId, content, progress);
    progress("finishing the run");
    await finishRun(client, runId, content);
  } catch (error) {
    // The copy failed part way: delete what it wrote, as a rebuild would. The experiment stays, maybe empty.
    await deleteTrace(client, traceId, content.runId).catch(() => {});
    await client.call(
      "POST",
      "/api/2.0/mlflow/runs/delete",
      { run_id: runId },
      "delete the failed copy",
      ANY_REPLY,
    )
      .catch(() => {});
    throw error;
  }
  return { experimentId, mlflowRunId: runId, traceId, deleted: earlierIds };
}

/** Marks the copy's run finished (or failed), and then whole: its unfinished tag goes last. */
async function finishRun(client: MlflowClient, runId: string, content: CopyContent): Promise<void> {
  await client.call(
    "POST",
    "/api/2.0/mlflow/runs/update",
    { run_id: runId, status: content.status, end_time: content.endMillis },
    "mark the run finished",
    ANY_REPLY,
  );
  await client.call(
    "POST",
    "/api/2.0/mlflow/runs/delete-tag",
    { run_id: runId, key: UNFINISHED_TAG },
    "remove the unfinished tag",
    ANY_REPLY,
  );
}

/** The experiment's assessments, as its tags: MLflow judges traces, not experiments. Written again, the same. */
async function tagExperiment(client: MlflowClient, experimentId: string, tags: Record<string, string>) {
  for (const [key, value] of Object.entries(tags)) {
    await client.call(
      "POST",
      "/api/2.0/mlflow/experiments/set-experiment-tag",
      { experiment_id: experimentId, key, value },
      `tag the experiment with its assessment ${key}`,
      ANY_REPLY,
    );
  }
}

async function logRun(client: MlflowClient, runId: string, content: CopyContent): Promise<void> {
  const params = pairs(content.params);
  const metrics = Object.entries(content.metrics).map(([key, value]) => ({
    key,
    value,
    timestamp: content.endMillis,
    step: 0,
  }));
  for (let i = 0; i < Math.max(params.length, metrics.length); i += 100) {
    await client.call(
      "POST",
      "/api/2.0/mlflow/runs/log-batch",
      {
        run_id: runId,
        params: params.slice(i, i + 100),
        metrics: metrics.slice(i, i + 100),
      },
      "log the run's settings and metrics",
      ANY_REPLY,
    );
  }
  if (content.datasets.length) {
    await client.call(
      "POST",
      "/api/2.0/mlflow/runs/log-inputs",
      {
        run_id: runId,
        datasets: content.datasets.map((d) => ({
          tags: [{ key: "mlflow.data.context", value: "input" }],
          dataset: { name: d.name, digest: d.digest, source_type: d.sourceType, source: d.source },
        })),
      },
      "log the run's inputs",
      ANY_REPLY,
    );
  }
}

async function writeTrace(
  client: MlflowClient,
  experimentId: string,
  runId: string,
  traceId: string,
  content: CopyContent,
  progress: (stage: string) => void,
): Promise<void> {
  const root = content.spans[0]!;
  const durationMillis = Math.max(0, content.endMillis - content.startMillis);
  await client.call(
    "POST",
    "/api/3.0/mlflow/traces",
    {
      trace: {
        trace_info: {
          trace_id: traceId,
          trace_location: { type: "MLFLOW_EXPERIMENT", mlflow_experiment: { experiment_id: experimentId } },
          request_time: new Date(content.startMillis).toISOString(),
          execution_duration: `${(durationMillis / 1000).toFixed(3)}s`,
          state: content.status === "FAILED" ? "ERROR" : "OK",
          trace_metadata: {
            "mlflow.sourceRun": runId,
            "mlflow.trace_schema.version": "3",
            [RUN_ID_TAG]: content.runId,
          },
          tags: { "mlflow.traceName": root.name, [RUN_ID_TAG]: content.runId },
        },
      },
    },
    "start the trace",
    ANY_REPLY,
  );
  // The root span goes last, so the trace counts as whole only when every span is in.
  const spans = [...content.spans.slice(1), root];
  for (let i = 0; i < spans.length; i += SPANS_PER_REQUEST) {
    await client.sendSpans(
      encodeTraceRequest(content.traceId, spans.slice(i, i + SPANS_PER_REQUEST)),
      experimentId,
    );
  }
  progress("linking the trace to the run");
  await client.call(
    "POST",
    "/api/2.0/mlflow/traces/link-to-run",
    {
      trace_ids: [traceId],
      run_id: runId,
    },
    "link the trace to the run",
    ANY_REPLY,
  );
  for (const a of content.assessments) {
    const time = new Date(a.createdMillis).toISOString();
    await client.call(
      "POST",
      `/api/3.0/mlflow/traces/${traceId}/assessments`,
      {
        assessment: {
          assessment_name: a.name,
          trace_id: traceId,
          ...(a.spanId === null ? {} : { span_id: a.spanId }),
          source: { source_type: "HUMAN", source_id: a.source },
          create_time: time,
          last_update_time: time,
          feedback: { value: a.value },
          ...(a.rationale === null ? {} : { rationale: a.rationale }),
        },
      },
      `add the assessment ${JSON.stringify(a.name)}`,
      ANY_REPLY,
    );
  }
}

/** What the copy reads of a trace's info: where it is, and the tags and metadata that name its run. */
const TRACE_INFO = z.object({
  trace_location: z.object({
    mlflow_experiment: z.object({ experiment_id: mlflowId.optional() }).optional(),
  }).optional(),
  tags: z.record(z.string(), z.string()).optional(),
  trace_metadata: z.record(z.string(), z.string()).optional(),
});

/**
 * Deletes the trace of that ID if MLflow holds it and it is a copy of the run: one that an earlier copy wrote,
 * or that a killed copy left unlinked. A trace of that ID that names another run is refused, not deleted.
 */
async function deleteTrace(client: MlflowClient, traceId: string, runId: string): Promise<void> {
  let info: z.infer<typeof TRACE_INFO>;
  try {
    const found = await client.call(
      "GET",
      `/api/3.0/mlflow/traces/${traceId}`,
      null,
      `find the trace ${traceId}`,
      z.object({ trace: z.object({ trace_info: TRACE_INFO }) }),
    );
    info = found.trace.trace_info;
  } catch (error) {
    if (error instanceof MlflowError && (error.code === "RESOURCE_DOES_NOT_EXIST" || error.status === 404)) {
      return;
    }
    throw error;
  }
  const names = info.tags?.[RUN_ID_TAG] ?? info.trace_metadata?.[RUN_ID_TAG] ??
    await rootRunId(client, traceId);
  if (names !== runId) {
    throw new ProveviError(
      `MLflow at ${client.shown} holds a trace ${traceId} that is not a copy of run ${runId}; delete it in MLflow, then copy again`,
    );
  }
  const experimentId = info.trace_location?.mlflow_experiment?.experiment_id;
  if (!experimentId) return;
  await client.call(
    "POST",
    "/api/3.0/mlflow/traces/delete-traces",
    {
      experiment_id: experimentId,
      request_ids: [traceId],
    },
    `delete the earlier trace ${traceId}`,
    ANY_REPLY,
  );
}

/** The `provrun.run_id` of a trace's root span, for a trace that a killed copy left with no tags. */
async function rootRunId(client: MlflowClient, traceId: string): Promise<string | null> {
  const trace = await client.call(
    "GET",
    "/api/3.0/mlflow/traces/get",
    { trace_id: traceId },
    `read the trace ${traceId}`,
    z.object({
      trace: z.object({
        spans: z.array(z.object({ parent_span_id: z.string().optional(), attributes: z.unknown() }))
          .optional(),
      }).optional(),
    }),
  ).catch(() => null);
  for (const span of trace?.trace?.spans ?? []) {
    if (span.parent_span_id) continue;
    const attributes = span.attributes;
    if (Array.isArray(attributes)) {
      for (const a of attributes as { key?: string; value?: { string_value?: string } }[]) {
        if (a.key === RUN_ID_TAG) return unquote(a.value?.string_value ?? null);
      }
    } else if (typeof attributes === "object" && attributes !== null) {
      const value = (attributes as Record<string, unknown>)[RUN_ID_TAG];
      if (typeof value === "string") return unquote(value);
    }
  }
  return null;
}

function unquote(value: string | null): string | null {
  if (value === null) return null;
  try {
    const parsed = JSON.parse(value);
    return typeof parsed === "string" ? parsed : value;
  } catch {
    return value;
  }
}

function pairs(record: Record<string, string>): { key: string; value: string }[] {
  return Object.entries(record).map(([key, value]) => ({ key, value }));
}
