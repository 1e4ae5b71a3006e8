/** Test helpers: real git repositories in temp folders (`_s3.ts` has the S3 server's). */
import { join } from "node:path";

/** Runs git and returns its trimmed output; fails the test on an error. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout).trim();
}

/** Makes a git repository on branch main with one commit of `files`; returns its path. */
export async function makeRepo(dir: string, files: Record<string, string>): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  await git(dir, "init", "-q", "-b", "main");
  await git(dir, "config", "user.name", "Test");
  await git(dir, "config", "user.email", "test@example.com");
  await commitFiles(dir, files, "first");
  return dir;
}

/** Writes files in a repository's working tree and commits them; returns the commit ID. */
export async function commitFiles(
  dir: string,
  files: Record<string, string>,
  message: string,
): Promise<string> {
  for (const [path, text] of Object.entries(files)) {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  }
  await git(dir, "add", "-A");
  await git(dir, "commit", "-q", "-m", message);
  return await git(dir, "rev-parse", "HEAD");
}
