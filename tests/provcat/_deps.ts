/** What the catalog's tests import from the library. */
export * from "../../lib/provcat/mod.ts";
export { hashFolder as hashFolderForTest } from "../../lib/provcat/_files.ts";
