import assert from "node:assert/strict";
import { dirname, join, relative } from "node:path";

const ROOT = new URL("../", import.meta.url).pathname;
const LIB = join(ROOT, "lib");

/** Which part may import which: provrun → provevi → provcat, and provtrace → provevi. */
const PARTS: Record<string, string[]> = {
  provcat: ["provcat"],
  provevi: ["provevi", "provcat"],
  provrun: ["provrun", "provevi", "provcat"],
  provtrace: ["provtrace", "provevi", "provcat"],
};

/**
 * Inside a part, which folder may import which (besides itself). A folder not listed here fails the test
 * until it is given its row, so a new subsystem states its place.
 */
const FOLDERS: Record<string, Record<string, string[]>> = {
  provevi: {
    evidence: [],
    telemetry: ["evidence"],
    log: ["evidence", "guard"],
    store: ["evidence", "experiments", "log", "receiver"],
    experiments: ["evidence"],
    sqlite: ["evidence", "store", "experiments", "log"],
    postgres: ["evidence", "store", "experiments", "log"],
    cost: ["evidence"],
    runs: ["evidence", "store", "sqlite", "postgres", "experiments", "log", "cost", "diff"],
    live: ["evidence", "store", "telemetry"],
    guard: [],
    viewer: ["evidence", "store", "telemetry", "live", "runs", "guard", "log", "diff", "receiver"],
    receiver: ["evidence", "telemetry", "guard"],
    mlflow: ["evidence", "store", "runs", "telemetry", "experiments", "guard"],
    diff: ["evidence"],
  },
  provrun: {
    run: [],
    sandbox: ["run"],
    telemetry: ["run"],
    backends: ["run", "sandbox", "telemetry"],
    gateway: ["run", "backends"],
    runner: ["run", "sandbox", "telemetry", "backends", "gateway"],
    replay: ["run", "backends", "runner"],
  },
  provtrace: {
    db: [],
    build: ["db"],
    export: ["db", "build"],
  },
};

/**
 * The one way to open a file another party can swap (a FIFO, a link, a sparse file: evidence/open_file.ts and
 * its part fd_file.ts), which every part's readers use, the catalog's too: a leaf of provevi's that provcat may
 * import, with the errors it throws. The leaf imports only itself (checked below), so provcat gains no other
 * part of provevi by it.
 */
const SHARED_LEAF = new Set(
  [
    "open_file.ts",
    "fd_file.ts",
    "open_tree.ts",
    "errors.ts",
    "problem.ts",
    "problem_codes.ts",
    "_placeholder.ts",
    "_log_codes.ts",
    "_part_codes.ts",
    "_verify_codes.ts",
  ].map((name) => join(LIB, "provevi", "evidence", name)).concat(
    // the capped read of a stream's bytes, which the catalog's reads of an S3 server's answers use too
    join(LIB, "provevi", "guard", "body_bytes.ts"),
  ),
);

async function* files(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) yield* files(p);
    else if (p.endsWith(".ts")) yield p;
  }
}

/** The relative imports of a file, type imports included, examples in doc comments left out. */
async function importsOf(file: string): Promise<{ spec: string; target: string }[]> {
  const text = (await Deno.readTextFile(file)).replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const out = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.[^"]+)"/g)) {
    out.push({ spec: m[1]!, target: join(dirname(file), m[1]!) });
  }
  return out;
}

/** The part and folder of a file under lib/, such as ["provevi", "sqlite"]; the folder is "" for a part's mod.ts. */
function place(file: string): [string, string] {
  const [part, folder, ...rest] = relative(LIB, file).split("/");
  return [part!, rest.length > 0 ? folder! : ""];
}

Deno.test("the parts import only in the allowed direction: provrun → provevi → provcat, provtrace → provevi", async () => {
  const wrong: string[] = [];
  for await (const file of files(LIB)) {
    const [part] = place(file);
    for (const { spec, target } of await importsOf(file)) {
      if (target === join(ROOT, "deno.json")) continue; // the package manifest: its pins are the installed packages
      const [to] = place(target);
      if (SHARED_LEAF.has(target)) continue;
      if (!PARTS[part]!.includes(to)) wrong.push(`${relative(ROOT, file)} imports ${spec}`);
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("the shared leaf that provcat may import of provevi (the safe file opens and their errors) imports only itself", async () => {
  const wrong: string[] = [];
  for (const file of SHARED_LEAF) {
    for (const { spec, target } of await importsOf(file)) {
      if (!SHARED_LEAF.has(target)) wrong.push(`${relative(ROOT, file)} imports ${spec}`);
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("inside provevi and provrun, each folder imports only the folders its row of the table allows", async () => {
  const wrong: string[] = [];
  for (const [part, table] of Object.entries(FOLDERS)) {
    for await (const e of Deno.readDir(join(LIB, part))) {
      if (e.isDirectory && !(e.name in table)) {
        wrong.push(`lib/${part}/${e.name}/ has no row in the folder table`);
      }
      if (e.isFile && e.name !== "mod.ts") wrong.push(`lib/${part}/${e.name} is outside a folder`);
    }
    for await (const file of files(join(LIB, part))) {
      const [, folder] = place(file);
      if (folder === "") continue; // the part's mod.ts re-exports every folder
      for (const { spec, target } of await importsOf(file)) {
        const [toPart, toFolder] = place(target);
        if (toPart !== part || toFolder === folder) continue;
        if (toFolder === "" || !table[folder]?.includes(toFolder)) {
          wrong.push(`${relative(ROOT, file)} imports ${spec}`);
        }
      }
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("every folder of a part has a mod.ts that only re-exports, with a module doc; no file imports its own folder's mod.ts", async () => {
  const wrong: string[] = [];
  for (const part of Object.keys(FOLDERS)) {
    for await (const e of Deno.readDir(join(LIB, part))) {
      if (!e.isDirectory) continue;
      const mod = join(LIB, part, e.name, "mod.ts");
      let text: string;
      try {
        text = await Deno.readTextFile(mod);
      } catch {
        wrong.push(`lib/${part}/${e.name}/ has no mod.ts`);
        continue;
      }
      if (!/^\/\*\*[\s\S]*?@module[\s\S]*?\*\//.test(text)) {
        wrong.push(`${relative(ROOT, mod)} has no module doc`);
      }
      const code = text.replace(/\/\*[\s\S]*?\*\//g, "").split("\n").filter((l) => l.trim() !== "");
      for (const line of code) {
        if (!/^export (\*|\{[^}]*\}) from "\.\/[^/"]+\.ts";$/.test(line)) {
          wrong.push(`${relative(ROOT, mod)}: ${line}`);
        }
      }
    }
  }
  for await (const file of files(LIB)) {
    for (const { spec, target } of await importsOf(file)) {
      if (target === join(dirname(file), "mod.ts")) wrong.push(`${relative(ROOT, file)} imports ${spec}`);
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("no two files under lib/ import each other, directly or in a longer circle (type imports count)", async () => {
  const graph = new Map<string, string[]>();
  for await (const file of files(LIB)) graph.set(file, (await importsOf(file)).map((i) => i.target));
  const circles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const path: string[] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === "open") {
        circles.push(path.slice(path.indexOf(next)).concat(next).map((f) => relative(ROOT, f)).join(" → "));
      } else if (!state.has(next)) visit(next);
    }
    path.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  assert.deepEqual(circles, []);
});

Deno.test("no library file imports from cli/ or tests/", async () => {
  for await (const file of files(LIB)) {
    for (const { spec, target } of await importsOf(file)) {
      const top = relative(ROOT, target).split("/")[0];
      assert.ok(top !== "cli" && top !== "tests", `${relative(ROOT, file)} imports ${spec}`);
    }
  }
});

Deno.test("docs/layout.md has a row for every folder of the table", async () => {
  const doc = await Deno.readTextFile(join(ROOT, "docs", "layout.md"));
  const missing = Object.entries(FOLDERS).flatMap(([part, table]) =>
    Object.keys(table).filter((folder) => !new RegExp(`^\\| \`${part}/${folder}/\` +\\|`, "m").test(doc)).map(
      (f) => `${part}/${f}/`,
    )
  );
  assert.deepEqual(missing, []);
});
