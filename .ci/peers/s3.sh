# An S3-compatible server for the S3 catalog store's tests: moto's server (PyPI, test-only), on 127.0.0.1.
# Sourced by .ci/run, which gives: $root, the venv at .tools/venv, free_port, wait_http, and pids to kill.
if [ ! -x .tools/venv/bin/moto_server ]; then
  .tools/venv/bin/pip install --quiet --disable-pip-version-check 'moto[server]==5.2.5' >/dev/null
fi
s3_port=$(free_port)
.tools/venv/bin/moto_server -H 127.0.0.1 -p "$s3_port" >.tools/moto.log 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$s3_port/" 20
export PROVCAT_TEST_S3_ENDPOINT="http://127.0.0.1:$s3_port"
