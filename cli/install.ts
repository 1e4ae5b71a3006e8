/**
 * `deno task install`: installs `prove`, `provr` and `provtrace` as commands (`deno install --global`), each with
 * the permission set of its task in deno.json as flags, then says where they are and what on the PATH would keep
 * them from being the ones that run: most Linux and macOS machines have Perl's test harness as `/usr/bin/prove`,
 * and a shell takes the first `prove` on the PATH.
 *
 * The sets are spelled out as `--allow-*` flags because Deno 2.9.6's `deno install` takes `-P=NAME` but writes a
 * command that runs without it.
 * @module
 */
import { delimiter, join } from "node:path";
import { type Io, processIo } from "./_io.ts";
import { permissionFlags } from "./_permissions.ts";

/** The commands installed, each with the permission set of its task. */
export const COMMANDS = ["prove", "provr", "provtrace"] as const;

const ROOT = new URL("../", import.meta.url).pathname;

/** Where `deno install --global` puts commands: `$DENO_INSTALL_ROOT/bin`, else `~/.deno/bin`. */
export function installFolder(env: { get(name: string): string | undefined } = Deno.env): string {
  const root = env.get("DENO_INSTALL_ROOT") || join(env.get("HOME") ?? "", ".deno");
  return join(root, "bin");
}

/**
 * Where a shell finds a program: the first folder of the PATH that holds an executable file of that name.
 *
 * @param name The program's name.
 * @param path The PATH's value.
 * @returns The program's path, or undefined when no folder of the PATH holds it.
 */
export function whichOnPath(name: string, path: string): string | undefined {
  for (const folder of path.split(delimiter)) {
    if (!folder) continue;
    try {
      const info = Deno.statSync(join(folder, name));
      if (info.isFile && (info.mode ?? 0o111) & 0o111) return join(folder, name);
    } catch {
      // not in this folder, or not readable: a shell would go on to the next one too
    }
  }
}

/**
 * What stands between the installed commands and a user who types them: the folder is not on the PATH, another
 * program of the same name comes first, or `deno` (which the commands run) is not on the PATH. Each is one
 * line that says how to fix it.
 *
 * @param folder Where the commands are installed.
 * @param path The PATH's value.
 * @returns The lines, none when the commands will run as typed.
 */
export function pathProblems(folder: string, path: string): string[] {
  const fix = `export PATH="${folder}:$PATH" (in ~/.profile, ~/.bashrc or ~/.zshrc, then open a new shell)`;
  const folders = path.split(delimiter);
  if (!folders.includes(folder)) {
    return [`${folder} is not on the PATH; add it first: ${fix}`, ...needDeno(path)];
  }
  const lines: string[] = [];
  for (const name of COMMANDS) {
    const found = whichOnPath(name, path);
    if (found !== undefined && found !== join(folder, name)) {
      const perl = name === "prove" ? " (Perl's test harness, on most Linux and macOS machines)" : "";
      lines.push(
        `${name}: ${found}${perl} comes before ${folder} on the PATH, so typing ${name} runs it; put ${folder} ` +
          `first: ${fix}`,
      );
    }
  }
  return [...lines, ...needDeno(path)];
}

function needDeno(path: string): string[] {
  // npx puts the deno package's folder (<npm cache>/_npx/<hash>/node_modules/.bin) first on the PATH of what it
  // runs, and only of that: `npx deno task install` finds deno there, and the user's shell will not.
  const lasting = path.split(delimiter).filter((f) => !/[/\\]_npx[/\\]/.test(f)).join(delimiter);
  if (whichOnPath("deno", lasting) !== undefined) return [];
  return [
    "deno is not on the PATH, and the installed commands run it: install Deno (https://deno.com), or with npm: " +
    "npm install --global deno@2.9.6",
  ];
}

/**
 * Installs the commands and reports where.
 *
 * @param io Where to write.
 * @returns The exit code: 0 when every command was installed (a PATH that hides one is said, not an error).
 */
export async function install(io: Io = processIo()): Promise<number> {
  const folder = installFolder();
  for (const name of COMMANDS) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "install",
        "--global",
        "--force",
        "--quiet",
        "--config",
        join(ROOT, "deno.json"),
        ...permissionFlags(name),
        "--name",
        name,
        join(ROOT, "cli", `${name}.ts`),
      ],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) {
      const why = new TextDecoder().decode(out.stderr).trim().split("\n")[0] ?? "";
      io.err(`install: deno install of ${name} failed: ${why}`);
      return 1;
    }
  }
  io.out(`installed prove, provr and provtrace in ${folder}`);
  for (const line of pathProblems(folder, Deno.env.get("PATH") ?? "")) io.err(`install: ${line}`);
  return 0;
}

if (import.meta.main) Deno.exitCode = await install();
