/**
 * The sender of the ingest benchmark, in a process of its own as an agent program is (Claude Code, Codex): it
 * makes the bodies ({@linkcode spanBodies}), then for each line on its standard input, `{ url, headers, count }`,
 * posts `count` bodies one after the other (cycling through them), and prints one line, `{ ms }`, the time the
 * posts took. The run's writer (the benchmark's process) then does its own work while the spans come, as provr's
 * does, not between the sender's requests.
 * @module
 */
import { BATCH, postOne, spanBodies } from "./_spans.ts";

const bodies = spanBodies(Number(Deno.args[0] ?? 40));
console.log(JSON.stringify({ ready: BATCH }));
let text = "";
for await (const chunk of Deno.stdin.readable.pipeThrough(new TextDecoderStream())) {
  text += chunk;
  for (let end = text.indexOf("\n"); end >= 0; end = text.indexOf("\n")) {
    const { url, headers, count } = JSON.parse(text.slice(0, end)) as {
      url: string;
      headers: Record<string, string>;
      count: number;
    };
    text = text.slice(end + 1);
    let ms = 0;
    for (let i = 0; i < count; i++) ms += await postOne(url, bodies[i % bodies.length]!, headers);
    console.log(JSON.stringify({ ms }));
  }
}
