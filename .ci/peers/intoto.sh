# in-toto's tools from PyPI (test-only) for the signed seal's tests: securesystemslib (the DSSE envelope and the
# Ed25519 key) and in-toto-attestation (the Statement v1). Sourced by .ci/run, which gives $root and the venv at
# .tools/venv. cosign is not here: `go install .../cosign/v2/cmd/cosign@v2.6.5` fetched 264 modules (1.8 GB) in
# 8 minutes and then compiled for 27 more without a binary (docs/evidence-format.md, "Signed seals").
if ! .tools/venv/bin/python -c 'import securesystemslib.dsse, in_toto_attestation.v1.statement' 2>/dev/null; then
  .tools/venv/bin/pip install --quiet --disable-pip-version-check \
    'securesystemslib[crypto]==1.6.0' 'in-toto-attestation==0.9.3' >/dev/null
fi
export PROVEVI_TEST_INTOTO_PYTHON="$root/.tools/venv/bin/python"
