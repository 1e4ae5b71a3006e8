import assert from "node:assert/strict";
import { bufferIo } from "../cli/_io.ts";
import { prove } from "../cli/prove.ts";
import { provr } from "../cli/provr.ts";
import { permissionFlags } from "../cli/_permissions.ts";

const DOCS = new URL("../docs/", import.meta.url);

async function commandsOf(command: typeof prove, args: string[]): Promise<string[]> {
  const io = bufferIo();
  await command([...args, "--help"], io);
  const help = io.stdout.join("\n");
  const section = help.slice(help.indexOf("Commands:"));
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)/gm)].map((m) => m[1]!).filter((c) => c !== "help");
}

Deno.test("every prove command is documented in docs/prove.md or a guide it links", async () => {
  const docs = await Deno.readTextFile(new URL("prove.md", DOCS));
  const more = await Deno.readTextFile(new URL("telemetry.md", DOCS)) +
    await Deno.readTextFile(new URL("sqlite.md", DOCS));
  const missing = (await commandsOf(prove, [])).filter((c) =>
    !docs.includes(`prove ${c}`) && !more.includes(`prove ${c}`)
  );
  assert.deepEqual(missing, []);
});

Deno.test("every provr command is documented in docs/provr.md, and each catalog command in docs/catalog.md", async () => {
  const docs = await Deno.readTextFile(new URL("provr.md", DOCS));
  assert.deepEqual((await commandsOf(provr, [])).filter((c) => !docs.includes(`provr ${c}`)), []);
  const catalog = await Deno.readTextFile(new URL("catalog.md", DOCS));
  const subs = await commandsOf(provr, ["catalog"]);
  assert.ok(subs.length >= 5, subs.join(","));
  assert.deepEqual(subs.filter((c) => !catalog.includes(`provr catalog ${c}`)), []);
});

Deno.test("every guide the README links exists, and every guide is linked from the README", async () => {
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  const linked = [...readme.matchAll(/\]\(docs\/([a-z-]+\.md)\)/g)].map((m) => m[1]!);
  const guides: string[] = [];
  for await (const e of Deno.readDir(DOCS)) if (e.name.endsWith(".md")) guides.push(e.name);
  assert.deepEqual(linked.filter((l) => !guides.includes(l)), []);
  assert.deepEqual(guides.filter((g) => !linked.includes(g)).sort(), []);
});

/** The prose of a Markdown text, line by line with its number: fenced blocks left out. */
function proseLines(text: string): { line: string; n: number }[] {
  let fenced = false;
  return text.split("\n").flatMap((line, i) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return [];
    }
    return fenced ? [] : [{ line, n: i + 1 }];
  });
}

async function pages(): Promise<{ name: string; text: string }[]> {
  const out = [{
    name: "README.md",
    text: await Deno.readTextFile(new URL("../README.md", import.meta.url)),
  }];
  for await (const e of Deno.readDir(DOCS)) {
    if (e.name.endsWith(".md")) {
      out.push({ name: `docs/${e.name}`, text: await Deno.readTextFile(new URL(e.name, DOCS)) });
    }
  }
  return out;
}

Deno.test("no code span in the README or a guide breaks across lines (a reader copies it whole)", async () => {
  const broken: string[] = [];
  for (const { name, text } of await pages()) {
    for (const { line, n } of proseLines(text)) {
      if ((line.replace(/``.*?``/g, "").match(/`/g)?.length ?? 0) % 2) broken.push(`${name}:${n}: ${line}`);
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("no table in the README or a guide has swallowed the paragraph after it (a row with only its first cell)", async () => {
  const swallowed: string[] = [];
  for (const { name, text } of await pages()) {
    for (const { line, n } of proseLines(text)) {
      const cells = line.match(/^\|(.*)\|$/)?.[1]?.split(/(?<!\\)\|/).map((c) => c.trim());
      if (cells && cells.length > 1 && cells[0] && cells.slice(1).every((c) => c === "")) {
        swallowed.push(`${name}:${n}: ${line.slice(0, 80)}`);
      }
    }
  }
  assert.deepEqual(swallowed, []);
});

/** The rows of the first Markdown table after a heading, each as its cells. */
function tableAfter(text: string, heading: string): string[][] {
  const from = text.indexOf(`\n${heading}\n`);
  assert.ok(from >= 0, `no heading "${heading}"`);
  const lines = text.slice(from).split("\n");
  const start = lines.findIndex((l) => l.startsWith("|"));
  const rows: string[][] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(line.slice(1, -1).split("|").map((c) => c.trim()));
  }
  return rows;
}

Deno.test("docs/sandbox.md's table of each command's permissions is deno.json's permission sets", async () => {
  const text = await Deno.readTextFile(new URL("sandbox.md", DOCS));
  const sets = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)))
    .permissions as Record<
      string,
      Record<string, boolean | string[]>
    >;
  const kinds = ["read", "write", "net", "env", "run", "sys"];
  const shown = (v: boolean | string[] | undefined, kind: string) =>
    v === true
      ? "all"
      : v === undefined || v === false
      ? "none"
      : kind === "env"
      ? "listed in deno.json"
      : v.map((x) => `\`${x}\``).join(", ");
  const rows = tableAfter(text, "## Each command's permissions");
  assert.deepEqual(rows.map((r) => r[0]!.replaceAll("`", "")).sort(), Object.keys(sets).sort());
  for (const [name, ...cells] of rows) {
    const set = sets[name!.replaceAll("`", "")]!;
    assert.deepEqual(cells, kinds.map((k) => shown(set[k], k)), name);
    assert.deepEqual(
      Object.keys(set).filter((k) => !kinds.includes(k)),
      [],
      `${name} has a kind the table lacks`,
    );
  }
});

Deno.test("docs/sandbox.md's table of provr's flags is the provr permission set", async () => {
  const text = await Deno.readTextFile(new URL("sandbox.md", DOCS));
  const flags = tableAfter(text, "## provr's flags").map((r) => r[0]!.replaceAll("`", ""));
  const set = permissionFlags("provr").filter((f) => f !== "--no-prompt");
  assert.deepEqual(
    flags.map((f) => f.replace(/=…$/, "=")).sort(),
    set.map((f) => (f.startsWith("--allow-env=") ? "--allow-env=" : f)).sort(),
  );
});

Deno.test("the README's commands for a machine with only Node.js never prompt nor wait on the registry: npx --yes --prefer-offline, with the Deno that CI installs", async () => {
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  const ci = await Deno.readTextFile(new URL("../.ci/run", import.meta.url));
  const version = ci.match(/deno@(\d+\.\d+\.\d+)/)?.[1];
  assert.ok(version, ".ci/run pins deno@X.Y.Z");
  // --yes: without it npx asks "Ok to proceed?" on a terminal; --prefer-offline: without it, with no network,
  // npx retries the registry for a minute before each command, though it has this Deno already.
  const npx = `npx --yes --prefer-offline deno@${version}`;
  const lines = [...readme.matchAll(/^npx .*$/gm)].map((m) => m[0]);
  assert.ok(lines.length >= 2, lines.join("\n"));
  for (const line of lines) assert.ok(line.startsWith(`${npx} task `), line);
  // Every other npx the README gives (the alias that lets the guides' deno task … paste as written) too.
  for (const m of readme.matchAll(/npx [^`'\n]*?deno\b[^`'\s]*/g)) assert.equal(m[0], npx);
  assert.ok(readme.includes(`alias deno='${npx}'`));
});

/**
 * What a reader types, from the fenced blocks of a page, with its line number: a console block's `$ ` lines and
 * their `> ` lines (not the output), and every line of a shell or text block (not TypeScript, JSON or YAML).
 */
function commandLines(text: string): { line: string; n: number }[] {
  const out: { line: string; n: number }[] = [];
  let fence: string | null = null;
  text.split("\n").forEach((line, i) => {
    const open = line.match(/^```(\w*)/);
    if (open) fence = fence === null ? open[1]! : null;
    else if (fence === "console" ? /^(\$|>) /.test(line) : fence !== null && !CODE.includes(fence)) {
      out.push({ line, n: i + 1 });
    }
  });
  return out;
}
const CODE = ["ts", "json", "yaml", "jsonl"];

Deno.test("no guide has the reader type a bare prove, provr or provtrace: Perl's prove may answer (deno task …)", async () => {
  const bare: string[] = [];
  for (const { name, text } of await pages()) {
    for (const { line, n } of commandLines(text)) {
      if (/^(\$ |> )?(prove|provr|provtrace) /.test(line)) bare.push(`${name}:${n}: ${line}`);
    }
  }
  assert.deepEqual(bare, []);
});

Deno.test("no guide changes the reader's own settings (git config --global) or shows a machine's home folder", async () => {
  const found: string[] = [];
  for (const { name, text } of await pages()) {
    for (const { line, n } of commandLines(text)) {
      if (/git config --global/.test(line)) found.push(`${name}:${n}: ${line}`);
    }
    text.split("\n").forEach((line, i) => {
      if (/(^|[\s"'=:(])\/root\//.test(line)) found.push(`${name}:${i + 1}: ${line}`); // write ~ for the home
    });
  }
  assert.deepEqual(found, []);
});

Deno.test("the README says how many npm packages a first run fetches: every one deno.lock pins", async () => {
  const readme = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  const lock = JSON.parse(await Deno.readTextFile(new URL("../deno.lock", import.meta.url)));
  const said = readme.replace(/\s+/g, " ").match(/every npm package that `deno\.lock` pins, (\d+) of them/)
    ?.[1];
  assert.equal(Number(said), Object.keys(lock.npm).length);
});

Deno.test("the README says that Perl's prove may answer to prove, and how to put Deno's folder first", async () => {
  const readme = (await Deno.readTextFile(new URL("../README.md", import.meta.url))).replace(/\s+/g, " ");
  assert.match(readme, /Perl's test harness as `\/usr\/bin\/prove`/);
  assert.ok(readme.includes('export PATH="$HOME/.deno/bin:$PATH"'));
  assert.match(readme, /`deno task prove …` always reaches this one/);
});
