# The agent programs the claude-code and codex backends start, for their tests: Claude Code and Codex from npm
# (test-only, pinned), run against the local fake provider in fixtures/providers/; and the Python OpenTelemetry
# SDK with its OTLP/HTTP exporters (PyPI, test-only, pinned), a client of the span receiver that nobody here wrote.
# Sourced by .ci/run, which gives: $root, the venv at .tools/venv, free_port, wait_http, and pids to kill.
agents_claude=@anthropic-ai/claude-code@2.1.332
agents_codex=@openai/codex@0.171.0
if [ ! -x .tools/agents/node_modules/.bin/claude ] || [ ! -x .tools/agents/node_modules/.bin/codex ] ||
  ! grep -q '"version": "2.1.332"' .tools/agents/node_modules/@anthropic-ai/claude-code/package.json 2>/dev/null ||
  ! grep -q '"version": "0.171.0"' .tools/agents/node_modules/@openai/codex/package.json 2>/dev/null; then
  mkdir -p .tools/agents
  npm install --prefix .tools/agents --no-save --no-audit --no-fund --loglevel=error \
    "$agents_claude" "$agents_codex" >/dev/null
fi
if ! .tools/venv/bin/python -c 'import opentelemetry.exporter.otlp.proto.http, opentelemetry.exporter.otlp.json.http' 2>/dev/null; then
  .tools/venv/bin/pip install --quiet --disable-pip-version-check \
    'opentelemetry-sdk==1.45.1' 'opentelemetry-exporter-otlp-proto-http==1.45.1' 'opentelemetry-exporter-otlp-json-http==0.66b1' >/dev/null
fi
command -v curl >/dev/null || { echo "CI: the codex backend's hooks need curl" >&2; return 1; }
export PROVRUN_TEST_CLAUDE="$root/.tools/agents/node_modules/.bin/claude"
export PROVRUN_TEST_CODEX="$root/.tools/agents/node_modules/.bin/codex"
export PROVRUN_TEST_OTEL_PYTHON="$root/.tools/venv/bin/python"
