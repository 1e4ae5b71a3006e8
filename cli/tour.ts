/**
 * `deno task tour`: a real run end to end, offline. It makes a git repository from fixtures/tour/data (the
 * catalog's data), runs fixtures/tour/run.yaml with the scripted `test:` model on a file pinned through the
 * git catalog, into the default store; then it verifies the run and shows it. docs/tour.md walks through it.
 * @module
 */
import "./_import_env.ts"; // first: checks the variables the libraries below read as they load
import { dirname, join } from "node:path";
import { Catalog } from "../lib/provcat/mod.ts";
import { runsRoot } from "../lib/provevi/evidence/mod.ts";
import { RunFile, runFile } from "../lib/provrun/mod.ts";
import { type Io, processIo } from "./_io.ts";
import { prove } from "./prove.ts";

const FIXTURES = new URL("../fixtures/tour/", import.meta.url).pathname;

/** Runs the git program in a folder, as a fixed user, with `main` as the first branch. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: [
      "-c",
      "user.name=tour",
      "-c",
      "user.email=tour@example.com",
      "-c",
      "init.defaultBranch=main",
      ...args,
    ],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout).trim();
}

/** Makes (or brings up to date) the tour's git repository of data; returns its path. */
export async function tourRepository(root: string): Promise<string> {
  const repo = join(root, "lake");
  await Deno.mkdir(join(repo, "finance"), { recursive: true });
  try {
    await Deno.stat(join(repo, ".git"));
  } catch {
    await git(repo, "init", "-q");
  }
  await Deno.copyFile(join(FIXTURES, "data", "revenue.csv"), join(repo, "finance", "revenue.csv"));
  await git(repo, "add", "-A");
  if (await git(repo, "status", "--porcelain")) await git(repo, "commit", "-q", "-m", "tour data");
  return repo;
}

/**
 * Runs the tour.
 * @returns The exit code: 0 when the run completed and verifies.
 */
export async function tour(io: Io = processIo(), options: { runs?: string } = {}): Promise<number> {
  const runs = runsRoot(options.runs);
  const root = join(dirname(runs), "tour");
  const repo = await tourRepository(root);
  const config = join(root, "provcat.yaml");
  await Deno.writeTextFile(
    config,
    [
      "# The tour's catalog: data and run bundles in one git repository.",
      `cache: ${JSON.stringify(join(root, "cache"))}`,
      "stores:",
      `  lake: { type: git, path: ${JSON.stringify(repo)} }`,
      "routes:",
      "  - { prefix: data://acme/demo/dev, store: lake }",
      "  - { prefix: run://acme/demo/dev, store: lake, path: runs }",
      "",
    ].join("\n"),
  );
  await using catalog = await Catalog.open({ configPath: config });
  io.out(`tour: the catalog's data is the git repository ${repo}`);
  const file = await RunFile.load(join(FIXTURES, "run.yaml"));
  const outcome = await runFile(file, { catalog, runs });
  io.out(`tour: ran ${outcome.runId} (${outcome.status}) into ${outcome.folder}`);
  if (outcome.status !== "completed") {
    io.err(`tour: the run failed: ${outcome.error?.name}: ${outcome.error?.message}`);
    return 1;
  }
  io.out(`tour: the answer: ${outcome.text}`);
  io.out("");
  io.out(`tour: the evidence was committed to the catalog as ${outcome.bundle?.pinned}`);
  io.out("");
  io.out(`tour: the check, as you can type it: deno task prove verify ${outcome.runId} --config ${config}`);
  const verified = await prove(["--runs", runs, "verify", outcome.runId, "--config", config], io);
  io.out("");
  io.out(`tour: the record, as you can type it: deno task prove show ${outcome.runId}`);
  const shown = await prove(["--runs", runs, "show", outcome.runId], io);
  return verified || shown;
}

if (import.meta.main) Deno.exitCode = await tour();
