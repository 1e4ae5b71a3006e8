/**
 * Two runs side by side: their verdicts, lengths, tokens, answers, settings (what differs highlighted) and
 * inputs.
 * @module
 */
import type { CompareSide } from "../compare_view.ts";
import { api } from "./api.ts";
import { card, empty, errorBox, h, pill, show } from "./dom.ts";
import { duration, short } from "./format.ts";
import { go, link } from "./nav.ts";

/** A side's verdict, length, tokens and level. */
function head(s: CompareSide): HTMLElement {
  const fact = (k: string, value: string) => h("div", null, h("span", null, k), h("b", null, value));
  return h(
    "section",
    { class: "card" },
    h(
      "div",
      { class: "row" },
      link("runs/" + encodeURIComponent(s.run_id), h("span", { class: "mono grow" }, s.run_id)),
      pill(s.status),
    ),
    h(
      "div",
      { class: "facts" },
      fact("Verdict", s.verdict.checked ? (s.verdict.ok ? "verifies" : "does not verify") : "running"),
      fact("Took", duration(s.duration_us)),
      fact("Tokens in / out", s.tokens ? `${s.tokens.input} / ${s.tokens.output}` : "—"),
      fact("Shown at", s.level ?? "structure only"),
    ),
  );
}

/** A side's settings, each row marked where the two runs differ. */
function settings(
  s: CompareSide,
  compared: { names: string[]; differs: (k: string) => boolean },
): HTMLElement {
  if (!compared.names.length) return empty("No settings shown at this level.");
  return h(
    "table",
    { class: "kv" },
    h(
      "tbody",
      null,
      compared.names.map((k) => {
        const value = s.settings[k];
        const shown = value === undefined
          ? "—"
          : typeof value === "object"
          ? JSON.stringify(value)
          : String(value);
        return h(
          "tr",
          { class: compared.differs(k) ? "diff" : null },
          h("td", null, k),
          h("td", { class: "mono" }, shown),
        );
      }),
    ),
  );
}

function side(s: CompareSide, compared: { names: string[]; differs: (k: string) => boolean }): HTMLElement {
  const inputs = s.inputs.length
    ? h(
      "table",
      { class: "kv" },
      h(
        "tbody",
        null,
        s.inputs.map((i) =>
          h(
            "tr",
            null,
            h("td", null, i.name === null ? "hidden" : String(i.name)),
            h("td", { class: "mono" }, `${i.uri ?? ""} ${short(i.sha256, 16)}`),
          )
        ),
      ),
    )
    : empty("No inputs.");
  const answers = s.answers.length
    ? s.answers.map((x) =>
      h("div", { class: "answer" }, h("span", { class: "who" }, "model call #" + x.seq), x.text)
    )
    : empty("No answers shown at this level.");
  return h(
    "div",
    null,
    head(s),
    s.note ? h("div", { class: "note" }, s.note) : null,
    h("section", { class: "card" }, h("h2", null, "Answers"), answers),
    h("section", { class: "card flush" }, h("h2", null, "Settings"), settings(s, compared)),
    h("section", { class: "card flush" }, h("h2", null, "Inputs"), inputs),
  );
}

/** Draws the compare page. */
export function comparePage(): void {
  const q = new URLSearchParams(location.search);
  const a = h("input", { name: "a", placeholder: "run ID", value: q.get("a") ?? "" });
  const b = h("input", { name: "b", placeholder: "run ID", value: q.get("b") ?? "" });
  a.style.minWidth = "340px";
  b.style.minWidth = "340px";
  const body = h("div");
  const submit = (e: Event) => {
    e.preventDefault();
    go(`compare?a=${encodeURIComponent(a.value.trim())}&b=${encodeURIComponent(b.value.trim())}`);
  };
  show(h(
    "div",
    null,
    h("h1", null, "Compare two runs"),
    h("p", { class: "sub" }, "Their settings, inputs and answers side by side; what differs is highlighted."),
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
    body.replaceChildren(card(null, empty("Pick two runs here, or tick two runs on the runs page.")));
    return;
  }
  api<CompareSide[]>(`api/compare?a=${encodeURIComponent(q.get("a")!)}&b=${encodeURIComponent(q.get("b")!)}`)
    .then(
      (sides) => {
        const names = [...new Set(sides.flatMap((s) => Object.keys(s.settings)))].sort();
        const differs = (k: string) =>
          JSON.stringify(sides[0]!.settings[k]) !== JSON.stringify(sides[1]!.settings[k]);
        body.replaceChildren(
          h("div", { class: "split", id: "compare" }, sides.map((s) => side(s, { names, differs }))),
        );
      },
      (e) => body.replaceChildren(errorBox(e)),
    );
}
