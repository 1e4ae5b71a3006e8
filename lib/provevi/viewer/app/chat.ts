/**
 * A conversation drawn as a chat: each message a bubble by its role (system, user, assistant, tool), its text,
 * its reasoning folded, each tool call with its arguments and each tool result (red when it is an error).
 * @module
 */
import type { ChatMessage, ChatPart } from "../chat_view.ts";
import type { EventChat } from "../run_chat.ts";
import { api, runPath } from "./api.ts";
import { add, empty, errorBox, h, type Kid } from "./dom.ts";
import { wholeLink } from "./nav.ts";

function part(p: ChatPart): Kid {
  switch (p.type) {
    case "text":
      return h("div", { class: "say" }, p.text ?? "");
    case "reasoning":
      return h(
        "details",
        { class: "thinking" },
        h("summary", null, "reasoning"),
        h("div", { class: "say" }, p.text ?? ""),
      );
    case "tool_call":
      return h(
        "div",
        { class: "call" },
        h(
          "div",
          { class: "call-head" },
          "→ ",
          h("b", null, p.name || "tool"),
          p.id ? h("span", { class: "muted" }, " " + p.id) : null,
        ),
        p.args ? h("pre", { class: "args" }, p.args) : null,
      );
    case "tool_result":
      return h(
        "div",
        { class: "call result" + (p.error ? " error" : "") },
        h(
          "div",
          { class: "call-head" },
          p.error ? "✕ error from " : "← result of ",
          h("b", null, p.name || p.id || "tool"),
        ),
        h("pre", { class: "args" }, p.text ?? ""),
      );
    case "file":
      return h("div", { class: "muted" }, p.text ?? "[file]");
  }
  return h("pre", { class: "args" }, p.text ?? "");
}

function message(m: ChatMessage): HTMLElement {
  return h(
    "div",
    { class: `msg r-${m.role}${m.reply ? " reply" : ""}`, "data-role": m.role },
    h("div", { class: "role" }, m.reply ? "assistant · this call's reply" : m.role),
    m.parts.map(part),
  );
}

/**
 * The chat of an event, loaded from the viewer.
 *
 * @param runId The run.
 * @param seq The model call's or history's event.
 * @param options Whether the page shows unverified content.
 * @returns An element that fills in when the messages arrive.
 */
export function chatOf(
  runId: string,
  seq: number,
  options: { untrusted: boolean; end?: boolean },
): HTMLElement {
  const el = h("div", { class: "chat", "data-chat": seq }, empty("Loading the messages…"));
  api<EventChat>(runPath(runId, `/events/${seq}/chat`, { untrusted: options.untrusted })).then(
    (chat) => {
      const payload = (sha: string | null, what: string) =>
        sha ? wholeLink(runPath(runId, `/payloads/${sha}`, options), what) : null;
      el.replaceChildren();
      add(
        el,
        [
          chat.skipped
            ? h("div", { class: "muted small" }, `${chat.skipped} earlier messages are not shown.`)
            : null,
          chat.messages.length
            ? chat.messages.map(message)
            : empty("No messages could be read from this call."),
          h(
            "div",
            { class: "muted small" },
            chat.cut ? "Some texts are cut to fit the page. " : null,
            payload(chat.request_sha256, chat.source === "call" ? "the request" : "the whole history"),
            chat.reply_sha256 ? " · " : null,
            payload(chat.reply_sha256, "the reply"),
          ),
        ],
      );
      // A whole history opens at its end, where the answer is, as a chat does.
      if (options.end) el.scrollTop = el.scrollHeight;
    },
    (e) => el.replaceChildren(errorBox(e)),
  );
  return el;
}
