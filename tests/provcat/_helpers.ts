/** Test helpers: real git repositories in temp folders, and the S3 server's endpoint. */
import { skipWithout } from "../_peers.ts";
import { CreateBucketCommand, PutBucketVersioningCommand, S3Client } from "@aws-sdk/client-s3";
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

/** The S3 test server's endpoint, or undefined when PROVCAT_TEST_S3_ENDPOINT is unset. */
export const S3_ENDPOINT = Deno.env.get("PROVCAT_TEST_S3_ENDPOINT");

/** The `ignore` of an S3 test: true when no server is set (outside CI; in CI a missing server fails). */
export const NO_S3: boolean = skipWithout("s3");

/** Makes a bucket with versioning on, with a fresh name; returns the name. */
export async function makeBucket(options: { versioning?: boolean } = {}): Promise<string> {
  Deno.env.set("AWS_ACCESS_KEY_ID", Deno.env.get("AWS_ACCESS_KEY_ID") ?? "test");
  Deno.env.set("AWS_SECRET_ACCESS_KEY", Deno.env.get("AWS_SECRET_ACCESS_KEY") ?? "test");
  const client = new S3Client({ region: "us-east-1", endpoint: S3_ENDPOINT!, forcePathStyle: true });
  const bucket = `provcat-${crypto.randomUUID().slice(0, 13)}`;
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    if (options.versioning !== false) {
      await client.send(
        new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: "Enabled" } }),
      );
    }
  } finally {
    client.destroy();
  }
  return bucket;
}

/** The config of an s3 store on the test server. */
export function s3Config(bucket: string, prefix = "cat/") {
  return {
    type: "s3" as const,
    bucket,
    prefix,
    endpoint: S3_ENDPOINT!,
    region: "us-east-1",
    forcePathStyle: true,
  };
}
