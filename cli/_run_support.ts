/**
 * What provr's run, replay, fork and resume share: the catalog a run needs, and the cancel on SIGINT or SIGTERM.
 * @module
 */
import { readBoundedText } from "../lib/provevi/evidence/mod.ts";
import type { RunFile } from "../lib/provrun/run/mod.ts";
import { Catalog } from "../lib/provcat/mod.ts";
import { type CatalogChoice, openCatalog } from "./_catalog.ts";

/**
 * The catalog a run needs: none when it has no inputs, experiment or bundle; an empty one when its inputs are all
 * file:/// URIs (and it pins no experiment and commits no bundle), so that it needs no provcat.yaml; else the
 * configured one.
 */
export async function runCatalog(file: RunFile, opts: CatalogChoice): Promise<Catalog | undefined> {
  const needsCatalog = (file.data.inputs?.length ?? 0) > 0 || file.data.experiment !== undefined ||
    file.data.run.bundle === true;
  const physicalOnly = (file.data.inputs ?? []).every((i) => i.uri.startsWith("file:///")) &&
    file.data.experiment === undefined && file.data.run.bundle !== true &&
    opts.config === undefined && !Deno.env.get("PROVCAT_CONFIG");
  // A --config that cannot be read is an error even when this run needs no catalog.
  if (opts.config && !needsCatalog) {
    await readBoundedText(opts.config, { limit: 4 << 20, what: "the catalog config" });
  }
  if (!needsCatalog) return undefined;
  return physicalOnly ? await Catalog.open({ config: {} }) : await openCatalog(opts);
}

/**
 * The first Ctrl-C (SIGINT) or SIGTERM (timeout, systemd, a container runtime) cancels the run, which then seals
 * what it has; the listener goes at once, so a second signal ends the process the usual way if the cancel hangs.
 */
export function cancelOnSignals(): Disposable & {
  signal: AbortSignal;
  signalled(): "SIGINT" | "SIGTERM" | null;
} {
  const controller = new AbortController();
  let signalled: "SIGINT" | "SIGTERM" | null = null;
  const listeners = (["SIGINT", "SIGTERM"] as const).map((signal) => {
    const on = () => {
      signalled ??= signal;
      controller.abort();
      try {
        Deno.removeSignalListener(signal, on);
      } catch { /* removed already */ }
    };
    try {
      Deno.addSignalListener(signal, on);
    } catch { /* no such signal here (Windows) */ }
    return [signal, on] as const;
  });
  return {
    signal: controller.signal,
    signalled: () => signalled,
    [Symbol.dispose]() {
      for (const [signal, on] of listeners) {
        try {
          Deno.removeSignalListener(signal, on);
        } catch { /* removed already, or no signals here */ }
      }
    },
  };
}
