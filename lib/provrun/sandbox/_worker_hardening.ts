/**
 * What a tool may learn, and how it may leave, in the tools worker: evaluated before any tools module, it takes
 * away everything that would name a path outside the run or step around the worker's grants.
 *
 * - Paths: `Deno.execPath()` refuses; `process.execPath`, `process.argv` and `Deno.args` name nothing;
 *   `location` and `Deno.mainModule` are undefined; stack traces show tools modules at `file:///tools/…`,
 *   packages as `npm:…`, and the sandbox's own code as `sandbox:` (the process's working folder is the run
 *   folder, which tools are given anyway).
 * - Ways out: no nested `Worker` (it would start without these hooks), no `Deno[Deno.internal]`, no
 *   `process.getBuiltinModule` of what the hooks refuse, and no `Deno.exit`, `process.exit` or `close()`,
 *   which would end the worker in the middle of a call.
 *
 * Importing this module has these effects, so only the tools worker imports it.
 * @module
 */
import process from "node:process";

/** The error a tool gets for what the sandbox does not give. */
function notCapable(what: string, instead = ""): never {
  throw new Deno.errors.NotCapable(
    `the sandbox does not give ${what} to tools${instead ? `; ${instead}` : ""}`,
  );
}

function pin(target: object, key: PropertyKey, value: unknown): void {
  try {
    Object.defineProperty(target, key, { value, writable: false, configurable: false, enumerable: true });
  } catch {
    // A property the runtime made fixed but writable (process.argv0): set it (the leak suite checks each).
    (target as Record<PropertyKey, unknown>)[key] = value;
  }
}

/**
 * The process tools see: an object of the real one's class whose own properties read and write the real one's,
 * but for `argv0`, which is "provr". Not a proxy: a proxy must show a non-configurable property's own getter,
 * and the real `argv0` getter returns the path the process was started by.
 */
function shownProcess(): typeof process {
  const shown = Object.create(Object.getPrototypeOf(process));
  for (const key of Reflect.ownKeys(process)) {
    if (key === "argv0") continue;
    Object.defineProperty(shown, key, {
      get: () => Reflect.get(process, key),
      set: (value) => void Reflect.set(process, key, value),
      enumerable: Object.getOwnPropertyDescriptor(process, key)?.enumerable ?? false,
      configurable: false,
    });
  }
  Object.defineProperty(shown, "argv0", {
    value: "provr",
    enumerable: true,
    writable: false,
    configurable: false,
  });
  return shown;
}

/** Where frames of each kind point, as a stack shows them. */
let npmRoot = "";
const OWN = /^(file|data):/;

/**
 * The name a stack frame gets: tools modules and built-ins as they are, packages from their registry folder,
 * anything else (the sandbox's own modules, wherever provr is) as `sandbox:`.
 */
export function frameName(file: string | null | undefined): string {
  if (!file) return "<anonymous>";
  if (file.startsWith("file:///tools/") || /^(node|ext|npm):/.test(file)) return file;
  if (npmRoot && file.startsWith(npmRoot)) return `npm:${file.slice(npmRoot.length)}`;
  if (OWN.test(file) || file.startsWith("/")) return `sandbox:${file.replace(/^.*\//, "").slice(0, 40)}`;
  return file;
}

interface CallSite {
  getFileName(): string | null | undefined;
  getLineNumber(): number | null;
  getColumnNumber(): number | null;
  getFunctionName(): string | null;
  isAsync?(): boolean;
}

function prepare(error: Error, frames: CallSite[]): string {
  let head: string;
  try {
    head = `${error.name ?? "Error"}: ${error.message ?? ""}`.replace(/: $/, "");
  } catch {
    head = "Error";
  }
  return head + frames.map((f) => {
    const at = `${frameName(f.getFileName())}:${f.getLineNumber() ?? 0}:${f.getColumnNumber() ?? 0}`;
    const name = f.getFunctionName();
    return `\n    at ${f.isAsync?.() ? "async " : ""}${name ? `${name} (${at})` : at}`;
  }).join("");
}

/**
 * Takes away what tools may not have. Called once by the tools worker, before any tools module loads.
 *
 * @param options `npmRoot`: the prefix of the toolkit's packages, shown as `npm:` in stacks.
 */
export function harden(options: { npmRoot: string }): void {
  npmRoot = options.npmRoot;
  // Getters and setters, not a frozen value: Deno's own code may set it for a moment; that is ignored.
  Object.defineProperty(Error, "prepareStackTrace", {
    get: () => prepare,
    set: () => {},
    configurable: false,
  });
  pin(Deno, "execPath", () => notCapable("the path of the program that runs it"));
  pin(Deno, "args", Object.freeze([]));
  pin(Deno, "mainModule", undefined);
  pin(Deno, "exit", () => notCapable("the end of the sandbox process", "throw an error instead"));
  const internal = (Deno as unknown as { internal?: symbol }).internal;
  if (internal) pin(Deno, internal, undefined);
  pin(globalThis, "location", undefined);
  pin(globalThis, "close", () => notCapable("the end of its worker"));
  pin(globalThis, "Worker", function Worker() {
    notCapable("workers of their own (a worker would start outside the sandbox's checks)");
  });
  pin(process, "argv", Object.freeze(["provr", "sandbox"]));
  pin(process, "execArgv", Object.freeze([]));
  pin(process, "exit", () => notCapable("the end of the sandbox process", "throw an error instead"));
  pin(process, "abort", () => notCapable("the end of the sandbox process"));
  pin(process, "reallyExit", () => notCapable("the end of the sandbox process"));
  pin(process, "getBuiltinModule", () => notCapable("getBuiltinModule", "import node: built-ins instead"));
  // process.execPath is a getter with a setter, not configurable: setting it is how to change it.
  (process as { execPath: string }).execPath = "provr";
  // process.argv0 is the path the process was started by (Deno.Command passes the full path it finds on the
  // PATH), kept in a closure that nothing can set: tools get a process whose argv0 names nothing, as the global
  // and (through the module hooks' PROCESS_SHIM) as the import of node:process.
  pin(globalThis, "process", shownProcess());
}
