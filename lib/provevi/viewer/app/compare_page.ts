/**
 * Two runs side by side: their verdicts, outcomes, calls, tokens and cost; their steps aligned one by one with
 * the first divergence marked; their agents' specs as a diff (two versions of an agent, compared by a run of
 * each); their answers, settings (what differs highlighted) and inputs.
 * @module
 */
import type { CompareView, SpecRow } from "../compare_steps.ts";
import type { CompareSide } from "../compare_view.ts";
import type { DiffStep, StepPair } from "../step_diff.ts";
import { api } from "./api.ts";
import { card, empty, errorBox, h, hiddenMark, type Kid, pill, show, table, verdictBadge } from "./dom.ts";
import { duration, money, short, tokens } from "./format.ts";
import { go, link } from "./nav.ts";

const runLink = (id: string, kids: Kid) => link("runs/" + encodeURIComponent(id), kids);

/** A side's verdict, outcome, length, calls, tokens and cost. */
function head(s: CompareSide, label: string): HTMLElement {
  const fact = (k: string, value: Kid) => h("div", null, h("span", null, k), h("b", null, value));
  return h(
    "section",
    { class: "card" },
    h(
      "div",
      { class: "row" },
      h("span", { class: "side-label" }, label),
      runLink(s.run_id, h("span", { class: "mono" }, s.run_id)),
      h("span", { class: "grow" }),
      pill(s.status),
      verdictBadge(s.verdict.kind),
    ),
    s.failure
      ? h(
        "div",
        { class: "reason-line" },
        "Failed: ",
        h("code", null, s.failure.error ?? "reason hidden at this level"),
      )
      : null,
    h(
      "div",
      { class: "facts" },
      fact("Agent", s.facts.agent ?? (s.facts.hidden.includes("agent") ? hiddenMark() : "—")),
      fact("Version", s.facts.agent_version ? short(s.facts.agent_version, 12) : "—"),
      fact("Took", duration(s.duration_us)),
      fact("Model · tool calls", `${s.model_calls} · ${s.tool_calls}`),
      fact("Tokens in / out", s.tokens ? `${tokens(s.tokens.input)} / ${tokens(s.tokens.output)}` : "—"),
      fact("Cost", s.cost ? money(s.cost.amount, s.cost.currency) : "—"),
      fact("Errors", String(s.errors)),
    ),
  );
}

function stepCell(step: DiffStep | null, differs: string[]): Kid {
  if (step === null) return h("span", { class: "muted" }, "no such step");
  const mark = (key: string, kids: Kid) => h("span", { class: differs.includes(key) ? "dpart" : null }, kids);
  return [
    h("span", { class: "tag " + (step.kind === "model" ? "t-model_called" : "t-tool_called") }, step.kind),
    " ",
    mark("name", h("span", { class: "mono" }, step.name ?? "hidden")),
    " ",
    mark("status", h("span", { class: "st-" + step.status }, step.status)),
    step.input_tokens !== null
      ? h("span", { class: "muted small" }, ` ${step.input_tokens}/${step.output_tokens ?? 0} tokens`)
      : null,
    h(
      "div",
      { class: "hash small" },
      mark("input", `in ${short(step.input, 10)}`),
      " · ",
      mark("output", `out ${short(step.output, 10)}`),
    ),
  ];
}

const WHY: Record<string, string> = {
  missing: "one run has no such step",
  kind: "a different kind of step",
  name: "a different model or tool",
  status: "a different status",
  input: "a different request or arguments",
  output: "a different reply or result",
};

function pairRow(p: StepPair, first: number | null): HTMLTableRowElement {
  const isFirst = p.step === first;
  return h(
    "tr",
    {
      class: (p.differs.length ? "diff" : "") + (isFirst ? " first-div" : ""),
      id: isFirst ? "first-divergence" : null,
      "data-step": p.step,
      "data-differs": p.differs.join(" "),
    },
    h("td", { class: "seq" }, p.step),
    h("td", null, stepCell(p.a, p.differs)),
    h("td", null, stepCell(p.b, p.differs)),
    h(
      "td",
      null,
      isFirst ? h("span", { class: "tag t-err" }, "first divergence") : null,
      p.differs.length
        ? h("div", { class: "small" }, p.differs.map((d) => WHY[d] ?? d).join("; "))
        : h("span", { class: "muted" }, "same"),
    ),
  );
}

function stepsCard(view: CompareView): HTMLElement {
  const d = view.steps;
  const said = d.first === null
    ? "The two runs took the same steps: each model call and tool call has the same request, reply, arguments and result."
    : `The runs first differ at step ${d.first}; ${d.differing} of ${d.pairs.length + d.more} steps differ.`;
  return card(
    "Steps, aligned",
    [
      h("p", { class: "pad muted", id: "divergence" }, said),
      d.pairs.length
        ? table(["Step", "Run A", "Run B", "What differs"], d.pairs.map((p) => pairRow(p, d.first)))
        : empty("Neither run made a model or tool call."),
      d.more ? h("div", { class: "pager" }, `${d.more} more steps not listed`) : null,
    ],
    { flush: true, id: "steps" },
  );
}

function specCard(rows: SpecRow[] | null): HTMLElement {
  if (rows === null) {
    return card("Agent spec", empty("The agents' specs are hidden at this level: they show at bodies."), {
      id: "spec",
    });
  }
  const differing = rows.filter((r) => r.differs).length;
  return card(
    `Agent spec: ${
      differing ? `${differing} ${differing === 1 ? "key differs" : "keys differ"}` : "the same"
    }`,
    table(
      ["Key", "Run A", "Run B"],
      rows.map((r) =>
        h(
          "tr",
          { class: r.differs ? "diff" : null, "data-path": r.path },
          h("td", { class: "mono" }, r.path),
          h("td", { class: "mono pre" }, r.a ?? h("span", { class: "muted" }, "(none)")),
          h("td", { class: "mono pre" }, r.b ?? h("span", { class: "muted" }, "(none)")),
        )
      ),
    ),
    { flush: true, id: "spec" },
  );
}

/** The two sides' settings, each row marked where the runs differ. */
function settingsCard(sides: CompareSide[]): HTMLElement {
  const names = [...new Set(sides.flatMap((s) => Object.keys(s.settings)))].filter((k) => k !== "spec")
    .sort();
  const shown = (s: CompareSide, k: string) => {
    const value = s.settings[k];
    return value === undefined ? "—" : typeof value === "object" ? JSON.stringify(value) : String(value);
  };
  if (!names.length) return card("Settings", empty("No settings shown at this level."), { flush: true });
  return card(
    "Settings",
    table(
      ["Setting", "Run A", "Run B"],
      names.map((k) =>
        h(
          "tr",
          { class: shown(sides[0]!, k) !== shown(sides[1]!, k) ? "diff" : null },
          h("td", { class: "mono" }, k),
          h("td", { class: "mono" }, shown(sides[0]!, k)),
          h("td", { class: "mono" }, shown(sides[1]!, k)),
        )
      ),
    ),
    { flush: true, id: "settings" },
  );
}

function answers(s: CompareSide): HTMLElement {
  return card(
    "Answers",
    s.answers.length
      ? s.answers.map((x) =>
        h("div", { class: "answer" }, h("span", { class: "who" }, "model call #" + x.seq), x.text)
      )
      : empty("No answers shown at this level."),
  );
}

function inputs(s: CompareSide): HTMLElement {
  return card(
    "Inputs",
    s.inputs.length
      ? table(
        ["Name", "Pinned URI and SHA-256"],
        s.inputs.map((i) =>
          h(
            "tr",
            null,
            h("td", null, i.name === null ? "hidden" : String(i.name)),
            h("td", { class: "mono" }, `${i.uri ?? ""} ${short(i.sha256, 16)}`),
          )
        ),
      )
      : empty("No inputs."),
    { flush: true },
  );
}

/** Draws the compare page. */
export function comparePage(): void {
  const q = new URLSearchParams(location.search);
  const a = h("input", { name: "a", placeholder: "run ID", value: q.get("a") ?? "", class: "runid" });
  const b = h("input", { name: "b", placeholder: "run ID", value: q.get("b") ?? "", class: "runid" });
  const body = h("div");
  const submit = (e: Event) => {
    e.preventDefault();
    go(`compare?a=${encodeURIComponent(a.value.trim())}&b=${encodeURIComponent(b.value.trim())}`);
  };
  show(h(
    "div",
    null,
    h("h1", null, "Compare two runs"),
    h(
      "p",
      { class: "sub" },
      "Their steps aligned one by one with the first divergence marked, their agents' specs, answers, settings and inputs.",
    ),
    card(
      null,
      h(
        "form",
        { class: "filters", onsubmit: submit },
        h("label", { class: "field" }, "Run A", a),
        h("label", { class: "field" }, "Run B", b),
        h("button", { class: "primary", type: "submit" }, "Compare"),
      ),
    ),
    body,
  ));
  if (!q.get("a") || !q.get("b")) {
    body.replaceChildren(
      card(
        null,
        empty("Pick two runs here, tick two runs on the runs page, or two versions on the agents page."),
      ),
    );
    return;
  }
  api<CompareView>(`api/compare?a=${encodeURIComponent(q.get("a")!)}&b=${encodeURIComponent(q.get("b")!)}`)
    .then(
      (view) => {
        const [sa, sb] = view.sides as [CompareSide, CompareSide];
        body.replaceChildren(h(
          "div",
          { id: "compare" },
          h("div", { class: "split" }, head(sa, "A"), head(sb, "B")),
          stepsCard(view),
          specCard(view.spec),
          h("div", { class: "split" }, answers(sa), answers(sb)),
          settingsCard(view.sides),
          h("div", { class: "split" }, inputs(sa), inputs(sb)),
        ));
      },
      (e) => body.replaceChildren(errorBox(e)),
    );
}
