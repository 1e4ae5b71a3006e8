import { storeContract } from "./store_contract.ts";

storeContract("folder", async () => {
  const path = await Deno.makeTempDir({ prefix: "provcat-folder-" });
  return {
    config: { type: "folder", path },
    versioned: false,
    cleanup: () => Deno.remove(path, { recursive: true }),
  };
});
