#!/usr/bin/env bash
# Opens an HTML page in headless Chromium, fails when the page logs a console message (a blocked
# resource, a script error), and saves the rendered DOM and a 1280x2400 screenshot beside the page.
#
#   scripts/browser_check.sh runs/20261202-143000-nightly/report.html
#   -> report.dom.html, report.png next to it; exit 0 when clean, 1 on console messages, 2 without chromium
set -euo pipefail

page="${1:?usage: scripts/browser_check.sh PAGE.html [SCREENSHOT.png]}"
[[ -f "$page" ]] || { echo "browser_check: $page: no such file" >&2; exit 2; }
chromium="${REFENC_CHROMIUM:-/usr/bin/chromium}"
[[ -x "$chromium" ]] || { echo "browser_check: $chromium not found (apt-get install chromium)" >&2; exit 2; }

abs="$(cd "$(dirname "$page")" && pwd)/$(basename "$page")"
stem="${abs%.html}"
shot="${2:-$stem.png}"
profile="$(mktemp -d)"
log="$(mktemp)"
trap 'rm -rf "$profile" "$log"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --enable-logging=stderr --v=0 --window-size=1280,2400
       --user-data-dir="$profile")

timeout 120 "$chromium" "${flags[@]}" --dump-dom "file://$abs" >"$stem.dom.html" 2>"$log"
timeout 120 "$chromium" "${flags[@]}" --screenshot="$shot" "file://$abs" >/dev/null 2>>"$log"

if grep -E ':CONSOLE|Uncaught' "$log"; then
  echo "browser_check: $page: the page logged console messages (above)" >&2
  exit 1
fi
grep -o 'data-verdict="[A-Z_-]*"' "$stem.dom.html" | sort | uniq -c || true
echo "dom: $stem.dom.html"
echo "screenshot: $shot"
