/**
 * The `git` store: a local git repository, through the `git` program. A commit is a version; a `branch:`
 * selector moves with its branch, a `commit:` selector does not. The store reads with git's plumbing and
 * commits with it too (`hash-object`, `update-index` on a private index, `write-tree`, `commit-tree`,
 * `update-ref`), so it works on a bare repository and never stages or commits the user's own changes.
 * @module
 */
import { join, resolve } from "node:path";
import { copyTree, kindOf, pathUnder, removeTree, walkFiles } from "./_files.ts";
import { runGit, text, writeBlobs } from "./_git.ts";
import { READ_MAX_BYTES, RECORD_MAX_BYTES, sizeText } from "./_capped_read.ts";
import { readCapped } from "../provevi/evidence/open_file.ts";
import { CatalogError, CatalogNotFound } from "./errors.ts";
import {
  type CatalogStore,
  type EntryKind,
  joinKey,
  type PutSource,
  type StoreEntry,
  type StoreVersion,
  underKey,
} from "./store.ts";
import type { Selector } from "./uri.ts";

/** The config of a git store. */
export interface GitStoreConfig {
  type: "git";
  /** The repository: a working tree or a bare repository. */
  path: string;
  /** The branch that a URI without `?at=` reads and that `commit` moves; `main` by default. */
  branch?: string;
}

const ZERO = "0".repeat(40);

interface TreeEntry {
  mode: string;
  type: string;
  oid: string;
  size: number | null;
  path: string;
}

/**
 * A catalog store over a local git repository.
 *
 * @example
 * ```ts ignore
 * import { GitStore } from "./git_store.ts";
 * const store = new GitStore("lake", { type: "git", path: "/srv/lake", branch: "main" });
 * const head = await store.resolve("", null); // { kind: "commit", id: "…" }
 * ```
 */
export class GitStore implements CatalogStore {
  readonly type = "git";
  readonly versioned = true;
  readonly path: string;
  readonly branch: string;
  #gitDir: string | null = null;
  #bare = true;
  #identity: Record<string, string> | null = null;

  /**
   * @param name The store's name in the config.
   * @param config The repository and its branch.
   */
  constructor(readonly name: string, config: GitStoreConfig) {
    this.path = resolve(config.path);
    this.branch = config.branch ?? "main";
  }

  async #dir(): Promise<string> {
    if (this.#gitDir !== null) return this.#gitDir;
    const found = await runGit(["-C", this.path, "rev-parse", "--absolute-git-dir", "--is-bare-repository"]);
    if (found.code !== 0) {
      throw new CatalogError(
        `store "${this.name}": ${this.path} is not a git repository (${found.stderr}); run git init there or fix its path`,
      );
    }
    const [dir, bare] = text(found).split("\n");
    // git looks upward from a folder for its repository, so a store path that is a plain folder inside another
    // repository would read and commit that one instead; the path must be the repository's own top.
    const top = bare === "true"
      ? dir!
      : text(await runGit(["-C", this.path, "rev-parse", "--show-toplevel"]));
    const real = async (p: string) => await Deno.realPath(p).catch(() => p);
    if (await real(top) !== await real(this.path)) {
      throw new CatalogError(
        `store "${this.name}": ${this.path} is not the top of a git repository but a folder inside ${top}; point the store at a repository's own folder, or run git init in ${this.path}`,
      );
    }
    this.#gitDir = dir!;
    this.#bare = bare === "true";
    return this.#gitDir;
  }

  async #git(
    args: string[],
    options: { stdin?: Uint8Array | string; env?: Record<string, string>; max?: number } = {},
  ) {
    return await runGit([`--git-dir=${await this.#dir()}`, ...args], options);
  }

  async #must(
    args: string[],
    options: { stdin?: Uint8Array | string; env?: Record<string, string>; max?: number } = {},
  ) {
    const result = await this.#git(args, options);
    if (result.code !== 0) {
      throw new CatalogError(`store "${this.name}": git ${args[0]} failed in ${this.path}: ${result.stderr}`);
    }
    return result;
  }

  async #head(branch: string): Promise<string | null> {
    const found = await this.#git(["rev-parse", "--verify", "-q", `refs/heads/${branch}^{commit}`]);
    return found.code === 0 ? text(found) : null;
  }

  /** The commit that a selector names; the default branch's head without one. */
  async resolve(key: string, at: Selector | null): Promise<StoreVersion> {
    if (at?.kind === "version") {
      throw new CatalogError(
        `store "${this.name}" is git, whose versions are commits; write ?at=commit:<id> instead of ?at=version:${at.id}`,
      );
    }
    if (at?.kind === "commit") return { kind: "commit", id: await this.#commitId(at.id, key) };
    const branch = at?.id ?? this.branch;
    const head = await this.#head(branch);
    if (head === null) {
      throw new CatalogNotFound(
        `store "${this.name}" has no branch "${branch}" with a commit (for "${key}"); commit to it first or name another branch`,
      );
    }
    return { kind: "commit", id: head };
  }

  /**
   * The full ID of the one commit whose ID starts with `id`. `rev-parse <id>` would prefer a branch or tag of
   * that name over a short ID, so `?at=commit:deadbee` would move with a branch named `deadbee`; this looks
   * the ID up among the objects only, and refuses a prefix that more than one commit shares.
   */
  async #commitId(id: string, key: string): Promise<string> {
    const found = await this.#must(["rev-parse", `--disambiguate=${id}`]);
    const objects = text(found).split("\n").filter(Boolean);
    const typed = objects.length === 0 ? "" : text(
      await this.#must(["cat-file", "--batch-check=%(objectname) %(objecttype)"], {
        stdin: objects.join("\n") + "\n",
      }),
    );
    const commits = typed.split("\n").filter((l) => l.endsWith(" commit")).map((l) => l.split(" ")[0]!);
    if (commits.length === 0) {
      throw new CatalogNotFound(`store "${this.name}" has no commit ${id} (for "${key}"); check the ID`);
    }
    if (commits.length > 1) {
      throw new CatalogError(
        `store "${this.name}": the commit ID ${id} is ambiguous (${
          commits.join(", ")
        }); write more of its digits`,
      );
    }
    return commits[0]!;
  }

  async #entry(key: string, commit: string): Promise<TreeEntry | null> {
    if (key === "") return { mode: "040000", type: "tree", oid: "", size: null, path: "" };
    const found = await this.#must(["ls-tree", "-z", "-l", "--full-tree", commit, "--", key]);
    const entry = parseTree(text(found), true)[0];
    return entry && entry.path === key ? entry : null;
  }

  /** What is at a key at a commit. */
  async stat(key: string, version: StoreVersion | null): Promise<EntryKind | null> {
    const entry = await this.#entry(key, this.#commit(version));
    if (entry === null) return null;
    return this.#kind(entry, key);
  }

  #kind(entry: TreeEntry, key: string): EntryKind {
    if (entry.type === "tree") return "folder";
    if (entry.type === "blob" && entry.mode !== "120000") return "file";
    throw new CatalogError(
      `"${key}" in store "${this.name}" is a ${
        entry.mode === "120000" ? "link" : "submodule"
      }; the catalog reads files and folders only`,
    );
  }

  #commit(version: StoreVersion | null): string {
    if (version?.kind !== "commit") {
      throw new TypeError(`a git store reads at a commit, not ${version?.kind}`);
    }
    return version.id;
  }

  #treeish(key: string, commit: string): string {
    return key === "" ? `${commit}^{tree}` : `${commit}:${key}`;
  }

  /** The entries of a folder at a commit. */
  async list(key: string, version: StoreVersion | null): Promise<StoreEntry[]> {
    const commit = this.#commit(version);
    if (await this.stat(key, version) !== "folder") throw this.#notFound(key, "folder", commit);
    const found = await this.#must(["ls-tree", "-z", "-l", this.#treeish(key, commit)]);
    return parseTree(text(found), true)
      .filter((e) => e.type === "tree" || (e.type === "blob" && e.mode !== "120000"))
      .map((e) => ({ name: e.path, kind: e.type === "tree" ? "folder" : "file", size: e.size }));
  }

  /** The blob at a key at a commit, or the refusal: what is there is not a file. */
  async #blob(key: string, commit: string): Promise<TreeEntry> {
    const entry = await this.#entry(key, commit);
    if (entry === null || this.#kind(entry, key) !== "file") throw this.#notFound(key, "file", commit);
    return entry;
  }

  /**
   * The bytes of a file at a commit, at most {@linkcode READ_MAX_BYTES}: a blob of zeros of gigabytes takes a
   * few MiB in a repository, and was read whole into memory.
   */
  async read(key: string, version: StoreVersion | null): Promise<Uint8Array> {
    const commit = this.#commit(version);
    const blob = await this.#blob(key, commit);
    if ((blob.size ?? 0) > READ_MAX_BYTES) {
      throw new CatalogError(
        `"${key}" in store "${this.name}" at commit ${commit} is larger than ${
          sizeText(READ_MAX_BYTES)
        }, the most the catalog reads into memory; it was not read: snapshot or fetch it instead`,
      );
    }
    return (await this.#must(["cat-file", "blob", blob.oid], { max: blob.size ?? READ_MAX_BYTES })).stdout;
  }

  /** Writes the file or folder at a key, at a commit, to `dest`. */
  async materialize(key: string, version: StoreVersion | null, dest: string): Promise<EntryKind> {
    const commit = this.#commit(version);
    const kind = await this.stat(key, version);
    if (kind === null) throw this.#notFound(key, "file or folder", commit);
    if (kind === "file") {
      // streamed to its file, whatever its size
      await writeBlobs([`--git-dir=${await this.#dir()}`], [{
        oid: (await this.#blob(key, commit)).oid,
        path: dest,
      }]);
      return kind;
    }
    await Deno.mkdir(dest, { recursive: true });
    const found = await this.#must(["ls-tree", "-r", "-z", this.#treeish(key, commit)]);
    const blobs = parseTree(text(found), false).map((e) => {
      this.#kind(e, joinKey(key, e.path));
      return { oid: e.oid, path: pathUnder(dest, e.path, `store "${this.name}" at commit ${commit}`) };
    });
    await writeBlobs([`--git-dir=${await this.#dir()}`], blobs);
    return kind;
  }

  async #stage(): Promise<{ dir: string; list: string }> {
    const base = join(await this.#dir(), "provcat", "stage");
    const safe = encodeURIComponent(this.branch);
    return { dir: join(base, safe), list: join(base, `${safe}.json`) };
  }

  async #staged(list: string): Promise<string[]> {
    try {
      // a file inside the repository, which another process can write: opened without waiting, and capped
      return JSON.parse(new TextDecoder().decode(await readCapped(list, RECORD_MAX_BYTES))) as string[];
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return [];
      if (error instanceof CatalogError) throw error;
      throw new CatalogError(
        `store "${this.name}": its staging list ${list} cannot be read: ${
          (error as Error).message.split("\n")[0]
        }; remove it and put again`,
        { cause: error },
      );
    }
  }

  /**
   * Stages a file or folder at a key, in the store's own staging folder inside the repository (so a later
   * process can commit it); `commit` makes it part of the branch.
   */
  async put(key: string, source: PutSource): Promise<void> {
    if (key === "") {
      throw new CatalogError(`cannot put at the root of store "${this.name}"; name a path under it`);
    }
    const stage = await this.#stage();
    const target = join(stage.dir, ...key.split("/"));
    if (typeof source === "string") {
      const kind = await kindOf(source);
      if (kind === null) throw new CatalogError(`cannot put "${source}": it does not exist`);
      if (kind === "folder") await walkFiles(source);
      await removeTree(target);
      await copyTree(source, target, kind);
    } else {
      await removeTree(target);
      await Deno.mkdir(join(target, ".."), { recursive: true });
      await Deno.writeFile(target, source);
    }
    const staged = (await this.#staged(stage.list)).filter((k) => !underKey(k, key));
    if (!staged.some((k) => underKey(key, k))) staged.push(key);
    await Deno.writeTextFile(stage.list, JSON.stringify(staged.sort()));
  }

  /**
   * Commits what was put at or under a key onto the branch: the branch's tree with each staged key replaced.
   * When the repository has the branch checked out, the committed paths are checked out too.
   */
  async commit(key: string, message: string): Promise<StoreVersion> {
    const stage = await this.#stage();
    const all = await this.#staged(stage.list);
    const keys = all.filter((k) => underKey(k, key));
    const head = await this.#head(this.branch);
    if (keys.length === 0) {
      if (head === null) {
        throw new CatalogError(
          `store "${this.name}": nothing was put under "${key}" to commit; put it first`,
        );
      }
      return { kind: "commit", id: head };
    }
    const checkedOut = await this.#checkedOut();
    if (checkedOut) await this.#refuseLocalChanges(keys);
    const work = await Deno.makeTempDir({ prefix: "provcat-git-" });
    try {
      const env = { ...(await this.#ident()), GIT_INDEX_FILE: join(work, "index") };
      await this.#must(head ? ["read-tree", head] : ["read-tree", "--empty"], { env });
      const lines: string[] = [];
      for (const k of keys) {
        if (head) {
          const old = await this.#must(["ls-tree", "-r", "-z", "--name-only", "--full-tree", head, "--", k]);
          for (const path of text(old).split("\0").filter(Boolean)) lines.push(`0 ${ZERO}\t${path}`);
        }
        const source = join(stage.dir, ...k.split("/"));
        const files = (await kindOf(source)) === "file"
          ? [{ rel: k, abs: source }]
          : (await walkFiles(source)).map((f) => ({ rel: joinKey(k, f.rel), abs: f.abs }));
        if (files.length === 0) continue;
        const oids = text(
          await this.#must(["hash-object", "-w", "--no-filters", "--stdin-paths"], {
            stdin: files.map((f) => f.abs).join("\n") + "\n",
          }),
        ).split("\n");
        files.forEach((f, i) => lines.push(`100644 ${oids[i]}\t${f.rel}`));
      }
      await this.#must(["update-index", "-z", "--index-info"], { stdin: lines.join("\0") + "\0", env });
      const tree = text(await this.#must(["write-tree"], { env }));
      if (head && text(await this.#must(["rev-parse", `${head}^{tree}`])) === tree) {
        await this.#unstage(stage, all, keys);
        return { kind: "commit", id: head };
      }
      const commit = text(
        await this.#must(["commit-tree", tree, ...(head ? ["-p", head] : []), "-m", message], { env }),
      );
      const moved = await this.#git(["update-ref", `refs/heads/${this.branch}`, commit, head ?? ZERO]);
      if (moved.code !== 0) {
        throw new CatalogError(
          `store "${this.name}": branch "${this.branch}" moved while committing "${key}"; commit again`,
        );
      }
      await this.#unstage(stage, all, keys);
      if (checkedOut) await this.#checkout(keys);
      return { kind: "commit", id: commit };
    } finally {
      await removeTree(work);
    }
  }

  async #unstage(stage: { dir: string; list: string }, all: string[], done: string[]): Promise<void> {
    for (const k of done) await removeTree(join(stage.dir, ...k.split("/")));
    await Deno.writeTextFile(stage.list, JSON.stringify(all.filter((k) => !done.includes(k))));
  }

  /** The options and variables that run git on the working tree, whatever GIT_DIR or GIT_INDEX_FILE say. */
  async #worktree(): Promise<{ args: string[]; env: Record<string, string> }> {
    const dir = await this.#dir();
    return {
      args: [`--git-dir=${dir}`, `--work-tree=${this.path}`],
      env: { GIT_INDEX_FILE: join(dir, "index") },
    };
  }

  /** True when the repository has a working tree with the store's branch checked out. */
  async #checkedOut(): Promise<boolean> {
    await this.#dir();
    if (this.#bare) return false;
    const current = await this.#git(["symbolic-ref", "-q", "HEAD"]);
    return text(current) === `refs/heads/${this.branch}`;
  }

  /**
   * Refuses to commit keys that the user has changed in the checked-out working tree (staged, unstaged or
   * untracked): checking out the commit would overwrite that work.
   */
  async #refuseLocalChanges(keys: string[]): Promise<void> {
    const { args, env } = await this.#worktree();
    const status = await runGit([
      ...args,
      "status",
      "--porcelain",
      "-z",
      "--untracked-files=all",
      "--",
      ...keys,
    ], {
      env,
    });
    if (status.code !== 0) {
      throw new CatalogError(`store "${this.name}": git status failed in ${this.path}: ${status.stderr}`);
    }
    const changed = text(status).split("\0").filter(Boolean).map((l) => l.slice(3));
    if (changed.length) {
      throw new CatalogError(
        `store "${this.name}": ${this.path} has the branch "${this.branch}" checked out with local changes to ${
          changed.slice(0, 5).join(", ")
        }${
          changed.length > 5 ? ", …" : ""
        }, which the commit would overwrite; commit, stash or remove them, then commit again`,
      );
    }
  }

  /**
   * Checks the committed keys out in the working tree. `--no-overlay` also removes the files that the commit
   * removed, which git's default overlay mode would leave in the index, for the user's next commit to add back.
   */
  async #checkout(keys: string[]): Promise<void> {
    const { args, env } = await this.#worktree();
    const done = await runGit([...args, "checkout", "--no-overlay", this.branch, "--", ...keys], { env });
    if (done.code !== 0) {
      throw new CatalogError(
        `store "${this.name}": committed, but could not check out ${
          keys.join(", ")
        } in ${this.path}: ${done.stderr}`,
      );
    }
  }

  async #ident(): Promise<Record<string, string>> {
    if (this.#identity) return this.#identity;
    const known = await this.#git(["var", "GIT_COMMITTER_IDENT"]);
    this.#identity = known.code === 0 ? {} : {
      GIT_AUTHOR_NAME: "provcat",
      GIT_AUTHOR_EMAIL: "provcat@localhost",
      GIT_COMMITTER_NAME: "provcat",
      GIT_COMMITTER_EMAIL: "provcat@localhost",
    };
    return this.#identity;
  }

  /** Nothing to close. */
  close(): Promise<void> {
    return Promise.resolve();
  }

  #notFound(key: string, what: string, commit: string): CatalogNotFound {
    return new CatalogNotFound(`"${key}" is not a ${what} in store "${this.name}" at commit ${commit}`);
  }
}

function parseTree(output: string, long: boolean): TreeEntry[] {
  return output.split("\0").filter(Boolean).map((record) => {
    const tab = record.indexOf("\t");
    const fields = record.slice(0, tab).split(/ +/);
    const size = long && fields[3] !== "-" ? Number(fields[3]) : null;
    return { mode: fields[0]!, type: fields[1]!, oid: fields[2]!, size, path: record.slice(tab + 1) };
  });
}
