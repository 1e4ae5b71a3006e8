import { hashFolder } from "./lib/provcat/_files.ts";
import { createHash } from "node:crypto";
for (let r = 0; r < 3; r++) {
  let t = performance.now();
  await hashFolder("/tmp/hf");
  console.log("hashFolder", (300 / ((performance.now() - t) / 1000)).toFixed(0), "MiB/s");
  t = performance.now();
  for (let i = 1; i <= 300; i++) {
    const b = Deno.readFileSync(`/tmp/hf/f${i}`);
    createHash("sha256").update(b).digest("hex");
  }
  console.log("sync read+node", (300 / ((performance.now() - t) / 1000)).toFixed(0), "MiB/s");
  t = performance.now();
  for (let i = 1; i <= 300; i++) { const b = await Deno.readFile(`/tmp/hf/f${i}`); }
  console.log("async readFile only", (300 / ((performance.now() - t) / 1000)).toFixed(0), "MiB/s");
}
