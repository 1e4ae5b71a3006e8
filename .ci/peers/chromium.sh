# Chromium for the viewer's browser tests (prove ui): Debian's chromium, driven headless by puppeteer-core.
# Sourced by .ci/run. It installs the package only when /usr/bin/chromium is missing (apt-get update first), and
# exports PROVE_TEST_CHROMIUM for the tests; puppeteer-core never downloads a browser of its own.
if [ ! -x /usr/bin/chromium ]; then
  sudo_=""
  [ "$(id -u)" -ne 0 ] && sudo_="sudo"
  $sudo_ apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
export PROVE_TEST_CHROMIUM=/usr/bin/chromium
"$PROVE_TEST_CHROMIUM" --version 2>/dev/null || true
