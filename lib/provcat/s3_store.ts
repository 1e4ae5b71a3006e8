/**
 * The `s3` store: a bucket with versioning on, through `@aws-sdk/client-s3`. `put` writes objects, and S3
 * gives each write its own version ID. `commit` records a commit: an object under `<prefix>.provcat/commits/`
 * that maps every key to the version ID it had, named by the SHA-256 of its canonical JSON, and moves the
 * branch (`<prefix>.provcat/refs/heads/<branch>`) to it. A commit is a version; `?at=version:<id>` also
 * selects one object's own S3 version. Credentials come from the standard AWS variables and files.
 * @module
 */
import type * as S3Sdk from "@aws-sdk/client-s3";
import type { ListObjectVersionsCommandOutput, S3Client } from "@aws-sdk/client-s3";
import canonicalize from "canonicalize";
import { createHash } from "node:crypto";
import { dirname } from "node:path";
import { asCatalogError, kindOf, pathUnder, walkFiles } from "./_files.ts";
import { readCapped } from "../provevi/evidence/open_file.ts";
import {
  type CappedWhat,
  COMMIT_MAX_BYTES,
  REF_MAX_BYTES,
  refusalIn,
  STALL_SECONDS,
} from "./_capped_read.ts";
import { guardAnswers, objectBody, objectCap } from "./_s3_answers.ts";
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

// The AWS SDK is large: it is loaded on an s3 store's first request, so that a command that never reaches a
// bucket (most of them) starts without it.
let S3: typeof S3Sdk;
async function loadS3(): Promise<void> {
  S3 ??= await import("@aws-sdk/client-s3");
}

/** The config of an s3 store. */
export interface S3StoreConfig {
  type: "s3";
  /** The bucket; its versioning must be on. */
  bucket: string;
  /** A prefix under which the store's keys go, such as `catalog/`. */
  prefix?: string;
  /** The S3 endpoint, for an S3-compatible server; AWS's own by default. */
  endpoint?: string;
  /** The region; `AWS_REGION`, else `us-east-1`, by default. */
  region?: string;
  /** Address the bucket in the path (`endpoint/bucket/key`), as most S3-compatible servers need. */
  forcePathStyle?: boolean;
  /** The branch that a URI without `?at=` reads and that `commit` moves; `main` by default. */
  branch?: string;
  /** The most seconds a request waits on the server for its next bytes; 60 by default. */
  timeout?: number;
}

/** One object of a commit. */
interface CommitObject {
  version: string;
  size: number;
}

/** A commit of an s3 store, as stored under `.provcat/commits/<id>.json`. */
interface S3Commit {
  format: "provcat-s3-commit/1";
  parent: string | null;
  message: string;
  time: string;
  objects: Record<string, CommitObject>;
}

const META = ".provcat";
const COMMIT_ID = /^[0-9a-f]{64}$/;
/** The most keys a commit maps: with its version ID and size, each takes some 60 bytes of the commit's most. */
const MAX_COMMIT_KEYS = 1_000_000;

/**
 * A catalog store over a versioned S3 bucket.
 *
 * @example
 * ```ts ignore
 * import { S3Store } from "./s3_store.ts";
 * const store = new S3Store("bucket", {
 *   type: "s3", bucket: "evidence", endpoint: "http://127.0.0.1:5055", forcePathStyle: true,
 * });
 * const head = await store.resolve("", null);
 * ```
 */
export class S3Store implements CatalogStore {
  readonly type = "s3";
  readonly versioned = true;
  readonly bucket: string;
  readonly prefix: string;
  readonly branch: string;
  #client: S3Client | null = null;
  readonly #config: S3StoreConfig;
  #checked = false;
  #commits = new Map<string, S3Commit>();
  readonly #stallMs: number;

  /**
   * @param name The store's name in the config.
   * @param config The bucket and how to reach it.
   */
  constructor(readonly name: string, config: S3StoreConfig) {
    this.bucket = config.bucket;
    this.prefix = config.prefix ?? "";
    this.branch = config.branch ?? "main";
    this.#config = config;
    this.#stallMs = (config.timeout ?? STALL_SECONDS) * 1000;
  }

  /** The client, made (and the SDK loaded) on the first request. */
  async #ready(): Promise<S3Client> {
    if (this.#client) return this.#client;
    await loadS3();
    if (this.#client) return this.#client; // made by a request that waited on the SDK too
    const config = this.#config;
    const client = new S3.S3Client({
      region: config.region ?? Deno.env.get("AWS_REGION") ?? "us-east-1",
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      ...(config.forcePathStyle !== undefined ? { forcePathStyle: config.forcePathStyle } : {}),
      // a server that answers nothing (not even headers) is given up too
      requestHandler: { connectionTimeout: this.#stallMs, socketTimeout: this.#stallMs },
    });
    guardAnswers(client, { where: this.#where, stallMs: this.#stallMs });
    return this.#client = client;
  }

  async #send<T>(what: string, fn: () => Promise<T>): Promise<T> {
    if (!this.#checked) {
      this.#checked = true;
      const status = (await this.#call("read the versioning of", () =>
        this.#client!.send(new S3.GetBucketVersioningCommand({ Bucket: this.bucket })))).Status;
      if (status !== "Enabled") {
        this.#checked = false;
        throw new CatalogError(
          `store "${this.name}": bucket "${this.bucket}" has versioning ${
            status ?? "never enabled"
          }, and the catalog needs it on; run aws s3api put-bucket-versioning --bucket ${this.bucket} --versioning-configuration Status=Enabled`,
        );
      }
    }
    return await this.#call(what, fn);
  }

  async #call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    await this.#ready();
    try {
      return await fn();
    } catch (error) {
      if (error instanceof CatalogError) throw error;
      const refused = refusalIn(error);
      if (refused) throw refused;
      const e = error as { name?: string; message?: string };
      const why = e.name === "TimeoutError" && /timed out/.test(String(e.message))
        ? `the server sent nothing for ${this.#stallMs / 1000} s, and the request was given up`
        : `${e.name ?? "Error"}: ${String(e.message).split("\n")[0]}`;
      throw new CatalogError(`store "${this.name}": cannot ${what} bucket "${this.bucket}": ${why}`, {
        cause: error,
      });
    }
  }

  get #where(): string {
    return `store "${this.name}": bucket "${this.bucket}"`;
  }

  #object(key: string): string {
    if (key.split("/")[0] === META) {
      throw new CatalogError(`store "${this.name}": "${META}" is the store's own folder; use another name`);
    }
    return this.prefix + key;
  }

  async #getText(objectKey: string, of: CappedWhat & { max: number }): Promise<string | null> {
    await this.#ready();
    try {
      const out = await this.#client!.send(new S3.GetObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      return new TextDecoder().decode(await objectBody<Uint8Array>(out, of, this.#stallMs));
    } catch (error) {
      if ((error as { name?: string }).name === "NoSuchKey") return null;
      throw error;
    }
  }

  /** The commit a branch names, with the ETag of its ref object for a conditional move. */
  async #headWithTag(branch: string): Promise<{ id: string | null; etag: string | null }> {
    return await this.#send("read a branch of", async () => {
      try {
        const out = await this.#client!.send(
          new S3.GetObjectCommand({ Bucket: this.bucket, Key: `${this.prefix}${META}/refs/heads/${branch}` }),
        );
        const id = new TextDecoder().decode(
          await objectBody<Uint8Array>(out, this.#refCap(branch), this.#stallMs),
        ).trim();
        return { id, etag: out.ETag ?? null };
      } catch (error) {
        if ((error as { name?: string }).name === "NoSuchKey") return { id: null, etag: null };
        throw error;
      }
    });
  }

  #refCap(branch: string): CappedWhat & { max: number } {
    return {
      what: `store "${this.name}": the ref of branch "${branch}" in bucket "${this.bucket}"`,
      why: "the most a ref takes",
      fix: "provcat did not write it",
      max: REF_MAX_BYTES,
    };
  }

  async #head(branch: string): Promise<string | null> {
    const id = await this.#send(
      "read a branch of",
      () => this.#getText(`${this.prefix}${META}/refs/heads/${branch}`, this.#refCap(branch)),
    );
    return id === null ? null : id.trim();
  }

  async #loadCommit(id: string): Promise<S3Commit> {
    const cached = this.#commits.get(id);
    if (cached) return cached;
    const body = await this.#send(
      "read a commit of",
      () =>
        this.#getText(`${this.prefix}${META}/commits/${id}.json`, {
          what: `store "${this.name}": commit ${id} in bucket "${this.bucket}"`,
          why: "the most a commit takes",
          fix: "provcat did not write it",
          max: COMMIT_MAX_BYTES,
        }),
    );
    if (body === null) throw new CatalogNotFound(`store "${this.name}" has no commit ${id}; check the ID`);
    if (createHash("sha256").update(body).digest("hex") !== id) {
      throw new CatalogError(
        `store "${this.name}": commit ${id} was changed: its bytes do not hash to its ID`,
      );
    }
    const commit = this.#commitOf(id, body);
    this.#commits.set(id, commit);
    return commit;
  }

  /**
   * A commit's JSON as a commit, its map of objects with no prototype: looked up as a plain object, a key named
   * as one of every object's own properties (`constructor`, `toString`, `__proto__`) was found in every commit,
   * and read with no version, so at the newest one, whoever put it after the commit.
   */
  #commitOf(id: string, body: string): S3Commit {
    const bad = () => new CatalogError(`store "${this.name}": commit ${id} is not a commit of an s3 store`);
    let parsed: Partial<S3Commit>;
    try {
      parsed = JSON.parse(body);
    } catch (error) {
      throw new CatalogError(`store "${this.name}": commit ${id} is not JSON`, { cause: error });
    }
    if (
      typeof parsed !== "object" || parsed === null || typeof parsed.objects !== "object" || !parsed.objects
    ) {
      throw bad();
    }
    const objects: Record<string, CommitObject> = Object.create(null);
    for (const [key, o] of Object.entries(parsed.objects)) {
      if (typeof o?.version !== "string" || o.version === "" || typeof o.size !== "number") throw bad();
      objects[key] = { version: o.version, size: o.size };
    }
    return { ...parsed, objects } as S3Commit;
  }

  /** The commit that a selector names (the branch's head without one), or one object's S3 version. */
  async resolve(key: string, at: Selector | null): Promise<StoreVersion> {
    if (at?.kind === "version") {
      await this.#send(
        "find a version in",
        () =>
          this.#client!.send(
            new S3.HeadObjectCommand({ Bucket: this.bucket, Key: this.#object(key), VersionId: at.id }),
          ),
      )
        .catch((error) => {
          throw new CatalogNotFound(`store "${this.name}" has no version ${at.id} of "${key}"`, {
            cause: error,
          });
        });
      return { kind: "version", id: at.id };
    }
    if (at?.kind === "commit") {
      if (!COMMIT_ID.test(at.id)) {
        throw new CatalogError(`store "${this.name}" names commits by 64 hex digits; "${at.id}" is not one`);
      }
      await this.#loadCommit(at.id);
      return { kind: "commit", id: at.id };
    }
    const branch = at?.id ?? this.branch;
    const head = await this.#head(branch);
    if (head === null) {
      throw new CatalogNotFound(
        `store "${this.name}" has no branch "${branch}" with a commit (for "${key}"); commit to it first or name another branch`,
      );
    }
    return { kind: "commit", id: head };
  }

  async #objects(version: StoreVersion | null): Promise<Record<string, CommitObject>> {
    if (version?.kind !== "commit") throw new TypeError("an s3 store lists at a commit");
    return (await this.#loadCommit(version.id)).objects;
  }

  /** What is at a key at a version. */
  async stat(key: string, version: StoreVersion | null): Promise<EntryKind | null> {
    if (version?.kind === "version") return "file";
    const objects = await this.#objects(version);
    if (key !== "" && objects[key]) return "file";
    const inside = key === "" ? "" : key + "/";
    return Object.keys(objects).some((k) => k.startsWith(inside)) || key === "" ? "folder" : null;
  }

  /** The entries of a folder at a commit. */
  async list(key: string, version: StoreVersion | null): Promise<StoreEntry[]> {
    if (await this.stat(key, version) !== "folder") throw this.#notFound(key, "folder", version);
    const objects = await this.#objects(version);
    const inside = key === "" ? "" : key + "/";
    const entries = new Map<string, StoreEntry>();
    for (const [k, o] of Object.entries(objects)) {
      if (!k.startsWith(inside)) continue;
      const rest = k.slice(inside.length);
      const slash = rest.indexOf("/");
      if (slash < 0) entries.set(rest, { name: rest, kind: "file", size: o.size });
      else entries.set(rest.slice(0, slash), { name: rest.slice(0, slash), kind: "folder", size: null });
    }
    return [...entries.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * An object's version, read into memory (at most 1 GiB) or written to `dest`; at most the
   * size its commit records, or, for a version named alone, the length the server declares.
   */
  async #getVersion<T extends Uint8Array | number>(
    key: string,
    object: { version: string; size: number | null },
    dest?: string,
  ): Promise<T> {
    return await this.#send("read an object of", async () => {
      const out = await this.#client!.send(
        new S3.GetObjectCommand({ Bucket: this.bucket, Key: this.#object(key), VersionId: object.version }),
      );
      const what = `store "${this.name}": "${key}" at version ${object.version} in bucket "${this.bucket}"`;
      const cap = objectCap(
        what,
        object.size ?? out.ContentLength ?? null,
        object.size !== null,
        dest === undefined,
      );
      if (cap === null) {
        await out.Body?.transformToWebStream().cancel().catch(() => {});
        throw new CatalogError(
          `${what}: the server declared no length for it; is the endpoint an S3 server?`,
        );
      }
      return await objectBody<T>(
        out,
        cap,
        this.#stallMs,
        dest,
      );
    });
  }

  /** The bytes of a file at a version. */
  async read(key: string, version: StoreVersion | null): Promise<Uint8Array> {
    if (version?.kind === "version") return await this.#getVersion(key, { version: version.id, size: null });
    const object = (await this.#objects(version))[key];
    if (!object) throw this.#notFound(key, "file", version);
    return await this.#getVersion(key, object);
  }

  /** Writes the file or folder at a key, at a version, to `dest`. */
  async materialize(key: string, version: StoreVersion | null, dest: string): Promise<EntryKind> {
    const kind = await this.stat(key, version);
    if (kind === null) throw this.#notFound(key, "file or folder", version);
    if (kind === "file") {
      const object = version?.kind === "version"
        ? { version: version.id, size: null }
        : (await this.#objects(version))[key]!;
      await this.#getVersion(key, object, dest);
      return kind;
    }
    await Deno.mkdir(dest, { recursive: true });
    const inside = key === "" ? "" : key + "/";
    const objects = Object.entries(await this.#objects(version)).filter(([k]) => k.startsWith(inside));
    for (const [k] of objects) pathUnder(dest, k.slice(inside.length), `store "${this.name}"`); // before any write
    let next = 0;
    const worker = async () => {
      while (next < objects.length) {
        const [k, o] = objects[next++]!;
        const path = pathUnder(
          dest,
          k.slice(inside.length),
          `store "${this.name}" at ${version?.kind}:${version?.id}`,
        );
        await Deno.mkdir(dirname(path), { recursive: true });
        await this.#getVersion(k, o, path);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    return kind;
  }

  /**
   * Writes a file or a folder at a key; a folder replaces what was under the key (the objects it lacks get a
   * delete marker, so their versions stay for older commits).
   */
  async put(key: string, source: PutSource): Promise<void> {
    if (key === "") {
      throw new CatalogError(`cannot put at the root of store "${this.name}"; name a path under it`);
    }
    this.#object(key);
    const upload = (k: string, body: Uint8Array) =>
      this.#send(
        "write to",
        () =>
          this.#client!.send(
            new S3.PutObjectCommand({ Bucket: this.bucket, Key: this.#object(k), Body: body }),
          ),
      );
    if (typeof source !== "string") {
      await upload(key, source);
      return;
    }
    const kind = await kindOf(source);
    if (kind === null) throw new CatalogError(`cannot put "${source}": it does not exist`);
    if (kind === "file") {
      await upload(key, await readSource(source));
      return;
    }
    const files = await walkFiles(source);
    const keep = new Set(files.map((f) => joinKey(key, f.rel)));
    for (const f of files) await upload(joinKey(key, f.rel), await readSource(f.abs));
    for (const k of (await this.#latest(key)).keys()) {
      if (k !== key && !keep.has(k)) {
        await this.#send(
          "delete from",
          () => this.#client!.send(new S3.DeleteObjectCommand({ Bucket: this.bucket, Key: this.#object(k) })),
        );
      }
    }
  }

  /** The newest version of each live object at or under a key. */
  async #latest(scope: string): Promise<Map<string, CommitObject>> {
    const found = new Map<string, CommitObject>();
    let keyMarker: string | undefined;
    let versionMarker: string | undefined;
    for (;;) {
      const page: ListObjectVersionsCommandOutput = await this.#send("list", () =>
        this.#client!.send(
          new S3.ListObjectVersionsCommand({
            Bucket: this.bucket,
            Prefix: this.prefix + scope,
            ...(keyMarker ? { KeyMarker: keyMarker } : {}),
            ...(versionMarker ? { VersionIdMarker: versionMarker } : {}),
          }),
        ));
      for (const v of page.Versions ?? []) {
        if (typeof v.Key !== "string" || typeof v.VersionId !== "string" || v.VersionId === "") {
          throw this.#oddList(scope, "names a version without its key or ID");
        }
        const key = v.Key.slice(this.prefix.length);
        if (v.IsLatest && underKey(key, scope) && key.split("/")[0] !== META) {
          found.set(key, { version: v.VersionId, size: v.Size ?? 0 });
        }
      }
      // a server that says "more" for ever, or more keys than a commit can hold, is not followed to its end
      if (found.size > MAX_COMMIT_KEYS) throw this.#oddList(scope, `holds more than ${MAX_COMMIT_KEYS} keys`);
      if (!page.IsTruncated) break;
      if (
        !page.NextKeyMarker ||
        (page.NextKeyMarker === keyMarker && page.NextVersionIdMarker === versionMarker)
      ) {
        throw this.#oddList(scope, "says it has more, but its next page starts where this one did");
      }
      keyMarker = page.NextKeyMarker;
      versionMarker = page.NextVersionIdMarker;
    }
    return found;
  }

  #oddList(scope: string, why: string): CatalogError {
    return new CatalogError(
      `store "${this.name}": the list of versions under "${scope}" in bucket "${this.bucket}" ${why}; it was not followed: is the endpoint an S3 server?`,
    );
  }

  /** Commits the objects at or under a key, keeping every other key as the branch's head has it. */
  async commit(key: string, message: string): Promise<StoreVersion> {
    const { id: head, etag } = await this.#headWithTag(this.branch);
    const parent = head ? await this.#loadCommit(head) : null;
    const objects: Record<string, CommitObject> = {};
    for (const [k, o] of Object.entries(parent?.objects ?? {})) if (!underKey(k, key)) objects[k] = o;
    for (const [k, o] of await this.#latest(key)) objects[k] = o;
    const sorted = Object.fromEntries(
      Object.entries(objects).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    );
    if (parent && canonicalize(parent.objects) === canonicalize(sorted)) return { kind: "commit", id: head! };
    if (!parent && Object.keys(sorted).length === 0) {
      throw new CatalogError(`store "${this.name}": nothing was put under "${key}" to commit; put it first`);
    }
    const commit: S3Commit = {
      format: "provcat-s3-commit/1",
      parent: head,
      message,
      time: new Date().toISOString(),
      objects: sorted,
    };
    const body = canonicalize(commit)!;
    if (new TextEncoder().encode(body).length > COMMIT_MAX_BYTES) { // past it, no reader would read it back
      throw new CatalogError(
        `store "${this.name}": the commit of "${key}" would be larger than 64 MiB, the most a commit takes; split the store`,
      );
    }
    const id = createHash("sha256").update(body).digest("hex");
    await this.#send("write a commit to", () =>
      this.#client!.send(
        new S3.PutObjectCommand({
          Bucket: this.bucket,
          Key: `${this.prefix}${META}/commits/${id}.json`,
          Body: body,
        }),
      ));
    // The branch moves only if it is still where this commit started from: a conditional write (If-Match on the
    // ref's ETag, or If-None-Match for a new branch) makes the check and the move one step, so two commits at once
    // cannot both move it and lose one.
    await this.#ready();
    try {
      await this.#client!.send(
        new S3.PutObjectCommand({
          Bucket: this.bucket,
          Key: `${this.prefix}${META}/refs/heads/${this.branch}`,
          Body: id,
          ...(etag ? { IfMatch: etag } : { IfNoneMatch: "*" }),
        }),
      );
    } catch (error) {
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if ((error as { name?: string }).name === "PreconditionFailed" || status === 412 || status === 409) {
        throw new CatalogError(
          `store "${this.name}": branch "${this.branch}" moved while committing "${key}"; commit again`,
          { cause: error },
        );
      }
      await this.#send("move a branch of", () => Promise.reject(error));
    }
    this.#commits.set(id, this.#commitOf(id, body));
    await this.#confirmOnBranch(id, key);
    return { kind: "commit", id };
  }

  /**
   * Reads the branch back and finds this commit on it. A server that checks If-Match apart from the write (moto
   * under load) or ignores it (some S3-compatible servers) can let a second commit replace this one; then this
   * one is not in the branch's history, and is told to commit again rather than said to be done.
   */
  async #confirmOnBranch(id: string, key: string): Promise<void> {
    let at = await this.#head(this.branch);
    for (let steps = 0; at !== null && steps < 64; steps++) {
      if (at === id) return;
      at = (await this.#loadCommit(at)).parent;
    }
    throw new CatalogError(
      `store "${this.name}": branch "${this.branch}" moved while committing "${key}"; commit again`,
    );
  }

  /** Closes the client's connections. */
  close(): Promise<void> {
    this.#client?.destroy();
    return Promise.resolve();
  }

  #notFound(key: string, what: string, version: StoreVersion | null): CatalogNotFound {
    return new CatalogNotFound(
      `"${key}" is not a ${what} in store "${this.name}" at ${version?.kind}:${version?.id}`,
    );
  }
}

/** A file to upload, opened in one step: a link or FIFO swapped in is refused, and one past 5 GiB (S3's most). */
function readSource(path: string): Promise<Uint8Array> {
  return readCapped(path, 5 * 1024 ** 3).catch((error) => {
    throw asCatalogError(error);
  });
}
