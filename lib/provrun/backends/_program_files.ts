/**
 * Small helpers of the agent-program backends: the PATH they pass on, the session files they import.
 * @module
 */
import { join } from "node:path";

/** The variables that locate the user's own tools, passed on; nothing else of provr's environment is. */
export function basePath(env: (name: string) => string | undefined): string {
  return env("PATH") ?? "/usr/local/bin:/usr/bin:/bin";
}

/** The `.jsonl` files under a folder, sorted; none when it is absent. */
export async function jsonlFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(d)];
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(d, e.name);
      if (e.isDirectory) await walk(p);
      else if (e.isFile && e.name.endsWith(".jsonl")) out.push(p);
    }
  };
  await walk(dir);
  return out.sort();
}

/** True when a file exists. */
export function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}
