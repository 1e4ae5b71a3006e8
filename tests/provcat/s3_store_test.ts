import { assertRejects } from "./_assert.ts";
import { Catalog, CatalogError } from "./_deps.ts";
import { makeBucket, NO_S3, s3Config, warnNoS3 } from "./_helpers.ts";
import { storeContract } from "./store_contract.ts";

warnNoS3();

storeContract("s3", async () => {
  const bucket = await makeBucket();
  return { config: s3Config(bucket), versioned: true, cleanup: () => Promise.resolve() };
}, { ignore: NO_S3 });

Deno.test({
  name: "s3 store: a bucket without versioning is refused with the fix",
  ignore: NO_S3,
  fn: async () => {
    const bucket = await makeBucket({ versioning: false });
    await using catalog = await Catalog.open({
      config: { stores: { b: s3Config(bucket) }, routes: [{ prefix: "d://a/b/c", store: "b" }] },
    });
    await assertRejects(
      () => catalog.put("d://a/b/c/x", new Uint8Array([1])),
      CatalogError,
      "put-bucket-versioning",
    );
  },
});
