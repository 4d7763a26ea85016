#!/usr/bin/env bash
# Runs every refenc test: installs what is missing, builds, runs ctest, the core tests under TSan and
# ASan+UBSan, and each fuzz target briefly. Ends with one line "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
BUILD=${BUILD:-build/release}
FUZZ_SECONDS=${FUZZ_SECONDS:-10}
passed=0
failed=0
failures=()

step() {  # step NAME COMMAND...
  local name=$1
  shift
  echo "==> $name"
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures+=("$name")
    echo "FAILED: $name"
  fi
}

scripts/setup.sh --test || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

build_main() {
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build "$BUILD" -j "$JOBS"
}
step "build" build_main
if [[ $failed -eq 0 ]]; then
  step "ctest" ctest --test-dir "$BUILD" --output-on-failure
fi

sanitized_core() {  # sanitized_core thread|address
  local dir=build/core-$1
  cmake -S . -B "$dir" -DREFENC_CORE_ONLY=ON -DREFENC_SANITIZE="$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
    cmake --build "$dir" -j "$JOBS" >/dev/null &&
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ASAN_OPTIONS="detect_leaks=1" \
      UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1" "$dir/tests/core/test_core"
}
step "core under ThreadSanitizer" sanitized_core thread
step "core under AddressSanitizer+UBSan" sanitized_core address

sanitized_stress() {  # the service + disk tier + batching stress, short, under a sanitizer
  local dir=build/stress-$1
  cmake -S . -B "$dir" -DREFENC_LAYERS=store -DREFENC_APP=OFF -DREFENC_SANITIZE="$1" \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
    cmake --build "$dir" -j "$JOBS" --target stress_service >/dev/null &&
    TSAN_OPTIONS="halt_on_error=1" ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1" \
      "$dir/tests/stress/stress_service" --threads 64 --requests 20000 --keys 1500
}
step "stress under ThreadSanitizer" sanitized_stress thread
step "stress under AddressSanitizer+UBSan" sanitized_stress address

if [[ -x scripts/fuzz.sh ]]; then
  step "fuzz (${FUZZ_SECONDS}s per target)" scripts/fuzz.sh "$FUZZ_SECONDS"
fi

echo
if [[ $failed -gt 0 ]]; then printf 'failed step: %s\n' "${failures[@]}"; fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
