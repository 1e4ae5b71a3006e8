/**
 * Names that look like other names. Where a name is an identity (an MLflow experiment or tag, an assessment's
 * name, a model, an attribute's key), `gpt‑4o` with a non-breaking hyphen, `ｇｐｔ-4o` in full-width letters or
 * `gpt-4о` with a Cyrillic `о` would show as the name it copies, yet be another. The rule, after Unicode's
 * identifier profile (UTS #39, "highly restrictive"):
 *
 * - the text is its own NFKC form: no compatibility character (full-width and half-width forms, ligatures,
 *   mathematical letters, superscripts, circled and parenthesized forms, the one-dot leader…) and no letter
 *   written as a base and a combining mark that NFKC would join;
 * - its letters and digits are of one script, or of Latin with Han and Japanese kana, or Latin with Han and
 *   Bopomofo, or Latin with Han and Hangul (so `模型-7b` and `モデル-v2` stay names, `αlpha` does not);
 * - a word of Cyrillic or Greek alone is not made only of letters that look like Latin ones (`раура`);
 * - no punctuation, mathematical sign, or modifier letter or symbol of no script outside ASCII, but the
 *   ideographic ones in a word of Han or kana (`‐`, `–`, `−`, `˗`, `∶`, `꞉`, `․` look like `-`, `:` and `.`).
 *
 * Real names of one script (Japanese, Greek, Russian, Arabic…) pass; only ASCII-only names skip the test.
 * @module
 */

/** Scripts a name may mix (UTS #39's highly restrictive sets), as the names in SCRIPTS below. */
const MIXES: ReadonlyArray<ReadonlySet<string>> = [
  new Set(["Latin", "Han", "Hiragana", "Katakana"]),
  new Set(["Latin", "Han", "Bopomofo"]),
  new Set(["Latin", "Han", "Hangul"]),
];

/**
 * The scripts told apart, each by its property escape. A character of a script not listed counts as "Other",
 * and mixes with nothing listed.
 */
const SCRIPTS: ReadonlyArray<[string, RegExp]> = [
  "Latin",
  "Greek",
  "Cyrillic",
  "Han",
  "Hiragana",
  "Katakana",
  "Hangul",
  "Bopomofo",
  "Armenian",
  "Hebrew",
  "Arabic",
  "Syriac",
  "Thaana",
  "Devanagari",
  "Bengali",
  "Gurmukhi",
  "Gujarati",
  "Oriya",
  "Tamil",
  "Telugu",
  "Kannada",
  "Malayalam",
  "Sinhala",
  "Thai",
  "Lao",
  "Tibetan",
  "Myanmar",
  "Georgian",
  "Ethiopic",
  "Cherokee",
  "Khmer",
  "Mongolian",
  "Canadian_Aboriginal",
  "Runic",
  "Ogham",
  "Coptic",
  "Lisu",
  "Vai",
  "Tifinagh",
  "Nko",
].map((s) => [s, new RegExp(`^\\p{Script=${s}}$`, "u")]);

/** Characters of no script of their own: digits and punctuation of ASCII, marks that follow any letter. */
const NO_SCRIPT = /^[\p{Script=Common}\p{Script=Inherited}]$/u;
/**
 * Punctuation, mathematical signs, and the modifier letters and symbols of no script (`˗` U+02D7, `꞉` U+A789,
 * `ː` U+02D0, `ʼ` U+02BC), whose non-ASCII forms copy ASCII ones.
 */
const SIGN = /^[\p{P}\p{Sm}\p{Lm}\p{Sk}]$/u;
/** Ideographic punctuation (、「」・…) and the kana's long-vowel mark `ー`, at home in a word of Han or kana. */
const IDEOGRAPHIC_SIGN = /^[\u3000-\u303f\u30fb\u30fc]$/u;
const KANJI_KANA = ["Han", "Hiragana", "Katakana"];

/**
 * Cyrillic and Greek letters that look like Latin ones (Unicode's confusables.txt, the plain cases). A word of
 * one of these scripts made only of them (and of characters of no script) reads as a Latin word.
 */
const LATIN_LOOKING = new Set(
  [..."АВЕЅІЈКМНОРСТХУаеіјоросухѕһԁԛԝүӏ", ..."ΑΒΕΖΗΙΚΜΝΟΡΤΥΧαικνορτυχ"],
);

/** The script of one character other than ASCII, or null when it has none of its own. */
function scriptOf(c: string): string | null {
  if (NO_SCRIPT.test(c)) return null;
  for (const [name, re] of SCRIPTS) if (re.test(c)) return name;
  return "Other";
}

/**
 * True when a text that holds a character outside ASCII could pass for another name: it is not its own NFKC
 * form, mixes scripts outside UTS #39's highly restrictive sets, is Cyrillic or Greek made of Latin look-alikes,
 * or holds punctuation, a mathematical sign or a modifier of no script outside ASCII (ideographic ones beside Han
 * or kana excepted).
 *
 * @param text The text, with at least one character outside ASCII.
 * @returns True when it must not pass as a name.
 * @example
 * ```ts
 * import { looksLikeAnother } from "./_lookalike.ts";
 * looksLikeAnother("ｇｐｔ-4o"); // true
 * looksLikeAnother("gpt-4\u043e"); // true (a Cyrillic о)
 * looksLikeAnother("モデル-v2"); // false
 * ```
 */
export function looksLikeAnother(text: string): boolean {
  if (text.normalize("NFKC") !== text) return true;
  const scripts = new Set<string>();
  let ideographicSign = false;
  let latinLooking = true;
  for (const c of text) {
    if (c.charCodeAt(0) < 0x80) {
      if (/[a-z]/i.test(c)) scripts.add("Latin");
      continue;
    }
    const script = scriptOf(c);
    if (script !== null) {
      scripts.add(script);
      if (!LATIN_LOOKING.has(c)) latinLooking = false;
    } else if (SIGN.test(c)) {
      if (!IDEOGRAPHIC_SIGN.test(c)) return true;
      ideographicSign = true;
    }
  }
  if (ideographicSign && !KANJI_KANA.some((s) => scripts.has(s))) return true;
  if (scripts.size <= 1) {
    const [only] = scripts;
    return (only === "Cyrillic" || only === "Greek") && latinLooking;
  }
  return !MIXES.some((mix) => [...scripts].every((s) => mix.has(s)));
}
