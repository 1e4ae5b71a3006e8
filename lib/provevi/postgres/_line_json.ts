/**
 * An event's line as PostgreSQL's `jsonb`, for the views, the indexes and the listing of runs. A canonical line
 * escapes a NUL as `\u0000` and half of a surrogate pair as `\ud800`; `jsonb` refuses both (`unsupported
 * Unicode escape sequence`, `invalid input syntax for type json`), so a plain `line::jsonb` fails the insert of
 * such a `run_failed` line (an index reads it) and any query that reads one. Here each of those escapes becomes
 * an escaped backslash and the same letters, so a value reads as the six characters that a column holds for it
 * (`columnText`); every other line is cast as it is.
 * @module
 */

/**
 * The SQL of a line column as `jsonb`, safe for every line: immutable, so an index may use it, and written
 * the same in the schema's indexes and in the queries that should use them.
 *
 * @param column The column, such as `e.line`.
 * @returns An SQL expression of type `jsonb`.
 */
export function lineJsonb(column: string): string {
  // The escape is matched only after an even number of backslashes: `\\u0000` in a line is a backslash and
  // "u0000", not an escape. A line with no `\u` at all skips the regular expression.
  return `(CASE WHEN strpos(${column}, '\\u') = 0 THEN ${column} ELSE regexp_replace(${column}, ` +
    `'(?<!\\\\)((?:\\\\\\\\)*)\\\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})', '\\1\\\\\\\\u\\2', 'g') END)::jsonb`;
}
