/**
 * The permission sets of `deno.json`, spelled out as `--allow-*` flags. The sets (`"permissions"`, used by the
 * tasks as `deno run -P=NAME`) are the one place that says what each command may do; this turns one into flags
 * for what cannot take `-P`: `deno install` (Deno 2.9.6 accepts `-P` there but writes a shim without it) and a
 * child process started with narrower or wider flags than its parent.
 * @module
 */
import CONFIG from "../deno.json" with { type: "json" };

/** One permission set: each kind is allowed whole (`true`) or for the values listed. */
export type PermissionSet = Partial<Record<PermissionKind, boolean | string[]>>;

/** The kinds of permission a set may name, in the order the flags are written. */
export const PERMISSION_KINDS = ["read", "write", "net", "env", "run", "sys", "ffi", "import"] as const;

/** One kind of permission. */
export type PermissionKind = typeof PERMISSION_KINDS[number];

/** The names of the sets in `deno.json`. */
export type PermissionSetName = keyof typeof CONFIG.permissions;

/**
 * A permission set of `deno.json`, by name.
 *
 * @param name The set's name, as a task's `-P=NAME` gives it.
 * @returns The set.
 * @throws {RangeError} When deno.json has no set of that name.
 */
export function permissionSet(name: string): PermissionSet {
  const sets = CONFIG.permissions as Record<string, PermissionSet>;
  const set = sets[name];
  if (set === undefined) {
    throw new RangeError(`deno.json has no permission set "${name}"; it has ${Object.keys(sets).join(", ")}`);
  }
  return set;
}

/**
 * The `--allow-*` flags of a permission set, `--no-prompt` first.
 *
 * @param set The set, or its name in deno.json.
 * @returns The flags, such as `["--no-prompt", "--allow-read", "--allow-run=git,cp"]`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * assert.deepEqual(permissionFlags({ read: true, run: ["git", "cp"] }), ["--no-prompt", "--allow-read", "--allow-run=git,cp"]);
 * ```
 */
export function permissionFlags(set: PermissionSet | string): string[] {
  const resolved = typeof set === "string" ? permissionSet(set) : set;
  const flags = ["--no-prompt"];
  for (const kind of PERMISSION_KINDS) {
    const value = resolved[kind];
    if (value === true) flags.push(`--allow-${kind}`);
    else if (Array.isArray(value) && value.length) flags.push(`--allow-${kind}=${value.join(",")}`);
  }
  return flags;
}

/**
 * A command line's permission words with each `-P=NAME` spelled out as the set's flags, as Deno reads them: a
 * flag given beside the set (`-P=provr --allow-run=git,provr`) takes the place of the set's entry of that kind.
 *
 * @param words The words of a `deno run` or `deno compile` between the subcommand and the script.
 * @returns The same words with every set replaced by its flags, and `-q` dropped.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * const flags = withSetsSpelledOut(["-q", "--no-prompt", "-P=provr", "--allow-run=git,cp,deno,provr"]);
 * assert.ok(flags.includes("--allow-run=git,cp,deno,provr") && flags.includes("--allow-read"));
 * ```
 */
export function withSetsSpelledOut(words: string[]): string[] {
  const given = new Set(words.flatMap((w) => w.match(/^--allow-(\w+)/)?.[1] ?? []));
  const out: string[] = [];
  for (const word of words) {
    const set = word.match(/^(?:-P|--permission-set)=(.+)$/)?.[1];
    if (set === undefined) {
      if (word !== "-q" && word !== "--quiet" && !out.includes(word)) out.push(word);
      continue;
    }
    for (const flag of permissionFlags(set)) {
      const kind = flag.match(/^--allow-(\w+)/)?.[1];
      if ((kind === undefined || !given.has(kind)) && !out.includes(flag)) out.push(flag);
    }
  }
  return out;
}
