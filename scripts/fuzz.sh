#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/*.cpp: audio sources, data URIs, manifests) with clang and ASan+UBSan into build/fuzz,
# straight from the library sources (not through CMake), then runs each for SECONDS (default 10) on
# its corpus in fuzz/corpus/<target>/. Fails on the first crash, leak or sanitizer report.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-10}"
out="$root/build/fuzz"
mkdir -p "$out"
cxx="${CXX_FUZZ:-$(command -v clang++-14 || command -v clang++)}"
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I"$root/lib")
lib_sources=("$root"/lib/audio/*.cpp "$root"/lib/core/error.cpp "$root"/lib/core/sha256.cpp
             "$root"/lib/profile/manifest.cpp)
objects=()
for src in "${lib_sources[@]}"; do
  obj="$out/$(basename "$(dirname "$src")")_$(basename "${src%.cpp}").o"
  if [[ ! -f "$obj" || "$src" -nt "$obj" || -n "$(find "$root/lib/audio" "$root/lib/core" "$root/lib/profile" -name '*.hpp' -newer "$obj" -print -quit)" ]]; then
    "$cxx" "${flags[@]/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" -c "$src" -o "$obj"
  fi
  objects+=("$obj")
done
export LSAN_OPTIONS="suppressions=$root/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
status=0
for target_src in "$root"/fuzz/fuzz_*.cpp; do
  target="$(basename "${target_src%.cpp}")"
  "$cxx" "${flags[@]}" "$target_src" "${objects[@]}" -lsndfile -lsamplerate -lcrypto -o "$out/$target"
  corpus="$root/fuzz/corpus/$target"
  work="$out/corpus-$target"   # new inputs found go here, the committed seeds stay as they are
  mkdir -p "$work"
  echo "== $target: ${seconds}s"
  start=$(date +%s)
  if "$out/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -artifact_prefix="$out/$target-" -print_final_stats=1 "$work" "$corpus" >"$out/$target.log" 2>&1; then
    echo "$target: clean for $(( $(date +%s) - start ))s ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$out/$target.log" | grep -o '[0-9]*$') runs)"
  else
    status=1
    echo "$target: FAILED after $(( $(date +%s) - start ))s; see $out/$target.log and $out/$target-*"
    grep -m5 -E 'ERROR|runtime error|deadly signal' "$out/$target.log" || true
  fi
done
exit "$status"
