#!/usr/bin/env bash
# The page at / in a real browser (tests/ui): Debian's chromium, driven with chromedp, follows a
# live `pstrain local` run and predicts a digit drawn on the page. Installs chromium, builds
# pstrain if needed, and keeps the screenshots in build/ui-artifacts (printed at the end). The
# docs' screenshot, docs/page.png, is this run's prediction.png: copied there when the tests
# pass, so that `git status` shows one the page has moved on from.
# Needs Go (at /usr/local/go or on PATH) and the Go module proxy for chromedp.
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/go-env.sh

bash ci/install-deps.sh chromium
[ -x build/pstrain ] || bash ci/build.sh
artifacts="$PWD/build/ui-artifacts"
mkdir -p "$artifacts"
status=0
(cd tests/ui && TEST_PSTRAIN_BINARY="$PWD/../../build/pstrain" TEST_UI_ARTIFACTS="$artifacts" \
  go test -count=1 -v ./...) || status=1
echo "screenshots: $artifacts"
if [ "$status" = 0 ]; then
  cp "$artifacts/prediction.png" docs/page.png
  echo "docs/page.png: this run's prediction.png"
fi
exit $status
