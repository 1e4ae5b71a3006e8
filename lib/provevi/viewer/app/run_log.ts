/**
 * The run page's log panel (one of its `RUN_PANELS`, added when this module is loaded): whether the run is in its
 * store's log, at which index, the checkpoint its proof is against and who cosigned it, and the log's latest
 * witnessed checkpoint. It is asked for once per run and state
 * (running, then sealed) and kept, since the page is drawn again at each live event.
 * @module
 */
import type { LogCheckpointView, RunLogView } from "../run_log_view.ts";
import { api, runPath } from "./api.ts";
import { card, empty, errorBox, h, type Kid } from "./dom.ts";
import { RUN_PANELS } from "./run_panels.ts";

const asked = new Map<string, RunLogView | Error | null>(); // null while asked

RUN_PANELS.push((state) => logPanel(state.view.run_id, state.view.running));

/**
 * The log panel of a run.
 *
 * @param id The run.
 * @param running Whether the run is still running (it is appended to the log at its seal).
 * @returns The panel; it fills itself in when the viewer answers.
 */
export function logPanel(id: string, running: boolean): HTMLElement {
  const key = `${id}\n${running}`;
  if (!asked.has(key)) {
    asked.set(key, null);
    api<RunLogView>(runPath(id, "/log"))
      .catch((e) => (e instanceof Error ? e : new Error(String(e))))
      .then((answer) => {
        asked.set(key, answer);
        document.getElementById("log-panel")?.replaceWith(logPanel(id, running));
      });
  }
  const answer = asked.get(key);
  const body = answer === null || answer === undefined
    ? empty("Reading the log…")
    : answer instanceof Error
    ? errorBox(answer)
    : logLines(answer, running);
  const panel = card("Log", body);
  panel.id = "log-panel";
  return panel;
}

function named(c: LogCheckpointView): string {
  return c.cosigned_by.length ? `cosigned by ${c.cosigned_by.join(", ")}` : "cosigned by no witness";
}

function logLines(v: RunLogView, running: boolean): Kid {
  if (v.problem !== null) return errorBox(new Error(`the log cannot be read: ${v.problem}`));
  if (!v.kept) return empty("This store keeps no log of its runs.");
  const line = (kids: Kid, attrs: Record<string, string> = {}) => h("p", attrs, kids);
  const lines: Kid[] = [];
  if (v.index === null) {
    lines.push(line(
      running
        ? "Not in the log yet: a run is appended when it is sealed."
        : "Not in the log: run prove log audit to see why.",
      { class: running ? "sub" : "bad", "data-log-index": "none" },
    ));
  } else {
    const size = v.log?.latest.size ?? 0;
    lines.push(line(
      [
        "Leaf ",
        h("b", null, String(v.index)),
        ` of ${v.log?.latest.origin ?? "the log"}, which holds ${size} runs.`,
      ],
      { "data-log-index": String(v.index) },
    ));
    const w = v.log?.witnessed;
    lines.push(line(
      w && w.size > v.index
        ? `Witnessed: the checkpoint of ${w.size} runs is ${named(w)}.`
        : "No checkpoint that covers it is cosigned yet: prove log wait RUN gathers the witnesses.",
      { class: "sub" },
    ));
  }
  const p = v.proof;
  if (p === null) {
    if (!running && v.index !== null) {
      lines.push(line("Its folder holds no log.tlog-proof: prove log proof RUN --write."));
    }
  } else {
    lines.push(line(
      `Its proof (log.tlog-proof): leaf ${p.index} under the checkpoint of ${p.size} runs of ${p.origin}, ${
        p.log_signed ? "signed by the store's log key" : "not signed by the store's log key"
      }, ${named(p)} (the viewer holds no witness key: prove verify --witness checks them).`,
      { class: p.log_signed ? "" : "bad" },
    ));
    if (!p.proves) {
      lines.push(line("It does not prove this run as its evidence is now.", { class: "bad", role: "alert" }));
    }
  }
  return lines;
}
