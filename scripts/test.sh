#!/usr/bin/env bash
# The whole test suite on a fresh machine: install mutagent with its test extras, then run pytest.
# Chromium and its WebDriver (for the HTML report's browser tests) are installed from Debian's
# packages where missing.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet --disable-pip-version-check -e '.[test]'
if ! { command -v chromium && command -v chromedriver; } >/dev/null 2>&1 \
    && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null) \
        || echo "warning: chromium/chromium-driver not installed"
fi
# pytest exits 5 when it collected no test: that is a failure here, like any non-zero exit.
python -m pytest "$@"
