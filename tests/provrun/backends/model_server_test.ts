import assert from "node:assert/strict";
import { modelServer } from "../../../lib/provrun/backends/model_server.ts";

Deno.test("modelServer() gives the well-known provider and the server of each route", () => {
  const none = () => undefined;
  assert.deepEqual(modelServer({ model: "openai:gpt-4o-mini" }, none), {
    provider: "openai",
    address: "api.openai.com",
    port: 443,
  });
  assert.deepEqual(modelServer({ model: "anthropic:claude-sonnet-4-5" }, none), {
    provider: "anthropic",
    address: "api.anthropic.com",
    port: 443,
  });
  assert.deepEqual(
    modelServer({
      model: "openai-compatible:llama-3.3-70b",
      provider: { base_url: "https://api.groq.com/openai/v1" },
    }),
    { provider: "groq", address: "api.groq.com", port: 443 },
  );
  assert.deepEqual(
    modelServer({ model: "openai-compatible:qwen3", provider: { base_url: "http://127.0.0.1:11434/v1" } }),
    { provider: "openai", address: "127.0.0.1", port: 11434 },
  );
  assert.deepEqual(modelServer({ model: "test:" }), { provider: "test", address: null, port: null });
});

Deno.test("modelServer() reads the base URL the AI SDK's provider reads, and a variable that is not a URL names none", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  assert.deepEqual(
    modelServer({ model: "openai:gpt-4o" }, env({ OPENAI_BASE_URL: "http://[::1]:8080/v1" })),
    {
      provider: "openai",
      address: "::1",
      port: 8080,
    },
  );
  assert.deepEqual(modelServer({ model: "anthropic:claude" }, env({ ANTHROPIC_BASE_URL: "not a url" })), {
    provider: "anthropic",
    address: null,
    port: null,
  });
  const refusing = () => {
    throw new Deno.errors.NotCapable("no env");
  };
  assert.equal(modelServer({ model: "openai:gpt-4o" }, refusing).address, "api.openai.com");
});
