/**
 * The `data` of a received span's `span_recorded` event, and the check that lets its line be written without a
 * walk over it: the receiver builds the data with its keys in RFC 8785 order, so `JSON.stringify` writes its
 * canonical text whenever its texts are well formed and its numbers finite, which a few looks tell
 * (`EventInit.dataCanonical`). Data that fails them (a lone surrogate, a number that is not finite) goes to the
 * general canonicalizer, as before.
 * @module
 */
import type { Json } from "../evidence/event.ts";

/**
 * True when `JSON.stringify(value)` is its RFC 8785 text: a text with no lone surrogate, a finite number, a yes
 * or no, null, or a list of them. The values a span row keeps (names and counts) are such values.
 */
function flatCanonical(value: Json): boolean {
  switch (typeof value) {
    case "string":
      return value.isWellFormed();
    case "number":
      return Number.isFinite(value);
    case "boolean":
      return true;
  }
  if (value === null) return true;
  if (Array.isArray(value)) {
    for (const v of value) if (!flatCanonical(v)) return false;
    return true;
  }
  return false;
}

/**
 * True when `JSON.stringify` writes a row's attributes (names and counts) as RFC 8785 does: keys in sorted
 * order, none starting with a digit, and flat values it writes as RFC 8785 does.
 *
 * @param attributes The attributes a span row keeps.
 * @returns Whether their `JSON.stringify` text is their canonical text.
 */
export function canonicalAttributes(attributes: { [key: string]: Json }): boolean {
  let previous: string | null = null;
  for (const key in attributes) {
    const c = key.charCodeAt(0);
    if (
      (previous !== null && !(previous < key)) || (c >= 48 && c <= 57) || key === "__proto__" ||
      !key.isWellFormed() || !flatCanonical(attributes[key]!)
    ) return false;
    previous = key;
  }
  return true;
}

/** The `data` of a `span_recorded` event, its keys in RFC 8785 order. */
export interface SpanData {
  [key: string]: Json;
  attributes: { [key: string]: Json };
  end_time: string;
  kind: number;
  library: null;
  name: string;
  scope: string;
  service: string | null;
  source: "receiver";
  status: { code: number; message: string | null };
  version: string | null;
}

function wellFormed(text: string | null): boolean {
  return text === null || text.isWellFormed();
}

/**
 * True when `JSON.stringify(data)` is the RFC 8785 text of a span event's data: its keys are in order as built,
 * so its texts and numbers are what is left to look at.
 *
 * @param data The data, built with its keys in sorted order.
 * @param attributesCanonical What {@linkcode canonicalAttributes} said of `data.attributes`.
 * @returns Whether the line may take `JSON.stringify(data)` as the data's canonical text.
 */
export function canonicalData(data: SpanData, attributesCanonical: boolean): boolean {
  return attributesCanonical && Number.isFinite(data.kind) && Number.isFinite(data.status.code) &&
    wellFormed(data.end_time) && wellFormed(data.name) && wellFormed(data.scope) &&
    wellFormed(data.service) &&
    wellFormed(data.status.message) && wellFormed(data.version);
}
