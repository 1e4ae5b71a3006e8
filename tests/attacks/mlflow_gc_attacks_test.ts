/**
 * `mlflow gc`, the program on the PATH that purges the copy's earlier runs, writes what it likes: its output and
 * errors were read whole, so one that logs without end (256 MiB here) grew the copy by as much. Its output is
 * not read now, and only the last 64 KiB of its errors are kept, whose last line is the one-line error.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { measuredInChild } from "./_setup.ts";

const MiB = 1024 * 1024;

Deno.test("mlflow gc attack: a program that writes 256 MiB of errors is one line, its last, in bounded memory", async () => {
  const dir = await Deno.makeTempDir({ prefix: "attack-mlflow-gc-" });
  try {
    const program = join(dir, "mlflow");
    await Deno.writeTextFile(
      program,
      "#!/bin/sh\nhead -c 268435456 /dev/zero | tr '\\0' 'x' >&2\nhead -c 268435456 /dev/zero\necho >&2\necho 'boom: the database is gone' >&2\nexit 1\n",
    );
    await Deno.chmod(program, 0o755);
    const { grew, got } = await measuredInChild<{ message: string | null }>(
      "./_mlflow_gc_work.ts",
      "purge",
      program,
      `sqlite:///${join(dir, "mlflow.db")}`,
    );
    console.log(
      `mlflow gc writing 256 MiB of errors and 256 MiB of output: grew ${(grew / MiB).toFixed(1)} MiB`,
    );
    assert.match(
      got.message ?? "",
      /stay marked deleted in .*: mlflow gc failed: boom: the database is gone$/,
    );
    assert.ok(!got.message!.includes("\n"));
    // what is in transit and not yet collected, whatever the size (1 GiB of errors: 62 MiB); before, all of it
    assert.ok(grew < 128 * MiB, `grew ${Math.round(grew / MiB)} MiB`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
