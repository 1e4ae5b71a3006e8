/**
 * Plain names: the test that a value is a name and not a secret, a path or a place, so that it may leave the
 * evidence below the level `bodies` (provevi-reference.txt, "Check a telemetry policy").
 *
 * A shape test cannot catch every secret or path; these rules refuse the shapes that leak most often and let
 * real model names through.
 * @module
 */
import { isOneWord } from "./attributes.ts";

/**
 * The attribute keys that name a model in OpenTelemetry's GenAI conventions. {@linkcode plainAttribute}
 * declares their values, so a model name with more than one `/` stays plain under them.
 *
 * A library's own plain `model` key is not one of them, because it may hold anything, such as a folder of
 * weights.
 *
 * @example
 * ```ts
 * import { MODEL_KEYS } from "./plain_name.ts";
 * MODEL_KEYS.has("gen_ai.request.model"); // true
 * ```
 */
export const MODEL_KEYS: ReadonlySet<string> = new Set([
  "gen_ai.request.model",
  "gen_ai.response.model",
]);

/**
 * {@linkcode MODEL_KEYS} and provrun's own model keys: `model`, the run file's model, and `answered_by`, the
 * model that the provider says answered. For the copy's settings and the live feed's events.
 *
 * @example
 * ```ts
 * import { plainAttribute, RUN_MODEL_KEYS } from "./plain_name.ts";
 * plainAttribute("model", "openrouter/meta-llama/llama-3-70b", { modelKeys: RUN_MODEL_KEYS }); // true
 * ```
 */
export const RUN_MODEL_KEYS: ReadonlySet<string> = new Set([...MODEL_KEYS, "model", "answered_by"]);

/** The longest name, in UTF-16 code units; the word test itself is `isOneWord`'s. */
const MAX_NAME = 200;

// Dots and slashes of other scripts, read as `.` and `/` before the path rules, so that `etc\uff0fpasswd`
// or `host\u3002com/x` is judged as what it looks like.
const LOOKALIKE_DOTS = /[\u3002\uff0e\uff61\u2024\ufe52]/g;
const LOOKALIKE_SLASHES = /[\uff0f\u2044\u2215\u29f8\u2571]/g;
const NON_ASCII = /[\u0080-\uffff]/;
const URL_START = /^[a-z][a-z0-9+.-]*:\/\//i;
const PERCENT_ESCAPE = /%[0-9a-f]{2}/i;
const DRIVE = /^[a-z]:$/i;
const PORT = /^\d+$/;
const SCHEME_PART = /^([a-z][a-z0-9+.-]*):(.*)$/i;
const IPV4_LIKE = /^\d+(\.\d+)+$/;
const HOST_LIKE = /^(?:[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?\.)+[a-z][a-z0-9-]*[a-z0-9]\.?$/i;

/** Schemes of storage and of the web; `groq:` or `ollama:` is a provider's prefix, not one of these. */
const SCHEMES = new Set([
  "http",
  "https",
  "ws",
  "wss",
  "ftp",
  "ftps",
  "sftp",
  "scp",
  "ssh",
  "rsync",
  "git",
  "svn",
  "file",
  "smb",
  "cifs",
  "nfs",
  "webdav",
  "dav",
  "s3",
  "s3a",
  "s3n",
  "gs",
  "gcs",
  "az",
  "azure",
  "abfs",
  "abfss",
  "wasb",
  "wasbs",
  "adl",
  "hdfs",
  "webhdfs",
  "dbfs",
  "oss",
  "cos",
  "r2",
  "b2",
  "swift",
  "minio",
  "lakefs",
  "postgres",
  "postgresql",
  "mysql",
  "mariadb",
  "mssql",
  "oracle",
  "sqlite",
  "mongodb",
  "mongodb+srv",
  "redis",
  "rediss",
  "jdbc",
  "odbc",
  "ldap",
  "ldaps",
  "mailto",
  "data",
  "javascript",
  "experiment",
  "run",
  "data+table",
  "data+file",
]);

/** Hosts that start real model names in Ollama, so they stay plain as a first part. */
const MODEL_HOSTS = new Set(["hf.co", "huggingface.co", "modelscope.cn", "registry.ollama.ai"]);

/** Folders of the root whose files a path from them names, in any case. */
const HOME_ROOTS = new Set(["home", "users", "root", "etc", "private", "volumes", "tmp", "var", "~"]);
/** The other folders of a root: a path two folders deep from one of them is a machine's file. */
const ROOT_FOLDERS = new Set([
  "bin",
  "boot",
  "dev",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "media",
  "mnt",
  "opt",
  "proc",
  "run",
  "sbin",
  "snap",
  "srv",
  "sys",
  "usr",
  "nix",
  "applications",
  "library",
  "system",
  "cores",
  "workspace",
  "workspaces",
  "app",
]);
/** Folders that a path passes through to reach someone's files. */
const THROUGH = new Set(["home", "users", "~"]);

/** Files of keys or settings, by name or by extension, with a copy's suffix such as `.bak`. */
const KEY_FILE = new RegExp(
  "^(?:" + [
    "[^/]*\\.(?:pem|key|p12|pfx|jks|keystore|ppk|gpg|pgp|asc|pub|crt|cer|der|csr|kdbx|ovpn|" +
    "yaml|yml|toml|ini|cfg|conf|config|env|properties|tfvars|tfstate|npmrc|pypirc|netrc|pgpass|htpasswd)",
    "id_[a-z0-9_]+",
    "kubeconfig",
    "config",
    "credentials",
    "authorized_keys",
    "known_hosts",
    "netrc",
    "pgpass",
    "htpasswd",
    "shadow",
    "passwd",
    "environ",
  ].join("|") + ")(?:\\.(?:bak|old|orig|backup|save|swp|tmp|copy|\\d+)|~)*$",
  "i",
);

/**
 * Common API keys and tokens, by their start and the run of characters after it. `hf_transfer` or
 * `sk-learn` is too short to be a key.
 */
const SECRET = new RegExp(
  "(?:^|[^A-Za-z0-9])(?:" + [
    "sk-[A-Za-z0-9_-]{20,}", // OpenAI, Anthropic (sk-ant-…), OpenRouter (sk-or-…)
    "[sr]k_(?:live|test)_[A-Za-z0-9]{10,}", // Stripe
    "pk_live_[A-Za-z0-9]{10,}",
    "gh[pousr]_[A-Za-z0-9]{20,}", // GitHub
    "github_pat_[A-Za-z0-9_]{20,}",
    "xox[abpors]-[A-Za-z0-9-]{10,}", // Slack
    "(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}", // AWS
    "hf_[A-Za-z0-9]{30,}", // Hugging Face
    "eyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{4,}", // JSON web token
    "AIza[A-Za-z0-9_-]{30,}", // Google
    "glpat-[A-Za-z0-9_-]{20,}", // GitLab
    "npm_[A-Za-z0-9]{30,}",
    "xai-[A-Za-z0-9]{30,}",
    "gsk_[A-Za-z0-9]{30,}", // Groq
    "r8_[A-Za-z0-9]{30,}", // Replicate
    "-----BEGIN",
  ].join("|") + ")",
);

/** The starts of {@linkcode SECRET}'s keys alone: a cheap scan that rules most texts out before the full one. */
const SECRET_HINT =
  /sk-|k_live_|k_test_|gh[pousr]_|github_pat_|xox[abpors]-|AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|hf_|eyJ|AIza|glpat-|npm_|xai-|gsk_|r8_|-----BEGIN/;

/** Options of {@linkcode plainName}. */
export interface PlainNameOptions {
  /** Texts that may have more than one `/`, such as the model a run names; each must pass every other test. */
  declared?: Iterable<string>;
}

/**
 * True when a value is a plain name: a number, a yes or no, or one word of at most 200 characters that looks
 * like no URL, user and password, setting, path of a machine, place, or API key.
 *
 * @param value The value to test.
 * @param options `declared`: texts that may have more than one `/`, such as a model's name.
 * @returns True when the value may leave the evidence as a name.
 * @example
 * ```ts
 * import { plainName } from "./plain_name.ts";
 * plainName("openai/gpt-4o-mini"); // true
 * plainName("https://user:password@host"); // false
 * plainName("etc/passwd"); // false
 * plainName("openrouter/meta-llama/llama-3-70b", { declared: ["openrouter/meta-llama/llama-3-70b"] }); // true
 * ```
 */
export function plainName(value: unknown, options: PlainNameOptions = {}): boolean {
  if (typeof value === "number") return Number.isFinite(value);
  if (typeof value === "boolean") return true;
  if (typeof value === "bigint") return true;
  if (typeof value !== "string") return false;
  const declared = options.declared === undefined ? false : isDeclared(value, options.declared);
  return plainWord(value, declared);
}

/**
 * {@linkcode isOneWord} and {@linkcode plainText} of a text, with one pass over its characters for the common
 * case: for a text all of ASCII, the pass decides what the regular expressions of the two would (whitespace or a
 * control character: not one word; none of `/ \ : @ = % . ~`: plain unless it holds an API key), and a text
 * with any other character, or one of those, takes the full test.
 */
function plainWord(value: string, declared: boolean): boolean {
  const n = value.length;
  if (n === 0 || n > MAX_NAME) return false;
  let special = false;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) return false; // ASCII whitespace or a control character
    if (c > 0x7f) return isOneWord(value) && plainText(value, declared);
    // / \ : @ = % . ~
    if (
      c === 0x2f || c === 0x5c || c === 0x3a || c === 0x40 || c === 0x3d || c === 0x25 || c === 0x2e ||
      c === 0x7e
    ) {
      special = true;
    }
  }
  if (special) return plainText(value, declared);
  return !(n >= 10 && SECRET_HINT.test(value) && SECRET.test(value));
}

function isDeclared(value: string, declared: Iterable<string>): boolean {
  if (typeof declared === "string") throw new TypeError("declared must be a list of texts, not one text");
  if (declared instanceof Set) return declared.has(value);
  for (const d of declared) if (d === value) return true;
  return false;
}

/**
 * A secret's name, then a colon and a value: `token:abc`, `api_key:x`, `Password:y`, and the HTTP headers that
 * carry one: `Authorization:Bearer-x`, `Proxy-Authorization:Basic-x`, `Cookie:sid-x`.
 */
const SECRET_SETTING =
  /(?:^|[^a-z0-9])(?:api[_-]?key|apikey|key|token|secret|password|passwd|pwd|pass|auth|authori[sz]ation|bearer|credentials?|session|cookie)\s*:\s*\S/i;

/** The fast test of a text already known to be one word of at most 200 characters. */
function plainText(raw: string, declared: boolean): boolean {
  // Every key that SECRET knows is 10 characters at least (`-----BEGIN`), so a shorter text skips the scan.
  if (raw.length >= 10 && SECRET_HINT.test(raw) && SECRET.test(raw)) return false;
  // A name with none of these characters is one word with no path, place, setting or user: the common case.
  if (!/[/\\:@=%.~\u0080-\uffff]/.test(raw)) return true;
  const value = NON_ASCII.test(raw) ? raw.replace(LOOKALIKE_DOTS, ".").replace(LOOKALIKE_SLASHES, "/") : raw;
  if (value.includes("\\")) return false; // a Windows path, or an escape that a reader may undo
  if (URL_START.test(value)) return false;
  if (value.includes("=")) return false; // a setting, such as token=x
  if (value.includes("@") && value.includes(":")) return false; // user:password@host, ns:model@tag
  if (SECRET_SETTING.test(value)) return false; // token:abc123, password:hunter2: a setting written with a colon
  if (PERCENT_ESCAPE.test(value)) return false; // %2F, %40, %2e: a separator in disguise
  if (value === "." || value === "..") return false;
  if (!value.includes("/")) return true; // one word: id_rsa, .env, host.com, user@host.com
  if (value.startsWith("/")) return false; // a path from /
  const parts = value.split("/");
  const last = parts.length - 1;
  if (last > 1 && !declared) return false; // tmp/a/b, though openai/gpt-4o-mini stays plain
  const first = parts[0]!.toLowerCase();
  if (DRIVE.test(first)) return false; // C:/Users/someone
  if (HOME_ROOTS.has(first)) return false; // etc/passwd, tmp/x, Users/someone
  if (last >= 2 && ROOT_FOLDERS.has(first)) return false; // run/secrets/x, opt/app/x, proc/self/environ
  for (let i = 0; i <= last; i++) {
    const part = parts[i]!;
    if (part === "" || part === "." || part === "..") return false; // a//b, ./x, ../x
    if (part.startsWith(".")) return false; // a hidden part: home/someone/.ssh/id_rsa, x/.env
    if (i === last) break;
    const lower = part.toLowerCase();
    if (i > 0 && THROUGH.has(lower)) return false; // data/home/someone/x
    if (i === 0 && MODEL_HOSTS.has(lower)) continue; // hf.co/bartowski/x
    if (placeLike(lower)) return false; // https:/host/x, x/host.com/a, 127.1/x, db:5432/x, x/user@host.com/a
  }
  if (KEY_FILE.test(parts[last]!)) return false; // x/key.pem, x/config.yaml, x/id_rsa.pub
  return true;
}

/** True when a part before a `/` is a URL's scheme, a host, a host and port, or an email. */
function placeLike(part: string): boolean {
  if (part.includes("@")) return true;
  if (part.startsWith("[")) return true; // an IPv6 literal
  const scheme = SCHEME_PART.exec(part);
  if (scheme) {
    if (SCHEMES.has(scheme[1]!)) return true; // s3:/bucket/key, s3:bucket/key
    if (PORT.test(scheme[2]!)) return true; // db:5432/x
    return placeLike(scheme[1]!); // host.com:x/…
  }
  if (part === "localhost") return true;
  if (IPV4_LIKE.test(part)) return true; // 127.1/x (2130706433/x, one number, passes)
  return HOST_LIKE.test(part);
}

/**
 * True when an attribute's value may leave as a name: {@linkcode plainName}, with the value declared when its
 * key names a model (so `openrouter/meta-llama/llama-3-70b` stays plain under `gen_ai.request.model`). A list
 * is plain when each item is; under a model key each name in it is declared. A mapping is plain when each key
 * is a plain name and each value is plain under its key.
 *
 * @param key The attribute's key.
 * @param value The attribute's value.
 * @param options `modelKeys`: the keys that name a model; {@linkcode MODEL_KEYS} by default.
 * @returns True when the value may leave as a name.
 * @example
 * ```ts
 * import { plainAttribute } from "./plain_name.ts";
 * plainAttribute("gen_ai.request.model", "openrouter/meta-llama/llama-3-70b"); // true
 * plainAttribute("path", "scratch/x/notes"); // false
 * ```
 */
export function plainAttribute(
  key: string,
  value: unknown,
  options: { modelKeys?: ReadonlySet<string> } = {},
): boolean {
  const declared = (options.modelKeys ?? MODEL_KEYS).has(key);
  return plainValue(value, declared, options.modelKeys, 0);
}

function plainValue(
  value: unknown,
  declared: boolean,
  modelKeys: ReadonlySet<string> | undefined,
  depth: number,
) {
  if (typeof value === "string") return plainWord(value, declared);
  if (typeof value === "number") return Number.isFinite(value);
  if (typeof value === "boolean" || typeof value === "bigint") return true;
  if (depth > 0) return false; // a list in a list, or a mapping in a mapping, is not a name
  if (Array.isArray(value)) {
    for (const item of value) if (!plainValue(item, declared, modelKeys, depth + 1)) return false;
    return true;
  }
  if (typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    for (const [k, v] of Object.entries(value)) {
      if (!plainName(k)) return false;
      if (!plainValue(v, (modelKeys ?? MODEL_KEYS).has(k), modelKeys, depth + 1)) return false;
    }
    return true;
  }
  return false;
}

/**
 * True when a span's name is one or two plain words, such as `chat gpt-4o` or `invoke_agent`.
 *
 * @param name The span's name.
 * @param options `declared`: words that may have more than one `/`, such as the model of a `chat` span.
 * @returns True when the name may leave below `bodies`.
 * @example
 * ```ts
 * import { plainSpanName } from "./plain_name.ts";
 * plainSpanName("chat gpt-4o"); // true
 * plainSpanName("read /etc/passwd"); // false
 * ```
 */
export function plainSpanName(name: unknown, options: PlainNameOptions = {}): boolean {
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_NAME) return false;
  const words = name.split(" ");
  if (words.length > 2) return false;
  return words.every((word) => typeof word === "string" && word.length > 0 && plainName(word, options));
}

const EXPERIMENT = /^experiment:\/\/([^?#]*)(?:\?at=commit:([0-9a-f]{7,64}))?$/;

/**
 * True when a text is an `experiment://` URI of plain parts, with no selector or with `?at=commit:` and a
 * hash. A URI that names a branch or a version stays out, because its name may be free text.
 *
 * @param uri The text to test.
 * @returns True when the URI may leave below `bodies`.
 * @example
 * ```ts
 * import { plainExperiment } from "./plain_name.ts";
 * plainExperiment("experiment://acme/risk/dev/credit/q?at=commit:3f2a9c1"); // true
 * plainExperiment("experiment://acme/risk/dev/credit/q?at=branch:main"); // false
 * ```
 */
export function plainExperiment(uri: unknown): boolean {
  if (typeof uri !== "string" || uri.length > 1000) return false;
  const match = EXPERIMENT.exec(uri);
  if (!match) return false;
  const parts = match[1]!.split("/");
  if (parts.length < 4) return false; // org/domain/env/path…
  return parts.every((part) => part.length > 0 && !part.includes(":") && plainName(part));
}
