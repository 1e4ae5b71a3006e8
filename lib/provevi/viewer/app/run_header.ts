/**
 * The top of a run page: how the run ended (completed, or failed with its reason) beside whether its evidence
 * verifies (verified, does not verify, cannot be checked here, running), then its facts and what went wrong.
 * The two are separate on purpose: a failed run's evidence may verify, and a completed run's may not.
 * @module
 */
import type { RunView } from "../run_view.ts";
import { card, h, hiddenMark, type Kid, table } from "./dom.ts";
import { duration, micros, money, short, tokens, when } from "./format.ts";
import { go, here } from "./nav.ts";
import type { RunState } from "./run_state.ts";

function problems(v: RunView, id?: string): HTMLElement {
  return h(
    "ul",
    id ? { id } : null,
    v.verdict.problems.map((p) => h("li", { "data-code": p.code }, p.message)),
  );
}

function box(cls: string, icon: string, title: string, ...kids: Kid[]): HTMLElement {
  return h(
    "div",
    { class: "verdict " + cls, id: "verdict", role: cls === "bad" ? "alert" : null },
    h("div", { class: "icon" }, icon),
    h("div", { class: "grow" }, h("h2", null, title), kids),
  );
}

/** Whether the evidence verifies: the verdict, with each problem. */
export function verdict(v: RunView): HTMLElement {
  const kind = v.running ? "running" : v.verdict.kind;
  if (kind === "running") {
    return box(
      "live",
      "…",
      "Running: not sealed yet",
      h(
        "div",
        null,
        v.verdict.ok
          ? "The chain of the events written so far is intact. The full check runs when the run ends."
          : "The events written so far have problems:",
      ),
      v.verdict.ok ? null : problems(v),
    );
  }
  if (kind === "verified") {
    return box(
      "ok",
      "✓",
      "Evidence verified",
      h(
        "div",
        null,
        v.verdict.bundle
          ? `The evidence, the outputs and the committed bundle ${v.verdict.bundle} verify.`
          : "The hash chain, the payloads, the manifest and the output files are as the run recorded them.",
      ),
    );
  }
  if (kind === "cannot_check") {
    return box(
      "unchecked",
      "?",
      "Cannot be checked here",
      h(
        "div",
        null,
        "The run's own evidence verifies (the hash chain, the payloads, the manifest, the outputs), but this " +
          "viewer could not make every check. Nothing was found wrong; this is not tampering.",
      ),
      problems(v, "problems"),
      h(
        "p",
        { class: "hint" },
        "Serve the store with the catalog that holds the run's bundle and experiment (prove ui --config FILE) to check the rest.",
      ),
    );
  }
  const n = v.verdict.problems.length;
  return box(
    "bad",
    "!",
    `Does not verify: ${n} ${n === 1 ? "problem" : "problems"}`,
    h(
      "div",
      null,
      v.untrusted
        ? "The content below is shown as asked, and cannot be trusted."
        : "Only the structure of its events is shown: its content cannot be trusted.",
    ),
    problems(v, "problems"),
    v.untrusted ? null : h(
      "p",
      null,
      h("button", { onclick: () => go(here() + "?untrusted=1") }, "Show the unverified content anyway"),
    ),
  );
}

/** How the run ended: completed, failed (with its reason), cancelled, cut, or running. */
export function outcome(state: RunState): HTMLElement {
  const v = state.view;
  const f = v.failure;
  const link = (seq: number) =>
    h(
      "a",
      { href: "#", onclick: (e: Event) => (e.preventDefault(), state.select({ kind: "event", seq })) },
      `#${seq}`,
    );
  if (f) {
    const reason = f.error === null
      ? h("span", { class: "muted" }, "The reason is hidden at this level.")
      : h("code", { class: "reason" }, f.message ? `${f.error}: ${f.message}` : f.error);
    return h(
      "div",
      { class: "outcome " + (f.cancelled ? "cancelled" : "failed"), id: "outcome", role: "alert" },
      h("div", { class: "icon" }, f.cancelled ? "■" : "✕"),
      h(
        "div",
        { class: "grow" },
        h("h2", null, f.cancelled ? "Run cancelled" : "Run failed"),
        h("div", null, reason),
        h("div", { class: "muted small" }, "Recorded by run_failed ", link(f.seq), "."),
      ),
    );
  }
  const words: Record<string, [string, string, string]> = {
    completed: ["completed", "✓", "Run completed"],
    running: ["running", "…", "Running"],
    cut: ["cut", "–", "Run cut short: it has no ending event"],
    cancelled: ["cancelled", "■", "Run cancelled"],
  };
  const [cls, icon, title] = words[v.status] ?? ["cut", "·", v.status];
  const calls = `${v.summary.model_calls} model ${v.summary.model_calls === 1 ? "call" : "calls"}, ` +
    `${v.summary.tool_calls} tool ${v.summary.tool_calls === 1 ? "call" : "calls"}`;
  return h(
    "div",
    { class: "outcome " + cls, id: "outcome" },
    h("div", { class: "icon" }, icon),
    h(
      "div",
      { class: "grow" },
      h("h2", null, title),
      h("div", null, calls + (v.summary.errors ? `; ${v.summary.errors} went wrong (in red below)` : "")),
    ),
  );
}

/** The run's facts: names, times, counts, tokens and cost; what the level hides says "hidden". */
export function facts(v: RunView): HTMLElement {
  const fact = (k: string, value: Kid, title?: string) =>
    h("div", { title: title ?? null }, h("span", null, k), h("b", null, value));
  const f = v.facts;
  const name = (key: keyof Omit<typeof f, "hidden">) =>
    f[key] ?? (f.hidden.includes(key) ? hiddenMark(`hidden: ${v.note ?? "the level shows no names"}`) : "—");
  const { first_time: first, last_time: last } = v.summary;
  const took = v.running ? "running" : first && last ? duration(micros(last) - micros(first)) : "—";
  const t = v.summary.tokens;
  const usageHidden = v.level === null || v.level === "names";
  const from = v.summary.calls_from;
  const source = (kind: "model" | "tool") =>
    from[kind] === "span" ? " (from spans)" : from[kind] === "hook" ? " (from hooks)" : "";
  return h(
    "div",
    { class: "facts", id: "facts" },
    fact("Agent", name("agent")),
    fact(
      "Version",
      f.agent_version ? short(f.agent_version, 12) : name("agent_version"),
      f.agent_version ?? undefined,
    ),
    fact("Model", name("model")),
    fact("Backend", name("backend")),
    fact("Started", first ? when(first) : "—"),
    fact("Took", took),
    fact("Model calls", String(v.summary.model_calls) + source("model")),
    fact("Tool calls", String(v.summary.tool_calls) + source("tool")),
    fact(
      "Tokens in / out",
      t
        ? `${tokens(t.input)} / ${tokens(t.output)}`
        : usageHidden
        ? hiddenMark("token counts need usage")
        : "—",
    ),
    fact(
      "Cost",
      v.summary.cost
        ? money(v.summary.cost.amount, v.summary.cost.currency)
        : usageHidden
        ? hiddenMark("costs need usage")
        : "—",
    ),
    fact("Events", v.summary.events.toLocaleString("en-US")),
    fact("Shown at", v.level ?? "structure only"),
  );
}

const ERROR_WORDS: Record<string, string> = {
  run_failed: "run failed",
  step_failed: "step failed",
  tool_error: "tool failed",
  refused: "refused",
  telemetry: "telemetry",
  span_error: "span error",
};

/** What went wrong, each in red, each opening its event in the detail panel. */
export function errors(state: RunState): HTMLElement | null {
  const v = state.view;
  if (!v.errors.length) return null;
  const rows = v.errors.map((e) =>
    h(
      "tr",
      {
        class: "err clickable",
        "data-error": e.kind,
        "data-seq": e.seq,
        onclick: () => state.select({ kind: "event", seq: e.seq }),
      },
      h("td", { class: "seq" }, e.seq),
      h("td", null, h("span", { class: "tag t-err" }, ERROR_WORDS[e.kind] ?? e.kind)),
      h("td", { class: "mono" }, e.what ?? (v.level === null ? hiddenMark() : "—")),
      h("td", null, e.detail ?? (v.level === "bodies" ? "—" : hiddenMark("the reason needs bodies"))),
    )
  );
  const more = v.summary.errors > v.errors.length
    ? h("div", { class: "pager" }, `${v.errors.length} of ${v.summary.errors} shown`)
    : null;
  return card(
    `What went wrong (${v.summary.errors})`,
    [table(["#", "What", "Step or tool", "Detail"], rows), more],
    { flush: true, id: "errors", cls: "bad-card" },
  );
}
