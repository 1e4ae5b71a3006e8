/**
 * The full test of a plain name, by its rules one at a time: the shapes of URLs, settings, paths, places and API
 * keys that `plainName` refuses. `plain_name.ts` decides the common names in one pass over their characters and
 * brings the rest here; the tests compare the two on generated names.
 * @module
 */
import { looksLikeAnother } from "./_lookalike.ts";

/** The longest name, in UTF-16 code units. */
const MAX_NAME = 200;

/**
 * What a word may not hold: whitespace, a control character, a format character (soft hyphen, bidi controls,
 * invisible operators, tags) or any character Unicode says a reader need not show (Default_Ignorable_Code_Point:
 * variation selectors, Hangul fillers, …). A key with one of them inside (`sk\u00ad-proj…`) is no longer the key
 * to a pattern, yet shows, or is copied back, as the key.
 */
export const NOT_A_WORD: RegExp = /[\s\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029]/u;

/**
 * The slow path of `isOneWord`: one word of at most 200 characters, by the regular expression alone.
 *
 * @param text The text.
 * @returns True when it is one word.
 * @example
 * ```ts
 * import { oneWordFull } from "./_plain_text.ts";
 * oneWordFull("gpt-4o"); // true
 * ```
 */
export function oneWordFull(text: string): boolean {
  return text.length > 0 && text.length <= MAX_NAME && !NOT_A_WORD.test(text);
}

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
export const SECRET: RegExp = new RegExp(
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
export const SECRET_HINT: RegExp =
  /sk-|k_live_|k_test_|gh[pousr]_|github_pat_|xox[abpors]-|AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|hf_|eyJ|AIza|glpat-|npm_|xai-|gsk_|r8_|-----BEGIN/;

/**
 * A secret's name, then a colon and a value: `token:abc`, `api_key:x`, `Password:y`, and the HTTP headers that
 * carry one: `Authorization:Bearer-x`, `Proxy-Authorization:Basic-x`, `Cookie:sid-x`.
 */
const SECRET_SETTING =
  /(?:^|[^a-z0-9])(?:api[_-]?key|apikey|key|token|secret|password|passwd|pwd|pass|auth|authori[sz]ation|bearer|credentials?|session|cookie)\s*:\s*\S/i;

/**
 * The rules of a plain name, for a text already known to be one word of at most 200 characters.
 *
 * @param raw The text.
 * @param declared True when the text may have more than one `/`, such as a model's name.
 * @returns True when no rule refuses it.
 * @example
 * ```ts
 * import { plainText } from "./_plain_text.ts";
 * plainText("openai/gpt-4o-mini", false); // true
 * plainText("etc/passwd", false); // false
 * ```
 */
export function plainText(raw: string, declared: boolean): boolean {
  // Every key that SECRET knows is 10 characters at least (`-----BEGIN`), so a shorter text skips the scan.
  if (raw.length >= 10 && SECRET_HINT.test(raw) && SECRET.test(raw)) return false;
  // A name with none of these characters is one word with no path, place, setting or user: the common case.
  if (!/[/\\:@=%.~\u0080-\uffff]/.test(raw)) return true;
  const nonAscii = NON_ASCII.test(raw);
  // a name that shows as another (`ｇｐｔ-4o`, `gpt-4о` with a Cyrillic о) is not that name, nor a name at all
  if (nonAscii && looksLikeAnother(raw)) return false;
  const value = nonAscii ? raw.replace(LOOKALIKE_DOTS, ".").replace(LOOKALIKE_SLASHES, "/") : raw;
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
 * The slow path of `plainName` for a text: the regular expression of one word, then every rule. What the fast
 * path must agree with.
 *
 * @param value The text.
 * @param declared True when the text may have more than one `/`.
 * @returns True when the text is a plain name.
 * @example
 * ```ts
 * import { plainTextFull } from "./_plain_text.ts";
 * plainTextFull("gpt-4o", false); // true
 * plainTextFull("two words", false); // false
 * ```
 */
export function plainTextFull(value: string, declared: boolean): boolean {
  return value.length > 0 && value.length <= MAX_NAME && !NOT_A_WORD.test(value) &&
    plainText(value, declared);
}
