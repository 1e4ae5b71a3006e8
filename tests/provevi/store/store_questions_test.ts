import { join } from "node:path";
import { SqliteStore } from "../../../lib/provevi/sqlite/sqlite_store.ts";
import { FileStore } from "../../../lib/provevi/store/file_store.ts";
import { questionsContract } from "./questions_contract.ts";

questionsContract("FileStore", async () => {
  const runs = await Deno.makeTempDir({ prefix: "provevi-file-q-" });
  return { store: new FileStore({ runs }), runs };
}, { indexed: false });

questionsContract("SqliteStore", async () => {
  const runs = await Deno.makeTempDir({ prefix: "provevi-sqlite-q-" });
  return { store: new SqliteStore(join(runs, "evidence.db"), { runs }), runs };
}, { indexed: true });
