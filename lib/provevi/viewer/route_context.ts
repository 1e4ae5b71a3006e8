/**
 * What the viewer's routes share: the viewer's options, what a handler is given, a route, and how a query's
 * whole numbers are read. The routes table (`viewer_routes.ts`) and the pages' handlers in their own files
 * (`runs_api.ts`) import it.
 * @module
 */
import type { EvidenceStore } from "../store/store.ts";
import type { Level } from "../telemetry/attributes.ts";
import type { TelemetryPolicy } from "../telemetry/policy.ts";
import type { DigestCache } from "./digest_cache.ts";
import type { RunModel } from "./run_model.ts";
import type { RunViewOptions } from "./run_page.ts";
import type { RunSearch } from "./run_search.ts";
import type { SingleFlight } from "./single_flight.ts";
import { ViewerRefusal } from "./viewer_http.ts";
import type { PathParams } from "./viewer_paths.ts";

/** Options of the viewer. */
export interface ViewerOptions {
  /** The viewer's telemetry policy: its `live` destination decides what the pages show. */
  policy: TelemetryPolicy;
  /** The catalog that reads a committed bundle and a run's experiment, as for `prove verify`. */
  catalog?: RunViewOptions["catalog"];
  /** Opens the store to write, for the one request that writes: adding an assessment. */
  openToWrite?: () => Promise<EvidenceStore>;
  /** The runs page's search (its index in a private temporary folder by default, made on the first search). */
  search?: RunSearch;
}

/** What `api/info` says of the viewer: the store, the policy, and whether assessments can be added. */
export interface ViewerInfo {
  store: string;
  runs_root: string;
  policy: string;
  live: { name: string; receives: Level } | null;
  assess: boolean;
}

/** What a handler is given. */
export interface RouteContext {
  store: EvidenceStore;
  options: ViewerOptions;
  request: Request;
  /** The path's `:name` parts, checked. */
  params: PathParams;
  query: URLSearchParams;
  /** The runs being read, shared by requests that ask for the same run at once (any page of it). */
  models: SingleFlight<RunModel>;
  /** The runs page's digests of runs (verdict, counts, tokens, cost), kept while each run is unchanged. */
  digests: DigestCache;
  /** The runs page's search, with its index made on the first search. */
  search: RunSearch;
}

/** One route. */
export interface Route {
  method: "GET" | "POST";
  /** The pattern of the path under the viewer's base. */
  path: string;
  handle(context: RouteContext): Promise<Response> | Response;
}

/**
 * A whole number from the query, such as `limit=50`, or undefined when it is absent.
 *
 * @param options `min` (0 by default; -1 for `after`, "before the first") and `max`.
 * @throws ViewerRefusal (400) when it is there and not a whole number from `min` to `max`.
 */
export function wholeNumber(
  query: URLSearchParams,
  name: string,
  options: { min?: number; max?: number } = {},
): number | undefined {
  const { min = 0, max = 1_000_000_000 } = options;
  const value = query.get(name);
  if (value === null || value === "") return undefined;
  if (!/^-?\d{1,10}$/.test(value) || Number(value) > max || Number(value) < min) {
    throw new ViewerRefusal(400, `${name}=${value.slice(0, 40)} is not a whole number from ${min} to ${max}`);
  }
  return Number(value);
}
