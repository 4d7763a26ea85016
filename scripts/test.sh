#!/usr/bin/env bash
# Runs every refenc test: installs what is missing, builds, runs ctest and the Python package's pytest
# suite (tests/python), the core tests under TSan and
# ASan+UBSan, the service stress run under both (again with the shared Redis tier when STRESS_REDIS
# is 1, or auto and redis-server is installed), and each fuzz target briefly. Ends with one line
# "N passed, M failed".
#
#   scripts/test.sh                  # STRESS_REDIS=auto (default) | 1 | 0
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
BUILD=${BUILD:-build/release}
FUZZ_SECONDS=${FUZZ_SECONDS:-10}
STRESS_REDIS=${STRESS_REDIS:-auto}
passed=0
failed=0
failures=()

step() {  # step NAME COMMAND...
  local name=$1
  shift
  echo "==> $name"
  local start=$SECONDS
  if "$@"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    failures+=("$name")
    echo "FAILED: $name"
  fi
  echo "<== $name: $((SECONDS - start)) s"
}

scripts/setup.sh --test || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }

build_main() {
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREFENC_WERROR=ON >/dev/null && cmake --build "$BUILD" -j "$JOBS"
}
step "build" build_main
python_tests() {  # the Python package's suite (sglang-omni's own cases included), Debian's python3
  PYTHONPATH="$BUILD/python" /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python
}
if [[ $failed -eq 0 ]]; then
  step "ctest" ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS"
  step "python package (pytest)" python_tests
fi

# One build per sanitizer (build/sanitize-thread, build/sanitize-address) holds the core tests and the
# stress program, so lib/core compiles once per sanitizer, in unity batches as the main build (a report
# still names the source file and line: a batch only includes the files). lib/store compiles no LibTorch
# unit (docs/store.md), so neither build compiles LibTorch.
sanitizer_build() {  # sanitizer_build thread|address
  local dir=build/sanitize-$1
  cmake -S . -B "$dir" -DREFENC_LAYERS=store -DREFENC_APP=OFF -DREFENC_PYTHON=OFF -DREFENC_SANITIZE="$1" \
      -DREFENC_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
    cmake --build "$dir" -j "$JOBS" --target test_core stress_service >/dev/null
}
sanitized_core() {  # sanitized_core thread|address
  sanitizer_build "$1" &&
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ASAN_OPTIONS="detect_leaks=1" \
      UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1" "build/sanitize-$1/tests/core/test_core"
}
step "core under ThreadSanitizer" sanitized_core thread
step "core under AddressSanitizer+UBSan" sanitized_core address

sanitized_stress() {  # the service + disk tier + batching stress, short, under a sanitizer (built above)
  TSAN_OPTIONS="halt_on_error=1" ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1" \
    "build/sanitize-$1/tests/stress/stress_service" --threads 64 --requests 20000 --keys 1500
}
step "stress under ThreadSanitizer" sanitized_stress thread
step "stress under AddressSanitizer+UBSan" sanitized_stress address

sanitized_stress_redis() {  # the same run with the shared Redis tier, against a redis-server on loopback
  local dir=build/sanitize-$1 port pid rc
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  local data
  data=$(mktemp -d)
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$data" --daemonize no \
    --maxmemory 256mb --maxmemory-policy allkeys-lru >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  TSAN_OPTIONS="halt_on_error=1" ASAN_OPTIONS="detect_leaks=1" UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1" \
    "$dir/tests/stress/stress_service" --threads 64 --requests 20000 --keys 1500 --redis "redis://127.0.0.1:$port"
  rc=$?
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  rm -rf "$data"
  return $rc
}
if [[ $STRESS_REDIS == 1 || ($STRESS_REDIS == auto && -n $(command -v redis-server)) ]]; then
  step "stress with the Redis tier under ThreadSanitizer" sanitized_stress_redis thread
  step "stress with the Redis tier under AddressSanitizer+UBSan" sanitized_stress_redis address
fi

if [[ -x scripts/fuzz.sh ]]; then
  step "fuzz (${FUZZ_SECONDS}s per target)" scripts/fuzz.sh "$FUZZ_SECONDS"
fi

echo
if [[ $failed -gt 0 ]]; then printf 'failed step: %s\n' "${failures[@]}"; fi
echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
