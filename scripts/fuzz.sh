#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/*.cpp: audio sources, data URIs, manifests, disk entries) with
# clang and ASan+UBSan into build/fuzz, straight from the library sources (not through CMake), then
# runs each for SECONDS (default 10) on its corpus in fuzz/corpus/<target>/, JOBS (default 2) of
# them at a time (compilations too). Fails when any target finds a crash, a leak or a sanitizer report.
#
# clang 14 cannot compile LibTorch 1.13's headers in C++20 (ATen/core/List.h moves a
# std::vector<c10::IValue> while IValue is incomplete, which libstdc++ 12's constexpr vector
# rejects under clang), so the one file that includes them, lib/store/libtorch_reader.cpp (the
# differential check's reference), is built with g++ and ASan+UBSan but without coverage; the entry
# checks, the direct reader and writer and everything else are built by clang with coverage.
# Usage: scripts/fuzz.sh [SECONDS [TARGET...]]   (default: every fuzz/fuzz_*.cpp)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-10}"
shift $(( $# > 0 ? 1 : 0 ))
targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  for src in "$root"/fuzz/fuzz_*.cpp; do targets+=("$(basename "${src%.cpp}")"); done
fi
out="$root/build/fuzz"
mkdir -p "$out"
cxx="${CXX_FUZZ:-$(command -v clang++-14 || command -v clang++)}"
gxx="${CXX_TORCH:-$(command -v g++)}"
ccache=()
if command -v ccache >/dev/null; then ccache=(env CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1 ccache); fi
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=undefined -I"$root/lib")
torch_flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
             -I"$root/lib" -isystem /usr/include/torch/csrc/api/include -DGFLAGS_IS_A_DLL=0
             -DGLOG_CUSTOM_PREFIX_SUPPORT)
torch_libs=(-Wl,--no-as-needed -ltorch -ltorch_cpu -lc10 -Wl,--as-needed)

# object SOURCE: compiles lib/<layer>/<name>.cpp once into build/fuzz/<layer>_<name>.o (again when the
# source or any library header is newer; through ccache where installed, so a new clone reuses them) and
# prints the object's path.
object() {
  local src=$1 obj
  obj="$out/$(basename "$(dirname "$src")")_$(basename "${src%.cpp}").o"
  if [[ ! -f "$obj" || "$src" -nt "$obj" ||
        -n "$(find "$root"/lib/{audio,core,profile,store} -name '*.hpp' -newer "$obj" -print -quit)" ]]; then
    rm -f "$obj"
    if grep -q '#include <torch/\|#include <ATen/\|#include <caffe2/' "$src"; then
      "${ccache[@]}" "$gxx" "${torch_flags[@]}" -c "$src" -o "$obj"
    else
      "${ccache[@]}" "$cxx" "${flags[@]/-fsanitize=fuzzer,/-fsanitize=fuzzer-no-link,}" -c "$src" -o "$obj"
    fi
  fi
  echo "$obj"
}

# sources TARGET: the library sources fuzz/TARGET.cpp is linked with (sets `sources` and `libs`).
sources_of() {
  case "$1" in
    fuzz_disk_entry)
      sources=("$root"/lib/core/error.cpp "$root"/lib/core/sha256.cpp "$root"/lib/store/artifact.cpp
               "$root"/lib/store/entry_format.cpp "$root"/lib/store/archive_check.cpp
               "$root"/lib/store/direct_reader.cpp "$root"/lib/store/direct_writer.cpp
               "$root"/lib/store/entry_archive.cpp "$root"/lib/store/libtorch_reader.cpp)
      libs=(-lcrypto "${torch_libs[@]}") ;;
    *)
      sources=("$root"/lib/audio/*.cpp "$root"/lib/core/error.cpp "$root"/lib/core/sha256.cpp
               "$root"/lib/profile/manifest/manifest.cpp "$root"/lib/profile/manifest/reference_schedule.cpp \
               "$root"/lib/profile/manifest/capacity_spec.cpp "$root"/lib/profile/manifest/shared_cache_value.cpp \
               "$root"/lib/profile/manifest/noise_manifest.cpp "$root"/lib/profile/device/calibration_presets.cpp \
               "$root"/lib/profile/record/calibration.cpp "$root"/lib/profile/record/json_fields.cpp \
               "$root"/lib/profile/record/labels.cpp "$root"/lib/util/atomic_file.cpp)
      libs=(-lsndfile -lsamplerate -lcrypto -lfmt) ;;
  esac
}

# Up to JOBS compilations, links and fuzz runs at a time (each run has a core of its own for its
# SECONDS); results are printed in target order.
jobs_max="${JOBS:-2}"
throttle() { while (( $(jobs -rp | wc -l) >= jobs_max )); do wait -n || true; done; }

declare -A all_sources=()
for target in "${targets[@]}"; do
  sources_of "$target"
  for src in "${sources[@]}"; do all_sources["$src"]=1; done
done
for src in "${!all_sources[@]}"; do
  throttle
  object "$src" >/dev/null &
done
wait
for target in "${targets[@]}"; do
  sources_of "$target"
  objects=()
  for src in "${sources[@]}"; do objects+=("$(object "$src")"); done  # compiled above (again if that failed)
  rm -f "$out/$target"
  throttle
  "$cxx" "${flags[@]}" "$root/fuzz/$target.cpp" "${objects[@]}" "${libs[@]}" -o "$out/$target" &
done
wait
for target in "${targets[@]}"; do
  [[ -x "$out/$target" ]] || { echo "$target: did not build"; exit 1; }
done

export LSAN_OPTIONS="suppressions=$root/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
run_target() {  # run_target TARGET: writes $out/TARGET.result (first line "ok" or "failed", then the lines to print)
  local target=$1 corpus="$root/fuzz/corpus/$1" work="$out/corpus-$1" start  # new inputs go to work/
  mkdir -p "$work"
  start=$(date +%s)
  if "$out/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -artifact_prefix="$out/$target-" -print_final_stats=1 "$work" "$corpus" >"$out/$target.log" 2>&1; then
    printf 'ok\n%s\n' "$target: clean for $(( $(date +%s) - start ))s ($(grep -m1 -o 'stat::number_of_executed_units: *[0-9]*' "$out/$target.log" | grep -o '[0-9]*$') runs)" >"$out/$target.result"
  else
    { echo failed
      echo "$target: FAILED after $(( $(date +%s) - start ))s; see $out/$target.log and $out/$target-*"
      grep -m5 -E 'ERROR|runtime error|deadly signal' "$out/$target.log" || true
    } >"$out/$target.result"
  fi
}
for target in "${targets[@]}"; do
  rm -f "$out/$target.result"
  echo "== $target: ${seconds}s"
  throttle
  run_target "$target" &
done
wait
status=0
for target in "${targets[@]}"; do
  [[ -f "$out/$target.result" && $(head -1 "$out/$target.result") == ok ]] || status=1
  tail -n +2 "$out/$target.result" 2>/dev/null || echo "$target: no result"
done
exit "$status"
