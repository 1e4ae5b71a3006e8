/**
 * The test groups that need a peer: a server or program from outside that `.ci/run` installs and starts with
 * `.ci/peers/NAME.sh`, which exports the variables that name it. A group whose peer is missing is skipped, and
 * says nothing itself: the test task (`tests/_test_task.ts`) ends with one line that lists every skipped group
 * and the script that would enable it. In CI (`CI` set) a missing peer is a failure, never a skip.
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
  compile: {
    what: "Deno's base binary for deno compile",
    variables: ["DENORT_BIN"],
    source:
      "a denort binary named by DENORT_BIN (Deno's servers, which it comes from, are out of reach here)",
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
 * The line the test task ends with: the groups skipped for want of a peer, and what would enable them.
 *
 * @returns The line, or undefined when every group ran.
 */
export function skippedLine(env: Env = Deno.env): string | undefined {
  const missing = missingPeers(env);
  if (missing.length === 0) return undefined;
  const scripts = [...new Set(missing.map((n) => PEERS[n].source as string))];
  const sources = scripts.filter((s) => s.startsWith(".ci/peers/"));
  const other = scripts.filter((s) => !s.startsWith(".ci/peers/"));
  const enable = [
    ...(sources.length ? [`source ${sources.join(" ")} (as .ci/run does)`] : []),
    ...other,
  ].join("; and ");
  return `skipped test groups, their peers missing: ${missing.join(", ")}; to run them: ${enable}`;
}
