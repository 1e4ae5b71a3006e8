# Arize Phoenix, a GenAI backend that reads OTLP spans by the GenAI semantic conventions, for the test that sends
# a run's spans to it and reads them back (tests/provrun/telemetry/genai_backends_test.ts): arize-phoenix==20.26.1
# from PyPI, test-only, in its own venv (.tools/venv-phoenix: its dependencies are large and may clash with the
# shared one), cached. Sourced by .ci/run, which gives: $root, free_port, wait_http, and pids to kill.
# Its HTTP port (the UI, the REST API and OTLP/HTTP at /v1/traces) is on 127.0.0.1; Phoenix binds its gRPC port
# on every address and has no setting for it, so phoenix_serve.py binds it to 127.0.0.1 too.
# Exports PROVRUN_TEST_PHOENIX_URL (the server), PROVRUN_TEST_PHOENIX_GRPC_URL (its OTLP/gRPC receiver) and
# PROVRUN_TEST_PHOENIX_PYTHON (the venv's python, for the read-back through Phoenix's own client).
if [ ! -x .tools/venv-phoenix/bin/phoenix ]; then
  [ -x .tools/venv-phoenix/bin/pip ] || python3 -m venv .tools/venv-phoenix
  .tools/venv-phoenix/bin/pip install --quiet --disable-pip-version-check 'arize-phoenix==20.26.1' >/dev/null
fi
phoenix_port=$(free_port)
phoenix_grpc_port=$(free_port)
phoenix_dir=$(mktemp -d "${TMPDIR:-/tmp}/provrun-ci-phoenix.XXXXXX")
(cd "$phoenix_dir" && PHOENIX_WORKING_DIR="$phoenix_dir" PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$phoenix_port" \
  PHOENIX_GRPC_PORT="$phoenix_grpc_port" PHOENIX_TELEMETRY_ENABLED=false PHOENIX_DISABLE_AGENT_ASSISTANT=true \
  DO_NOT_TRACK=1 exec "$root/.tools/venv-phoenix/bin/python" "$root/.ci/peers/phoenix_serve.py" \
  >"$root/.tools/phoenix.log" 2>&1) &
pids+=($!)
export PROVRUN_TEST_PHOENIX_URL="http://127.0.0.1:$phoenix_port"
export PROVRUN_TEST_PHOENIX_GRPC_URL="http://127.0.0.1:$phoenix_grpc_port"
export PROVRUN_TEST_PHOENIX_PYTHON="$root/.tools/venv-phoenix/bin/python"
wait_http "$PROVRUN_TEST_PHOENIX_URL/healthz" 240
