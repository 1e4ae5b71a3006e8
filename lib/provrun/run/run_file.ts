/**
 * The run file: the YAML that says what one run does. `docs/run-file.md` is its reference. Every problem is
 * reported at once, each with the key's path and line; unknown keys, keys named twice and wrong types are
 * refused.
 * @module
 */
import { dirname, resolve } from "node:path";
import {
  type Document,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  type Node,
  parseDocument,
  type Scalar,
  visit,
} from "yaml";
import { readBoundedText, UnreadableFile } from "../../provevi/evidence/read_text.ts";
import { RunFileError } from "./errors.ts";

/** The largest run file: 4 MB. */
export const MAX_RUN_FILE_BYTES = 4 * 1024 * 1024;

/** The longest a timer can wait, in seconds (setTimeout holds 2^31 - 1 ms): the most a time limit may be. */
export const MAX_TIMER_SECONDS: number = Math.floor((2 ** 31 - 1) / 1000);

/** One input: a URI and the name it is staged as in `input/`. */
export interface InputSpec {
  uri: string;
  as: string;
}

/** An MCP server whose tools the agent may call. */
export interface McpSpec {
  name: string;
  command?: string[];
  url?: string;
}

/** The agent spec: the portable description of an agent. */
export interface AgentSpec {
  name: string;
  backend: "call" | "agent" | "claude-code" | "codex";
  model: string;
  provider?: { base_url: string; api_key_env?: string; token_ids?: boolean };
  instructions?: string;
  tools?: string[];
  tools_folder?: string;
  mcp?: McpSpec[];
  allow_unsandboxed?: string[];
  net?: string[];
  limits?: {
    steps?: number;
    tokens?: number;
    seconds?: number;
    tool_seconds?: number;
    /** The largest result of one tool call, as JSON bytes. */
    tool_result_bytes?: number;
    /** The largest output file, in bytes. */
    output_bytes?: number;
    /** The largest total of the output files, in bytes. */
    outputs_bytes?: number;
    /** The largest response body of one model request, in bytes. */
    model_bytes?: number;
  };
  settings?: Record<string, unknown>;
  stream?: boolean;
  script?: unknown;
  /** The agent program's command (`claude-code`, `codex` backends); `claude` or `codex` on the PATH by default. */
  program?: string;
  /** Claude Code's full model requests and responses, kept as payloads (`claude-code` backend); off by default. */
  raw_bodies?: boolean;
  /**
   * The model calls go through provr's recording model gateway (`agent` and `call` backends; off by default).
   * An agent program (`claude-code`, `codex`) always goes through it.
   */
  gateway?: boolean;
}

/** The `run` section. */
export interface RunSection {
  org: string;
  domain: string;
  env: string;
  actor?: string;
  mode?: "strict" | "lenient";
  store?: string;
  bundle?: boolean;
  /** The private key file that signs the run's seal (`prove keygen`), relative to the run file's folder. */
  sign_key?: string;
  parent_run?: string;
  /** The conversation (session) this run is part of; runs with one session ID continue one conversation. */
  session_id?: string;
  /** The price table's catalog URI, in place of the one shipped with the toolkit. */
  price_table?: string;
}

/** A parsed, checked run file. */
export interface RunFileData {
  run: RunSection;
  experiment?: string;
  agent: AgentSpec;
  prompt: string;
  inputs?: InputSpec[];
  outputs?: string[];
  telemetry?: Record<string, unknown>;
}

type Spec =
  | { t: "map"; keys: Record<string, Spec>; required?: string[] }
  | { t: "text"; oneOf?: string[]; pattern?: RegExp; hint?: string }
  | { t: "int"; min?: number; max?: number }
  | { t: "number"; min?: number; max?: number; above?: number }
  | { t: "bool" }
  | { t: "list"; item: Spec }
  | { t: "mapping" } // any mapping, checked elsewhere (settings, telemetry)
  | { t: "any" };

const text: Spec = { t: "text" };
const name: Spec = {
  t: "text",
  pattern: /^[A-Za-z0-9][A-Za-z0-9_.-]*$/,
  hint: "letters, digits, _, . and -",
};
const SPEC: Spec = {
  t: "map",
  required: ["run", "agent", "prompt"],
  keys: {
    run: {
      t: "map",
      required: ["org", "domain", "env"],
      keys: {
        org: name,
        domain: name,
        env: name,
        actor: text,
        mode: { t: "text", oneOf: ["strict", "lenient"] },
        store: {
          // The run file is kept as evidence (run_created's payload), so a password in it would be kept too.
          t: "text",
          pattern: /^(?![a-z][a-z0-9+.-]*:(?:\/\/)?[^@/?#]*:[^@]*@)/i,
          hint:
            "a store URI without a password (the run file is kept as evidence: give it by PGPASSWORD or ~/.pgpass)",
        },
        bundle: { t: "bool" },
        sign_key: text,
        parent_run: name,
        session_id: {
          t: "text",
          pattern: /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/,
          hint: "letters, digits, _, ., : and -",
        },
        price_table: {
          t: "text",
          pattern: /^[a-z][a-z0-9+.-]*:\/\//,
          hint: "a catalog URI of a price table (JSON)",
        },
      },
    },
    experiment: { t: "text", pattern: /^experiment:\/\//, hint: "an experiment:// URI" },
    agent: {
      t: "map",
      required: ["name", "backend", "model"],
      keys: {
        name,
        backend: { t: "text", oneOf: ["call", "agent", "claude-code", "codex"] },
        model: {
          t: "text",
          pattern: /^(openai|anthropic|openai-compatible|test):.*$/,
          hint: "openai:MODEL, anthropic:MODEL, openai-compatible:MODEL or test:SCRIPT",
        },
        provider: {
          t: "map",
          required: ["base_url"],
          keys: {
            base_url: { t: "text", pattern: /^https?:\/\//, hint: "an http or https URL" },
            api_key_env: name,
            token_ids: { t: "bool" },
          },
        },
        instructions: text,
        tools: { t: "list", item: name },
        tools_folder: text,
        mcp: {
          t: "list",
          item: {
            t: "map",
            required: ["name"],
            keys: { name, command: { t: "list", item: text }, url: { t: "text", pattern: /^https?:\/\// } },
          },
        },
        allow_unsandboxed: { t: "list", item: name },
        net: { t: "list", item: text },
        limits: {
          t: "map",
          keys: {
            steps: { t: "int", min: 1 },
            tokens: { t: "int", min: 1 },
            // A timer holds at most 2^31 - 1 ms; 0 would end a run or a call before it starts.
            seconds: { t: "number", above: 0, max: MAX_TIMER_SECONDS },
            tool_seconds: { t: "number", above: 0, max: MAX_TIMER_SECONDS },
            tool_result_bytes: { t: "int", min: 1, max: 1024 * 1024 * 1024 },
            output_bytes: { t: "int", min: 1 },
            outputs_bytes: { t: "int", min: 1 },
            model_bytes: { t: "int", min: 1 },
          },
        },
        settings: { t: "mapping" },
        stream: { t: "bool" },
        script: { t: "any" },
        program: text,
        raw_bodies: { t: "bool" },
        gateway: { t: "bool" },
      },
    },
    prompt: text,
    inputs: {
      t: "list",
      item: {
        t: "map",
        required: ["uri"],
        keys: {
          uri: text,
          // Not `.` or `..`: `input/..` is the run folder, and staging there would overwrite the evidence.
          as: { t: "text", pattern: /^(?!\.\.?$)[^/\\\0]+$/, hint: "a file name" },
        },
      },
    },
    // No `..` segment: the call backend writes its answer to the first, and `../events.jsonl` is the evidence.
    outputs: {
      t: "list",
      item: {
        t: "text",
        pattern: /^(?!(?:.*\/)?\.\.(?:\/|$))[^/\\\0][^\\\0]*$/,
        hint: "a path under output/, without a .. segment",
      },
    },
    telemetry: { t: "mapping" },
  },
};

/**
 * A run file, parsed and checked.
 *
 * @example
 * ```ts
 * import { RunFile } from "@mahacata/prove";
 * import assert from "node:assert/strict";
 *
 * const file = await RunFile.load("fixtures/tour/run.yaml");
 * assert.equal(file.data.agent.model, "test:models/answer.yaml");
 * ```
 */
export class RunFile {
  private constructor(
    /** The checked content. */
    readonly data: RunFileData,
    /** The file's text, recorded as the run_created payload. */
    readonly text: string,
    /** The file's path, or null for a run file made in a program. */
    readonly path: string | null,
  ) {}

  /** The folder that relative paths in the file (test scripts, tools folders) are relative to. */
  get folder(): string {
    return this.path ? dirname(this.path) : Deno.cwd();
  }

  /**
   * Reads and checks a run file.
   * @throws RunFileError with every problem, each with the key's path and line.
   */
  static async load(path: string): Promise<RunFile> {
    let text: string;
    try {
      // A regular file only, bounded while it is read, and UTF-8: a FIFO or /dev/zero never hangs provr,
      // and bytes that are not UTF-8 are refused rather than recorded as U+FFFD.
      text = await readBoundedText(path, { limit: MAX_RUN_FILE_BYTES, what: "the run file" });
    } catch (error) {
      const reason = error instanceof UnreadableFile ? error.reason : (error as Error).message;
      throw new RunFileError(path, [`cannot be read: ${reason}`], { cause: error });
    }
    return RunFile.parse(text, { path: resolve(path) });
  }

  /**
   * Checks the text of a run file.
   * @param text YAML.
   * @param options `path`: where the text came from, for messages and relative paths.
   * @throws RunFileError with every problem.
   */
  static parse(text: string, options: { path?: string } = {}): RunFile {
    const where = options.path ?? "<run file>";
    const lines = new LineCounter();
    const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
    const problems: string[] = [];
    for (const error of doc.errors) {
      if (error.code === "DUPLICATE_KEY") continue; // reported with the key's path by check()
      const pos = error.linePos?.[0];
      const msg = error.message.split("\n")[0]!.replace(/ at line \d+, column \d+.*$/, "");
      problems.push(`${msg}${pos ? ` (line ${pos.line})` : ""}`);
    }
    if (!problems.length) halfSurrogates(doc, problems, lines);
    if (!problems.length) check(doc.contents, SPEC, "", problems, lines);
    if (problems.length) throw new RunFileError(where, problems);
    let data: RunFileData;
    try {
      data = doc.toJS({ maxAliasCount: 100 }) as RunFileData;
    } catch (error) {
      // yaml refuses a tree of aliases that expands too far (a "billion laughs") with a ReferenceError.
      throw new RunFileError(where, [
        `cannot be expanded: ${(error as Error).message}; use fewer aliases (*name)`,
      ]);
    }
    return new RunFile(data, text, options.path ?? null);
  }

  /** The same run file with agent keys replaced, checked again. */
  withAgent(agent: Partial<AgentSpec>): RunFile {
    return RunFile.fromObject({ ...this.data, agent: { ...this.data.agent, ...agent } });
  }

  /**
   * Makes a run file from an object, as a program would, checked like a file.
   * @throws RunFileError with every problem.
   */
  static fromObject(data: RunFileData): RunFile {
    const text = JSON.stringify(data, null, 2);
    return RunFile.parse(text);
  }
}

/**
 * A text with half of a UTF-16 surrogate pair (YAML's `"\uD800"`) cannot be written as UTF-8, so no evidence line
 * could hold it: refused here, naming the line, before a run starts, rather than failing the run's first event.
 */
function halfSurrogates(doc: Document, problems: string[], lines: LineCounter): void {
  visit(doc, {
    Scalar(_key, node) {
      if (typeof node.value !== "string" || node.value.isWellFormed()) return;
      const line = node.range ? ` (line ${lines.linePos(node.range[0]).line})` : "";
      problems.push(
        `a text${line} holds half of a UTF-16 surrogate pair (such as "\\uD800"), which UTF-8 cannot hold: ` +
          `write the whole character, or remove it`,
      );
    },
  });
}

function check(node: unknown, spec: Spec, path: string, problems: string[], lines: LineCounter): void {
  const at = (n: unknown) => {
    const range = (n as Node | null)?.range;
    return range ? ` (line ${lines.linePos(range[0]).line})` : "";
  };
  const key = path || "the run file";
  const fail = (what: string) => problems.push(`${key}${at(node)}: ${what}`);
  if (spec.t === "any") return;
  if (node === null || node === undefined || (isScalar(node) && node.value === null)) {
    fail("is empty");
    return;
  }
  switch (spec.t) {
    case "map":
    case "mapping": {
      if (!isMap(node)) return void fail("must be a mapping");
      if (spec.t === "mapping") return;
      const seen = new Set<string>();
      for (const pair of node.items) {
        const k = isScalar(pair.key) ? String((pair.key as Scalar).value) : String(pair.key);
        const subPath = path ? `${path}.${k}` : k;
        if (seen.has(k)) {
          problems.push(`${subPath}${at(pair.key)}: is named twice`);
          continue;
        }
        seen.add(k);
        const sub = spec.keys[k];
        if (!sub) {
          problems.push(
            `${subPath}${at(pair.key)}: unknown key; the keys here are ${Object.keys(spec.keys).join(", ")}`,
          );
          continue;
        }
        check(pair.value, sub, subPath, problems, lines);
      }
      for (const r of spec.required ?? []) if (!seen.has(r)) fail(`lacks the key "${r}"`);
      return;
    }
    case "list": {
      if (!isSeq(node)) return void fail("must be a list, not a single value");
      node.items.forEach((item, i) => check(item, spec.item, `${path}[${i}]`, problems, lines));
      return;
    }
    default: {
      if (!isScalar(node)) {
        return void fail(
          `must be a ${spec.t === "text" ? "text" : spec.t === "bool" ? "true or false" : "number"}`,
        );
      }
      const v = node.value;
      if (spec.t === "text") {
        if (typeof v !== "string") return void fail("must be a text");
        if (v.trim() === "") return void fail("must not be empty");
        if (spec.oneOf && !spec.oneOf.includes(v)) {
          return void fail(`must be one of ${spec.oneOf.join(", ")}`);
        }
        if (spec.pattern && !spec.pattern.test(v)) {
          return void fail(`must be ${spec.hint ?? `like ${spec.pattern}`}`);
        }
      } else if (spec.t === "bool") {
        if (typeof v !== "boolean") fail("must be true or false");
      } else {
        if (typeof v !== "number" || !Number.isFinite(v)) return void fail("must be a number");
        if (spec.t === "int" && !Number.isInteger(v)) return void fail("must be a whole number");
        if (spec.min !== undefined && v < spec.min) fail(`must be at least ${spec.min}`);
        if (spec.t === "number" && spec.above !== undefined && v <= spec.above) {
          fail(`must be more than ${spec.above}`);
        }
        if (spec.max !== undefined && v > spec.max) fail(`must be at most ${spec.max}`);
      }
    }
  }
}
