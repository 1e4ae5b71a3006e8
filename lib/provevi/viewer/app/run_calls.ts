/**
 * A run's steps: each model call and tool call in order, whatever recorded it (provrun, the model gateway, an
 * agent program's spans or hooks), with its status, tokens, cost and time; a failed or refused call in red.
 * A row opens its event in the detail panel, where a model call shows its messages.
 * @module
 */
import type { ViewCall } from "../run_calls.ts";
import { card, empty, h, hiddenMark, table } from "./dom.ts";
import { duration, money, tokens } from "./format.ts";
import type { RunState } from "./run_state.ts";

const FROM: Record<ViewCall["from"], string> = {
  event: "",
  span: "span",
  hook: "hook",
};

function row(state: RunState, c: ViewCall, n: number): HTMLTableRowElement {
  const usage = state.view.level === "usage" || state.view.level === "bodies";
  const bad = c.status !== "ok";
  return h(
    "tr",
    {
      class: "clickable" + (bad ? " err" : ""),
      "data-call": c.kind,
      "data-seq": c.seq,
      "data-status": c.status,
      onclick: () => state.select({ kind: "event", seq: c.seq }),
    },
    h("td", { class: "seq" }, n),
    h(
      "td",
      null,
      h(
        "span",
        { class: "tag " + (c.kind === "model" ? "t-model_called" : "t-tool_called") },
        c.kind === "model" ? "model" : "tool",
      ),
    ),
    h(
      "td",
      { class: "mono" },
      c.name ?? hiddenMark("names show from the names level"),
      FROM[c.from] ? h("span", { class: "muted small" }, ` · from a ${FROM[c.from]}`) : null,
    ),
    h(
      "td",
      null,
      bad
        ? h("span", { class: "st-" + c.status }, c.status === "refused" ? "refused" : c.error ?? "failed")
        : h("span", { class: "st-ok" }, "ok"),
    ),
    h(
      "td",
      { class: "num" },
      c.kind !== "model"
        ? ""
        : c.input_tokens === null
        ? (usage ? "—" : hiddenMark("token counts need usage"))
        : `${tokens(c.input_tokens)} / ${tokens(c.output_tokens ?? 0)}`,
    ),
    h("td", { class: "num" }, c.cost === null ? "" : money(c.cost)),
    h("td", { class: "num muted" }, c.duration_us === null ? "" : duration(c.duration_us)),
  );
}

/** The steps card: every call in order, a row each. */
export function callsCard(state: RunState): HTMLElement {
  const v = state.view;
  const n = v.summary.model_calls + v.summary.tool_calls;
  const list = v.calls.length
    ? [
      table(
        ["#", "Step", "Model or tool", "Status", "Tokens in / out", "Cost", "Took"],
        v.calls.map((c, i) => row(state, c, i + 1)),
      ),
      n > v.calls.length ? h("div", { class: "pager" }, `${v.calls.length} of ${n} calls shown`) : null,
    ]
    : empty(
      v.running
        ? "No model or tool call yet."
        : "This run made no model or tool call that its evidence shows.",
    );
  return card(`Steps (${n})`, list, { flush: true, id: "calls" });
}
