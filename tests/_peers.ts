/**
 * The test groups that need a peer: a server or program from outside that `.ci/run` installs and starts with
 * `.ci/peers/NAME.sh`, which exports the variables that name it. A test that needs one is declared with
 * `peerTest()`, the one place that splits the suite: its name starts with `[peer NAME]`, `deno task test`
 * (`tests/_test_task.ts`) leaves every such test out and runs the rest with no peer variable in its
 * environment (a test that reaches a peer without saying so fails there), and `deno task test:peers` runs
 * only them. A group whose peer is missing is skipped, and says nothing itself: the task ends with one line
 * that lists the skipped groups and the scripts that would enable them. In CI (`CI` set) a missing peer is a
 * failure, never a skip.
 * @module
 */

/** A peer of the tests: the variables its script exports, and the script. */
export interface Peer {
  /** What the group tests against. */
  what: string;
  /** The variables that the peer's script exports; the group needs every one. */
  variables: readonly string[];
  /** The script under `.ci/peers/` that installs and starts it, or what else provides it. */
  source: string;
  /** False for a group that cannot run on these machines even in CI (say why in `source`). */
  inCi?: boolean;
}

/** Every peer, by the name of its group. */
export const PEERS = {
  postgres: {
    what: "PostgreSQL",
    variables: ["PROVEVI_TEST_PG_URL"],
    source: ".ci/peers/postgres.sh",
  },
  "postgres-restart": {
    what: "a PostgreSQL server that a test stops and starts",
    variables: ["PROVEVI_TEST_PG_RESTART_URL", "PROVEVI_TEST_PG_CTL"],
    source: ".ci/peers/postgres.sh",
  },
  "postgres-tls": {
    what: "a PostgreSQL server that takes TLS only",
    variables: ["PROVEVI_TEST_PG_TLS_URL", "PROVEVI_TEST_PG_TLS_CA", "PROVEVI_TEST_PG_TLS_OTHER_CA"],
    source: ".ci/peers/postgres.sh",
  },
  mlflow: {
    what: "an MLflow tracking server",
    variables: ["PROVEVI_TEST_MLFLOW_URI", "PROVEVI_TEST_MLFLOW_PYTHON", "PROVEVI_TEST_MLFLOW_BIN"],
    source: ".ci/peers/mlflow.sh",
  },
  phoenix: {
    what: "an Arize Phoenix server (a GenAI backend)",
    variables: ["PROVRUN_TEST_PHOENIX_URL", "PROVRUN_TEST_PHOENIX_GRPC_URL", "PROVRUN_TEST_PHOENIX_PYTHON"],
    source: ".ci/peers/phoenix.sh",
  },
  chromium: {
    what: "a headless Chromium",
    variables: ["PROVE_TEST_CHROMIUM"],
    source: ".ci/peers/chromium.sh",
  },
  s3: {
    what: "an S3-compatible server",
    variables: ["PROVCAT_TEST_S3_ENDPOINT"],
    source: ".ci/peers/s3.sh",
  },
  "claude-code": {
    what: "the Claude Code CLI",
    variables: ["PROVRUN_TEST_CLAUDE"],
    source: ".ci/peers/agents.sh",
  },
  codex: {
    what: "the Codex CLI",
    variables: ["PROVRUN_TEST_CODEX"],
    source: ".ci/peers/agents.sh",
  },
  "python-otel": {
    what: "Python's OpenTelemetry SDK",
    variables: ["PROVRUN_TEST_OTEL_PYTHON"],
    source: ".ci/peers/agents.sh",
  },
  intoto: {
    what: "Python's in-toto and securesystemslib",
    variables: ["PROVEVI_TEST_INTOTO_PYTHON"],
    source: ".ci/peers/intoto.sh",
  },
  tlogcheck: {
    what: "the Go checker of the transparency log (Go's sumdb/tlog and note)",
    variables: ["PROVEVI_TEST_TLOGCHECK"],
    source: ".ci/peers/tlogcheck.sh",
  },
  training: {
    what: "the trainers' readers of the training exports (transformers, TRL)",
    variables: ["PROVTRACE_TEST_TRAINING_PYTHON"],
    source: ".ci/peers/training.sh",
  },
  compile: {
    what: "Deno's base binary for deno compile",
    variables: ["DENORT_BIN"],
    source:
      "DENORT_BIN set to Deno's base binary for deno compile (denort-<target>.zip of the Deno release, from " +
      "https://dl.deno.land), which CI's machines cannot download",
    inCi: false,
  },
} as const satisfies Record<string, Peer>;

/** The name of a group that needs a peer. */
export type PeerName = keyof typeof PEERS;

type Env = { get(name: string): string | undefined };

const inCi = (env: Env) => (env.get("CI") ?? "") !== "";

/** The peers whose variables are not all set. */
export function missingPeers(env: Env = Deno.env): PeerName[] {
  return (Object.keys(PEERS) as PeerName[]).filter((name) =>
    PEERS[name].variables.some((v) => (env.get(v) ?? "") === "")
  );
}

/**
 * The `ignore` of a test that needs a peer: true when the peer is missing here. In CI a missing peer throws
 * (the test file fails, naming the script), unless the group cannot run on these machines at all.
 *
 * @param name The group.
 * @returns True when the group's tests are to be skipped.
 * @throws {Error} In CI, when the peer's variables are not set.
 */
export function skipWithout(name: PeerName, env: Env = Deno.env): boolean {
  if (!missingPeers(env).includes(name)) return false;
  const peer: Peer = PEERS[name];
  if (inCi(env) && peer.inCi !== false) {
    throw new Error(`${peer.variables.join(", ")} unset: CI must start the ${name} peer (${peer.source})`);
  }
  return true;
}

/**
 * The variable by which `deno task test` says that no peer-backed test runs in it: `peerTest()` then ignores
 * its tests whatever the environment holds (`deno task test:peers` runs them).
 */
export const NO_PEERS_VARIABLE = "PROVE_TEST_NO_PEERS";

/** The start of the name of every test that needs a peer; `deno task test:peers` filters on it. */
export const PEER_TEST_PREFIX = "[peer ";

/** Every variable that names a peer: the test task takes them out of the peer-free run's environment. */
export function peerVariables(): string[] {
  return Object.values(PEERS).flatMap((p: Peer) => [...p.variables]);
}

/**
 * Declares a test that needs peers: its name starts with `[peer NAME]`, it is ignored in `deno task test` and
 * where a peer is missing (outside CI), and it fails in CI without its peer. With no peer (`null` or `[]`,
 * as in a loop over stores of which one needs a peer), it is a plain `Deno.test`.
 *
 * @param peers The groups whose peers the test needs.
 * @param test The test, as `Deno.test` takes it.
 */
export function peerTest(peers: PeerName | readonly PeerName[] | null, test: Deno.TestDefinition): void {
  const env = Deno.env;
  const names: readonly PeerName[] = peers === null ? [] : typeof peers === "string" ? [peers] : peers;
  if (names.length === 0) return Deno.test(test);
  const off = (env.get(NO_PEERS_VARIABLE) ?? "") !== "";
  // Every group is asked, so that CI names each missing peer, not only the first.
  const skip = names.map((name) => off || skipWithout(name, env)).some(Boolean);
  Deno.test({
    ...test,
    name: `${PEER_TEST_PREFIX}${names.join(", ")}] ${test.name}`,
    ignore: test.ignore || skip,
  });
}

/**
 * The line the test task ends with: the groups skipped for want of a peer, and what would enable them. In the
 * peer-free run (`peerFree`) every group is skipped, and the line says which command runs them.
 *
 * @returns The line, or undefined when every group ran.
 */
export function skippedLine(env: Env = Deno.env, options: { peerFree?: boolean } = {}): string | undefined {
  const missing = missingPeers(env);
  if (options.peerFree) {
    const all = Object.keys(PEERS).join(", ");
    const start = missing.length ? `, after ${enabling(missing)}` : " (their peers are all set here)";
    return `skipped test groups, which need a peer: ${all}; to run them: deno task test:peers${start}`;
  }
  if (missing.length === 0) return undefined;
  return `skipped test groups, their peers missing: ${missing.join(", ")}; to run them: ${enabling(missing)}`;
}

function enabling(missing: PeerName[]): string {
  const scripts = [...new Set(missing.map((n) => PEERS[n].source as string))];
  const sources = scripts.filter((s) => s.startsWith(".ci/peers/"));
  const other = scripts.filter((s) => !s.startsWith(".ci/peers/"));
  return [
    ...(sources.length ? [`source ${sources.join(" ")} (as .ci/run does)`] : []),
    ...other,
  ].join("; and ");
}
