import { equal } from "node:assert/strict";
import { providerName } from "../../../lib/provevi/telemetry/genai_conventions.ts";

Deno.test("providerName() gives the conventions' well-known value of the AI SDK's provider IDs", () => {
  equal(providerName("anthropic.messages"), "anthropic");
  equal(providerName("openai.responses"), "openai");
  equal(providerName("openai.chat"), "openai");
  equal(providerName("openai-compatible.chat", "127.0.0.1"), "openai");
  equal(providerName("test"), "test");
});

Deno.test("providerName() knows a provider by the host an OpenAI-compatible route reaches", () => {
  equal(providerName("openai-compatible.chat", "api.groq.com"), "groq");
  equal(providerName("openai-compatible.chat", "api.deepseek.com"), "deepseek");
  equal(providerName("openai-compatible.chat", "API.Mistral.AI"), "mistral_ai");
  equal(providerName("openai-compatible.chat", "acme.openai.azure.com"), "azure.ai.openai");
  equal(providerName("openai-compatible.chat", "us-central1-aiplatform.googleapis.com"), "gcp.vertex_ai");
  equal(providerName("openai-compatible.chat", "bedrock-runtime.us-east-1.amazonaws.com"), "aws.bedrock");
  equal(providerName("openai-compatible.chat", "evil-api.groq.com.example"), "openai");
});
