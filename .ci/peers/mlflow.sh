# MLflow's tracking server, for the copy in MLflow's tests (lib/provevi/mlflow/): mlflow==3.17.2 from PyPI, the
# version the seeds name, in its own venv (.tools/venv-mlflow: its dependencies are large and may clash with
# the shared one), cached. Sourced by .ci/run, which gives: $root, free_port, wait_http, and pids to kill.
# Exports PROVEVI_TEST_MLFLOW_URI (a server on a sqlite file), PROVEVI_TEST_MLFLOW_PYTHON (the venv's python,
# for the read-back through MLflow's own client) and PROVEVI_TEST_MLFLOW_BIN (the venv's bin, where `mlflow`
# is, for the copies that start their own server).
if [ ! -x .tools/venv-mlflow/bin/mlflow ]; then
  [ -x .tools/venv-mlflow/bin/pip ] || python3 -m venv .tools/venv-mlflow
  .tools/venv-mlflow/bin/pip install --quiet --disable-pip-version-check 'mlflow==3.17.2' >/dev/null
fi
mlflow_port=$(free_port)
mlflow_dir=$(mktemp -d "${TMPDIR:-/tmp}/provevi-ci-mlflow.XXXXXX")
# Started in the background now; the wait for it is at the end of this script.
(cd "$mlflow_dir" && MLFLOW_DISABLE_AGENT_HINT=1 MLFLOW_DISABLE_TELEMETRY=true DO_NOT_TRACK=true \
  MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false \
  exec "$root/.tools/venv-mlflow/bin/mlflow" server --backend-store-uri "sqlite:///$mlflow_dir/mlflow.db" \
  --artifacts-destination "$mlflow_dir/artifacts" --host 127.0.0.1 --port "$mlflow_port" --workers 1 \
  >"$root/.tools/mlflow.log" 2>&1) &
pids+=($!)
export PROVEVI_TEST_MLFLOW_URI="http://127.0.0.1:$mlflow_port"
export PROVEVI_TEST_MLFLOW_PYTHON="$root/.tools/venv-mlflow/bin/python"
export PROVEVI_TEST_MLFLOW_BIN="$root/.tools/venv-mlflow/bin"
wait_http "$PROVEVI_TEST_MLFLOW_URI/health" 240
