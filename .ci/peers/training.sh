# The trainers' own readers, for the training exports' tests (lib/provtrace/export/): transformers (its
# apply_chat_template, with a small tokenizer the test builds with the tokenizers library: no hub download),
# datasets (loads the sharegpt lines), jsonschema (the ATIF schema in fixtures/atif/), from PyPI, test-only,
# in their own venv (.tools/venv-training: datasets brings pyarrow and pandas), cached. Sourced by .ci/run,
# which gives $root. Exports PROVTRACE_TEST_TRAINING_PYTHON, the venv's python.
if ! .tools/venv-training/bin/python -c 'import transformers, tokenizers, datasets, jsonschema, jinja2' 2>/dev/null; then
  [ -x .tools/venv-training/bin/pip ] || python3 -m venv .tools/venv-training
  .tools/venv-training/bin/pip install --quiet --disable-pip-version-check 'transformers==5.23.0' \
    'tokenizers==0.23.3' 'datasets==5.2.0' 'jsonschema==4.26.0' 'jinja2==3.1.6' >/dev/null
fi
export PROVTRACE_TEST_TRAINING_PYTHON="$root/.tools/venv-training/bin/python"
