/**
 * The scripted tasks of the suite of real agent programs behind the model gateway: each names its program, the
 * fake provider's script (tool calls, then the answer), its faults and usage, what the run file adds, and how the
 * run ends. The suite (`programs_test.ts`) runs them and matches every model request against the program's own
 * session file.
 * @module
 */
import type { FakeProviderOptions, ScriptedCall } from "../../../fixtures/providers/fake_agent_provider.ts";
import { FAKE_ANSWER } from "../../../fixtures/providers/fake_agent_provider.ts";

/** One task. */
export interface ProgramTask {
  name: string;
  program: "claude" | "codex";
  script: ScriptedCall[];
  provider?: FakeProviderOptions;
  /** Lines added to the run file's agent section. */
  agent?: string;
  /** The run's end: `completed`, `failed` (the program exits with an error), or `cancelled` (the run is). */
  ends: "completed" | "failed" | "cancelled";
  /** The tool calls the program reports as refused by the broker. */
  refused?: number;
  /** Cancel the run once the provider has had this many model requests. */
  cancelAfter?: number;
}

const out = (path: string) => `{cwd}/output/${path}`;
const input = "{cwd}/input/revenue.csv";

/** Claude Code's tasks. */
const CLAUDE: ProgramTask[] = [
  { name: "answers without a tool", program: "claude", script: [], ends: "completed" },
  {
    name: "reads a file",
    program: "claude",
    script: [{ name: "Read", input: { file_path: input } }, {
      name: "Write",
      input: { file_path: out("answer.md"), content: `${FAKE_ANSWER}\n` },
    }],
    ends: "completed",
  },
  {
    name: "writes then edits a file",
    program: "claude",
    script: [
      { name: "Write", input: { file_path: out("answer.md"), content: "Revenue grew.\n" } },
      {
        name: "Edit",
        input: { file_path: out("answer.md"), old_string: "Revenue grew.", new_string: FAKE_ANSWER },
      },
    ],
    ends: "completed",
  },
  {
    name: "a multi-turn tool loop",
    program: "claude",
    script: [
      { name: "Read", input: { file_path: input } },
      { name: "Write", input: { file_path: out("answer.md"), content: "Revenue grew.\n" } },
      { name: "Read", input: { file_path: out("answer.md") } },
      {
        name: "Edit",
        input: { file_path: out("answer.md"), old_string: "Revenue grew.", new_string: FAKE_ANSWER },
      },
    ],
    ends: "completed",
  },
  {
    name: "shell refused",
    program: "claude",
    script: [
      { name: "Bash", input: { command: "cat input/revenue.csv", description: "read" } },
      { name: "Write", input: { file_path: out("answer.md"), content: `${FAKE_ANSWER}\n` } },
    ],
    refused: 1,
    ends: "completed",
  },
  {
    name: "shell allowed",
    program: "claude",
    agent: "  allow_unsandboxed: [Bash]",
    script: [{
      name: "Bash",
      input: { command: `echo '${FAKE_ANSWER}' > output/answer.md`, description: "write" },
    }],
    ends: "completed",
  },
  {
    name: "a read outside its grants refused",
    program: "claude",
    script: [
      { name: "Read", input: { file_path: "/etc/hostname" } },
      { name: "Write", input: { file_path: out("answer.md"), content: `${FAKE_ANSWER}\n` } },
    ],
    refused: 1,
    ends: "completed",
  },
  {
    name: "cache and thinking tokens",
    program: "claude",
    script: [{ name: "Write", input: { file_path: out("answer.md"), content: `${FAKE_ANSWER}\n` } }],
    provider: { usage: { input: 5000, output: 800, cacheRead: 3000, cacheWrite: 1500, reasoning: 300 } },
    ends: "completed",
  },
  {
    name: "a provider error (400) ends the run",
    program: "claude",
    script: [],
    provider: { faults: { 0: { status: 400, message: "prompt is too long" } } },
    ends: "failed",
  },
  {
    name: "a provider error (500) retried",
    program: "claude",
    script: [{ name: "Write", input: { file_path: out("answer.md"), content: `${FAKE_ANSWER}\n` } }],
    provider: { faults: { 0: { status: 500, message: "internal error" } } },
    ends: "completed",
  },
  {
    name: "a dropped stream",
    program: "claude",
    script: [{ name: "Write", input: { file_path: out("answer.md"), content: `${FAKE_ANSWER}\n` } }],
    provider: { faults: { 1: "drop" } },
    ends: "completed",
  },
  {
    name: "a cancelled run",
    program: "claude",
    script: [{ name: "Read", input: { file_path: input } }],
    provider: { delayMs: 120_000, delayFrom: 1 },
    cancelAfter: 2,
    ends: "cancelled",
  },
];

/** Codex's tasks. */
const CODEX: ProgramTask[] = [
  { name: "answers without a tool", program: "codex", script: [], ends: "completed" },
  {
    name: "runs a command",
    program: "codex",
    agent: "  allow_unsandboxed: [Bash]",
    script: [{ name: "exec_command", input: { cmd: "cat input/revenue.csv" } }, {
      name: "exec_command",
      input: { cmd: `echo '${FAKE_ANSWER}' > output/answer.md` },
    }],
    ends: "completed",
  },
  {
    name: "a multi-turn tool loop",
    program: "codex",
    agent: "  allow_unsandboxed: [Bash]",
    script: [
      { name: "exec_command", input: { cmd: "ls input" } },
      { name: "exec_command", input: { cmd: "grep Q3 input/revenue.csv" } },
      { name: "exec_command", input: { cmd: "wc -l input/revenue.csv" } },
      { name: "exec_command", input: { cmd: `echo '${FAKE_ANSWER}' > output/answer.md` } },
    ],
    ends: "completed",
  },
  {
    name: "shell refused",
    program: "codex",
    script: [{ name: "exec_command", input: { cmd: "cat input/revenue.csv" } }],
    refused: 1,
    ends: "completed",
  },
  {
    name: "a command outside its grants refused",
    program: "codex",
    agent: "  allow_unsandboxed: [Bash]",
    script: [
      { name: "exec_command", input: { cmd: "cat /etc/hostname" } },
      { name: "exec_command", input: { cmd: `echo '${FAKE_ANSWER}' > output/answer.md` } },
    ],
    refused: 1,
    ends: "completed",
  },
  {
    name: "cached and reasoning tokens",
    program: "codex",
    agent: "  allow_unsandboxed: [Bash]",
    script: [{ name: "exec_command", input: { cmd: `echo '${FAKE_ANSWER}' > output/answer.md` } }],
    provider: { usage: { input: 9000, output: 1200, cacheRead: 6000, reasoning: 700 } },
    ends: "completed",
  },
  {
    name: "a provider error (400) ends the run",
    program: "codex",
    script: [],
    provider: { faults: { 0: { status: 400, message: "bad request" } } },
    ends: "failed",
  },
  {
    name: "a provider error (500) retried",
    program: "codex",
    agent: "  allow_unsandboxed: [Bash]",
    script: [{ name: "exec_command", input: { cmd: `echo '${FAKE_ANSWER}' > output/answer.md` } }],
    provider: { faults: { 0: { status: 500, message: "internal error" } } },
    ends: "completed",
  },
  {
    name: "a dropped stream",
    program: "codex",
    agent: "  allow_unsandboxed: [Bash]",
    script: [{ name: "exec_command", input: { cmd: `echo '${FAKE_ANSWER}' > output/answer.md` } }],
    provider: { faults: { 1: "drop" } },
    ends: "completed",
  },
  {
    name: "a cancelled run",
    program: "codex",
    agent: "  allow_unsandboxed: [Bash]",
    script: [{ name: "exec_command", input: { cmd: "ls" } }],
    provider: { delayMs: 120_000, delayFrom: 1 },
    cancelAfter: 2,
    ends: "cancelled",
  },
];

/** Every task of the suite. */
export const PROGRAM_TASKS: readonly ProgramTask[] = [...CLAUDE, ...CODEX];
