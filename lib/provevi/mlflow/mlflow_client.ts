/**
 * A small client of an MLflow tracking server: its REST API and its OTLP trace endpoint, the way MLflow's own
 * TypeScript SDK reaches a server. Only the calls the copy makes; each error is one line that names the server
 * without a user or a password.
 * @module
 */
import { ProveviError } from "../evidence/errors.ts";
import { shownEndpoint } from "../telemetry/endpoint.ts";

/** A failure of MLflow: the server could not be reached, or it refused a call. */
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

/** An MLflow run, as the REST API gives it. */
export interface MlflowRun {
  info: {
    run_id: string;
    experiment_id: string;
    status?: string;
    lifecycle_stage?: string;
    run_name?: string;
  };
  data?: { tags?: { key: string; value: string }[] };
}

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
    if (options.token) this.#headers.authorization = `Bearer ${options.token}`;
    else if (options.username !== undefined && options.password !== undefined) {
      this.#headers.authorization = `Basic ${btoa(`${options.username}:${options.password}`)}`;
    }
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
        : oneLine(error);
      throw new MlflowError(
        `cannot reach MLflow at ${this.shown} to ${what}: ${reason}; check that the server runs and that MLFLOW_TRACKING_URI names it`,
        { cause: error },
      );
    }
  }

  /**
   * Calls one REST endpoint with a JSON body (or a query, for GET).
   *
   * @param method `GET`, `POST`, `PATCH` or `DELETE`.
   * @param path Such as `/api/2.0/mlflow/runs/create`.
   * @param body The JSON body, or for GET the query's parameters.
   * @param what What the call does, for messages: `create the run`.
   * @returns The parsed answer.
   * @throws MlflowError when the server cannot be reached or refuses.
   */
  async call<T = Record<string, unknown>>(
    method: "GET" | "POST" | "PATCH" | "DELETE",
    path: string,
    body: Record<string, unknown> | null,
    what: string,
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
    const text = await response.text();
    if (!response.ok) {
      let code: string | null = null, message = text.trim().split("\n")[0]!.slice(0, 300);
      try {
        const parsed = JSON.parse(text);
        code = typeof parsed.error_code === "string" ? parsed.error_code : null;
        if (typeof parsed.message === "string") message = parsed.message.split("\n")[0]!.slice(0, 300);
        else if (typeof parsed.detail === "string") message = parsed.detail.split("\n")[0]!.slice(0, 300);
      } catch { /* not JSON: the first line of the text */ }
      throw new MlflowError(
        `MLflow at ${this.shown} refused to ${what}: ${code ? `${code}: ` : ""}${
          message || `HTTP ${response.status}`
        }`,
        { code, status: response.status },
      );
    }
    if (text.trim() === "") return {} as T;
    try {
      return JSON.parse(text) as T;
    } catch (error) {
      throw new MlflowError(
        `MLflow at ${this.shown} gave an answer that is not JSON to ${what}; is MLFLOW_TRACKING_URI an MLflow server?`,
        { cause: error, status: response.status },
      );
    }
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
    const text = await response.text();
    if (!response.ok) {
      let message = text.trim().split("\n")[0]!.slice(0, 300);
      try {
        const parsed = JSON.parse(text);
        if (typeof parsed.detail === "string") message = parsed.detail.slice(0, 300);
      } catch { /* the first line of the text */ }
      throw new MlflowError(
        `MLflow at ${this.shown} refused the trace's spans: ${message || `HTTP ${response.status}`}`,
        { status: response.status },
      );
    }
  }

  /**
   * The ID of the experiment of that name; with `create`, made when missing.
   *
   * @returns The ID, or null when there is none and `create` is false.
   */
  async experimentId(name: string, options: { create?: boolean } = {}): Promise<string | null> {
    try {
      const found = await this.call<{ experiment: { experiment_id: string; lifecycle_stage?: string } }>(
        "GET",
        "/api/2.0/mlflow/experiments/get-by-name",
        { experiment_name: name },
        `find the experiment ${JSON.stringify(name)}`,
      );
      if (found.experiment.lifecycle_stage === "deleted") {
        await this.call("POST", "/api/2.0/mlflow/experiments/restore", {
          experiment_id: found.experiment.experiment_id,
        }, `restore the deleted experiment ${JSON.stringify(name)}`);
      }
      return found.experiment.experiment_id;
    } catch (error) {
      if (!(error instanceof MlflowError) || error.code !== "RESOURCE_DOES_NOT_EXIST") throw error;
    }
    if (!options.create) return null;
    const made = await this.call<{ experiment_id: string }>(
      "POST",
      "/api/2.0/mlflow/experiments/create",
      { name },
      `create the experiment ${JSON.stringify(name)}`,
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
      const page = await this.call<{ runs?: MlflowRun[]; next_page_token?: string }>(
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
      );
      runs.push(...(page.runs ?? []));
      token = page.next_page_token || undefined;
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
