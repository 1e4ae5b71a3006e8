/**
 * Steps 2 to 4 of a run: for each input the broker's grant (`access_requested`, then `access_granted` or
 * `access_denied`), the resolver's pin and snapshot (`context_resolved`, `snapshot_materialized`), and then each
 * snapshot staged into `input/` (`input_staged`).
 * @module
 */
import type { Catalog, Snapshot } from "../../provcat/mod.ts";
import { type Grant, StubBroker } from "../run/broker.ts";
import { AccessDenied, CatalogMissing } from "../run/errors.ts";
import { ProvcatResolver } from "../run/resolver.ts";
import type { RunContext } from "../run/run_context.ts";
import { InProcessStager, type StagedInput } from "../run/stager.ts";

/** The inputs of a run file. */
export type RunInputs = readonly { uri: string; as?: string }[];

/**
 * Asks, resolves and stages each input of a run.
 *
 * @param ctx The run.
 * @param inputs The run file's inputs.
 * @param catalog The catalog that resolves them.
 * @returns The staged inputs, and the stager that checks them again at the end.
 * @throws AccessDenied for an input the broker refuses; CatalogMissing when there is no catalog; the catalog's
 *   and the stager's errors.
 */
export async function stageInputs(
  ctx: RunContext,
  inputs: RunInputs,
  catalog: Catalog | undefined,
): Promise<{ inputs: StagedInput[]; stager: InProcessStager }> {
  const broker = new StubBroker(inputs.map((i) => i.uri), { env: ctx.env });
  const resolver = catalog ? new ProvcatResolver(catalog, ctx.recorder) : null;
  const snapshots: { snap: Snapshot; name: string; uri: string }[] = [];
  for (const input of inputs) {
    ctx.signal.throwIfAborted();
    await recordGrant(ctx, broker.request(input.uri));
    if (!resolver) {
      throw new CatalogMissing(`no catalog to resolve ${input.uri}: pass a catalog, or add a provcat.yaml`);
    }
    const snap = await resolver.resolve(input.uri);
    snapshots.push({ snap, name: input.as ?? lastSegment(input.uri), uri: input.uri });
  }
  const stager = new InProcessStager(ctx.folder);
  const staged: StagedInput[] = [];
  for (const { snap, name, uri } of snapshots) {
    await ctx.recorder.step(
      "input_staged",
      { component: "InProcessStager", spanName: "provrun.stage" },
      async () => {
        const s = await stager.stage({
          path: snap.path,
          pinned: snap.pinned ?? uri,
          sha256: snap.sha256,
          kind: snap.kind,
        }, name);
        staged.push(s);
        return { refs: [s.pinned], data: { name, kind: s.kind, sha256: s.sha256 } };
      },
    );
  }
  return { inputs: staged, stager };
}

/**
 * Records a request to the broker and its answer (`access_requested`, then `access_granted` or `access_denied`).
 *
 * @param ctx The run.
 * @param grant The broker's answer.
 * @throws AccessDenied when the broker refused.
 */
export async function recordGrant(ctx: RunContext, grant: Grant): Promise<void> {
  const { recorder } = ctx;
  const uri = grant.uri;
  await recorder.record({
    type: "access_requested",
    component: "StubBroker",
    refs: [uri],
    data: { mode: grant.mode },
  });
  if (!grant.granted) {
    await recorder.record({
      type: "access_denied",
      component: "StubBroker",
      refs: [uri],
      data: { mode: grant.mode, reason: grant.reason ?? "denied" },
    });
    throw new AccessDenied(uri, grant.reason ?? "denied");
  }
  await recorder.record({
    type: "access_granted",
    component: "StubBroker",
    refs: [uri],
    data: { mode: grant.mode, expires_at: grant.expires_at ?? null },
  });
}

function lastSegment(uri: string): string {
  const path = uri.replace(/[?#].*$/, "").replace(/\/+$/, "");
  return path.slice(path.lastIndexOf("/") + 1) || "input";
}
