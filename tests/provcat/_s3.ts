/**
 * The S3 server of the tests (`.ci/peers/s3.sh`): buckets on it and the config of a store there. Its tests are
 * `peerTest("s3", …)` (`tests/_peers.ts`).
 * @module
 */
import { CreateBucketCommand, PutBucketVersioningCommand, S3Client } from "@aws-sdk/client-s3";

/** The S3 test server's endpoint, or undefined when PROVCAT_TEST_S3_ENDPOINT is unset. */
export const S3_ENDPOINT = Deno.env.get("PROVCAT_TEST_S3_ENDPOINT");

/** Makes a bucket with versioning on, with a fresh name; returns the name. */
export async function makeBucket(options: { versioning?: boolean } = {}): Promise<string> {
  Deno.env.set("AWS_ACCESS_KEY_ID", Deno.env.get("AWS_ACCESS_KEY_ID") ?? "test");
  Deno.env.set("AWS_SECRET_ACCESS_KEY", Deno.env.get("AWS_SECRET_ACCESS_KEY") ?? "test");
  if (S3_ENDPOINT === undefined) {
    throw new Error("PROVCAT_TEST_S3_ENDPOINT is unset: .ci/peers/s3.sh starts the server");
  }
  const client = new S3Client({ region: "us-east-1", endpoint: S3_ENDPOINT, forcePathStyle: true });
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
