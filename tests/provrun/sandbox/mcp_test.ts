import assert from "node:assert/strict";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { z } from "zod";
import { verifyRun } from "../../../lib/provevi/runs/verify_run.ts";
import { mcpLaunch, McpServers } from "../../../lib/provrun/sandbox/mcp.ts";
import { sandboxPermissions } from "../../../lib/provrun/sandbox/sandbox_permissions.ts";
import { runFile } from "../../../lib/provrun/runner/run.ts";
import { agentFile, eventsOf, payloadOf } from "../_agent.ts";

const TURNS = `      - tool_calls: [{ id: m1, name: add, args: { a: 2, b: 3 } }]
      - tool_calls: [{ id: m2, name: read_text, args: { path: /etc/passwd } }]
      - text: "2 + 3 = 5"`;

Deno.test("mcpLaunch() starts a Deno server with the sandbox's flags, and refuses its own flags and other programs", () => {
  const permissions = sandboxPermissions("/r", ["127.0.0.1:9000"]);
  const options = { permissions, allowUnsandboxed: [], folder: "/repo" };
  assert.deepEqual(mcpLaunch({ name: "calc", command: ["mcp/server.ts", "--x"] }, options), {
    command: "deno",
    args: [
      "run",
      "--no-prompt",
      "--allow-read=/r/input,/r/output",
      "--allow-write=/r/output,/r/scratch",
      "--allow-net=127.0.0.1:9000",
      "/repo/mcp/server.ts",
      "--x",
    ],
    sandboxed: true,
  });
  assert.equal(
    mcpLaunch({ name: "calc", command: ["deno", "run", "s.ts"] }, options).args.at(-1),
    "/repo/s.ts",
  );
  assert.throws(
    () => mcpLaunch({ name: "calc", command: ["deno", "run", "-A", "s.ts"] }, options),
    /own permission flag -A/,
  );
  assert.throws(
    () => mcpLaunch({ name: "py", command: ["python3", "server.py"] }, options),
    /MCP server "py" runs the program "python3".*agent\.allow_unsandboxed: \[py\]/,
  );
  assert.deepEqual(
    mcpLaunch({ name: "py", command: ["python3", "server.py"] }, { ...options, allowUnsandboxed: ["py"] }),
    { command: "python3", args: ["server.py"], sandboxed: false },
  );
});

Deno.test("mcpLaunch() refuses Deno 2's short permission flags and permission sets, which would widen the sandbox", () => {
  const options = { permissions: sandboxPermissions("/r"), allowUnsandboxed: [], folder: "/repo" };
  for (
    const flag of [
      "-E",
      "-N",
      "-S",
      "-R",
      "-W",
      "-I",
      "-P",
      "-NE",
      "-qN",
      "-N=evil.example:443",
      "--permission-set=x",
    ]
  ) {
    assert.throws(
      () => mcpLaunch({ name: "calc", command: ["deno", "run", flag, "s.ts"] }, options),
      /own permission flag/,
      flag,
    );
  }
  assert.equal(mcpLaunch({ name: "calc", command: ["deno", "run", "-q", "s.ts"] }, options).sandboxed, true);
});

Deno.test("a stdio MCP server in Deno: its two tools are listed, called and recorded; a failing tool is recorded as an error", async () => {
  const runs = await Deno.makeTempDir();
  const file = agentFile(TURNS, { extra: `  mcp: [{ name: calc, command: [fixtures/mcp/server.ts] }]` });
  const outcome = await runFile(file, { runs });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  const { events, record } = await eventsOf(runs, outcome.runId);
  const started = events.find((e) => e.type === "sandbox_started")!;
  const tools = started.data.tools as {
    name: string;
    executed_by: string;
    sandboxed: boolean;
    input_schema: { properties: object };
  }[];
  const mcp = tools.filter((x) => x.executed_by === "mcp:calc");
  assert.deepEqual(mcp.map((x) => x.name), ["add", "read_text"]);
  assert.ok(
    mcp.every((x) =>
      x.sandboxed && ("path" in x.input_schema.properties || "a" in x.input_schema.properties)
    ),
  );
  const servers = started.data.mcp as { name: string; command: string[]; sandboxed: boolean }[];
  assert.equal(servers[0]!.sandboxed, true);
  assert.ok(servers[0]!.command.includes(`--allow-read=${outcome.folder}/input,${outcome.folder}/output`));
  assert.deepEqual(started.data.unsandboxed, []);
  const calls = events.filter((e) => e.type === "tool_called");
  assert.equal(calls[0]!.data.tool, "add");
  assert.equal(calls[0]!.data.error, null);
  assert.equal(calls[0]!.data.executed_by, "mcp:calc");
  assert.deepEqual(await payloadOf(runs, outcome.runId, calls[0]!.payload!), { a: 2, b: 3 });
  assert.equal(await payloadOf(runs, outcome.runId, calls[0]!.data.result_payload as string), "5");
  assert.equal(calls[1]!.data.tool, "read_text");
  assert.equal(calls[1]!.data.error, "McpToolError");
  assert.match(String(calls[1]!.data.message), /NotCapable: Requires read access to "\/etc\/passwd"/);
  assert.equal(events.at(-1)!.type, "run_completed");
  assert.deepEqual((await verifyRun(record)).problems, []);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("an MCP server that is not a Deno script is refused unless the run file allows it by name, and then recorded as unsandboxed", async () => {
  const runs = await Deno.makeTempDir();
  const command = `[sh, -c, "exec deno run --allow-read fixtures/mcp/server.ts"]`;
  const refused = await runFile(
    agentFile(TURNS, { extra: `  mcp: [{ name: shcalc, command: ${command} }]` }),
    { runs },
  );
  assert.equal(refused.status, "failed");
  assert.equal(refused.error?.name, "ToolSetError");
  assert.match(
    refused.error!.message,
    /MCP server "shcalc" runs the program "sh".*agent\.allow_unsandboxed: \[shcalc\]/,
  );
  const failed = (await eventsOf(runs, refused.runId)).events;
  assert.deepEqual(failed.slice(-2).map((e) => e.type), ["step_failed", "run_failed"]);
  assert.equal(failed.at(-2)!.data.step, "sandbox_started");

  const allowed = await runFile(
    agentFile(TURNS, {
      extra: `  mcp: [{ name: shcalc, command: ${command} }]\n  allow_unsandboxed: [shcalc]`,
    }),
    { runs },
  );
  assert.equal(allowed.status, "completed", JSON.stringify(allowed.error));
  const { events } = await eventsOf(runs, allowed.runId);
  const started = events.find((e) => e.type === "sandbox_started")!;
  assert.deepEqual(started.data.unsandboxed, [{
    server: "shcalc",
    command: ["sh", "-c", "exec deno run --allow-read fixtures/mcp/server.ts"],
    tools: ["add", "read_text"],
  }]);
  const calls = events.filter((e) => e.type === "tool_called");
  assert.equal(calls[0]!.data.sandboxed, false);
  // Outside the sandbox, with its own --allow-read, the server could read the host file.
  assert.equal(calls[1]!.data.error, null);
  await Deno.remove(runs, { recursive: true });
});

Deno.test("an MCP server over streamable HTTP: its tools are called and recorded, and listed as outside the sandbox", async () => {
  const mcp = new McpServer({ name: "web", version: "1.0.0" });
  mcp.registerTool(
    "add",
    { description: "Add two numbers.", inputSchema: { a: z.number(), b: z.number() } },
    ({ a, b }: { a: number; b: number }) => ({ content: [{ type: "text" as const, text: String(a + b) }] }),
  );
  const transport = new WebStandardStreamableHTTPServerTransport({
    sessionIdGenerator: () => crypto.randomUUID(),
  });
  await mcp.connect(transport);
  await using server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) => transport.handleRequest(req),
  );
  const runs = await Deno.makeTempDir();
  const url = `http://127.0.0.1:${server.addr.port}/mcp`;
  const turns = `      - tool_calls: [{ id: h1, name: add, args: { a: 40, b: 2 } }]
      - text: "42"`;
  const outcome = await runFile(agentFile(turns, { extra: `  mcp: [{ name: web, url: "${url}" }]` }), {
    runs,
  });
  assert.equal(outcome.status, "completed", JSON.stringify(outcome.error));
  const { events } = await eventsOf(runs, outcome.runId);
  const started = events.find((e) => e.type === "sandbox_started")!;
  assert.deepEqual(started.data.unsandboxed, [{ server: "web", url, tools: ["add"] }]);
  const call = events.find((e) => e.type === "tool_called")!;
  assert.equal(call.data.executed_by, "mcp:web");
  assert.equal(call.data.sandboxed, false);
  assert.equal(await payloadOf(runs, outcome.runId, call.data.result_payload as string), "42");
  await mcp.close();
  await Deno.remove(runs, { recursive: true });
});

Deno.test("a Deno MCP server that dies at start is named with the error line it wrote", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/broken.ts`, 'import { x } from "not-a-dependency";\nconsole.log(x);\n');
  await assert.rejects(
    () =>
      McpServers.open([{ name: "broken", command: ["broken.ts"] }], {
        permissions: sandboxPermissions(dir),
        allowUnsandboxed: [],
        folder: dir,
      }),
    (e: Error) => {
      assert.equal(e.name, "ToolSetError");
      assert.match(
        e.message,
        /^MCP server "broken" cannot be reached: .*; it wrote: error: .*not-a-dependency/,
      );
      // The escape character is the point: the message must carry no terminal colour codes.
      // deno-lint-ignore no-control-regex
      assert.doesNotMatch(e.message, /\x1b|\n/);
      return true;
    },
  );
  await Deno.remove(dir, { recursive: true });
});
