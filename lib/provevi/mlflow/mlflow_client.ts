/**
 * A small client of an MLflow tracking server: its REST API and its OTLP trace endpoint, the way MLflow's own
 * TypeScript SDK reaches a server. Only the calls the copy makes. Every reply is read through `mlflow_reply.ts`
 * (bounded, parsed, its shape checked), and each error is one line that names the server without a user or a
 * password, and shows nothing of the request's credentials, whatever the server echoes.
 * @module
 */
import { z } from "zod";
import { ProveviError } from "../evidence/errors.ts";
import { shownEndpoint } from "../telemetry/endpoint.ts";
import {
  mlflowId,
  parseReply,
  readReply,
  refusalOf,
  ReplyTooLarge,
  withoutCredentials,
} from "./mlflow_reply.ts";

/**
 * A failure of MLflow: the server could not be reached, or it refused a call.
 *
 * @example
 * ```ts
 * import { MlflowError, ProveviError } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const error = new MlflowError("MLflow refused the run", { code: "RESOURCE_DOES_NOT_EXIST", status: 404 });
 * assert.ok(error instanceof ProveviError);
 * assert.equal(error.name, "MlflowError");
 * assert.equal(error.status, 404);
 * ```
 */
export class MlflowError extends ProveviError {
  /** MLflow's error code, such as `RESOURCE_DOES_NOT_EXIST`, or null when the server was not reached. */
  readonly code: string | null;
  /** The HTTP status, or null when the server was not reached. */
  readonly status: number | null;
  /**
   * @param message The one-line message.
   * @param details The error code, the status and the cause.
   */
  constructor(
    message: string,
    details: { code?: string | null; status?: number | null; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? {} : { cause: details.cause });
    this.name = "MlflowError";
    this.code = details.code ?? null;
    this.status = details.status ?? null;
  }
}

/** An MLflow run, as the REST API gives it: the parts the copy reads. */
export const MLFLOW_RUN: z.ZodType<MlflowRun> = z.object({
  info: z.object({
    run_id: mlflowId,
    experiment_id: mlflowId,
    status: z.string().optional(),
    lifecycle_stage: z.string().optional(),
    run_name: z.string().optional(),
  }),
  data: z.object({ tags: z.array(z.object({ key: z.string(), value: z.string() })).optional() }).optional(),
});

/** An MLflow run, as the REST API gives it. */
export interface MlflowRun {
  info: {
    run_id: string;
    experiment_id: string;
    status?: string | undefined;
    lifecycle_stage?: string | undefined;
    run_name?: string | undefined;
  };
  data?: { tags?: { key: string; value: string }[] | undefined } | undefined;
}

/** A reply the copy reads nothing of: any JSON object. */
export const ANY_REPLY: z.ZodType<Record<string, unknown>> = z.record(z.string(), z.unknown());

/** What a client is made with. */
export interface MlflowClientOptions {
  /** `MLFLOW_TRACKING_TOKEN`, sent as a bearer token, as MLflow's clients do. */
  token?: string;
  /** `MLFLOW_TRACKING_USERNAME` and `MLFLOW_TRACKING_PASSWORD`, sent as basic authentication. */
  username?: string;
  password?: string;
  /** How long one call may take, in milliseconds (60 s by default). */
  timeout?: number;
  /** Cancels every call. */
  signal?: AbortSignal;
}

/**
 * A client of one MLflow tracking server.
 *
 * @example
 * ```ts
 * import { MlflowClient } from "./mlflow_client.ts";
 * const client = new MlflowClient("http://127.0.0.1:5000");
 * // const id = await client.experimentId("acme/demo/dev/revenue-question", { create: true });
 * ```
 */
export class MlflowClient {
  /** The server's URL, without a trailing `/`. */
  readonly url: string;
  /** The server as messages show it. */
  readonly shown: string;
  readonly #headers: Record<string, string>;
  readonly #secrets: string[];
  readonly #timeout: number;
  readonly #signal: AbortSignal | undefined;

  /**
   * @param url The server's http or https URL.
   * @param options Authentication, the time limit of a call, and a cancel signal.
   */
  constructor(url: string, options: MlflowClientOptions = {}) {
    this.url = url.replace(/\/+$/, "");
    this.shown = shownEndpoint(this.url);
    this.#headers = {};
    this.#secrets = [];
    if (options.token) {
      this.#headers.authorization = `Bearer ${options.token}`;
      this.#secrets.push(options.token);
    } else if (options.username !== undefined && options.password !== undefined) {
      const pair = `${options.username}:${options.password}`;
      this.#headers.authorization = `Basic ${btoa(String.fromCharCode(...new TextEncoder().encode(pair)))}`;
      this.#secrets.push(pair, options.password);
    }
    if (this.#headers.authorization) this.#secrets.push(this.#headers.authorization);
    // A URL's own user and password are credentials too.
    const userinfo = /^[a-z][a-z0-9+.-]*:\/\/([^/?#@]*)@/i.exec(this.url)?.[1];
    if (userinfo) this.#secrets.push(userinfo, ...userinfo.split(":").slice(1).map(decodeURIComponent));
    this.#timeout = options.timeout ?? 60_000;
    this.#signal = options.signal;
  }

  async #fetch(path: string, init: RequestInit, what: string): Promise<Response> {
    const signals = [AbortSignal.timeout(this.#timeout)];
    if (this.#signal) signals.push(this.#signal);
    try {
      return await fetch(`${this.url}${path}`, { ...init, signal: AbortSignal.any(signals) });
    } catch (error) {
      if (this.#signal?.aborted) throw this.#signal.reason;
      const reason = error instanceof Error && error.name === "TimeoutError"
        ? `no answer in ${Math.round(this.#timeout / 1000)} s`
        : withoutCredentials(oneLine(error), this.#secrets);
      throw new MlflowError(
        `cannot reach MLflow at ${this.shown} to ${what}: ${reason}; check that the server runs and that MLFLOW_TRACKING_URI names it`,
        { cause: error },
      );
    }
  }

  /**
   * Calls one REST endpoint with a JSON body (or a query, for GET), and checks the reply's shape.
   *
   * @param method `GET`, `POST`, `PATCH` or `DELETE`.
   * @param path Such as `/api/2.0/mlflow/runs/create`.
   * @param body The JSON body, or for GET the query's parameters.
   * @param what What the call does, for messages: `create the run`.
   * @param shape The shape of the reply the copy reads ({@linkcode ANY_REPLY} when it reads nothing of it).
   * @returns The reply, of that shape.
   * @throws MlflowError when the server cannot be reached, refuses, or gives a reply past its bound, not JSON,
   *   or of another shape: one line, without the request's credentials.
   */
  async call<T>(
    method: "GET" | "POST" | "PATCH" | "DELETE",
    path: string,
    body: Record<string, unknown> | null,
    what: string,
    shape: z.ZodType<T>,
  ): Promise<T> {
    let target = path;
    const init: RequestInit = { method, headers: { ...this.#headers } };
    if (method === "GET" && body !== null) {
      const query = new URLSearchParams();
      for (const [k, v] of Object.entries(body)) {
        for (const item of Array.isArray(v) ? v : [v]) query.append(k, String(item));
      }
      target += `?${query}`;
    } else if (body !== null) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)["content-type"] = "application/json";
    }
    const response = await this.#fetch(target, init, what);
    const text = await this.#read(response, what);
    if (!response.ok) throw this.#refused(text, response.status, `refused to ${what}`);
    const parsed = parseReply(text, shape);
    if (!parsed.ok) {
      throw new MlflowError(
        // `why` names where the reply went wrong, and a map's key there is the server's own text (it may echo
        // the request's credential as a key of a trace's tags).
        `MLflow at ${this.shown} gave an answer to ${what} that the copy cannot use: ${
          withoutCredentials(parsed.why, this.#secrets)
        }; is MLFLOW_TRACKING_URI an MLflow tracking server?`,
        { status: response.status },
      );
    }
    return parsed.value;
  }

  /** A reply's body, bounded; past the bound, one line that says so. */
  async #read(response: Response, what: string): Promise<string> {
    try {
      return await readReply(response);
    } catch (error) {
      if (this.#signal?.aborted) throw this.#signal.reason;
      const why = error instanceof ReplyTooLarge
        ? error.message
        : error instanceof Error && error.name === "TimeoutError"
        ? `it did not end in ${Math.round(this.#timeout / 1000)} s`
        : `it broke off (${withoutCredentials(oneLine(error), this.#secrets)})`;
      throw new MlflowError(
        `MLflow at ${this.shown} gave an answer to ${what} that the copy cannot read: ${why}; is MLFLOW_TRACKING_URI an MLflow tracking server?`,
        { cause: error, status: response.status },
      );
    }
  }

  /** The one line for a refusal: the server's code and message, without the request's credentials. */
  #refused(text: string, status: number, did: string): MlflowError {
    const { code, message } = refusalOf(text, this.#secrets);
    return new MlflowError(
      `MLflow at ${this.shown} ${did}: ${code ? `${code}: ` : ""}${message ?? `HTTP ${status}`}`,
      { code, status },
    );
  }

  /**
   * Sends spans to the server's OTLP trace endpoint, into an experiment.
   *
   * @param body An `ExportTraceServiceRequest` protobuf body.
   * @param experimentId The MLflow experiment.
   * @throws MlflowError when the server cannot be reached or refuses the spans.
   */
  async sendSpans(body: Uint8Array, experimentId: string): Promise<void> {
    const response = await this.#fetch("/v1/traces", {
      method: "POST",
      headers: {
        ...this.#headers,
        "content-type": "application/x-protobuf",
        "x-mlflow-experiment-id": experimentId,
      },
      body: body as BodyInit,
    }, "send the trace's spans");
    const text = await this.#read(response, "send the trace's spans");
    if (!response.ok) throw this.#refused(text, response.status, "refused the trace's spans");
  }

  /**
   * The ID of the experiment of that name; with `create`, made when missing.
   *
   * @returns The ID, or null when there is none and `create` is false.
   */
  async experimentId(name: string, options: { create?: boolean } = {}): Promise<string | null> {
    try {
      const found = await this.call(
        "GET",
        "/api/2.0/mlflow/experiments/get-by-name",
        { experiment_name: name },
        `find the experiment ${JSON.stringify(name)}`,
        z.object({
          experiment: z.object({ experiment_id: mlflowId, lifecycle_stage: z.string().optional() }),
        }),
      );
      if (found.experiment.lifecycle_stage === "deleted") {
        await this.call(
          "POST",
          "/api/2.0/mlflow/experiments/restore",
          {
            experiment_id: found.experiment.experiment_id,
          },
          `restore the deleted experiment ${JSON.stringify(name)}`,
          ANY_REPLY,
        );
      }
      return found.experiment.experiment_id;
    } catch (error) {
      if (!(error instanceof MlflowError) || error.code !== "RESOURCE_DOES_NOT_EXIST") throw error;
    }
    if (!options.create) return null;
    const made = await this.call(
      "POST",
      "/api/2.0/mlflow/experiments/create",
      { name },
      `create the experiment ${JSON.stringify(name)}`,
      z.object({ experiment_id: mlflowId }),
    );
    return made.experiment_id;
  }

  /** The active and deleted runs of an experiment that a filter matches, all pages. */
  async searchRuns(
    experimentId: string,
    filter: string,
    options: { deleted?: boolean } = {},
  ): Promise<MlflowRun[]> {
    const runs: MlflowRun[] = [];
    let token: string | undefined;
    do {
      const page = await this.call(
        "POST",
        "/api/2.0/mlflow/runs/search",
        {
          experiment_ids: [experimentId],
          filter,
          run_view_type: options.deleted ? "ALL" : "ACTIVE_ONLY",
          max_results: 1000,
          ...(token ? { page_token: token } : {}),
        },
        "search the runs",
        z.object({ runs: z.array(MLFLOW_RUN).optional(), next_page_token: z.string().optional() }),
      );
      runs.push(...(page.runs ?? []));
      token = page.next_page_token || undefined;
      // A server that gives pages without end (or more runs than a run's copies can be) is not MLflow.
      if (runs.length > 100_000) {
        throw new MlflowError(
          `MLflow at ${this.shown} gave more than 100,000 runs for one search; is MLFLOW_TRACKING_URI an MLflow tracking server?`,
        );
      }
    } while (token);
    return runs;
  }
}

/** The last, most precise part of a network error (`Connection refused (os error 111)`), never its URL. */
function oneLine(error: unknown): string {
  let deepest: unknown = error;
  while (deepest instanceof Error && deepest.cause instanceof Error) deepest = deepest.cause;
  const text = (deepest instanceof Error ? deepest.message : String(deepest)).split("\n")[0]!;
  const parts = text.split(": ");
  return parts[parts.length - 1]!.slice(0, 300);
}
